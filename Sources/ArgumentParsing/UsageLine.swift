/// Builds the synopsis shown after `USAGE:` in help and after `Usage:` in errors.
enum UsageLine {
    /// Beyond this many arguments and options the line keeps only what must be typed,
    /// as swift-argument-parser does.
    private static let maximumListed = 12

    /// Renders a command's synopsis, such as `forcescale replay <file> [--json]`.
    ///
    /// Positional arguments come first, then options, then `<subcommand>` for
    /// a command with subcommands. `--help` and `--version` are never listed.
    ///
    /// - Parameter stack: The command and its parents.
    /// - Returns: The synopsis on one line.
    static func render(_ stack: CommandStack) -> String {
        let command = stack.leaf
        let arguments = command.isGroup ? [] : command.arguments
        var words = [stack.commandLine]
        let listed = arguments.map(\.usageSynopsis) + command.options.map(\.usageSynopsis)
        if listed.count > maximumListed {
            let mandatory = arguments.map(\.usageSynopsis)
                + command.options.filter(\.mustBeGiven).map(\.usageSynopsis)
            if mandatory.isEmpty || mandatory.count > maximumListed {
                words.append("<options>")
            } else {
                words.append("[<options>]")
                words += mandatory
            }
        } else {
            words += listed
        }
        if command.isGroup {
            words.append("<subcommand>")
        }
        return words.joined(separator: " ")
    }
}
