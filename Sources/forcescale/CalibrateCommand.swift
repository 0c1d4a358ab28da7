import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

enum CalibrateCommand: ParsableCommand {
    static let grams = OptionKey<Double?>("grams", valueName: "grams", help: "The known weight now on the pad, in grams.", parser: .number)
    static let show = OptionKey(flag: "show", help: "Print the calibration: points, fitted curve, residuals, uncertainty.")
    static let json = OptionKey(flag: "json", help: "With --show: print the CALIBRATION line instead.")
    static let guided = OptionKey(flag: "guided", help: "Take a whole calibration step by step, and save it when you agree.")
    static let weights = OptionKey<[Double]?>(
        "weights", valueName: "list", help: "With --guided: the known weights in grams, e.g. 20,50,100,200 (default: type each one).",
        parser: .weights(example: "20,50,100,200"))
    static let timeout = DaemonConnection.timeout(default: 60, help: "How long to wait for a weight to settle.")
    static let reset = OptionKey(flag: "reset", help: "Clear the calibration and the tare (before adding a point, with --grams).")

    static let configuration = CommandConfiguration(
        name: "calibrate",
        abstract: "Add a known weight to the device's calibration curve, or show or guide a calibration.",
        discussion: """
            Put an object of known weight on the pad when asked: forcescaled takes the mean \
            of its stable readings as that weight, adds the point to the device's curve and \
            keeps it. Repeat with other weights for a better curve (heavier weights must \
            press harder). A curve is fitted through the points (linear, power law, \
            logarithmic response or monotone cubic, chosen by leave-one-out; straight \
            segments when the points bend too faintly to extrapolate): --show prints \
            it with each point's residual and the uncertainty. --guided walks through a \
            whole calibration on a terminal, weight by weight (--weights, or typed one by \
            one), shows the fit and saves it only when you agree. --reset clears the curve \
            and the tare first. When the daemon serves several devices, --device names the \
            one to calibrate (without it the daemon's error lists them and calibrate exits \
            with status 1). Changing the calibration needs root or membership of the \
            daemon's group.
            """,
        options: [grams, show, json, guided, weights, timeout, reset, DaemonConnection.device, DaemonConnection.socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let grams = command[Self.grams]
        if let grams, grams <= 0 { throw command.usageError("--grams must be a weight greater than 0") }
        let reset = command[Self.reset]
        let show = command[Self.show]
        let guided = command[Self.guided]
        let weights = command[Self.weights]
        if weights != nil, !guided { throw command.usageError("--weights goes with --guided") }
        if command[Self.json], !show { throw command.usageError("--json goes with --show") }
        guard [grams != nil || reset, show, guided].filter({ $0 }).count == 1 else {
            throw command.usageError("Give --grams N (the known weight you will put on the pad), --reset, --show or --guided, one of them (--reset may go with --grams)")
        }
        let timeout = try DaemonConnection.timeout(command, Self.timeout)
        let device = command[DaemonConnection.device]
        let socket = command[DaemonConnection.socket]
        if show {
            return DaemonConnection.run {
                let client = try DaemonConnection.connect(socket)
                let reply = try client.request(.calibration(reset: false, device: device), expecting: CalibrationMessage.self)
                let output = OutputChannel.standardOutput
                try output.write(command[Self.json] ? reply.text + "\n" : describe(reply.message).joined(separator: "\n") + "\n")
                try output.flush()
            }
        }
        if guided {
            var status = ExitStatus.success
            let result = DaemonConnection.run {
                let client = try DaemonConnection.connect(socket)
                var session = GuidedCalibration(client: client, device: device, output: .standardOutput, timeout: timeout)
                status = try session.run(weights: weights)
            }
            return result == ExitStatus.success ? status : result
        }
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(socket)
            let output = OutputChannel.standardOutput
            if reset {
                let reply = try client.request(.calibration(reset: true, device: device), expecting: CalibrationMessage.self)
                let device = reply.message.device.map { " of \(untrusted: $0)" } ?? ""
                try output.write("Calibration\(device) reset: no points, no tare.\n")
                try output.flush()
            }
            guard let grams else { return }
            try calibrate(grams: grams, device: device, timeout: timeout, client: client, output: output)
        }
    }

    static func calibrate(grams: Double, device: String?, timeout: Double, client: DaemonClient, output: OutputChannel) throws {
        try output.write("Put \(DaemonFormat.plain(grams)) g on the pad and keep it still…\n")
        try output.flush()
        // On a terminal, show what the pad reads meanwhile, so that one can see it settle;
        // elsewhere a line when the weight is seen drifting, which the daemon does not take.
        let progress = output.isTerminal
        var shown = false
        var latest: ReadingMessage?
        var drifting: ReadingMessage?
        var driftSaid = false
        let showProgress: (ReceivedLine) throws -> Void = { line in
            guard case .reading(let reading) = line.message else { return }
            latest = reading
            if reading.drift != nil { drifting = reading }
            let drift = reading.driftText(unit: .grams)
            if progress {
                let state = reading.contacts == 0 ? "nothing on the pad" : reading.stable ? "stable" : drift.map { "\($0): not taken while it moves" } ?? "settling"
                try output.write("\r\u{1B}[K  now \(MassUnit.grams.format(grams: reading.grams)) (\(state))")
                try output.flush()
                shown = true
            } else if let drift, !driftSaid {
                driftSaid = true
                try output.write("  not taken yet: the weight is \(drift) at \(MassUnit.grams.format(grams: reading.grams)); a point is taken only once it stops\n")
                try output.flush()
            } else if reading.stable || reading.contacts == 0 {
                driftSaid = false
            }
        }
        _ = try client.request(.watch(enable: true, device: device), expecting: WatchMessage.self)
        let reply: DaemonReply<CalibrateMessage>
        do {
            reply = try client.request(.calibrate(grams: grams, device: device), expecting: CalibrateMessage.self, timeout: timeout, onStream: showProgress)
        } catch DaemonClientError.timedOut {
            if shown { try output.write("\n") }
            throw CommandFailure.noStableReading(within: timeout, moving: CommandFailure.stillMoving(drifting, latest: latest))
        } catch {
            if shown { try output.write("\n") }
            throw error
        }
        if shown { try output.write("\r\u{1B}[K") }
        let stored = reply.message
        let device = stored.device.map { " of \(untrusted: $0)" } ?? ""
        try output.write("Stored \(DaemonFormat.plain(stored.grams)) g at raw pressure \(DaemonFormat.plain(stored.raw)): the curve\(device) has \(DaemonFormat.count(stored.points, "point")).\n")
        try output.flush()
    }

    /// A calibration in words: the points with their residuals, the fitted curve and its
    /// parameters, the uncertainty, and the points the others contradict.
    /// The daemon's words in it (the device, the curve's and its parameters' names) are
    /// written as ``UntrustedText`` escapes them.
    /// - Parameter calibration: The CALIBRATION reply.
    /// - Returns: Lines without newlines.
    static func describe(_ calibration: CalibrationMessage) -> [String] {
        let device = calibration.device.map { " of \(untrusted: $0)" } ?? ""
        var lines = ["Calibration\(device): " + (calibration.points == 0 ? "no points" : DaemonFormat.count(calibration.points, "point"))
            + ", " + (calibration.tare == 0 ? "no tare" : "tare \(MassUnit.grams.format(grams: calibration.tare))") + "."]
        guard !calibration.curve.isEmpty else {
            lines.append("Weighing uses the pressure resolution or the nominal 385 g until a point is added.")
            return lines
        }
        if let model = calibration.model {
            let parameters = calibration.parameters.map { "\(untrusted: $0.name) = \(DaemonFormat.plain($0.value))" }.joined(separator: ", ")
            lines.append("  curve        \(untrusted: model): \(formula(model))" + (parameters.isEmpty ? "" : "  (\(parameters))"))
            if !calibration.parameters.isEmpty { lines.append("               x = (raw − axis minimum) / axis span") }
        }
        if let uncertainty = calibration.uncertainty {
            lines.append("  uncertainty  ± \(MassUnit.grams.format(grams: uncertainty)) (about 19 readings in 20 within it)")
        } else if calibration.model != nil {
            lines.append("  uncertainty  none: one point cannot show how the curve bends; add a lighter and a heavier weight")
        }
        let hasFit = calibration.pointFits.count == calibration.curve.count
        lines.append("        grams        raw       sd     n   residual   leave-one-out")
        for (index, point) in calibration.curve.enumerated() {
            let fit = hasFit ? calibration.pointFits[index] : CalibrationMessage.PointFit()
            func cell(_ value: Double?, _ width: Int, signed: Bool = false) -> String {
                guard let value else { return String(repeating: " ", count: width - 1) + "–" }
                let text = (signed && value >= 0 ? "+" : "") + fixed(value, decimals: 2)
                return String(repeating: " ", count: Swift.max(0, width - text.count)) + text
            }
            let count = point.count.map(String.init) ?? "–"
            lines.append("  " + cell(point.grams, 11) + cell(point.raw, 11) + cell(point.spread, 9)
                + String(repeating: " ", count: Swift.max(0, 6 - count.count)) + count
                + cell(fit.residual, 11, signed: true) + cell(fit.leaveOneOut, 16, signed: true))
        }
        for (index, point) in calibration.curve.enumerated() where hasFit {
            if let expected = calibration.pointFits[index].expected {
                lines.append(CalibrationReview.offCurve(point: point, expected: expected, index: index).message)
            }
        }
        return lines
    }

    /// The formula of a fitted family, by its protocol name.
    static func formula(_ model: String) -> String {
        switch ResponseFamily(rawValue: model) {
        case .linear: "g = a·x"
        case .power: "g = a·x^b"
        case .logarithmic: "g = a·(e^(k·x) − 1)"
        case .monotoneCubic: "a monotone cubic through the points"
        case .piecewiseLinear: "straight segments through the points"
        case nil: "a curve this forcescale does not know"
        }
    }
}

extension Substring {
    /// The text without leading and trailing spaces.
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " { text = text.dropFirst() }
        while text.last == " " { text = text.dropLast() }
        return text
    }
}
