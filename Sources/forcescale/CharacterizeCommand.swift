import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScaleEvdev
import ScalePOSIX
import ScaleProtocol

/// `forcescale characterize`: a pen's activation force, pressure curve and hysteresis from
/// known weights, on a live pen through forcescaled or from a recording.
enum CharacterizeCommand {
    static let declaration = Command(
        name: "characterize",
        abstract: "Measure a pen's activation force, pressure curve and hysteresis with known weights.",
        discussion: """
            Stand the pen upright on its tip (in a holder) and put each weight on top of it, \
            alone, lightest first if you can. Each weight is measured when the pen is steady \
            with it resting (pressing); press it down a little further and let go, and it is \
            measured again when steady (releasing: the pen's hysteresis). Then lift it off. \
            Live, through forcescaled, the command asks for each weight of --weights in turn; \
            a weight with which the pen reads nothing is below its activation force. With \
            --replay FILE (an evemu or libinput recording) the file holds the same, each \
            touch a weight in the order of --weights; when it holds fewer touches than \
            weights, the lightest ones did not register. It prints the initial activation \
            force (IAF) with its uncertainty, each weight's logical pressure, the force at \
            each tenth of the range (P00 to P100, none past what the heaviest weight below \
            full scale reached), the hysteresis, where the range saturates, and the settings \
            that make the pen respond linearly to force: xsetwacom's PressureCurve, GNOME's \
            pressure-curve, libinput's pressure range and OpenTabletDriver's tip threshold, \
            each with the command that applies it. --json prints one object with the same \
            and the records in PenPressureData's form; --plot draws the response as SVG. At \
            least 3 weights are needed; docs/weighing.md lists household weights.
            """,
        options: [
            Option(long: "weights", valueName: "list", help: "The known weights in grams, in the order they are placed, e.g. 2.3,3.92,5.74,8.5,17,42.5,85,170,340.", isRequired: true),
            Option(long: "replay", valueName: "file", help: "Characterize from a recording instead of the live pen."),
            PipelineOptions.recordingDeviceDeclaration,
            Option(long: "json", help: "Print one JSON object instead of the table."),
            Option(long: "plot", valueName: "file", help: "Also draw the response as an SVG chart into this file."),
            DaemonConnection.timeoutOption(default: 60, help: "Live: how long to wait for each weight to settle."),
            DaemonConnection.deviceOption,
            DaemonConnection.socketOption,
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let text = command.string("weights") ?? ""
        let parsed = text.split(separator: ",", omittingEmptySubsequences: false).map { Double($0.trimmingSpaces) }
        guard !parsed.isEmpty, parsed.allSatisfy({ $0 != nil && $0! > 0 && $0!.isFinite }) else {
            throw command.usageError("--weights must list weights in grams greater than 0, separated by commas: 2.3,5.74,8.5,17,42.5")
        }
        let weights = parsed.map { $0! }
        guard weights.count >= 3 else {
            throw command.usageError("--weights lists \(weights.count): a pen's curve needs at least 3 known weights")
        }
        if command.string("recording-device") != nil, command.string("replay") == nil {
            throw command.usageError("--recording-device goes with --replay")
        }
        if let file = command.string("replay") {
            return reportingFailures {
                var files = RecordingFiles(file: file)
                files.deviceSelection = command.string("recording-device")
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
                try report(measurements, axis: tracker.axis, device: device.name, identity: device.identity, command: command, status: ExitStatus.dataError, source: file)
            }
        }
        let timeout = try DaemonConnection.timeout(command)
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(command)
            var session = try LivePenSession(client: client, device: command.string("device"), timeout: timeout, socket: DaemonConnection.socketPath(command))
            guard let measurements = try session.run(weights: weights) else {
                throw CommandFailure(message: "stopped: nothing was characterized", status: ExitStatus.failure)
            }
            try report(measurements, axis: session.axis, device: session.name, identity: session.identity, command: command, status: ExitStatus.failure, source: nil)
        }
    }

    /// Every frame's reading, as the stability rules need them.
    static func unthrottled() throws -> ScaleSettings {
        var settings = ScaleSettings()
        settings.throttleInterval = 0
        try settings.validate()
        return settings
    }

    /// Characterizes, prints the table or the JSON, and writes the plot.
    static func report(
        _ measurements: [WeightMeasurement], axis: ClosedRange<Int32>, device: String, identity: DeviceIdentity?,
        command: ParsedCommand, status: Int32, source: String?
    ) throws {
        let pen: PenCharacterization
        do {
            pen = try PenCharacterization(measurements: measurements, axis: axis)
        } catch {
            throw CommandFailure(message: (source.map { "\($0): " } ?? "") + error.description, status: status)
        }
        let report = PenReport(pen: pen, device: device, vendor: identity?.vendor ?? 0, product: identity?.product ?? 0)
        if let path = command.string("plot") {
            let output = try LogOutput(path: path)
            do {
                try output.write(report.svg)
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
        }
        try OutputChannel.standardOutput.write(command.flag("json") ? report.json : report.text)
        try OutputChannel.standardOutput.flush()
    }
}

/// Takes the readings of a replay and hands them to a ``PenTouchTracker``.
private final class TouchCollector: Presenter {
    var device: DeviceDescription?
    var tracker: PenTouchTracker?
    var touches: [PenTouch] = []

    func begin(device: DeviceDescription, source: PressureSource, model: GramModelKind, origin: EventTime) throws {
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
