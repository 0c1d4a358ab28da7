/// The chain of commands from the root to the one being parsed or described.
///
/// Help text, usage lines and error hints all depend on the whole chain (the
/// tool name is the names joined, `--version` comes from any level), so they
/// take this rather than a single command.
struct CommandStack: Sendable {
    /// The commands, root first; never empty.
    private(set) var commands: [Command]

    /// Starts a chain at the root command.
    ///
    /// - Parameter root: The tool's top-level command.
    init(root: Command) {
        commands = [root]
    }

    /// The command the chain ends at.
    var leaf: Command { commands[commands.count - 1] }

    /// The names of the commands, such as `["forcescale", "replay"]`.
    var names: [String] { commands.map(\.name) }

    /// The names joined as typed on the command line, such as `forcescale replay`.
    var commandLine: String { names.joined(separator: " ") }

    /// The version of the nearest command on the chain that declares one.
    var version: String? { commands.last { $0.version != nil }?.version }

    /// Extends the chain by one subcommand.
    ///
    /// - Parameter subcommand: A subcommand of ``leaf``.
    /// - Returns: The longer chain.
    func appending(_ subcommand: Command) -> CommandStack {
        var longer = self
        longer.commands.append(subcommand)
        return longer
    }

    /// Follows a path of subcommand names below the root as far as it matches.
    ///
    /// Unknown names end the walk instead of failing, as `help <subcommand>`
    /// in swift-argument-parser shows the deepest command it could find.
    ///
    /// - Parameter names: Subcommand names, not including the root's.
    /// - Returns: The chain ending at the deepest matching command.
    func following(_ names: some Sequence<String>) -> CommandStack {
        var stack = self
        for name in names {
            guard let next = stack.leaf.subcommand(named: name) else { break }
            stack = stack.appending(next)
        }
        return stack
    }
}
