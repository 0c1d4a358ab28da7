import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScaleSystem

/// What the commands that talk to forcescaled (watch, weigh, tare, calibrate, status)
/// share: the `--socket` option, connecting, and turning the daemon's failures into
/// messages and exit statuses.
enum DaemonConnection {
    static let socketOption = Option(
        long: "socket", valueName: "path",
        help: "forcescaled's socket. (default: \(DaemonClient.systemSocketPath) when it exists, else $XDG_RUNTIME_DIR/\(DaemonClient.userSocketName))")

    /// `--timeout <seconds>` with the command's own default.
    static func timeoutOption(default seconds: Int, help: String) -> Option {
        Option(long: "timeout", valueName: "seconds", help: help, defaultValue: String(seconds))
    }

    /// The socket the command line names, or the default forcescaled itself would use.
    static func socketPath(_ command: ParsedCommand) -> String {
        command.string("socket") ?? DaemonClient.defaultSocketPath()
    }

    /// `--timeout`, checked to be a positive number of seconds.
    static func timeout(_ command: ParsedCommand) throws -> Double {
        guard let seconds = try command.double("timeout"), seconds > 0 else {
            throw command.usageError("The timeout must be a number of seconds greater than 0")
        }
        return seconds
    }

    /// Connects to the daemon and reads its greeting.
    static func connect(_ command: ParsedCommand) throws(DaemonClientError) -> DaemonClient {
        try DaemonClient(path: socketPath(command))
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

extension ExitStatus {
    /// `EX_PROTOCOL`: the daemon said something this client cannot understand.
    static let protocolError: Int32 = 76
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

    /// What `weigh` and `calibrate` say when nothing settled in time.
    static func noStableReading(within seconds: Double) -> CommandFailure {
        CommandFailure(
            message: "no stable reading within \(DaemonClient.seconds(seconds)) s: put the object on the pad and keep it still",
            status: ExitStatus.failure)
    }
}

// MARK: - Lines as values

extension Reading {
    /// A READING line's values, or `nil` when a field is missing or of the wrong type.
    init?(json: JSONValue) {
        guard let time = json["time"]?.numberValue, let raw = json["raw"]?.numberValue,
              let force = json["force"]?.numberValue, let grams = json["grams"]?.numberValue,
              let saturated = json["saturated"]?.boolValue, let contacts = json["contacts"]?.numberValue,
              let stable = json["stable"]?.boolValue,
              let model = json["model"]?.stringValue.flatMap(GramModelKind.init(rawValue:)),
              let rawValue = Int32(exactly: raw.rounded()), let contactCount = Int(exactly: contacts.rounded())
        else { return nil }
        self.init(
            time: EventTime(json: time), raw: rawValue, force: force, grams: grams, saturated: saturated,
            contacts: contactCount, stable: stable, model: model)
    }

    /// Whether this is the weight of something resting on the pad.
    var isSettledWeight: Bool { stable && contacts > 0 }
}

extension Peak {
    /// A PEAK line's values, or `nil` when a field is missing.
    init?(json: JSONValue) {
        guard let time = json["time"]?.numberValue, let raw = json["raw"]?.numberValue,
              let grams = json["grams"]?.numberValue, let rawValue = Int32(exactly: raw.rounded()) else { return nil }
        self.init(time: EventTime(json: time), raw: rawValue, force: 1, grams: grams)
    }
}

extension EventTime {
    /// From the protocol's seconds with six decimals.
    init(json seconds: Double) {
        self.init(microseconds: seconds.isFinite && seconds.magnitude < 9e12 ? Int64((seconds * 1_000_000).rounded()) : 0)
    }
}

extension MassUnit {
    /// `179.7 g`, `0.1797 kg`: a weight as the gauge writes it.
    func format(grams: Double) -> String {
        DaemonFormat.fixed(fromGrams(grams), decimals: displayDecimals) + " " + rawValue
    }
}

enum DaemonFormat {
    /// `value` with exactly `decimals` decimals, rounded half away from zero.
    static func fixed(_ value: Double, decimals: Int) -> String {
        var scale: Int64 = 1
        for _ in 0..<decimals { scale *= 10 }
        guard value.isFinite, (value * Double(scale)).magnitude < 9e15 else { return value.description }
        let scaled = Int64((value * Double(scale)).rounded())
        let sign = scaled < 0 ? "-" : ""
        let magnitude = scaled.magnitude
        guard decimals > 0 else { return sign + String(magnitude) }
        let fraction = String(magnitude % UInt64(scale))
        return sign + String(magnitude / UInt64(scale)) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// `100` for 100.0, `12.5` for 12.5: a number as the user typed it.
    static func plain(_ value: Double) -> String { DaemonClient.seconds(value) }

    /// `1 point`, `3 points`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)" + (number == 1 ? "" : "s")
    }
}

// MARK: - The gauge for the daemon's stream

/// Shows READING and PEAK lines from the daemon with the same gauge as `read`: redrawn
/// in place on a terminal (one live line, a line left behind for each PEAK and each
/// lifted weight), one line per reading otherwise. Times count from the first line.
final class DaemonGaugePresenter {
    let output: OutputChannel
    let style: GaugeStyle
    let unit: MassUnit
    let inPlace: Bool
    private var gauge: Gauge?
    private var lastStable: Reading?
    private var liveLine = ""

    init(output: OutputChannel, unit: MassUnit) {
        self.output = output
        let terminal = output.isTerminal
        style = GaugeStyle(unicode: terminal && Environment.usesUTF8, color: terminal && !Environment.prefersNoColor)
        self.unit = unit
        inPlace = terminal
    }

    func show(_ line: DaemonLine) throws {
        switch line.className {
        case "READING":
            guard let reading = Reading(json: line.json) else { return }
            try show(reading)
        case "PEAK":
            guard let peak = Peak(json: line.json) else { return }
            try leaveLine(gauge(startingAt: peak.time).line(for: peak))
        default:
            return
        }
    }

    func end() throws {
        if inPlace, !liveLine.isEmpty { try output.write("\n") }
        try output.flush()
    }

    private func show(_ reading: Reading) throws {
        let gauge = gauge(startingAt: reading.time)
        guard inPlace else {
            try output.write(gauge.line(for: reading) + "\n")
            try output.flush()
            return
        }
        if reading.contacts == 0 {
            liveLine = ""
            try leaveLine(gauge.liftLine(at: reading.time, lastStable: lastStable))
            lastStable = nil
        } else {
            if reading.stable { lastStable = reading }
            liveLine = gauge.line(for: reading)
            try output.write("\r\u{1B}[K" + liveLine)
            try output.flush()
        }
    }

    private func gauge(startingAt time: EventTime) -> Gauge {
        if let gauge { return gauge }
        let made = Gauge(style: style, unit: unit, origin: time)
        gauge = made
        return made
    }

    /// Prints a permanent line above the live one.
    private func leaveLine(_ line: String) throws {
        try output.write(inPlace ? "\r\u{1B}[K" + line + "\n" + liveLine : line + "\n")
        try output.flush()
    }
}
