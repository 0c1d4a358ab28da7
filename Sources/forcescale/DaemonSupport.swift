import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

/// What the commands that talk to forcescaled (watch, weigh, tare, calibrate, status)
/// share: the `--socket` option, connecting, and turning the daemon's failures into
/// messages and exit statuses.
enum DaemonConnection {
    static let socket = OptionKey<String?>(
        "socket", valueName: "path",
        help: "forcescaled's socket. (default: \(DaemonClient.systemSocketPath) when it exists, else $XDG_RUNTIME_DIR/\(DaemonClient.userSocketName))",
        parser: .text)

    /// `--device <device>`: one of the devices the daemon serves.
    static let device = OptionKey<String?>(
        "device", valueName: "device",
        help: "The device, as the daemon names it (event5, pen.evemu) or its path; needed when forcescaled serves several.",
        parser: .text)

    /// What to do without a pressure device: the demo's recording, served by the daemon.
    static let demoRoute = "Without one, try the demo: " + DemoSession.route

    /// What `weigh` and `status` say of a daemon with no device open.
    static let noDeviceAdvice = "plug one in or name it with forcescaled --device; 'forcescale devices' lists what this machine has"

    /// `--timeout <seconds>` with the command's own default.
    static func timeout(default seconds: Int, help: String) -> OptionKey<Double> {
        OptionKey("timeout", valueName: "seconds", help: help, parser: .number, default: Double(seconds), shownDefault: String(seconds))
    }

    /// The socket `--socket` names, or the default forcescaled itself would use.
    /// - Parameter given: The value of the command's `--socket`.
    static func socketPath(_ given: String?) -> String {
        given ?? DaemonClient.defaultSocketPath()
    }

    /// A `--timeout`, checked to be more than 0 seconds.
    /// - Parameters:
    ///   - command: The command that declares the timeout.
    ///   - key: Its `--timeout`.
    static func timeout(_ command: ParsedCommand, _ key: OptionKey<Double>) throws -> Double {
        let seconds = command[key]
        guard seconds > 0 else {
            throw command.usageError("The timeout must be a number of seconds greater than 0")
        }
        return seconds
    }

    /// Connects to the daemon on the socket `--socket` names (or the default) and reads its greeting.
    /// - Parameter socket: The value of the command's `--socket`.
    static func connect(_ socket: String?) throws(DaemonClientError) -> DaemonClient {
        try DaemonClient(path: socketPath(socket))
    }

    /// Runs a command body as `reportingFailures` does, with the daemon's failures mapped
    /// to their messages and statuses (69 when no daemon listens, 77 when not allowed).
    static func run(_ body: () throws -> Void) -> Int32 {
        reportingFailures {
            do {
                try body()
            } catch let error as DaemonClientError {
                throw CommandFailure(daemon: error)
            }
        }
    }
}

extension CommandFailure {
    init(daemon error: DaemonClientError) {
        let status: Int32
        switch error {
        case _ where error.isPermissionDenied: status = ExitStatus.noPermission
        case .notListening, .connectFailed, .closed, .timedOut: status = ExitStatus.unavailable
        case .malformedLine, .unsupportedProtocol: status = ExitStatus.protocolError
        case .failed: status = ExitStatus.ioError
        case .refused, .permissionDenied: status = ExitStatus.failure
        }
        self.init(message: error.description, status: status)
    }

    /// `weigh`'s status when what it printed is a lower bound: the pad was saturated.
    static let saturatedStatus: Int32 = 3

    /// What `weigh` says on standard error after printing a saturated weight, with status 3.
    static let saturated = CommandFailure(
        message: "the pad was saturated (at the top of its pressure range): the object weighs at least that, maybe far more; "
            + "weigh a lighter object, or on a device with more range (docs/weighing.md, \"Full scale and saturation\")",
        status: saturatedStatus)

    /// What `weigh` and `calibrate` say when nothing settled in time: with the drift of the
    /// newest reading when the weight was still moving, how fast and what that most likely
    /// means.
    /// - Parameters:
    ///   - seconds: The timeout.
    ///   - moving: The newest reading, when it carried a drift.
    ///   - unit: The unit the person chose.
    ///   - what: What did not stop ("the weight", "the contact").
    static func noStableReading(within seconds: Double, moving: ReadingMessage? = nil, unit: MassUnit = .grams, what: String = "the weight") -> CommandFailure {
        guard let moving, let drift = moving.drift, let said = moving.driftText(unit: unit) else {
            return CommandFailure(
                message: "no stable reading within \(DaemonClient.seconds(seconds)) s: put the object on the pad and keep it still",
                status: ExitStatus.failure)
        }
        let meaning = drift < 0
            ? "a pad's firmware lets go of a contact it does not take for a finger this way: rest a finger on the object, "
                + "or weigh it on a conductive platform (docs/weighing.md, \"A weight that does not stop\")"
            : "it is still being pressed or settling into the pad: let go of it and keep it still, or give --timeout more time "
                + "(docs/weighing.md, \"A weight that does not stop\")"
        return CommandFailure(
            message: "\(what) did not stop within \(DaemonClient.seconds(seconds)) s: \(said) at \(unit.format(grams: moving.grams)), "
                + "so it is not a weight yet; " + meaning,
            status: ExitStatus.failure)
    }

    /// The newest reading if it says the weight is moving: a drift within the last second
    /// of event time before `latest`, so that one frame within the noise does not hide it.
    /// - Parameters:
    ///   - drifting: The newest reading that carried a drift.
    ///   - latest: The newest reading.
    /// - Returns: `drifting` when it is that recent and the contact is still down.
    static func stillMoving(_ drifting: ReadingMessage?, latest: ReadingMessage?) -> ReadingMessage? {
        guard let drifting, let latest, latest.contacts > 0, !latest.stable,
              latest.time.microseconds - drifting.time.microseconds <= 1_000_000
        else { return nil }
        return drifting
    }
}

enum DaemonFormat {
    /// `100` for 100.0, `12.5` for 12.5: a number as the user typed it.
    static func plain(_ value: Double) -> String { DaemonClient.seconds(value) }

    /// `1 point`, `3 points`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)" + (number == 1 ? "" : "s")
    }
}

// MARK: - The gauge for the daemon's stream

extension GaugePresenter {
    /// The gauge `read` shows, for the daemon's READING and PEAK lines: redrawn in place
    /// on a terminal, a line per reading otherwise; times count from the first line.
    static func forDaemonStream(output: OutputChannel, unit: MassUnit) -> GaugePresenter {
        let terminal = output.isTerminal
        let style = GaugeStyle(unicode: terminal && Environment.usesUTF8, color: terminal && !Environment.prefersNoColor)
        return GaugePresenter(output: output, style: style, unit: unit, inPlace: terminal, flushEachLine: true)
    }

    /// Shows a READING or PEAK of the daemon's stream, whatever its model.
    func show(_ event: StreamEvent) throws {
        switch event.message {
        case .reading(let reading): try show(reading: reading)
        case .peak(let peak): try show(peak: peak)
        }
    }
}

/// Asks a question on `channel` and reads the answer, a line of standard input without its
/// surrounding spaces; `nil` at the input's end (after ending the question's line).
func askLine(_ question: String, on channel: OutputChannel) throws -> String? {
    try channel.write(question)
    try channel.flush()
    guard let line = readLine(strippingNewline: true) else {
        try channel.write("\n")
        return nil
    }
    return String(line.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
}
