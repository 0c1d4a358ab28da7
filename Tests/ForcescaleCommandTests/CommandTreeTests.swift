@testable import ArgumentParsing
@testable import forcescale
import Testing

/// forcescale's commands as its types declare them (`Forcescale`): the parser answers each
/// subcommand, of `forcescale` and of `forcescale log`, with its own type, which runs; a
/// declared command cannot fall through to another (the demo, `log sessions`), and a name
/// that is no command's is refused rather than run as the default.
@Suite struct CommandTreeTests {
    let tree = Command(group: Forcescale.self)

    /// Every command of the tree that runs, with the words that select it.
    static func runnableCommands(of root: Command) -> [(path: [String], command: Command)] {
        guard root.isGroup else { return [([root.name], root)] }
        return root.subcommands.flatMap { subcommand in
            runnableCommands(of: subcommand).map { ([root.name] + $0.path, $0.command) }
        }
    }

    /// The type each command line must run: what the manual calls each subcommand.
    static let expected: [(arguments: [String], type: any ParsableCommand.Type)] = [
        (["demo"], DemoCommand.self), (["replay", "pad.events"], ReplayCommand.self), (["read"], ReadCommand.self),
        (["devices"], DevicesCommand.self), (["rumble"], RumbleCommand.self), (["record"], RecordCommand.self),
        (["watch"], WatchCommand.self), (["weigh"], WeighCommand.self), (["tare"], TareCommand.self),
        (["calibrate"], CalibrateCommand.self), (["characterize", "--weights", "1,2,3"], CharacterizeCommand.self),
        (["status"], StatusCommand.self), (["log", "sessions"], LogSessionsCommand.self), (["log", "export"], LogExportCommand.self),
        (["log", "plot", "--session", "1", "-o", "plot.svg"], LogPlotCommand.self), (["log", "stats"], LogStatsCommand.self),
    ]

    @Test func everyDeclaredCommandRunsItsOwnType() throws {
        let commands = Self.runnableCommands(of: tree)
        let runners = commands.compactMap(\.command.runner).map(ObjectIdentifier.init)
        #expect(runners.count == commands.count, "a command of the tree has no type to run it")
        #expect(Set(runners).count == runners.count, "two commands of the tree run the same type")
        #expect(Set(commands.map(\.path)).count == commands.count, "two commands of the tree have the same name")
        // Each one is reached by its name, and runs its own type.
        for (path, command) in commands {
            let arguments = try #require(Self.expected.first { ["forcescale"] + $0.arguments.prefix(path.count - 1) == path }?.arguments,
                                         "\(path) is not among the commands this test expects")
            let parsed = try parsedCommand(arguments)
            #expect(parsed.path == path)
            #expect(parsed.runner.map(ObjectIdentifier.init) == command.runner.map(ObjectIdentifier.init), "\(path)")
        }
        #expect(commands.count == Self.expected.count, "the tree has \(commands.map(\.path)), this test expects \(Self.expected.map(\.arguments))")
    }

    @Test(arguments: expected.indices)
    func aCommandLineRunsTheTypeItNames(_ index: Int) throws {
        let (arguments, type) = Self.expected[index]
        let parsed = try parsedCommand(arguments)
        #expect(parsed.runner.map(ObjectIdentifier.init) == ObjectIdentifier(type), "\(arguments) runs \(parsed.runner.map { "\($0)" } ?? "nothing")")
    }

    @Test func withoutASubcommandTheDefaultsRun() throws {
        #expect(try parsedCommand([]).runner.map(ObjectIdentifier.init) == ObjectIdentifier(DemoCommand.self))
        #expect(try parsedCommand(["--fast"]).runner.map(ObjectIdentifier.init) == ObjectIdentifier(DemoCommand.self))
        #expect(try parsedCommand(["log"]).runner.map(ObjectIdentifier.init) == ObjectIdentifier(LogSessionsCommand.self))
        #expect(try parsedCommand(["log", "--json"]).runner.map(ObjectIdentifier.init) == ObjectIdentifier(LogSessionsCommand.self))
    }

    @Test(arguments: [["wiegh"], ["log", "stast"], ["log", "exprot", "--peaks"], ["help", "weight"]])
    func aNameThatIsNoCommandsIsRefused(_ arguments: [String]) {
        #expect(throws: UsageError.self, "\(arguments)") { try parse(arguments, root: tree) }
    }

    private func parsedCommand(_ arguments: [String]) throws -> ParsedCommand {
        guard case .run(let parsed) = try parse(arguments, root: tree) else {
            throw UnexpectedResult(arguments: arguments)
        }
        return parsed
    }
}

/// Parsing gave a different kind of result than the test expected.
struct UnexpectedResult: Error {
    var arguments: [String]
}
