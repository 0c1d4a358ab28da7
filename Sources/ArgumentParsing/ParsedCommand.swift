/// The command a command line selected, with the values typed for it.
///
/// Values are looked up by the names used in the declarations. Asking for a
/// name that was never declared is a programming error and stops the program,
/// so a typo cannot silently read as "not given".
package struct ParsedCommand: Sendable {
    /// The names from the root to the selected command, such as `["forcescale", "replay"]`.
    package let path: [String]
    /// The selected command and its parents, for error messages.
    private let stack: CommandStack
    /// The options of the command and its parents, and what was typed for them.
    private let optionValues: OptionValues
    /// The positional values taken by each declared argument.
    private let argumentValues: [String: [String]]

    /// Collects the result of parsing.
    ///
    /// - Parameters:
    ///   - stack: The selected command and its parents.
    ///   - optionValues: The options declared along the chain and their occurrences.
    ///   - argumentValues: The positional values by argument name.
    init(stack: CommandStack, optionValues: OptionValues, argumentValues: [String: [String]]) {
        self.path = stack.names
        self.stack = stack
        self.optionValues = optionValues
        self.argumentValues = argumentValues
    }

    /// Whether a flag (or any option) was given.
    ///
    /// - Parameter long: The option's long name without dashes.
    /// - Returns: `true` if it appeared at least once.
    package func flag(_ long: String) -> Bool {
        !occurrences(of: long).isEmpty
    }

    /// The value of an option: the last one given, else the default.
    ///
    /// - Parameter long: The option's long name without dashes.
    /// - Returns: The value, or `nil` when neither given nor defaulted.
    package func string(_ long: String) -> String? {
        occurrences(of: long).last?.value ?? declaredOption(long).defaultValue
    }

    /// Every value of a repeatable option, in order, else the default alone.
    ///
    /// - Parameter long: The option's long name without dashes.
    /// - Returns: The values; empty when neither given nor defaulted.
    package func strings(_ long: String) -> [String] {
        let given = occurrences(of: long).compactMap(\.value)
        if !given.isEmpty { return given }
        return declaredOption(long).defaultValue.map { [$0] } ?? []
    }

    /// The value of an option as an integer.
    ///
    /// - Parameter long: The option's long name without dashes.
    /// - Returns: The last value given, else the default, or `nil` when there is neither.
    /// - Throws: ``UsageError`` (`The value 'abc' is invalid for '--count <n>'`) when the value is not an integer.
    package func int(_ long: String) throws(UsageError) -> Int? {
        try convert(long) { Int($0) }
    }

    /// The value of an option as a finite floating-point number.
    ///
    /// - Parameter long: The option's long name without dashes.
    /// - Returns: The last value given, else the default, or `nil` when there is neither.
    /// - Throws: ``UsageError`` when the value is not a number, or is `nan` or infinite.
    package func double(_ long: String) throws(UsageError) -> Double? {
        try convert(long) { text in Double(text).flatMap { $0.isFinite ? $0 : nil } }
    }

    /// The value of a positional argument (the first one, for a repeating argument).
    ///
    /// - Parameter name: The argument's declared name, without angle brackets.
    /// - Returns: The value, or `nil` when an optional argument was not given.
    package func argument(_ name: String) -> String? {
        arguments(name).first
    }

    /// Every value of a repeating positional argument, in order.
    ///
    /// - Parameter name: The argument's declared name, without angle brackets.
    /// - Returns: The values; empty when none was given.
    package func arguments(_ name: String) -> [String] {
        guard let values = argumentValues[name] else {
            preconditionFailure("'\(stack.commandLine)' declares no argument named '\(name)'")
        }
        return values
    }

    /// An error about this command line that parsing could not detect, such as a value out of range.
    ///
    /// It prints like swift-argument-parser's `ValidationError`: the message,
    /// then this command's usage line and help hint.
    ///
    /// - Parameter message: What is wrong, such as `--interval-ms must be positive.`
    /// - Returns: The error, to throw or print.
    package func usageError(_ message: String) -> UsageError {
        UsageError(message, in: stack)
    }

    /// Converts an option's value, turning a failed conversion into a usage error.
    ///
    /// - Parameters:
    ///   - long: The option's long name without dashes.
    ///   - conversion: Returns the converted value, or `nil` when the text does not convert.
    /// - Returns: The converted value, or `nil` when the option has no value.
    /// - Throws: ``UsageError`` naming the option as it was typed.
    private func convert<Value>(_ long: String, _ conversion: (String) -> Value?) throws(UsageError) -> Value? {
        guard let text = string(long) else { return nil }
        if let value = conversion(text) { return value }
        let option = declaredOption(long)
        let spelling = occurrences(of: long).last?.spelling ?? option.longSpelling
        throw .invalidValue(text, for: option, spelledAs: spelling, in: stack)
    }

    /// The declaration of an option, which must exist.
    private func declaredOption(_ long: String) -> Option {
        guard let option = optionValues.declared[long] else {
            preconditionFailure("'\(stack.commandLine)' declares no option '--\(long)'")
        }
        return option
    }

    /// The appearances of a declared option.
    private func occurrences(of long: String) -> [OptionOccurrence] {
        _ = declaredOption(long)
        return optionValues.occurrences[long] ?? []
    }
}
