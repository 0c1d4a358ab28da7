import ScaleCore

/// One factory per kind of mistake, each worded as swift-argument-parser words it. What was
/// typed is quoted through ``typed(_:)``: a file name a shell's `*` gave may hold escape
/// sequences and newlines, which the error shows as escapes on its one line.
extension UsageError {
    /// `'text'`, with the text as ``UntrustedText/escaped(_:)`` writes it.
    /// - Parameter text: Something the user typed (or a shell expanded).
    /// - Returns: The text in single quotes, safe to print.
    package static func typed(_ text: some StringProtocol) -> String {
        "'" + UntrustedText.escaped(String(text)) + "'"
    }

    /// An option that the command does not declare.
    ///
    /// - Parameters:
    ///   - spelling: The option as typed, without any `=value`.
    ///   - stack: The command being parsed.
    /// - Returns: The error, suggesting a close long name when there is one.
    static func unknownOption(_ spelling: String, in stack: CommandStack) -> UsageError {
        let message = "Unknown option \(typed(spelling))"
        // Like swift-argument-parser, only long names are suggested, and only
        // for a long-looking typo.
        guard spelling.hasPrefix("--"),
              let suggestion = closestLongName(to: spelling, among: stack.leaf.options)
        else { return UsageError(message, in: stack) }
        return UsageError("\(message). Did you mean '\(suggestion)'?", in: stack)
    }

    /// A word where a subcommand's name goes that is no subcommand's but close to one.
    ///
    /// - Parameters:
    ///   - word: The word as typed, such as `wiegh`.
    ///   - stack: The group being parsed.
    /// - Returns: The error suggesting the closest name, or `nil` when no name is close
    ///   enough for the word to be a typo of it.
    static func unknownSubcommand(_ word: String, in stack: CommandStack) -> UsageError? {
        // `bogus` is no typo of `log`, three edits away; `wiegh` is one of `weigh`, two.
        let names = stack.leaf.subcommands.map(\.name)
        guard let suggestion = Suggestion.closest(to: word, among: names) else { return nil }
        return UsageError("Unknown subcommand \(typed(word)). Did you mean '\(suggestion)'?", in: stack)
    }

    /// An option that needs a value but was given none.
    ///
    /// - Parameters:
    ///   - option: The declared option.
    ///   - spelling: `--unit` or `-u`, as typed.
    ///   - stack: The command being parsed.
    /// - Returns: The error.
    static func missingValue(for option: Option, spelledAs spelling: String, in stack: CommandStack) -> UsageError {
        UsageError(
            "Missing value for '\(option.synopsis(spelledAs: spelling))'",
            argumentHelp: helpLine(option.synopsis(spelledAs: spelling), option.help),
            in: stack)
    }

    /// A flag given a value with `--flag=value`.
    ///
    /// - Parameters:
    ///   - value: The text after `=`.
    ///   - spelling: The flag as typed.
    ///   - stack: The command being parsed.
    /// - Returns: The error.
    static func unexpectedValue(_ value: String, forFlag spelling: String, in stack: CommandStack) -> UsageError {
        UsageError("The option '\(spelling)' does not take any value, but \(typed(value)) was specified.", in: stack)
    }

    /// A value that is not one of the allowed values or does not convert to the expected type.
    ///
    /// - Parameters:
    ///   - value: The value as typed.
    ///   - option: The declared option.
    ///   - spelling: `--unit` or `-u`, as typed.
    ///   - stack: The command being parsed.
    ///   - problem: Why the value is not one of the option's: a reason after the standard
    ///     message (`: not a number`), or a message of its own.
    /// - Returns: The error, listing the allowed values if the option has any.
    static func invalidValue(
        _ value: String, for option: Option, spelledAs spelling: String, in stack: CommandStack, problem: InvalidValue = .reason(nil)
    ) -> UsageError {
        let synopsis = option.synopsis(spelledAs: spelling)
        return UsageError(
            invalidValueMessage(value, for: synopsis, problem: problem, allowedValues: option.allowedValues ?? []),
            argumentHelp: helpLine(synopsis, option.help),
            in: stack)
    }

    /// A text taken by a positional argument that does not convert to the argument's type.
    ///
    /// - Parameters:
    ///   - value: The value as typed.
    ///   - argument: The declared argument.
    ///   - stack: The command being parsed.
    ///   - problem: Why the value is not one of the argument's.
    /// - Returns: The error.
    static func invalidValue(_ value: String, for argument: Argument, in stack: CommandStack, problem: InvalidValue) -> UsageError {
        UsageError(
            invalidValueMessage(value, for: argument.placeholder, problem: problem, allowedValues: []),
            argumentHelp: helpLine(argument.placeholder, argument.help),
            in: stack)
    }

    /// Positional values left over after every declared argument took its share.
    ///
    /// - Parameters:
    ///   - values: The left-over values, at least one.
    ///   - stack: The command being parsed.
    /// - Returns: The error.
    static func unexpectedArguments(_ values: [String], in stack: CommandStack) -> UsageError {
        if values.count == 1 {
            return UsageError("Unexpected argument \(typed(values[0]))", in: stack)
        }
        let quoted = values.map(typed).joined(separator: ", ")
        return UsageError("\(values.count) unexpected arguments: \(quoted)", in: stack)
    }

    /// A required positional argument that was not given.
    ///
    /// - Parameters:
    ///   - argument: The declared argument.
    ///   - stack: The command being parsed.
    /// - Returns: The error.
    static func missingArgument(_ argument: Argument, in stack: CommandStack) -> UsageError {
        UsageError(
            "Missing expected argument '\(argument.requiredSynopsis)'",
            argumentHelp: helpLine(argument.placeholder, argument.help),
            in: stack)
    }

    /// A required option that was not given.
    ///
    /// - Parameters:
    ///   - option: The declared option.
    ///   - stack: The command being parsed.
    /// - Returns: The error.
    static func missingOption(_ option: Option, in stack: CommandStack) -> UsageError {
        var synopsis = option.synopsis(spelledAs: option.longSpelling)
        if option.isRepeatable { synopsis += " ..." }
        return UsageError(
            "Missing expected argument '\(synopsis)'",
            argumentHelp: helpLine(option.synopsis(spelledAs: option.longSpelling), option.help),
            in: stack)
    }
}

/// The text after `Help:`: the argument's synopsis, two spaces, and its help.
///
/// - Parameters:
///   - synopsis: Such as `--unit <unit>` or `<file>`.
///   - help: The declared help line.
/// - Returns: The combined line, or `nil` when there is no help to show.
private func helpLine(_ synopsis: String, _ help: String) -> String? {
    help.isEmpty ? nil : "\(synopsis)  \(help)"
}

/// What an invalid value's error says: `The value 'abc' is invalid for '--timeout <seconds>'`,
/// then the reason (`: not a number`) or the allowed values; or the message of its own.
///
/// - Parameters:
///   - value: The value as typed.
///   - synopsis: The option or argument as the error names it, such as `--unit <unit>`.
///   - problem: Why the value is not taken.
///   - allowedValues: The option's allowed values, listed after the standard message.
/// - Returns: The message, without `Error: `.
private func invalidValueMessage(_ value: String, for synopsis: String, problem: InvalidValue, allowedValues: [String]) -> String {
    switch problem {
    case .message(let message):
        return message
    case .reason(let reason):
        return "The value \(UsageError.typed(value)) is invalid for '\(synopsis)'" + (reason.map { ": \($0)" } ?? "") + allowedValuesSentence(allowedValues)
    }
}

/// The sentence appended to an invalid-value message that lists the allowed values.
///
/// swift-argument-parser lists up to five values inline (`'a' and 'b'`,
/// `'a', 'b' or 'c'`) and switches to a bulleted list from six on.
///
/// - Parameter values: The allowed values; empty when any value of the right type is allowed.
/// - Returns: The sentence, starting with `. `, or an empty string.
private func allowedValuesSentence(_ values: [String]) -> String {
    guard !values.isEmpty else { return "" }
    guard values.count < 6 else {
        let bullets = values.map { "  - \($0)" }.joined(separator: "\n")
        return ". Please provide one of the following:\n\(bullets)"
    }
    let quoted = values.map { "'\($0)'" }
    let list = quoted.count <= 2
        ? quoted.joined(separator: " and ")
        : quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
    return ". Please provide one of \(list)."
}

/// The declared long name closest to a mistyped one, if it is close enough to be a typo.
///
/// - Parameters:
///   - spelling: The unknown option as typed, such as `--jsn`.
///   - options: The command's declared options.
/// - Returns: The closest long spelling, such as `--json`, or `nil`.
private func closestLongName(to spelling: String, among options: [Option]) -> String? {
    // With the `--`, as swift-argument-parser compares them: `--jabc` is a typo of `--json`
    // (three edits of six characters), `--jabcd` is not.
    Suggestion.closest(to: spelling, among: options.map(\.longSpelling))
}

