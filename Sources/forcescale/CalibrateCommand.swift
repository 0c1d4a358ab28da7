import ArgumentParsing
import ScaleClient
import ScaleCore
import ScalePOSIX

enum CalibrateCommand {
    static let declaration = Command(
        name: "calibrate",
        abstract: "Add a known weight to the device's calibration curve.",
        discussion: """
            Put an object of known weight on the pad when asked: forcescaled takes its \
            next stable reading as that weight, adds the point to the device's curve and \
            keeps it. Repeat with other weights for a better curve (heavier weights must \
            press harder). --reset clears the curve and the tare first. Needs root or \
            membership of the daemon's group.
            """,
        options: [
            Option(long: "grams", valueName: "grams", help: "The known weight now on the pad, in grams."),
            DaemonConnection.timeoutOption(default: 60, help: "How long to wait for the weight to settle."),
            Option(long: "reset", help: "Clear the calibration and the tare (before adding a point, with --grams)."),
            DaemonConnection.socketOption,
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let grams = try command.double("grams")
        if let grams, grams <= 0 { throw command.usageError("--grams must be a weight greater than 0") }
        let reset = command.flag("reset")
        guard grams != nil || reset else {
            throw command.usageError("Give --grams N (the known weight you will put on the pad), or --reset")
        }
        let timeout = try DaemonConnection.timeout(command)
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(command)
            let output = OutputChannel.standardOutput
            if reset {
                let reply = try client.request(.calibration(reset: true), expecting: CalibrationMessage.self)
                let device = reply.message.device.map { " of \($0)" } ?? ""
                try output.write("Calibration\(device) reset: no points, no tare.\n")
                try output.flush()
            }
            guard let grams else { return }
            try calibrate(grams: grams, timeout: timeout, client: client, output: output)
        }
    }

    static func calibrate(grams: Double, timeout: Double, client: DaemonClient, output: OutputChannel) throws {
        try output.write("Put \(DaemonFormat.plain(grams)) g on the pad and keep it still…\n")
        try output.flush()
        // On a terminal, show what the pad reads meanwhile, so that one can see it settle.
        let progress = output.isTerminal
        var shown = false
        let showProgress: (ReceivedLine) throws -> Void = { line in
            guard progress, case .reading(let reading) = line.message else { return }
            let state = reading.contacts == 0 ? "nothing on the pad" : reading.stable ? "stable" : "settling"
            try output.write("\r\u{1B}[K  now \(MassUnit.grams.format(grams: reading.grams)) (\(state))")
            try output.flush()
            shown = true
        }
        if progress { _ = try client.request(.watch(enable: true, device: nil), expecting: WatchMessage.self) }
        let reply: DaemonReply<CalibrateMessage>
        do {
            reply = try client.request(.calibrate(grams: grams), expecting: CalibrateMessage.self, timeout: timeout, onStream: showProgress)
        } catch DaemonClientError.timedOut {
            if shown { try output.write("\n") }
            throw CommandFailure.noStableReading(within: timeout)
        } catch {
            if shown { try output.write("\n") }
            throw error
        }
        if shown { try output.write("\r\u{1B}[K") }
        let stored = reply.message
        let device = stored.device.map { " of \($0)" } ?? ""
        try output.write("Stored \(DaemonFormat.plain(stored.grams)) g at raw pressure \(DaemonFormat.plain(stored.raw)): the curve\(device) has \(DaemonFormat.count(stored.points, "point")).\n")
        try output.flush()
    }
}
