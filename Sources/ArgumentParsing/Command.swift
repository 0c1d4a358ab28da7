/// A command or subcommand of a command-line tool as data: what the parser, help, usage
/// lines and completion scripts read, made from the types that declare the tool
/// (``ParsableCommand``, ``CommandGroup``).
///
/// A command either runs (it declares ``arguments`` and ``options``, and its ``runner``)
/// or groups other commands (it declares ``subcommands``). A group's own positional
/// arguments are ignored, because a word after a group's name is read as a
/// subcommand name; its options are accepted before the subcommand name and
/// are visible to the subcommand's ``ParsedCommand``.
///
/// The names `help` and `version` are reserved: every command answers to
/// `-h` and `--help`, and `--version` works wherever a command on the path
/// declares a ``version``.
struct Command: Sendable {
    /// The word that invokes the command, such as `forcescale` or `replay`.
    var name: String
    /// One line, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS` list.
    var abstract: String
    /// Optional paragraphs shown after the overview line.
    var discussion: String?
    /// Positional arguments, in the order they are read.
    var arguments: [Argument]
    /// Named options and flags.
    var options: [Option]
    /// Commands that can follow this one's name.
    var subcommands: [Command]
    /// The subcommand that runs when no subcommand name is given.
    var defaultSubcommand: String?
    /// The tool's version; enables `--version` for this command and all below it.
    var version: String?
    /// The type that runs the command, for a command made from one; parsing answers with it.
    var runner: (any ParsableCommand.Type)?

    /// Declares a command.
    ///
    /// - Parameters:
    ///   - name: The word that invokes the command.
    ///   - abstract: One line describing the command.
    ///   - discussion: Optional paragraphs shown after the overview.
    ///   - arguments: Positional arguments, in order.
    ///   - options: Named options and flags.
    ///   - subcommands: Commands that can follow this one's name.
    ///   - defaultSubcommand: The name of the subcommand to run when none is given.
    ///   - version: The version printed by `--version`.
    init(
        name: String,
        abstract: String = "",
        discussion: String? = nil,
        arguments: [Argument] = [],
        options: [Option] = [],
        subcommands: [Command] = [],
        defaultSubcommand: String? = nil,
        version: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.version = version
    }
}

extension Command {
    /// Whether this command only dispatches to subcommands.
    var isGroup: Bool { !subcommands.isEmpty }

    /// Finds a direct subcommand by name.
    ///
    /// - Parameter name: The word typed on the command line.
    /// - Returns: The subcommand, or `nil` if there is none by that name.
    func subcommand(named name: String) -> Command? {
        subcommands.first { $0.name == name }
    }

    /// Finds a declared option by its long name.
    ///
    /// - Parameter long: The long name without dashes.
    /// - Returns: The option, or `nil` if none is declared.
    func option(long: String) -> Option? {
        options.first { $0.long == long }
    }

    /// Finds a declared option by its short name.
    ///
    /// - Parameter short: The single letter after the dash.
    /// - Returns: The option, or `nil` if none is declared.
    func option(short: Character) -> Option? {
        options.first { $0.short == short }
    }
}
