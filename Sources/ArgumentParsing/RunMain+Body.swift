#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Running a command line with a body that chooses what to run, for the programs not yet
/// declared as types.
package func runCommand(
    root: Command,
    arguments: [String],
    terminalWidth: Int = 80,
    standardOutput: (String) -> Void = writeToStandardOutput,
    standardError: (String) -> Void = writeToStandardError,
    body: (ParsedCommand) throws -> Int32
) -> Int32 {
    let parsed: ParsedCommand
    do {
        switch try parse(arguments, root: root, terminalWidth: terminalWidth) {
        case let .run(command):
            parsed = command
        case let .help(text), let .version(text):
            standardOutput(text + "\n")
            return 0
        case let .completionScript(script):
            standardOutput(script)
            return 0
        }
    } catch {
        return reportError(error, standardError)
    }
    do {
        return try body(parsed)
    } catch {
        return reportError(error, standardError)
    }
}

package func runMain(
    root: Command,
    arguments: [String] = Array(CommandLine.arguments.dropFirst()),
    body: (ParsedCommand) throws -> Int32
) -> Never {
    exit(runCommand(root: root, arguments: arguments, terminalWidth: standardOutputWidth(), body: body))
}
