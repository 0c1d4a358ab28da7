import ArgumentParsing
import Glibc
import ScaleCore
import ScaleEvdev
import ScaleOptions
import ScalePOSIX

enum RecordCommand: ParsableCommand {
    static let output = OptionKey<String?>("output", short: "o", valueName: "file", help: "Write the recording here instead of to standard output.", parser: .text)
    static let duration = OptionKey<Double?>("duration", valueName: "seconds", help: "Stop after this many seconds.", parser: .number)
    static let format = OptionKey<RecordingFormat>(
        "format", valueName: "format", help: "The file format: evemu text, or libinput record's YAML.", parser: .choice, default: .evemu)

    static let configuration = CommandConfiguration(
        name: "record",
        abstract: "Record a live device in evemu (or libinput record) format, for replay and for sharing.",
        discussion: """
            Writes the device's description and then every event it sends, in the text \
            format of evemu-record, until Ctrl-C, --duration or the device's removal. The \
            file replays with 'forcescale replay' (giving the same readings as the live \
            run, times included: events keep the kernel's monotonic timestamps) and with \
            evemu-device and evemu-play. With --format libinput the file is the version-1 \
            YAML of 'libinput record' instead, which 'libinput replay' replays and \
            'forcescale replay' reads back to the same readings. The device is not grabbed, so the desktop keeps \
            it meanwhile. Recordings hold everything the device reports, positions \
            included: look before you share one.
            """,
        options: [SettingOption.device, output, duration, format])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let seconds = command[Self.duration]
        if let seconds, !(seconds > 0 && seconds <= 31_536_000) {
            throw command.usageError("The duration must be more than 0 and at most a year of seconds, e.g. --duration 30")
        }
        let format = command[Self.format]
        let outputPath = command[Self.output].flatMap { $0 == "-" ? nil : $0 }
        return reportingFailures {
            let candidate = try DeviceDiscovery.choose(command[SettingOption.device].map(DeviceQuery.init), from: DeviceDiscovery.scan())
            let device = try EvdevDevice(path: candidate.path, wantsWrite: false)
            let output = try outputPath.map(openOutput) ?? OutputChannel.standardOutput
            defer { if outputPath != nil { try? output.descriptor.close() } }
            let destination = outputPath ?? "standard output"
            printDiagnostic("forcescale: recording \(device.path) (\(device.description.name)) to \(destination); Ctrl-C stops")
            let recorder = DeviceRecorder(device: device, output: output, loop: try EventLoop(), format: format)
            let comments = [
                "recorded by forcescale \(Forcescale.version) from \(device.path) at \(LocalTime.text(LocalTime.now(), offset: true))",
                format == .evemu ? "E: times are the kernel's CLOCK_MONOTONIC, as forcescale read and forcescaled see them"
                    : "event times are the kernel's CLOCK_MONOTONIC, as forcescale read and forcescaled see them",
            ]
            let summary: RecordingSummary
            do {
                summary = try recorder.record(comments: comments, seconds: seconds)
            } catch let error as Errno {
                throw CommandFailure(message: "\(destination): \(error); the recording up to here is in it", status: ExitStatus.ioError)
            }
            var line = "forcescale: recorded \(summary.events) events (\(summary.frames) frames) to \(destination)"
            if summary.resynchronizations > 0 {
                line += "; the kernel dropped events \(summary.resynchronizations) time(s) (marked in the file)"
            }
            if summary.ending == .deviceRemoved { line += "; \(device.path) was removed, so recording stopped" }
            printDiagnostic(line)
        }
    }

    /// Creates (or truncates) the output file.
    private static func openOutput(_ path: String) throws -> OutputChannel {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let error = SystemError(path: path, errno: .current, hint: "check that its directory exists and is writable")
            throw CommandFailure(message: error.description, status: ExitStatus.cannotCreate)
        }
        return OutputChannel(descriptor: FileDescriptor(rawValue: descriptor))
    }
}
