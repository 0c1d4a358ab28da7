/// A command line that cannot be run, reported the way swift-argument-parser reports it.
///
/// Printed with ``description`` on standard error, it reads:
///
///     Error: The value 'abc' is invalid for '--interval-ms <n>'
///     Help:  --interval-ms <n>  Minimum time between two readings.
///     Usage: forcescale replay <file> [<events-file>] [--json] [--interval-ms <n>]
///       See 'forcescale replay --help' for more information.
///
/// The `Help:` line appears only for errors about one known argument or option.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, such as `Unknown option '--bogus'`.
    package let message: String
    /// The synopsis and help of the argument at fault, shown after `Help:`, if any.
    package let argumentHelp: String?
    /// The command's usage line, without the `Usage: ` prefix.
    package let usage: String
    /// The pointer to the full help, such as `See 'forcescale --help' for more information.`
    package let helpHint: String

    /// Creates an error with every part given.
    ///
    /// - Parameters:
    ///   - message: What went wrong.
    ///   - argumentHelp: The help of the argument at fault, if any.
    ///   - usage: The command's usage line.
    ///   - helpHint: The pointer to the full help.
    init(message: String, argumentHelp: String? = nil, usage: String, helpHint: String) {
        self.message = message
        self.argumentHelp = argumentHelp
        self.usage = usage
        self.helpHint = helpHint
    }

    /// The full text to print on standard error (print adds the final newline).
    package var description: String {
        var text = "Error: \(message)\n"
        if let argumentHelp, !argumentHelp.isEmpty {
            text += "Help:  \(argumentHelp)\n"
        }
        return text + "Usage: \(usage)\n  \(helpHint)"
    }
}

extension UsageError {
    /// Creates an error about a command, deriving its usage line and help hint.
    ///
    /// - Parameters:
    ///   - message: What went wrong.
    ///   - argumentHelp: The help of the argument at fault, if any.
    ///   - stack: The command the error is about, with its parents.
    init(_ message: String, argumentHelp: String? = nil, in stack: CommandStack) {
        self.init(
            message: message,
            argumentHelp: argumentHelp,
            usage: UsageLine.render(stack),
            helpHint: "See '\(stack.commandLine) --help' for more information.")
    }
}
