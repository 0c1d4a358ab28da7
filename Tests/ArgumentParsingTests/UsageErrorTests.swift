@testable import ArgumentParsing
import Testing

@Suite struct UsageErrorTests {
    static let replayUsage = """
        Usage: forcescale replay <file> [<events-file>] [--json] [--interval-ms <n>] [--unit <unit>]
          See 'forcescale replay --help' for more information.
        """

    static let demoUsage = """
        Usage: forcescale demo [--threshold <grams>] [--scale <factor>] [--output <file>] [--tag <tag> ...] [--speed <speed>] [--mode <mode>]
          See 'forcescale demo --help' for more information.
        """

    @Test func unknownOption() {
        #expect(usageErrorText(["replay", "rec.txt", "--bogus"]) == """
            Error: Unknown option '--bogus'
            \(Self.replayUsage)
            """)
    }

    @Test func unknownOptionWithAValueIsNamedWithoutIt() {
        #expect(usageErrorText(["replay", "--bogus=3"]) == "Error: Unknown option '--bogus'\n\(Self.replayUsage)")
    }

    @Test func unknownOptionCloseToADeclaredOneGetsASuggestion() {
        #expect(usageErrorText(["replay", "--jsn"]) == """
            Error: Unknown option '--jsn'. Did you mean '--json'?
            \(Self.replayUsage)
            """)
    }

    @Test func suggestionsStopAtThreeEdits() {
        #expect(usageErrorText(["replay", "--jabc"])?
            .hasPrefix("Error: Unknown option '--jabc'. Did you mean '--json'?\n") == true)
        #expect(usageErrorText(["replay", "--jabcd"])?.hasPrefix("Error: Unknown option '--jabcd'\n") == true)
    }

    @Test func unknownShortOption() {
        #expect(usageErrorText(["replay", "-x"]) == "Error: Unknown option '-x'\n\(Self.replayUsage)")
    }

    @Test func missingExpectedArgument() {
        #expect(usageErrorText(["replay", "--json"]) == """
            Error: Missing expected argument '<file>'
            Help:  <file>  The evemu recording, or the .desc of a split pair.
            \(Self.replayUsage)
            """)
    }

    @Test func unexpectedArgument() {
        #expect(usageErrorText(["replay", "a.desc", "a.events", "x"]) == """
            Error: Unexpected argument 'x'
            \(Self.replayUsage)
            """)
    }

    /// A file name a shell's `*` gave may hold escape sequences and newlines: the error
    /// quotes it escaped, on the error's one line.
    @Test func aQuotedArgumentIsShownWithItsControlCharactersEscaped() {
        #expect(usageErrorText(["replay", "a.desc", "a.events", "pad\u{1B}]0;PWNED\u{07}\nforged"]) == #"""
            Error: Unexpected argument 'pad\e]0;PWNED\a\nforged'
            """# + "\n" + Self.replayUsage)
        #expect(usageErrorText(["replay", "rec", "--unit", "x\u{1B}[2J"])?.hasPrefix(#"Error: The value 'x\e[2J' is invalid for '--unit <unit>'"#) == true)
    }

    @Test func severalUnexpectedArguments() {
        #expect(usageErrorText(["replay", "a", "b", "c", "d"]) == """
            Error: 2 unexpected arguments: 'c', 'd'
            \(Self.replayUsage)
            """)
    }

    @Test func missingValueAtTheEnd() {
        #expect(usageErrorText(["replay", "rec.txt", "--unit"]) == """
            Error: Missing value for '--unit <unit>'
            Help:  --unit <unit>  Unit of the human output.
            \(Self.replayUsage)
            """)
    }

    @Test func missingValueBeforeAnotherOption() {
        #expect(usageErrorText(["replay", "rec.txt", "--unit", "--json"])?
            .hasPrefix("Error: Missing value for '--unit <unit>'\n") == true)
    }

    @Test func missingValueNamesTheShortSpellingWhenTyped() {
        #expect(usageErrorText(["demo", "-o"]) == """
            Error: Missing value for '-o <file>'
            Help:  -o <file>  Write the readings here.
            \(Self.demoUsage)
            """)
    }

    @Test func valueGivenToAFlag() {
        #expect(usageErrorText(["replay", "rec.txt", "--json=yes"]) == """
            Error: The option '--json' does not take any value, but 'yes' was specified.
            \(Self.replayUsage)
            """)
    }

    @Test func invalidIntegerIsAUsageErrorOfParsing() throws {
        #expect(throws: UsageError.self) { try parse(["replay", "rec.txt", "--interval-ms", "abc"], root: Sample.root()) }
        do {
            _ = try parse(["replay", "rec.txt", "--interval-ms", "abc"], root: Sample.root())
        } catch {
            #expect(error.description == """
                Error: The value 'abc' is invalid for '--interval-ms <n>': not a whole number
                Help:  --interval-ms <n>  Minimum time between two readings.
                \(Self.replayUsage)
                """)
            #expect(error.message == "The value 'abc' is invalid for '--interval-ms <n>': not a whole number")
            #expect(error.usage == "forcescale replay <file> [<events-file>] [--json] [--interval-ms <n>] [--unit <unit>]")
            #expect(error.helpHint == "See 'forcescale replay --help' for more information.")
        }
    }

    @Test(arguments: [
        ("nan", "not a finite number"), ("inf", "not a finite number"), ("-inf", "not a finite number"),
        ("infinity", "not a finite number"), ("1.5x", "not a number"), ("", "not a number"),
    ])
    func nonFiniteOrMalformedDoublesAreRejected(value: String, reason: String) throws {
        #expect(usageErrorText(["demo", "--scale=\(value)"])?.hasPrefix("Error: The value '\(value)' is invalid for '--scale <factor>': \(reason)\n") == true)
    }

    @Test func invalidValueNamesTheShortSpellingWhenTyped() throws {
        #expect(throws: UsageError(
            message: "The value 'abc' is invalid for '-s <factor>': not a number",
            argumentHelp: "-s <factor>  Multiply every reading.",
            usage: "forcescale demo [--threshold <grams>] [--scale <factor>] [--output <file>] [--tag <tag> ...] [--speed <speed>] [--mode <mode>]",
            helpHint: "See 'forcescale demo --help' for more information.")) { try parse(["demo", "-s", "abc"], root: Sample.root()) }
    }

    @Test func valueOutsideSixAllowedValuesListsThemAsBullets() {
        #expect(usageErrorText(["replay", "rec.txt", "--unit", "stone"]) == """
            Error: The value 'stone' is invalid for '--unit <unit>'. Please provide one of the following:
              - g
              - kg
              - oz
              - lb
              - ct
              - N
            Help:  --unit <unit>  Unit of the human output.
            \(Self.replayUsage)
            """)
    }

    @Test func valueOutsideThreeAllowedValuesListsThemInline() {
        #expect(usageErrorText(["demo", "--speed=warp"])?.hasPrefix("""
            Error: The value 'warp' is invalid for '--speed <speed>'. Please provide one of 'slow', 'normal' or 'fast'.
            Help:  --speed <speed>  Playback speed.

            """) == true)
    }

    @Test func valueOutsideTwoAllowedValuesJoinsThemWithAnd() {
        #expect(usageErrorText(["demo", "--mode", "pie"])?.hasPrefix(
            "Error: The value 'pie' is invalid for '--mode <mode>'. Please provide one of 'bar' and 'dial'.\n") == true)
    }

    @Test func unknownSubcommandWithoutADefault() {
        #expect(usageErrorText(["frobnicate"], root: Sample.rootWithoutDefault) == """
            Error: Unexpected argument 'frobnicate'
            Usage: forcescale <subcommand>
              See 'forcescale --help' for more information.
            """)
    }

    @Test func unknownOptionBeforeTheSubcommandWithoutADefault() {
        #expect(usageErrorText(["--bogus", "replay"], root: Sample.rootWithoutDefault) == """
            Error: Unknown option '--bogus'
            Usage: forcescale <subcommand>
              See 'forcescale --help' for more information.
            """)
    }

    @Test func mistypedSubcommandGetsASuggestion() {
        #expect(usageErrorText(["rplay", "a.evemu"]) == """
            Error: Unknown subcommand 'rplay'. Did you mean 'replay'?
            Usage: forcescale <subcommand>
              See 'forcescale --help' for more information.
            """)
        #expect(usageErrorText(["dmeo"], root: Sample.rootWithoutDefault)?
            .hasPrefix("Error: Unknown subcommand 'dmeo'. Did you mean 'demo'?\n") == true)
    }

    /// `help` with a name that is no subcommand's is a usage error, as the mistyped
    /// subcommand itself is, never the root's help as if it had been understood.
    @Test func helpForAnUnknownSubcommandIsAUsageError() {
        #expect(usageErrorText(["help", "rplay"]) == """
            Error: Unknown subcommand 'rplay'. Did you mean 'replay'?
            Usage: forcescale <subcommand>
              See 'forcescale --help' for more information.
            """)
        #expect(usageErrorText(["help", "nosuchcommand"])?.hasPrefix("Error: Unknown subcommand 'nosuchcommand'\n") == true)
    }

    @Test func aTypoOfAShortNameIsAtMostHalfOfIt() {
        // Any word of three letters or five is within three edits of `log`.
        let root = Command(name: "forcescale", subcommands: [Command(name: "log"), Sample.demo], defaultSubcommand: "demo")
        #expect(usageErrorText(["xyz"], root: root)?.hasPrefix("Error: Unexpected argument 'xyz'\n") == true)
        #expect(usageErrorText(["bogus"], root: root)?.hasPrefix("Error: Unexpected argument 'bogus'\n") == true)
        #expect(usageErrorText(["logg"], root: root)?.hasPrefix("Error: Unknown subcommand 'logg'. Did you mean 'log'?\n") == true)
    }

    @Test func unknownWordGoesToTheDefaultSubcommand() {
        #expect(usageErrorText(["frobnicate"]) == "Error: Unexpected argument 'frobnicate'\n\(Self.demoUsage)")
    }

    @Test func missingRequiredOption() {
        let command = Command(name: "export", options: [
            Option(long: "output", short: "o", valueName: "file", help: "Where to write.", isRequired: true),
        ])
        #expect(usageErrorText([], root: command) == """
            Error: Missing expected argument '--output <file>'
            Help:  --output <file>  Where to write.
            Usage: export --output <file>
              See 'export --help' for more information.
            """)
    }

    @Test func commandsCanReportTheirOwnUsageErrors() throws {
        let command = try parsedCommand(["replay", "rec.txt"])
        #expect(command.usageError("The file is empty.").description == """
            Error: The file is empty.
            \(Self.replayUsage)
            """)
    }
}
