/// A positional argument of a command: what help, usage lines and errors show of it, and
/// how the values it took become the value the command reads. A command declares it
/// through an ``ArgumentKey``, which reads that value back with its type.
package struct Argument: Sendable {
    /// The name shown between angle brackets, as in `<file>`.
    package internal(set) var name: String
    /// One line describing the argument, shown in the `ARGUMENTS` section.
    package internal(set) var help: String
    /// Whether the command runs without this argument.
    package internal(set) var isOptional: Bool
    /// Whether the argument takes every remaining value; declare it last.
    package internal(set) var isRepeating: Bool
    /// The value the command reads, made from the texts the argument took (none, one, or
    /// several when it repeats) while the command line is parsed.
    let value: @Sendable ([String]) throws(ArgumentValueError) -> any Sendable

    /// Declares a positional argument whose value is the texts it took.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line describing the argument.
    ///   - isOptional: Whether the command runs without it.
    ///   - isRepeating: Whether it takes every remaining value.
    init(name: String, help: String = "", isOptional: Bool = false, isRepeating: Bool = false) {
        self.init(name: name, help: help, isOptional: isOptional, isRepeating: isRepeating) { $0 }
    }

    /// Declares a positional argument whose value is made by `value`.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line describing the argument.
    ///   - isOptional: Whether the command runs without it.
    ///   - isRepeating: Whether it takes every remaining value.
    ///   - value: Makes the value from the texts taken.
    init(
        name: String, help: String = "", isOptional: Bool = false, isRepeating: Bool = false,
        value: @escaping @Sendable ([String]) throws(ArgumentValueError) -> any Sendable
    ) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeating = isRepeating
        self.value = value
    }
}

/// A text taken by a positional argument that is not a value of the argument's type.
struct ArgumentValueError: Error {
    /// The text as typed.
    var text: String
    /// What is wrong with it.
    var problem: InvalidValue
}

extension Argument {
    /// The placeholder shown in help and error messages, such as `<file>`.
    var placeholder: String { "<\(name)>" }

    /// The placeholder with `...` when repeating, as error messages show a missing argument.
    var requiredSynopsis: String { isRepeating ? "\(placeholder) ..." : placeholder }

    /// The argument as it appears on the `USAGE` line, such as `[<file> ...]`.
    var usageSynopsis: String { isOptional ? "[\(requiredSynopsis)]" : requiredSynopsis }
}
