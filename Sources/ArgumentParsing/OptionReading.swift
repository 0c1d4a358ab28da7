/// How one command-line token relates to a command's options.
enum OptionMatch {
    /// The token is a positional value or a subcommand name.
    case notAnOption
    /// The token looks like an option the command does not declare; carries the name as typed.
    case unknown(String)
    /// The token names a declared option, possibly with a value after `=`.
    case matched(Option, spelling: String, inlineValue: String?)
}

/// Tells whether a token names one of a command's options.
///
/// `--name`, `--name=value` and `-n` are recognised. A single dash alone is
/// a value (it conventionally means standard input); `--` must be handled by
/// the caller before asking.
///
/// - Parameters:
///   - token: One command-line token.
///   - command: The command whose options are searched.
/// - Returns: What the token is.
func matchOption(_ token: String, in command: Command) -> OptionMatch {
    if token.hasPrefix("--") {
        let body = token.dropFirst(2)
        let name = String(body.prefix { $0 != "=" })
        let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
        guard let option = command.option(long: name) else { return .unknown("--\(name)") }
        return .matched(option, spelling: "--\(name)", inlineValue: inlineValue)
    }
    guard token.hasPrefix("-"), token.count > 1 else { return .notAnOption }
    // Combined short flags (`-ab`) are not supported, so anything longer
    // than one letter after a single dash is unknown.
    guard token.count == 2, let option = command.option(short: token[token.index(after: token.startIndex)]) else {
        return .unknown(token)
    }
    return .matched(option, spelling: token, inlineValue: nil)
}

/// Reads the value of a matched option and checks it against the allowed values.
///
/// The value comes from `=value`, or else from the next token, which is taken
/// unless it is `--` or looks like an option; a token that starts like a negative
/// number (`-1`, `-0.5`, `-1,2,3`) is taken as a value, for the command to check.
///
/// - Parameters:
///   - option: The matched option.
///   - spelling: The name as typed.
///   - inlineValue: The text after `=`, if any.
///   - remaining: The tokens after the option; the value is removed from it when read from there.
///   - stack: The command being parsed, for error messages.
/// - Returns: The value, or `nil` for a flag.
/// - Throws: ``UsageError`` when a value is missing, given to a flag, or not allowed.
func readValue(
    of option: Option,
    spelledAs spelling: String,
    inlineValue: String?,
    remaining: inout ArraySlice<String>,
    in stack: CommandStack
) throws(UsageError) -> String? {
    guard option.takesValue else {
        if let inlineValue { throw .unexpectedValue(inlineValue, forFlag: spelling, in: stack) }
        return nil
    }
    let value: String
    if let inlineValue {
        value = inlineValue
    } else if let next = remaining.first, canBeValue(next) {
        value = next
        remaining.removeFirst()
    } else {
        throw .missingValue(for: option, spelledAs: spelling, in: stack)
    }
    if let allowed = option.allowedValues, !allowed.contains(value) {
        throw .invalidValue(value, for: option, spelledAs: spelling, in: stack)
    }
    return value
}

/// Whether a token that follows an option can be that option's value.
///
/// - Parameter token: The token after the option.
/// - Returns: `true` for anything that does not look like an option. No option is
///   named by a digit, so a minus sign then a digit (or a dot and a digit) is a value.
private func canBeValue(_ token: String) -> Bool {
    token == "-" || !token.hasPrefix("-") || isNegativeNumber(token) || startsLikeNegativeNumber(token)
}

/// Whether a token starts with a minus sign and then a digit, or a dot and a digit.
func startsLikeNegativeNumber(_ token: String) -> Bool {
    let characters = Array(token.prefix(3))
    guard characters.count >= 2, characters[0] == "-" else { return false }
    if characters[1].isASCII, characters[1].isNumber { return true }
    return characters.count == 3 && characters[1] == "." && characters[2].isASCII && characters[2].isNumber
}

/// Whether a token is a negative number such as `-1`, `-0.5` or `-.5e3`.
///
/// - Parameter token: The token to test.
/// - Returns: `true` when the token is a minus sign followed by a finite decimal number.
func isNegativeNumber(_ token: String) -> Bool {
    guard token.hasPrefix("-") else { return false }
    let magnitude = token.dropFirst()
    // Requiring a digit or dot first keeps `-inf` and `-nan` looking like options.
    guard let first = magnitude.first, first == "." || first.isASCII && first.isNumber else { return false }
    return Double(magnitude) != nil
}

/// Whether a token asks for help, as `-h` and `--help` do.
///
/// - Parameter token: One command-line token.
/// - Returns: `true` for a help flag.
func isHelpFlag(_ token: String) -> Bool {
    token == "-h" || token == "--help"
}
