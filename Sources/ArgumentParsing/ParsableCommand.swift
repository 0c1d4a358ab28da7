/// A command that runs, declared once as a type, as swift-argument-parser's
/// `ParsableCommand` is: its name, help, arguments and options (its ``configuration``,
/// whose options and arguments are the typed keys it reads), and its ``run(_:)``.
///
/// The command tree is made of these types (``CommandGroup/configuration``'s
/// subcommands), and parsing answers with the type whose name was typed, which runs: a
/// declared command cannot fall through to another, and there is no list of names to keep
/// beside the tree.
package protocol ParsableCommand: SendableMetatype {
    /// The command's name, help, arguments and options.
    static var configuration: CommandConfiguration { get }

    /// Runs the command with the values parsed for it.
    ///
    /// - Parameter command: The values typed (or defaulted), read with the keys the
    ///   configuration declares: `command[Self.timeout]`.
    /// - Returns: The exit status.
    /// - Throws: ``UsageError`` (`command.usageError(…)`) for values that cannot go
    ///   together, which prints the usage and exits with 64; anything else prints
    ///   `Error: …` and exits with 1.
    static func run(_ command: ParsedCommand) throws -> Int32
}

/// A command that groups subcommands and runs none itself (`forcescale`, `forcescale log`):
/// a word after its name picks the subcommand, and without one it runs its default
/// subcommand, or shows its help when it has none.
package protocol CommandGroup: SendableMetatype {
    /// The group's name, help, options and subcommands.
    static var configuration: GroupConfiguration { get }
}

/// One subcommand of a group: a command that runs, or a group of its own.
package enum Subcommand: Sendable {
    case command(any ParsableCommand.Type)
    case group(any CommandGroup.Type)
}

/// What a command that runs declares.
package struct CommandConfiguration: Sendable {
    /// The word that invokes the command, such as `replay`.
    package var name: String
    /// One line, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS` list.
    package var abstract: String
    /// Optional paragraphs shown after the overview line.
    package var discussion: String?
    /// Positional arguments, in the order they are read.
    package var arguments: [any CommandArgument]
    /// Named options and flags, in the order help lists them.
    package var options: [any CommandOption]
    /// The tool's version, for a command that is the tool (`forcescaled`): enables
    /// `--version`.
    package var version: String?

    /// Declares a command.
    ///
    /// - Parameters:
    ///   - name: The word that invokes the command.
    ///   - abstract: One line describing the command.
    ///   - discussion: Optional paragraphs shown after the overview.
    ///   - arguments: Positional arguments, in order.
    ///   - options: Named options and flags.
    ///   - version: The version printed by `--version`.
    package init(
        name: String, abstract: String = "", discussion: String? = nil,
        arguments: [any CommandArgument] = [], options: [any CommandOption] = [], version: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.version = version
    }
}

/// What a group of commands declares.
package struct GroupConfiguration: Sendable {
    /// The word that invokes the group, such as `forcescale` or `log`.
    package var name: String
    /// One line, shown after `OVERVIEW:` and in the parent's `SUBCOMMANDS` list.
    package var abstract: String
    /// Optional paragraphs shown after the overview line.
    package var discussion: String?
    /// Options accepted before the subcommand's name, which the subcommand can read too.
    package var options: [any CommandOption]
    /// The subcommands, in the order help lists them.
    package var subcommands: [Subcommand]
    /// The subcommand that runs when none is named; one of ``subcommands``.
    package var defaultSubcommand: (any ParsableCommand.Type)?
    /// The tool's version; enables `--version` for the group and every command below it.
    package var version: String?

    /// Declares a group.
    ///
    /// - Parameters:
    ///   - name: The word that invokes the group.
    ///   - abstract: One line describing the group.
    ///   - discussion: Optional paragraphs shown after the overview.
    ///   - options: Options accepted before the subcommand's name.
    ///   - subcommands: The commands that can follow the group's name.
    ///   - defaultSubcommand: The subcommand to run when none is named.
    ///   - version: The version printed by `--version`.
    package init(
        name: String, abstract: String = "", discussion: String? = nil, options: [any CommandOption] = [],
        subcommands: [Subcommand], defaultSubcommand: (any ParsableCommand.Type)? = nil, version: String? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.options = options
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.version = version
    }
}

extension Command {
    /// The declaration of a command that runs, with the type that runs it.
    ///
    /// - Parameter type: The command.
    init(_ type: any ParsableCommand.Type) {
        let configuration = type.configuration
        self.init(
            name: configuration.name, abstract: configuration.abstract, discussion: configuration.discussion,
            arguments: configuration.arguments.map(\.argument), options: configuration.options.map(\.option),
            version: configuration.version)
        runner = type
    }

    /// The declaration of a group and, below it, of every subcommand.
    ///
    /// - Parameter type: The group.
    init(group type: any CommandGroup.Type) {
        let configuration = type.configuration
        let subcommands = configuration.subcommands.map { subcommand in
            switch subcommand {
            case .command(let command): Command(command)
            case .group(let group): Command(group: group)
            }
        }
        let defaultName = configuration.defaultSubcommand.map { defaultType in
            // A declaration that no run could pass: stop at once, naming it.
            guard configuration.subcommands.contains(where: { subcommand in
                if case .command(let command) = subcommand { return ObjectIdentifier(command) == ObjectIdentifier(defaultType) }
                return false
            }) else {
                preconditionFailure("'\(configuration.name)' names \(defaultType) as its default subcommand, which is not one of its subcommands")
            }
            return defaultType.configuration.name
        }
        self.init(
            name: configuration.name, abstract: configuration.abstract, discussion: configuration.discussion,
            options: configuration.options.map(\.option), subcommands: subcommands, defaultSubcommand: defaultName,
            version: configuration.version)
    }
}
