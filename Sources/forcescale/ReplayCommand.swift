import ArgumentParsing
import ScaleEvdev
import ScaleRecording

enum ReplayCommand: ParsableCommand {
    static let file = ArgumentKey<String>("file", help: "The recording (evemu or libinput record), or the .desc file of a split pair.", parser: .text)
    static let eventsFile = ArgumentKey<String?>("events-file", help: "The events-only file of a split pair.", parser: .text)

    static let configuration = CommandConfiguration(
        name: "replay",
        abstract: "Replay a recording (evemu or libinput record) through the scale pipeline.",
        discussion: """
            Reads a recording made with evemu-record (EVEMU 1.0 to 1.3), the older split \
            pair of a NAME.desc and an events-only file, or a libinput record (YAML, known by \
            its content), and prints the readings and peaks the scale would have produced \
            live. Of a libinput record with several devices it plays the first with pressure \
            and events, and says so on standard error when several have them; \
            --recording-device chooses another. A file's own description wins; an \
            events-only file given alone finds NAME.desc or NAME.device beside it for \
            NAME.events, NAME.variant.events or 'NAME variant.events'.
            """,
        arguments: [file, eventsFile],
        options: PipelineOptions.declarations + [PipelineOptions.realtime, PipelineOptions.recordingDevice])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        var options = try PipelineOptions(command)
        options.realtime = command[PipelineOptions.realtime]
        var files = RecordingFiles(file: command[Self.file], eventsFile: command[Self.eventsFile])
        files.deviceSelection = command[PipelineOptions.recordingDevice]
        return reportingFailures {
            let driver = ReplayDriver(
                settings: options.settings, presenter: options.makePresenter(liveGauge: true), realtime: options.realtime)
            try driver.play(files)
        }
    }
}
