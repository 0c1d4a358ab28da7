/// The command a command line selected, with the values typed (or defaulted) for it,
/// already converted to their types and checked.
///
/// Values are read with the keys the command declares (`command[Self.timeout]`), so a
/// name cannot be mistyped where it is read. Reading a key that the command (or a group
/// above it) does not declare is a programming error and stops the program, naming it.
package struct ParsedCommand: Sendable {
    /// The names from the root to the selected command, such as `["forcescale", "replay"]`.
    package let path: [String]
    /// The type that runs the selected command, when the tree was made from types.
    let runner: (any ParsableCommand.Type)?
    /// The selected command and its parents, for error messages.
    private let stack: CommandStack
    /// The value of every option declared along the chain, by long name.
    private let optionValues: [String: any Sendable]
    /// The appearances of every option given, by long name.
    private let occurrences: [String: [OptionOccurrence]]
    /// The value of every declared positional argument, by name.
    private let argumentValues: [String: any Sendable]

    /// Collects the result of parsing.
    ///
    /// - Parameters:
    ///   - stack: The selected command and its parents.
    ///   - optionValues: The options' values by long name.
    ///   - occurrences: The options' appearances by long name.
    ///   - argumentValues: The positional arguments' values by name.
    init(
        stack: CommandStack, optionValues: [String: any Sendable], occurrences: [String: [OptionOccurrence]],
        argumentValues: [String: any Sendable]
    ) {
        self.path = stack.names
        self.runner = stack.leaf.runner
        self.stack = stack
        self.optionValues = optionValues
        self.occurrences = occurrences
        self.argumentValues = argumentValues
    }

    /// The value of an option: what its key's type says (the last value given or the
    /// default, every value of a repeatable option, whether a flag was given).
    package subscript<Value>(_ key: OptionKey<Value>) -> Value {
        read(optionValues[key.option.long], as: Value.self, what: "an option '--\(key.option.long)'")
    }

    /// The value of a positional argument: what its key's type says (`nil` for an optional
    /// one not given, every value of a repeating one).
    package subscript<Value>(_ key: ArgumentKey<Value>) -> Value {
        read(argumentValues[key.argument.name], as: Value.self, what: "an argument '<\(key.argument.name)>'")
    }

    /// Whether an option was typed at all, for a command whose meaning changes when an
    /// option with a default is given (`--count` goes with `--test` only).
    ///
    /// - Parameter key: An option the command declares.
    /// - Returns: `true` when it appeared at least once.
    package func wasGiven<Value>(_ key: OptionKey<Value>) -> Bool {
        _ = self[key]
        return !(occurrences[key.option.long] ?? []).isEmpty
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

    /// A value made while parsing, with the type its key says.
    private func read<Value>(_ value: (any Sendable)?, as type: Value.Type, what: String) -> Value {
        guard let value else {
            preconditionFailure("'\(stack.commandLine)' declares no \(what)")
        }
        guard let typed = value as? Value else {
            preconditionFailure("'\(stack.commandLine)' declares \(what) whose values are \(Swift.type(of: value)), not \(Value.self)")
        }
        return typed
    }
}
