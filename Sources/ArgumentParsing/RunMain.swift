#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The exit status for a command line that cannot be run (`EX_USAGE` in `sysexits.h`).
let usageErrorExitCode: Int32 = ExitStatus.usage

/// Exit statuses from sysexits.h, which swift-argument-parser also follows for usage (64):
/// one table for every program of the package, so that a status means the same in each.
package enum ExitStatus {
    package static let success: Int32 = 0
    package static let failure: Int32 = 1
    /// `EX_USAGE`: the command line is wrong.
    package static let usage: Int32 = 64
    /// `EX_DATAERR`: malformed input (a recording, a device that cannot weigh, an empty
    /// password file).
    package static let dataError: Int32 = 65
    /// `EX_NOINPUT`: a file that does not exist or cannot be read.
    package static let noInput: Int32 = 66
    /// `EX_UNAVAILABLE`: something needed is not there (no usable device, no daemon, an
    /// address that cannot be listened on).
    package static let unavailable: Int32 = 69
    /// `EX_OSERR`: the operating system refused what a program needs to start.
    package static let osError: Int32 = 71
    /// `EX_CANTCREAT`: an output file that cannot be created.
    package static let cannotCreate: Int32 = 73
    /// `EX_IOERR`: input or output failed.
    package static let ioError: Int32 = 74
    /// `EX_PROTOCOL`: a peer said something this program cannot understand.
    package static let protocolError: Int32 = 76
    /// `EX_NOPERM`: not allowed (a device, a socket, a port, a broker's refusal).
    package static let noPermission: Int32 = 77
    /// `EX_CONFIG`: a broken configuration file.
    package static let configuration: Int32 = 78
}

/// Parses the process's command line against a tool made of one command, runs it and
/// exits with its status.
///
/// Help and version go to standard output with status 0; a ``UsageError`` from parsing
/// or from the command's run goes to standard error with status 64; any other error from
/// the run goes to standard error as `Error: …` with status 1. Otherwise the status is
/// what the run returns. Help is wrapped to the terminal's width.
///
/// - Parameters:
///   - command: The tool's command (`forcescaled`).
///   - arguments: The command-line arguments without the program name.
package func runMain(_ command: any ParsableCommand.Type, arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
    exit(runCommand(Command(command), arguments: arguments, terminalWidth: standardOutputWidth()))
}

/// Parses the process's command line against a tool made of subcommands, runs the one
/// typed (or the default) and exits with its status, as the other `runMain` does.
///
/// - Parameters:
///   - group: The tool's top-level group (`forcescale`).
///   - arguments: The command-line arguments without the program name.
package func runMain(_ group: any CommandGroup.Type, arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
    exit(runCommand(Command(group: group), arguments: arguments, terminalWidth: standardOutputWidth()))
}

/// Parses a command line, runs the command it selects and returns the exit status, as
/// ``runMain(_:arguments:)`` does but with the streams given.
///
/// - Parameters:
///   - root: The tool's top-level command, made from its types.
///   - arguments: The command-line arguments without the program name.
///   - terminalWidth: The width help text is wrapped to.
///   - standardOutput: Receives the exact text for standard output.
///   - standardError: Receives the exact text for standard error.
/// - Returns: The exit status.
func runCommand(
    _ root: Command,
    arguments: [String],
    terminalWidth: Int = 80,
    standardOutput: (String) -> Void = writeToStandardOutput,
    standardError: (String) -> Void = writeToStandardError
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
    guard let runner = parsed.runner else {
        preconditionFailure("'\(parsed.path.joined(separator: " "))' was not declared by a type that runs it")
    }
    do {
        return try runner.run(parsed)
    } catch {
        return reportError(error, standardError)
    }
}

/// Prints an error the way swift-argument-parser does and picks the exit status.
///
/// - Parameters:
///   - error: The error thrown by parsing or by a command's body.
///   - standardError: Receives the text.
/// - Returns: 64 for a ``UsageError``, 1 for anything else.
func reportError(_ error: any Error, _ standardError: (String) -> Void) -> Int32 {
    if let usageError = error as? UsageError {
        standardError(usageError.description + "\n")
        return usageErrorExitCode
    }
    standardError("Error: \(error)\n")
    return EXIT_FAILURE
}
