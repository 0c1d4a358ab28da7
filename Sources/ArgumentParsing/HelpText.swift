/// Renders the help of a command, as `-h`, `--help` and `help <subcommand>` print it.
///
/// The layout is swift-argument-parser's: an `OVERVIEW:` with the abstract
/// and discussion, the `USAGE:` line, then `ARGUMENTS`, `OPTIONS` and
/// `SUBCOMMANDS` sections whose labels are indented two spaces and whose
/// help starts at column 27.
///
/// The text is meant for `print`, which adds a final newline: a command
/// without subcommands ends its text with a newline of its own, so the
/// output ends with a blank line as swift-argument-parser's does.
///
/// - Parameters:
///   - path: The command names from the root, as in ``ParsedCommand/path``,
///     such as `["forcescale", "replay"]`. Names that match no subcommand are
///     ignored, and an empty path means the root.
///   - root: The tool's top-level command.
///   - terminalWidth: The width to wrap help text to.
/// - Returns: The help text.
func helpText(for path: [String], root: Command, terminalWidth: Int = 80) -> String {
    let below = path.first == root.name ? path.dropFirst() : path[...]
    return HelpRenderer(stack: CommandStack(root: root).following(below), width: terminalWidth).render()
}

/// Lays out the help of one command.
struct HelpRenderer {
    /// The command described, with its parents.
    let stack: CommandStack
    /// The terminal width to wrap to.
    let width: Int

    /// Spaces before each label in a section.
    private static let labelIndent = 2
    /// The column (counted from zero) where help text starts after a label.
    private static let helpColumn = 26

    /// One labelled line of a section, such as an option and its help.
    private struct Entry {
        var label: String
        var help: String
    }

    /// Renders the whole help text.
    ///
    /// - Returns: The text, ready for `print`.
    func render() -> String {
        let command = stack.leaf
        var text = ""
        if let overview = overview(of: command) {
            text += wrap("OVERVIEW: \(overview)", toWidth: width) + "\n\n"
        }
        text += "USAGE: \(UsageLine.render(stack))\n\n"
        let sections = [
            section("ARGUMENTS", argumentEntries(of: command)),
            section("OPTIONS", optionEntries(of: command)),
            section("SUBCOMMANDS", subcommandEntries(of: command)),
        ]
        text += sections.compactMap { $0 }.joined(separator: "\n")
        if command.isGroup {
            // The hint names the `help` subcommand, which only the root has.
            let names = [stack.names[0], "help"] + stack.names.dropFirst()
            text += "\n  See '\(names.joined(separator: " ")) <subcommand>' for detailed help."
        }
        return text
    }

    /// The abstract followed by the discussion, separated by a blank line.
    ///
    /// - Parameter command: The command described.
    /// - Returns: The overview, or `nil` when the command has neither.
    private func overview(of command: Command) -> String? {
        var overview = command.abstract
        if let discussion = command.discussion, !discussion.isEmpty {
            overview += overview.isEmpty ? "\n" : "\n\n"
            overview += discussion
        }
        return overview.isEmpty ? nil : overview
    }

    /// The entries of the `ARGUMENTS` section; a group's arguments are never read, so none.
    private func argumentEntries(of command: Command) -> [Entry] {
        guard !command.isGroup else { return [] }
        return command.arguments.map { Entry(label: $0.placeholder, help: $0.help) }
    }

    /// The entries of the `OPTIONS` section: the declared options, then `--version` and `--help`.
    private func optionEntries(of command: Command) -> [Entry] {
        var entries = command.options.map { Entry(label: $0.helpLabel, help: $0.helpDescription) }
        if stack.version != nil {
            entries.append(Entry(label: "--version", help: "Show the version."))
        }
        entries.append(Entry(label: "-h, --help", help: "Show help information."))
        return entries
    }

    /// The entries of the `SUBCOMMANDS` section, marking the default one.
    private func subcommandEntries(of command: Command) -> [Entry] {
        command.subcommands.map { subcommand in
            let isDefault = subcommand.name == command.defaultSubcommand
            return Entry(label: isDefault ? "\(subcommand.name) (default)" : subcommand.name, help: subcommand.abstract)
        }
    }

    /// Renders a titled section.
    ///
    /// - Parameters:
    ///   - title: The heading, such as `OPTIONS`.
    ///   - entries: The lines of the section.
    /// - Returns: The section ending with a newline, or `nil` when it has no entries.
    private func section(_ title: String, _ entries: [Entry]) -> String? {
        guard !entries.isEmpty else { return nil }
        return "\(title):\n" + entries.map(render).joined()
    }

    /// Renders one entry: the label, then the help wrapped at column 27.
    ///
    /// - Parameter entry: The label and help.
    /// - Returns: The entry's lines, ending with a newline.
    private func render(_ entry: Entry) -> String {
        let label = String(repeating: " ", count: Self.labelIndent) + entry.label
        guard !entry.help.isEmpty else { return label + "\n" }
        let help = wrap(entry.help, toWidth: width, indent: Self.helpColumn)
        // A label that leaves room before the help column shares the first
        // line with the help; a longer one gets the help on the next line.
        if label.count < Self.helpColumn {
            return label + help.dropFirst(label.count) + "\n"
        }
        return label + "\n" + help + "\n"
    }
}
