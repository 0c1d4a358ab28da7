import ArgumentParsing

/// The command tree the tests parse against, modelled on forcescale's own.
enum Sample {
    static let replay = Command(
        name: "replay",
        abstract: "Replay an evemu recording through the scale pipeline.",
        arguments: [
            Argument(name: "file", help: "The evemu recording, or the .desc of a split pair."),
            Argument(name: "events-file", help: "The .events file of a split pair.", isOptional: true),
        ],
        options: [
            Option(long: "json", help: "Print JSON lines instead of the gauge."),
            Option(long: "interval-ms", valueName: "n", help: "Minimum time between two readings.", defaultValue: "10"),
            Option(
                long: "unit", valueName: "unit", help: "Unit of the human output.", defaultValue: "g",
                allowedValues: ["g", "kg", "oz", "lb", "ct", "N"]),
        ])

    static let demo = Command(
        name: "demo",
        abstract: "Replay a built-in synthetic session on the live gauge.",
        options: [
            Option(long: "threshold", valueName: "grams", help: "Readings below this are shown as zero."),
            Option(long: "scale", short: "s", valueName: "factor", help: "Multiply every reading."),
            Option(long: "output", short: "o", valueName: "file", help: "Write the readings here."),
            Option(long: "tag", valueName: "tag", help: "Label the session.", isRepeatable: true),
            Option(long: "speed", valueName: "speed", help: "Playback speed.", allowedValues: ["slow", "normal", "fast"]),
            Option(long: "mode", valueName: "mode", help: "Gauge mode.", allowedValues: ["bar", "dial"]),
        ])

    /// The root, with a version unless told otherwise.
    static func root(version: String? = "1.2.3") -> Command {
        Command(
            name: "forcescale",
            abstract: "Turn a pressure touchpad or pen tablet into a scale.",
            subcommands: [demo, replay],
            defaultSubcommand: "demo",
            version: version)
    }

    /// A root whose subcommands must be named.
    static let rootWithoutDefault = Command(
        name: "forcescale",
        abstract: "Turn a pressure touchpad or pen tablet into a scale.",
        subcommands: [demo, replay])
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
