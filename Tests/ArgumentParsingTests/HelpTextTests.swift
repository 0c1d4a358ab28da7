@testable import ArgumentParsing
import Testing

@Suite struct HelpTextTests {
    static let replayHelp = """
        OVERVIEW: Replay an evemu recording through the scale pipeline.

        USAGE: forcescale replay <file> [<events-file>] [--json] [--interval-ms <n>] [--unit <unit>]

        ARGUMENTS:
          <file>                  The evemu recording, or the .desc of a split pair.
          <events-file>           The .events file of a split pair.

        OPTIONS:
          --json                  Print JSON lines instead of the gauge.
          --interval-ms <n>       Minimum time between two readings. (default: 10)
          --unit <unit>           Unit of the human output. (values: g, kg, oz, lb, ct,
                                  N; default: g)
          -h, --help              Show help information.

        """

    static let rootHelp = """
        OVERVIEW: Turn a pressure touchpad or pen tablet into a scale.

        USAGE: forcescale <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          demo (default)          Replay a built-in synthetic session on the live gauge.
          replay                  Replay an evemu recording through the scale pipeline.

          See 'forcescale help <subcommand>' for detailed help.
        """

    @Test func subcommandHelpIsByteExact() {
        #expect(helpText(for: ["forcescale", "replay"], root: Sample.root(version: nil)) == Self.replayHelp)
    }

    @Test func rootHelpIsByteExact() {
        #expect(helpText(for: ["forcescale"], root: Sample.root()) == Self.rootHelp)
    }

    @Test(arguments: [
        ["-h"], ["--help"], ["help"], ["--help", "replay"],
    ])
    func everyWayOfAskingPrintsTheRootHelp(arguments: [String]) throws {
        #expect(try helpResult(arguments) == Self.rootHelp)
    }

    @Test(arguments: [
        ["replay", "-h"], ["replay", "--help"], ["help", "replay"], ["replay", "rec.txt", "--json", "--help"],
        ["replay", "--bogus", "-h"], ["replay", "--help", "--", "-h"],
    ])
    func everyWayOfAskingPrintsTheSubcommandHelp(arguments: [String]) throws {
        #expect(try helpResult(arguments, root: Sample.root(version: nil)) == Self.replayHelp)
    }

    @Test func helpAfterDoubleDashIsAnArgument() throws {
        let command = try parsedCommand(["replay", "--", "--help"])
        #expect(command[SampleReplay.file] == "--help")
    }

    @Test func subcommandsOfAVersionedRootListVersion() {
        let help = helpText(for: ["forcescale", "replay"], root: Sample.root())
        #expect(help.contains("""
              --version               Show the version.
              -h, --help              Show help information.

            """))
    }

    @Test func discussionFollowsTheOverviewAndWraps() {
        let command = Command(
            name: "tare",
            abstract: "Zero the scale.",
            discussion: "The reading at the moment of the call becomes the new zero, so take your hands off the pad first.\nA second line.")
        #expect(helpText(for: ["tare"], root: command) == """
            OVERVIEW: Zero the scale.

            The reading at the moment of the call becomes the new zero, so take your hands
            off the pad first.
            A second line.

            USAGE: tare

            OPTIONS:
              -h, --help              Show help information.

            """)
    }

    @Test func shortNamesRepeatingArgumentsAndRequiredOptionsAreShown() {
        let command = Command(
            name: "merge",
            arguments: [
                Argument(name: "first", help: "The first recording."),
                Argument(name: "more", help: "Further recordings.", isOptional: true, isRepeating: true),
            ],
            options: [
                Option(long: "output", short: "o", valueName: "file", help: "Where to write.", isRequired: true),
                Option(long: "tag", valueName: "tag", help: "A label.", isRepeatable: true),
            ])
        #expect(helpText(for: ["merge"], root: command) == """
            USAGE: merge <first> [<more> ...] --output <file> [--tag <tag> ...]

            ARGUMENTS:
              <first>                 The first recording.
              <more>                  Further recordings.

            OPTIONS:
              -o, --output <file>     Where to write.
              --tag <tag>             A label.
              -h, --help              Show help information.

            """)
    }

    @Test func labelsThatReachTheHelpColumnPutTheHelpOnTheNextLine() {
        let command = Command(
            name: "tool",
            options: [
                // 23 characters: still fits before column 27, with one space.
                Option(long: "twenty-three-chars-ab", help: "Fits."),
                // 24 characters: the help moves to the next line.
                Option(long: "twenty-four-chars-abcd", help: "Moves."),
            ])
        #expect(helpText(for: ["tool"], root: command) == """
            USAGE: tool [--twenty-three-chars-ab] [--twenty-four-chars-abcd]

            OPTIONS:
              --twenty-three-chars-ab Fits.
              --twenty-four-chars-abcd
                                      Moves.
              -h, --help              Show help information.

            """)
    }

    @Test func longHelpWrapsToTheTerminalWidthAtColumn27() {
        let command = Command(
            name: "tool",
            options: [
                Option(long: "verbose", help: "Print every event as it arrives, including the ones that are filtered out."),
                Option(long: "x", help: "A supercalifragilisticexpialidocious-and-then-some word."),
            ])
        #expect(helpText(for: ["tool"], root: command, terminalWidth: 50) == """
            USAGE: tool [--verbose] [--x]

            OPTIONS:
              --verbose               Print every event as it
                                      arrives, including the
                                      ones that are filtered
                                      out.
              --x                     A
                                      supercalifragilisticexpialidocious-and-then-some
                                      word.
              -h, --help              Show help information.

            """)
    }

    @Test func onlyALineLastPieceMayFillTheWholeWidth() {
        // 54 columns are left after the help column at width 80.
        let exactly54 = String(repeating: "x", count: 50) + " yyy"
        let command = Command(name: "tool", options: [
            Option(long: "a", help: exactly54),
            Option(long: "b", help: exactly54 + " z"),
        ])
        let help = helpText(for: ["tool"], root: command)
        #expect(help.contains("  --a                     \(exactly54)\n"))
        #expect(help.contains("  --b                     \(String(repeating: "x", count: 50))\n                          yyy z\n"))
    }

    @Test func aLongListOfOptionsCollapsesInTheUsageLine() {
        let many = (1...13).map { Option(long: "option\($0)") }
        let withRequired = many + [Option(long: "name", valueName: "name", isRequired: true)]
        #expect(helpText(for: ["tool"], root: Command(name: "tool", options: many)).hasPrefix("USAGE: tool <options>\n"))
        #expect(helpText(for: ["tool"], root: Command(name: "tool", options: withRequired))
            .hasPrefix("USAGE: tool [<options>] --name <name>\n"))
    }

    @Test func nestedGroupsPointAtTheHelpSubcommand() {
        let root = Command(name: "tool", subcommands: [
            Command(name: "device", abstract: "Manage devices.", subcommands: [Command(name: "list", abstract: "List devices.")]),
        ])
        #expect(helpText(for: ["tool", "device"], root: root) == """
            OVERVIEW: Manage devices.

            USAGE: tool device <subcommand>

            OPTIONS:
              -h, --help              Show help information.

            SUBCOMMANDS:
              list                    List devices.

              See 'tool help device <subcommand>' for detailed help.
            """)
    }
}
