@testable import ArgumentParsing

/// `forcescale replay` of the sample tool: each run answers with a status of its own, so
/// that a test sees which type ran.
enum SampleReplay: ParsableCommand {
    static let file = ArgumentKey<String>("file", help: "The evemu recording, or the .desc of a split pair.", parser: .text)
    static let eventsFile = ArgumentKey<String?>("events-file", help: "The .events file of a split pair.", parser: .text)
    static let json = OptionKey(flag: "json", help: "Print JSON lines instead of the gauge.")
    static let interval = OptionKey<Int>("interval-ms", valueName: "n", help: "Minimum time between two readings.", parser: .integer, default: 10)
    static let unit = OptionKey<String>(
        "unit", valueName: "unit", help: "Unit of the human output.", parser: .oneOf(["g", "kg", "oz", "lb", "ct", "N"]), default: "g")

    static let configuration = CommandConfiguration(
        name: "replay",
        abstract: "Replay an evemu recording through the scale pipeline.",
        arguments: [file, eventsFile],
        options: [json, interval, unit])

    /// The status `replay` exits with.
    static let status: Int32 = 20

    /// `replay` of a file named `usage-error` reports a usage error of its own, of one named
    /// `disk-full` another error; any other file runs.
    static func run(_ command: ParsedCommand) throws -> Int32 {
        switch command[file] {
        case "usage-error": throw command.usageError("The file is empty.")
        case "disk-full": throw DiskFull()
        default: return status
        }
    }
}

/// `forcescale demo` of the sample tool, the default subcommand.
enum SampleDemo: ParsableCommand {
    static let threshold = OptionKey<Double?>("threshold", valueName: "grams", help: "Readings below this are shown as zero.", parser: .number)
    static let scale = OptionKey<Double?>("scale", short: "s", valueName: "factor", help: "Multiply every reading.", parser: .number)
    static let output = OptionKey<String?>("output", short: "o", valueName: "file", help: "Write the readings here.", parser: .text)
    static let tag = OptionKey<[String]>(repeating: "tag", valueName: "tag", help: "Label the session.", parser: .text)
    static let speed = OptionKey<String?>("speed", valueName: "speed", help: "Playback speed.", parser: .oneOf(["slow", "normal", "fast"]))
    static let mode = OptionKey<String?>("mode", valueName: "mode", help: "Gauge mode.", parser: .oneOf(["bar", "dial"]))

    static let configuration = CommandConfiguration(
        name: "demo",
        abstract: "Replay a built-in synthetic session on the live gauge.",
        options: [threshold, scale, output, tag, speed, mode])

    /// The status `demo` exits with.
    static let status: Int32 = 10

    static func run(_ command: ParsedCommand) throws -> Int32 { status }
}

/// The sample tool, modelled on forcescale: `demo` (the default) and `replay`.
enum SampleTool: CommandGroup {
    static let configuration = GroupConfiguration(
        name: "forcescale",
        abstract: "Turn a pressure touchpad or pen tablet into a scale.",
        subcommands: [.command(SampleDemo.self), .command(SampleReplay.self)],
        defaultSubcommand: SampleDemo.self,
        version: "1.2.3")
}

/// The sample tool without a default subcommand or a version: its subcommands must be named.
enum SampleToolWithoutDefault: CommandGroup {
    static let configuration = GroupConfiguration(
        name: "forcescale",
        abstract: "Turn a pressure touchpad or pen tablet into a scale.",
        subcommands: [.command(SampleDemo.self), .command(SampleReplay.self)])
}

struct DiskFull: Error, CustomStringConvertible {
    var description: String { "The disk is full." }
}

/// The sample tree as the parser, help and errors see it.
enum Sample {
    static let replay = Command(SampleReplay.self)
    static let demo = Command(SampleDemo.self)

    /// The root, with a version unless told otherwise.
    static func root(version: String? = "1.2.3") -> Command {
        var root = Command(group: SampleTool.self)
        root.version = version
        return root
    }

    /// A root whose subcommands must be named.
    static let rootWithoutDefault = Command(group: SampleToolWithoutDefault.self)
}

/// Parses and returns the selected command, failing the test on anything else.
func parsedCommand(_ arguments: [String], root: Command = Sample.root()) throws -> ParsedCommand {
    guard case let .run(command) = try parse(arguments, root: root) else {
        throw UnexpectedResult(arguments: arguments)
    }
    return command
}

/// Parses and returns the help text, failing the test on anything else.
func helpResult(_ arguments: [String], root: Command = Sample.root()) throws -> String {
    guard case let .help(text) = try parse(arguments, root: root) else {
        throw UnexpectedResult(arguments: arguments)
    }
    return text
}

/// Parses a command line expected to be rejected and returns the full error text.
func usageErrorText(_ arguments: [String], root: Command = Sample.root()) -> String? {
    do {
        _ = try parse(arguments, root: root)
        return nil
    } catch {
        return error.description
    }
}

/// Parsing gave a different kind of result than the test expected.
struct UnexpectedResult: Error {
    var arguments: [String]
}
