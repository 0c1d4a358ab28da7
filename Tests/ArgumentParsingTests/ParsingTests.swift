@testable import ArgumentParsing
import Testing

@Suite struct ParsingTests {
    @Test func equalsSignJoinsAnOptionAndItsValue() throws {
        let command = try parsedCommand(["replay", "rec.txt", "--unit=kg", "--interval-ms=25"])
        #expect(command[SampleReplay.unit] == "kg")
        #expect(command[SampleReplay.interval] == 25)
        #expect(try parsedCommand(["demo", "--output="])[SampleDemo.output] == "")
    }

    @Test func doubleDashMakesEverythingAfterItPositional() throws {
        let command = try parsedCommand(["replay", "--json", "--", "-x.desc", "--unit"])
        #expect(command[SampleReplay.json])
        #expect(command[SampleReplay.file] == "-x.desc")
        #expect(command[SampleReplay.eventsFile] == "--unit")
        #expect(command[SampleReplay.unit] == "g")
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
        #expect(try parsedCommand(["demo"] + arguments)[SampleDemo.threshold] == expected)
    }

    /// A list that starts with a negative number (`--weights -1,2,3`) is the option's value,
    /// for the command to check and name, not a missing value.
    @Test(arguments: ["-1,2,3", "-0.5,2", "-.5;x", "-3 g"])
    func aValueThatStartsLikeANegativeNumberIsTheOptionsValue(_ value: String) throws {
        #expect(try parsedCommand(["demo", "--output", value])[SampleDemo.output] == value)
    }

    @Test func aDashAndALetterAfterAnOptionIsStillAnOption() {
        #expect(usageErrorText(["demo", "--output", "-x"])?.hasPrefix("Error: Missing value for '--output") == true)
    }

    @Test func aNegativeNumberWhereAnArgumentIsExpectedIsAnUnknownOption() {
        #expect(usageErrorText(["replay", "-5"])?.hasPrefix("Error: Unknown option '-5'\n") == true)
    }

    @Test func aLoneDashIsAValue() throws {
        #expect(try parsedCommand(["demo", "--output", "-"])[SampleDemo.output] == "-")
        #expect(try parsedCommand(["replay", "-"])[SampleReplay.file] == "-")
    }

    @Test func defaultsAreReturnedWhenAnOptionIsNotGiven() throws {
        let command = try parsedCommand(["replay", "rec.txt"])
        #expect(command[SampleReplay.unit] == "g")
        #expect(command[SampleReplay.interval] == 10)
        #expect(!command[SampleReplay.json])
        #expect(!command.wasGiven(SampleReplay.unit))
        #expect(command[SampleReplay.eventsFile] == nil)
    }

    @Test func optionsWithoutADefaultAreNilWhenNotGiven() throws {
        let command = try parsedCommand(["demo"])
        #expect(command[SampleDemo.threshold] == nil)
        #expect(command[SampleDemo.output] == nil)
        #expect(command[SampleDemo.tag] == [])
    }

    @Test func allowedValuesAreAccepted() throws {
        #expect(try parsedCommand(["replay", "rec.txt", "--unit", "N"])[SampleReplay.unit] == "N")
    }

    @Test func theLastOccurrenceWinsAndRepeatableOptionsCollectEveryValue() throws {
        let command = try parsedCommand(["demo", "--tag", "a", "-o", "x.jsonl", "--tag=b", "--output", "y.jsonl", "--tag", "c"])
        #expect(command[SampleDemo.output] == "y.jsonl")
        #expect(command[SampleDemo.tag] == ["a", "b", "c"])
        #expect(command.wasGiven(SampleDemo.tag))
    }

    @Test func shortNamesReadTheNextValue() throws {
        #expect(try parsedCommand(["demo", "-s", "1.5"])[SampleDemo.scale] == 1.5)
    }

    @Test func positionalsAndOptionsMayInterleave() throws {
        let command = try parsedCommand(["replay", "--json", "a.desc", "--unit", "oz", "a.events"])
        #expect(command.path == ["forcescale", "replay"])
        #expect(command[SampleReplay.file] == "a.desc")
        #expect(command[SampleReplay.eventsFile] == "a.events")
        #expect(command[SampleReplay.unit] == "oz")
    }

    @Test func aRepeatingArgumentTakesEveryRemainingValue() throws {
        let first = ArgumentKey<String>("first", help: "", parser: .text)
        let rest = ArgumentKey<[String]>(repeating: "rest", help: "", isOptional: true, parser: .text)
        let root = Command(name: "cat", arguments: [first.argument, rest.argument])
        let command = try parsedCommand(["a", "b", "c"], root: root)
        #expect(command[first] == "a")
        #expect(command[rest] == ["b", "c"])
        #expect(try parsedCommand(["a"], root: root)[rest] == [])
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
        #expect(try parsedCommand(["demo", "--threshold", "5"])[SampleDemo.threshold] == 5)
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
        let verbose = OptionKey(flag: "verbose", short: "v", help: "")
        let fast = OptionKey(flag: "fast", help: "")
        let root = Command(
            name: "tool",
            options: [verbose.option],
            subcommands: [Command(name: "run", options: [fast.option])])
        let command = try parsedCommand(["-v", "run", "--fast"], root: root)
        #expect(command.path == ["tool", "run"])
        #expect(command[verbose])
        #expect(command[fast])
        #expect(usageErrorText(["run", "-v"], root: root)?.hasPrefix("Error: Unknown option '-v'\n") == true)
    }

    @Test func helpIsAnOrdinaryWordForARootWithoutSubcommands() throws {
        let word = ArgumentKey<String>("word", help: "", parser: .text)
        let root = Command(name: "say", arguments: [word.argument])
        #expect(try parsedCommand(["help"], root: root)[word] == "help")
    }
}
