/// A positional argument of a command, declared as data.
package struct Argument: Sendable {
    /// The name shown between angle brackets, as in `<file>`, and used for lookup.
    package var name: String
    /// One line describing the argument, shown in the `ARGUMENTS` section.
    package var help: String
    /// Whether the command runs without this argument.
    package var isOptional: Bool
    /// Whether the argument takes every remaining value; declare it last.
    package var isRepeating: Bool

    /// Declares a positional argument.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line describing the argument.
    ///   - isOptional: Whether the command runs without it.
    ///   - isRepeating: Whether it takes every remaining value.
    package init(name: String, help: String = "", isOptional: Bool = false, isRepeating: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.isRepeating = isRepeating
    }
}

extension Argument {
    /// The placeholder shown in help and error messages, such as `<file>`.
    var placeholder: String { "<\(name)>" }

    /// The placeholder with `...` when repeating, as error messages show a missing argument.
    var requiredSynopsis: String { isRepeating ? "\(placeholder) ..." : placeholder }

    /// The argument as it appears on the `USAGE` line, such as `[<file> ...]`.
    var usageSynopsis: String { isOptional ? "[\(requiredSynopsis)]" : requiredSynopsis }
}
