@testable import ArgumentParsing
import Testing

/// `sessions`, `stats` and `show` of a nested group, as `forcescale log` nests them.
private enum SampleSessions: ParsableCommand {
    static let configuration = CommandConfiguration(name: "sessions", abstract: "List.")
    static func run(_ command: ParsedCommand) throws -> Int32 { 31 }
}

private enum SampleStats: ParsableCommand {
    static let configuration = CommandConfiguration(name: "stats", abstract: "Count.")
    static func run(_ command: ParsedCommand) throws -> Int32 { 32 }
}

private enum SampleLog: CommandGroup {
    static let configuration = GroupConfiguration(
        name: "log", abstract: "The log.", subcommands: [.command(SampleSessions.self), .command(SampleStats.self)],
        defaultSubcommand: SampleSessions.self)
}

private enum NestedTool: CommandGroup {
    static let configuration = GroupConfiguration(
        name: "tool", abstract: "A tool.",
        subcommands: [.command(SampleDemo.self), .command(SampleReplay.self), .group(SampleLog.self)],
        defaultSubcommand: SampleDemo.self)
}

/// Every command of a tree that runs, with the words that select it.
func runnableCommands(of root: Command) -> [(path: [String], command: Command)] {
    guard root.isGroup else { return [([root.name], root)] }
    return root.subcommands.flatMap { subcommand in
        runnableCommands(of: subcommand).map { ([root.name] + $0.path, $0.command) }
    }
}

/// The status each command of the trees above returns, by its path.
private let statuses: [[String]: Int32] = [
    ["tool", "demo"]: SampleDemo.status, ["tool", "replay"]: SampleReplay.status,
    ["tool", "log", "sessions"]: 31, ["tool", "log", "stats"]: 32,
]

@Suite struct DispatchTests {
    private let tree = Command(group: NestedTool.self)

    @Test func everyCommandOfTheTreeRunsItsOwnType() throws {
        let commands = runnableCommands(of: tree)
        #expect(commands.map(\.path) == [["tool", "demo"], ["tool", "replay"], ["tool", "log", "sessions"], ["tool", "log", "stats"]])
        let runners = commands.compactMap(\.command.runner).map(ObjectIdentifier.init)
        #expect(runners.count == commands.count, "a command of the tree has no type to run it")
        #expect(Set(runners).count == runners.count, "two commands of the tree run the same type")
        for (path, command) in commands {
            // replay cannot run without its file.
            let arguments = Array(path.dropFirst()) + (path.last == "replay" ? ["rec.txt"] : [])
            let parsed = try parsedCommand(arguments, root: tree)
            #expect(parsed.path == path)
            #expect(parsed.runner.map(ObjectIdentifier.init) == command.runner.map(ObjectIdentifier.init), "\(path)")
            #expect(runCommand(tree, arguments: arguments, standardOutput: { _ in }, standardError: { _ in }) == statuses[path], "\(path)")
        }
    }

    @Test func aGroupRunsItsDefaultSubcommandWhenNoneIsNamed() {
        #expect(runCommand(tree, arguments: [], standardOutput: { _ in }, standardError: { _ in }) == SampleDemo.status)
        #expect(runCommand(tree, arguments: ["log"], standardOutput: { _ in }, standardError: { _ in }) == 31)
        #expect(runCommand(tree, arguments: ["--threshold", "2"], standardOutput: { _ in }, standardError: { _ in }) == SampleDemo.status)
    }

    @Test func aGroupWithoutADefaultShowsItsHelpAndRunsNothing() {
        var output = ""
        let status = runCommand(Command(group: SampleToolWithoutDefault.self), arguments: [], standardOutput: { output += $0 }, standardError: { _ in })
        #expect(status == 0)
        #expect(output.hasPrefix("OVERVIEW: Turn a pressure touchpad or pen tablet into a scale.\n"))
    }

    @Test func aNameThatIsNoCommandsIsRejectedNotRunAsTheDefault() {
        var error = ""
        let status = runCommand(tree, arguments: ["log", "stast"], standardOutput: { _ in }, standardError: { error += $0 })
        #expect(status == 64)
        #expect(error.hasPrefix("Error: Unknown subcommand 'stast'. Did you mean 'stats'?\n"), "\(error)")
        #expect(runCommand(tree, arguments: ["replya", "rec.txt"], standardOutput: { _ in }, standardError: { _ in }) == 64)
    }

    @Test func aToolOfOneCommandRunsIt() {
        #expect(runCommand(Command(SampleReplay.self), arguments: ["rec.txt"], standardOutput: { _ in }, standardError: { _ in }) == SampleReplay.status)
    }
}
