import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScaleEvdev
import ScalePOSIX
import ScaleProtocol
import ScaleRecording

/// `forcescale characterize`: a pen's activation force, pressure curve and hysteresis from
/// known weights, on a live pen through forcescaled or from a recording.
enum CharacterizeCommand: ParsableCommand {
    static let weights = OptionKey<[Double]>(
        "weights", valueName: "list",
        help: "The known weights in grams, in the order they are placed, e.g. 2.3,3.92,5.74,8.5,17,42.5,85,170,340.",
        parser: .weights(example: "2.3,5.74,8.5,17,42.5"))
    static let replay = OptionKey<String?>(
        "replay", valueName: "file", help: "Characterize from a recording (evemu, or libinput record YAML) instead of the live pen.", parser: .text)
    static let json = OptionKey(flag: "json", help: "Print one JSON object instead of the table.")
    static let plot = OptionKey<String?>("plot", valueName: "file", help: "Also draw the response as an SVG chart into this file.", parser: .text)
    static let timeout = DaemonConnection.timeout(default: 60, help: "Live: how long to wait for each weight to settle.")

    static let configuration = CommandConfiguration(
        name: "characterize",
        abstract: "Measure a pen's activation force, pressure curve and hysteresis with known weights.",
        discussion: """
            Stand the pen upright on its tip (in a holder) and put each weight on top of it, \
            alone, lightest first if you can. Each weight is measured when the pen is steady \
            with it resting (pressing); press it down a little further and let go, and it is \
            measured again when steady (releasing: the pen's hysteresis). Then lift it off. \
            Live, through forcescaled, the command asks for each weight of --weights in turn; \
            a weight with which the pen reads nothing is below its activation force. With \
            --replay FILE (an evemu recording, or a libinput record in YAML: of one with \
            several devices the pen, or the one --recording-device names) the file holds the \
            same, each touch a weight in the order of --weights; when it holds fewer touches \
            than weights, the lightest ones did not register. A device that is not a pen (no \
            BTN_TOOL_PEN) is refused: the settings are a stylus's. It prints the initial \
            activation force (IAF) with its uncertainty, each weight's logical pressure, the \
            force at each tenth of the range (P00 to P100, none past what the heaviest weight \
            below full scale reached), the hysteresis, where the range saturates, and the \
            settings that make the pen respond linearly to force: xsetwacom's PressureCurve \
            (for the X device xf86-input-wacom names 'NAME stylus') and GNOME's \
            pressure-curve, each with the command that sets it, but no curve when fewer than \
            3 weights registered; libinput's pressure range, which a compositor's tablet \
            settings set (libinput 1.26 and later; libinput keeps none); and OpenTabletDriver's tip \
            threshold. --json prints one object with the same and the records in \
            PenPressureData's form; --plot draws the response as SVG. At least 3 weights are \
            needed; docs/weighing.md lists household weights.
            """,
        options: [
            weights, replay, PipelineOptions.recordingDevice, json, plot, timeout, DaemonConnection.device, DaemonConnection.socket,
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let weights = command[Self.weights]
        guard weights.count >= 3 else {
            throw command.usageError("--weights lists \(weights.count): a pen's curve needs at least 3 known weights")
        }
        let recordingDevice = command[PipelineOptions.recordingDevice]
        if recordingDevice != nil, command[Self.replay] == nil {
            throw command.usageError("--recording-device goes with --replay")
        }
        let output = ReportOutput(json: command[Self.json], plot: command[Self.plot])
        if let file = command[Self.replay] {
            return reportingFailures {
                var files = RecordingFiles(file: file)
                files.deviceSelection = recordingDevice
                files.preference = .pen
                let collector = TouchCollector()
                try ReplayDriver(settings: try unthrottled(), presenter: collector, realtime: false).play(files)
                guard let device = collector.device, let tracker = collector.tracker else {
                    throw CommandFailure(message: "\(file): no pressure device in the recording", status: ExitStatus.dataError)
                }
                let measurements: [WeightMeasurement]
                do {
                    measurements = try PenCharacterization.pair(weights: weights, touches: collector.touches)
                } catch {
                    throw CommandFailure(message: "\(file): \(error)", status: ExitStatus.dataError)
                }
                try report(measurements, axis: tracker.axis, device: device.name, identity: device.identity, output: output, status: ExitStatus.dataError, source: file)
            }
        }
        let timeout = try DaemonConnection.timeout(command, Self.timeout)
        let socket = DaemonConnection.socketPath(command[DaemonConnection.socket])
        let device = command[DaemonConnection.device]
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(socket)
            var session = try LivePenSession(client: client, device: device, timeout: timeout, socket: socket)
            guard let measurements = try session.run(weights: weights) else {
                throw CommandFailure(message: "stopped: nothing was characterized", status: ExitStatus.failure)
            }
            try report(measurements, axis: session.axis, device: session.name, identity: session.identity, output: output, status: ExitStatus.failure, source: nil)
        }
    }

    /// Refuses a device that is not a pen: its settings (xsetwacom, GNOME's stylus, libinput's
    /// tablet tool) would apply to nothing.
    /// - Parameters:
    ///   - why: How it is known (`it has no BTN_TOOL_PEN`).
    ///   - advice: What to do instead.
    static func requirePen(name: String, isPen: Bool, why: String, advice: String) throws {
        guard !isPen else { return }
        throw CommandFailure(
            message: "'\(name)' is not a pen (\(why)), so it is not characterized: the settings this command gives are a stylus's; \(advice)",
            status: ExitStatus.dataError)
    }

    /// Every frame's reading, as the stability rules need them.
    static func unthrottled() throws -> ScaleSettings {
        var settings = ScaleSettings()
        settings.throttleInterval = 0
        try settings.validate()
        return settings
    }

    /// What the report goes to: the JSON or the table, and the plot's file.
    struct ReportOutput {
        var json: Bool
        var plot: String?
    }

    /// Characterizes, prints the table or the JSON, and writes the plot.
    static func report(
        _ measurements: [WeightMeasurement], axis: ClosedRange<Int32>, device: String, identity: DeviceIdentity?,
        output destination: ReportOutput, status: Int32, source: String?
    ) throws {
        let pen: PenCharacterization
        do {
            pen = try PenCharacterization(measurements: measurements, axis: axis)
        } catch {
            throw CommandFailure(message: (source.map { "\($0): " } ?? "") + error.description, status: status)
        }
        let report = PenReport(pen: pen, device: device, vendor: identity?.vendor ?? 0, product: identity?.product ?? 0)
        if let path = destination.plot {
            let output = try LogOutput(path: path)
            do {
                try output.write(report.svg)
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
        }
        try OutputChannel.standardOutput.write(destination.json ? report.json : report.text)
        try OutputChannel.standardOutput.flush()
    }
}

/// Takes the readings of a replay and hands them to a ``PenTouchTracker``.
private final class TouchCollector: Presenter {
    var device: DeviceDescription?
    var tracker: PenTouchTracker?
    var touches: [PenTouch] = []

    func begin(device: DeviceDescription, source: PressureSource, model: GramModelKind, origin: EventTime) throws {
        try CharacterizeCommand.requirePen(
            name: device.name, isPen: device.supports(.key, .btnToolPen), why: "it has no BTN_TOOL_PEN",
            advice: "replay a recording of the pen (of a libinput record holding several devices, name it with --recording-device)")
        self.device = device
        tracker = PenTouchTracker(axis: source.axis.minimum...source.axis.maximum, fuzz: source.axis.fuzz)
    }

    func show(_ output: ScaleOutput) throws {
        guard case .reading(let reading) = output else { return }
        take(tracker?.add(time: reading.time, raw: reading.raw, touching: reading.contacts > 0) ?? [])
    }

    func end() throws {
        take(tracker?.finish().map { [$0] } ?? [])
    }

    private func take(_ events: [PenTouchTracker.Event]) {
        for case .ended(let touch?) in events { touches.append(touch) }
    }
}
