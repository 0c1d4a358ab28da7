@testable import ArgumentParsing
import Testing

/// A command with the kinds of values the sample tool lacks: a list, a choice of an
/// enumeration, a number with a default shown as a whole number, a repeatable whole
/// number, a required option, a typed argument, and a value with a message of its own.
private enum Measure: ParsableCommand {
    enum Shade: String, CaseIterable { case light, dark }

    static let count = ArgumentKey<Int?>("count", help: "How many.", parser: .integer)
    static let weights = OptionKey<[Double]>("weights", valueName: "list", help: "The weights in grams.", parser: .list(of: .number))
    static let shade = OptionKey<Shade>("shade", valueName: "shade", help: "The shade.", parser: .choice, default: .light)
    static let timeout = OptionKey<Double>(
        "timeout", valueName: "seconds", help: "How long to wait.", parser: .number, default: 60, shownDefault: "60")
    static let level = OptionKey<[Int]>(repeating: "level", valueName: "n", help: "A level.", parser: .integer)
    static let word = OptionKey<String?>("word", valueName: "word", help: "A word of five letters.", parser: ValueParser { text throws(InvalidValue) in
        guard text.count == 5 else { throw .message("\(text) has \(text.count) letters: --word takes five") }
        return text
    })

    static let configuration = CommandConfiguration(
        name: "measure", abstract: "Measure.", arguments: [count], options: [weights, shade, timeout, level, word])

    static func run(_ command: ParsedCommand) throws -> Int32 { 0 }
}

private let measure = Command(Measure.self)

private func parsed(_ arguments: [String]) throws -> ParsedCommand {
    try parsedCommand(arguments, root: measure)
}

private func errorText(_ arguments: [String]) -> String? {
    usageErrorText(arguments, root: measure)
}

@Suite struct TypedKeyTests {
    @Test func eachKeyReadsItsValueWithItsType() throws {
        let command = try parsed(["3", "--weights", "2.3, 5.74,8.5", "--shade", "dark", "--timeout", "1.5", "--level", "1", "--level=-2", "--word", "scale"])
        #expect(command[Measure.count] == 3)
        #expect(command[Measure.weights] == [2.3, 5.74, 8.5])
        #expect(command[Measure.shade] == .dark)
        #expect(command[Measure.timeout] == 1.5)
        #expect(command[Measure.level] == [1, -2])
        #expect(command[Measure.word] == "scale")
    }

    @Test func defaultsAreTypedAndShownAsDeclared() throws {
        let command = try parsed(["--weights", "1"])
        #expect(command[Measure.count] == nil)
        #expect(command[Measure.shade] == .light)
        #expect(command[Measure.timeout] == 60)
        #expect(!command.wasGiven(Measure.timeout))
        #expect(command[Measure.level] == [])
        #expect(command[Measure.word] == nil)
        let help = helpText(for: ["measure"], root: measure)
        #expect(help.contains("--shade <shade>         The shade. (values: light, dark; default: light)\n"))
        #expect(help.contains("--timeout <seconds>     How long to wait. (default: 60)\n"))
    }

    @Test func anOptionWithoutADefaultOrAnOptionalTypeMustBeGiven() {
        #expect(errorText([])?.hasPrefix("Error: Missing expected argument '--weights <list>'\nHelp:  --weights <list>  The weights in grams.\n") == true)
    }

    // MARK: - Value errors name the option and the value

    @Test func aWholeNumberThatIsNotOneIsNamed() {
        #expect(errorText(["--weights", "1", "--level", "2", "--level", "two"]) == """
            Error: The value 'two' is invalid for '--level <n>': not a whole number
            Help:  --level <n>  A level.
            Usage: measure [<count>] --weights <list> [--shade <shade>] [--timeout <seconds>] [--level <n> ...] [--word <word>]
              See 'measure --help' for more information.
            """)
    }

    @Test(arguments: [("abc", "not a number"), ("1.5s", "not a number"), ("inf", "not a finite number"), ("nan", "not a finite number")])
    func aNumberThatIsNotOneIsNamed(_ value: String, _ reason: String) {
        #expect(errorText(["--weights", "1", "--timeout", value])?
            .hasPrefix("Error: The value '\(value)' is invalid for '--timeout <seconds>': \(reason)\nHelp:  --timeout <seconds>  How long to wait.\n") == true)
    }

    @Test(arguments: [
        ("5,ten,20", "'ten' is not a number"), ("5,,20", "an empty item is not a number"), ("", "an empty item is not a number"),
        ("1,2,inf", "'inf' is not a finite number"),
    ])
    func aListNamesTheItemThatIsNotAValue(_ value: String, _ reason: String) {
        #expect(errorText(["--weights", value])?.hasPrefix("Error: The value '\(value)' is invalid for '--weights <list>': \(reason)\n") == true)
    }

    @Test func aChoiceOfAnEnumerationListsItsValues() {
        #expect(errorText(["--weights", "1", "--shade", "grey"])?
            .hasPrefix("Error: The value 'grey' is invalid for '--shade <shade>'. Please provide one of 'light' and 'dark'.\nHelp:  --shade <shade>  The shade.") == true)
    }

    @Test func anArgumentThatIsNotAValueIsNamed() {
        #expect(errorText(["x1", "--weights", "1"])?
            .hasPrefix("Error: The value 'x1' is invalid for '<count>': not a whole number\nHelp:  <count>  How many.\n") == true)
    }

    @Test func aValueWithAMessageOfItsOwnSaysIt() {
        #expect(errorText(["--weights", "1", "--word", "pad"])?.hasPrefix("Error: pad has 3 letters: --word takes five\nHelp:  --word <word>  A word of five letters.\n") == true)
    }

    @Test func theFirstWrongValueTypedIsTheOneReported() {
        #expect(errorText(["--timeout", "soon", "--weights", "x"])?.hasPrefix("Error: The value 'soon' is invalid for '--timeout <seconds>'") == true)
        #expect(errorText(["--weights", "x", "--timeout", "soon"])?.hasPrefix("Error: The value 'x' is invalid for '--weights <list>'") == true)
    }

    @Test func aMistakeInTheCommandLineIsReportedBeforeAWrongValue() {
        #expect(errorText(["--timeout", "soon", "--bogus"])?.hasPrefix("Error: Unknown option '--bogus'\n") == true)
        #expect(errorText(["--timeout", "soon"])?.hasPrefix("Error: Missing expected argument '--weights <list>'\n") == true)
    }

    @Test func helpWinsOverAWrongValue() throws {
        #expect(try helpResult(["--timeout", "soon", "--help"], root: measure) == helpText(for: ["measure"], root: measure))
    }
}
