import ArgumentParsing
import Testing

@Suite struct ParsingTests {
    @Test func equalsSignJoinsAnOptionAndItsValue() throws {
        let command = try parsedCommand(["replay", "rec.txt", "--unit=kg", "--interval-ms=25"])
        #expect(command.string("unit") == "kg")
        #expect(try command.int("interval-ms") == 25)
        #expect(try parsedCommand(["demo", "--output="]).string("output") == "")
    }

    @Test func doubleDashMakesEverythingAfterItPositional() throws {
        let command = try parsedCommand(["replay", "--json", "--", "-x.desc", "--unit"])
        #expect(command.flag("json"))
        #expect(command.argument("file") == "-x.desc")
        #expect(command.argument("events-file") == "--unit")
        #expect(command.string("unit") == "g")
    }

    @Test(arguments: [
        (["--threshold", "-1"], -1.0),
        (["--threshold", "-0.5"], -0.5),
        (["--threshold", "-.25"], -0.25),
        (["--threshold", "-2e3"], -2000.0),
        (["--threshold=-3"], -3.0),
        (["--threshold", "7"], 7.0),
    ])
    func negativeNumbersAreOptionValues(arguments: [String], expected: Double) throws {
        #expect(try parsedCommand(["demo"] + arguments).double("threshold") == expected)
    }

    /// A list that starts with a negative number (`--weights -1,2,3`) is the option's value,
    /// for the command to check and name, not a missing value.
    @Test(arguments: ["-1,2,3", "-0.5,2", "-.5;x", "-3 g"])
    func aValueThatStartsLikeANegativeNumberIsTheOptionsValue(_ value: String) throws {
        #expect(try parsedCommand(["demo", "--output", value]).string("output") == value)
    }

    @Test func aDashAndALetterAfterAnOptionIsStillAnOption() {
        #expect(usageErrorText(["demo", "--output", "-x"])?.hasPrefix("Error: Missing value for '--output") == true)
    }

    @Test func aNegativeNumberWhereAnArgumentIsExpectedIsAnUnknownOption() {
        #expect(usageErrorText(["replay", "-5"])?.hasPrefix("Error: Unknown option '-5'\n") == true)
    }

    @Test func aLoneDashIsAValue() throws {
        #expect(try parsedCommand(["demo", "--output", "-"]).string("output") == "-")
        #expect(try parsedCommand(["replay", "-"]).argument("file") == "-")
    }

    @Test func defaultsAreReturnedWhenAnOptionIsNotGiven() throws {
        let command = try parsedCommand(["replay", "rec.txt"])
        #expect(command.string("unit") == "g")
        #expect(command.strings("unit") == ["g"])
        #expect(try command.int("interval-ms") == 10)
        #expect(try command.double("interval-ms") == 10)
        #expect(!command.flag("json"))
        #expect(!command.flag("unit"))
        #expect(command.argument("events-file") == nil)
        #expect(command.arguments("events-file") == [])
    }

    @Test func optionsWithoutADefaultAreNilWhenNotGiven() throws {
        let command = try parsedCommand(["demo"])
        #expect(command.string("threshold") == nil)
        #expect(try command.double("threshold") == nil)
        #expect(command.strings("tag") == [])
    }

    @Test func allowedValuesAreAccepted() throws {
        #expect(try parsedCommand(["replay", "rec.txt", "--unit", "N"]).string("unit") == "N")
    }

    @Test func theLastOccurrenceWinsAndRepeatableOptionsCollectEveryValue() throws {
        let command = try parsedCommand(["demo", "--tag", "a", "-o", "x.jsonl", "--tag=b", "--output", "y.jsonl", "--tag", "c"])
        #expect(command.string("output") == "y.jsonl")
        #expect(command.strings("tag") == ["a", "b", "c"])
        #expect(command.string("tag") == "c")
    }

    @Test func shortNamesReadTheNextValue() throws {
        #expect(try parsedCommand(["demo", "-s", "1.5"]).double("scale") == 1.5)
    }

    @Test func positionalsAndOptionsMayInterleave() throws {
        let command = try parsedCommand(["replay", "--json", "a.desc", "--unit", "oz", "a.events"])
        #expect(command.path == ["forcescale", "replay"])
        #expect(command.argument("file") == "a.desc")
        #expect(command.argument("events-file") == "a.events")
        #expect(command.string("unit") == "oz")
    }

    @Test func aRepeatingArgumentTakesEveryRemainingValue() throws {
        let root = Command(name: "cat", arguments: [
            Argument(name: "first"), Argument(name: "rest", isOptional: true, isRepeating: true),
        ])
        let command = try parsedCommand(["a", "b", "c"], root: root)
        #expect(command.argument("first") == "a")
        #expect(command.arguments("rest") == ["b", "c"])
        #expect(try parsedCommand(["a"], root: root).arguments("rest") == [])
    }

    @Test(arguments: [[String](), ["--threshold", "5"], ["-o", "out.jsonl"], ["--", "--tag"]] as [[String]])
    func argumentsThatNameNoSubcommandGoToTheDefault(arguments: [String]) throws {
        if arguments.first == "--" {
            // The default subcommand then sees the `--` itself and rejects the value after it.
            #expect(usageErrorText(arguments)?.hasPrefix("Error: Unexpected argument '--tag'\n") == true)
        } else {
            #expect(try parsedCommand(arguments).path == ["forcescale", "demo"])
        }
    }

    @Test func aNamedSubcommandIsSelected() throws {
        #expect(try parsedCommand(["replay", "rec.txt"]).path == ["forcescale", "replay"])
        #expect(try parsedCommand(["demo", "--threshold", "5"]).string("threshold") == "5")
    }

    @Test func aGroupWithoutADefaultShowsItsHelpWhenNoSubcommandIsNamed() throws {
        let help = try helpResult([], root: Sample.rootWithoutDefault)
        #expect(help.hasPrefix("OVERVIEW: Turn a pressure touchpad or pen tablet into a scale.\n\nUSAGE: forcescale <subcommand>\n"))
    }

    @Test func versionIsAnsweredAtTheRootAndBelowIt() throws {
        for arguments in [["--version"], ["replay", "--version"], ["demo", "--threshold", "1", "--version"]] {
            guard case let .version(version) = try parse(arguments, root: Sample.root()) else {
                Issue.record("\(arguments) did not ask for the version")
                continue
            }
            #expect(version == "1.2.3")
        }
        #expect(usageErrorText(["--version"], root: Sample.rootWithoutDefault)?
            .hasPrefix("Error: Unknown option '--version'\n") == true)
    }

    @Test func parentOptionsBeforeTheSubcommandNameReachTheSubcommand() throws {
        let root = Command(
            name: "tool",
            options: [Option(long: "verbose", short: "v")],
            subcommands: [Command(name: "run", options: [Option(long: "fast")])])
        let command = try parsedCommand(["-v", "run", "--fast"], root: root)
        #expect(command.path == ["tool", "run"])
        #expect(command.flag("verbose"))
        #expect(command.flag("fast"))
        #expect(usageErrorText(["run", "-v"], root: root)?.hasPrefix("Error: Unknown option '-v'\n") == true)
    }

    @Test func helpIsAnOrdinaryWordForARootWithoutSubcommands() throws {
        let root = Command(name: "say", arguments: [Argument(name: "word")])
        #expect(try parsedCommand(["help"], root: root).argument("word") == "help")
    }
}
