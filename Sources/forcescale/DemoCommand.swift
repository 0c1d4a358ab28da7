import ArgumentParsing
import ScaleCore
import ScalePOSIX
import ScaleRecording

enum DemoCommand: ParsableCommand {
    static let fast = OptionKey(flag: "fast", help: "Go as fast as possible instead of at the session's pace.")
    static let pen = OptionKey(flag: "pen", help: "The synthetic pen with weights on its tip instead of the touchpad.")
    static let write = OptionKey<String?>(
        "write", valueName: "file", help: "Write the session as an evemu recording to <file> ('-' for standard output) and exit.", parser: .text)

    static let configuration = CommandConfiguration(
        name: "demo",
        abstract: "Weigh three objects on a built-in synthetic touchpad session.",
        discussion: """
            Needs no pressure device: forcescale generates a session of a letter, an apple \
            and a mug of tea put on a 0-255 pressure touchpad, with sensor noise (synthetic, \
            not a recording of real hardware), and plays it through the same pipeline as a \
            real device, at its real pace. With --pen it is a synthetic pen tablet (0-2047) \
            instead, with household weights placed on its tip one by one, each pushed a little \
            further and let go: 'forcescale demo --pen --write pen.events', then \
            'forcescale characterize --replay pen.events --weights ...' with the weights its \
            comment lists, finds the activation force, curve and hysteresis it was made with.
            """,
        options: PipelineOptions.declarations + [fast, pen, write])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        var options = try PipelineOptions(command)
        options.realtime = !command[Self.fast]
        let recording = command[Self.pen] ? DemoPen.recording() : DemoSession.recording()
        return reportingFailures {
            if let path = command[Self.write] {
                try write(EvemuWriter.text(of: recording), to: path)
                return
            }
            if !options.json, OutputChannel.standardOutput.isTerminal {
                try OutputChannel.standardOutput.write("Demo: a synthetic session, no device needed. Ctrl-C stops it.\n")
            }
            let driver = ReplayDriver(
                settings: options.settings, presenter: options.makePresenter(liveGauge: true), realtime: options.realtime)
            try driver.play(recording)
        }
    }

    private static func write(_ text: String, to path: String) throws {
        if path == "-" {
            try OutputChannel.standardOutput.write(text)
            try OutputChannel.standardOutput.flush()
        } else {
            // A file that cannot be made is 73, as for every command that writes one; a
            // failure while writing it, 74.
            let file: ReplacementFile
            do { file = try ReplacementFile(path: path) } catch {
                throw CommandFailure(message: error.description, status: ExitStatus.cannotCreate)
            }
            try file.write(text)
            try file.commit()
        }
    }
}
