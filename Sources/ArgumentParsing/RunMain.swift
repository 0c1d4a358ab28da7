#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The exit status for a command line that cannot be run (`EX_USAGE` in `sysexits.h`).
package let usageErrorExitCode: Int32 = ExitStatus.usage

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

/// Parses a command line and runs the selected command, returning the exit status.
///
/// Help and version go to `standardOutput` with status 0; a ``UsageError``
/// from parsing or from `body` goes to `standardError` with status 64; any
/// other error from `body` goes to `standardError` as `Error: …` with
/// status 1. Otherwise the status is what `body` returns.
///
/// - Parameters:
///   - root: The tool's top-level command.
///   - arguments: The command-line arguments without the program name.
///   - terminalWidth: The width help text is wrapped to.
///   - standardOutput: Receives the exact text for standard output.
///   - standardError: Receives the exact text for standard error.
///   - body: Runs the selected command and returns its exit status.
/// - Returns: The exit status.
package func runCommand(
    root: Command,
    arguments: [String],
    terminalWidth: Int = 80,
    standardOutput: (String) -> Void = writeToStandardOutput,
    standardError: (String) -> Void = writeToStandardError,
    body: (ParsedCommand) throws -> Int32
) -> Int32 {
    switch selectCommand(root: root, arguments: arguments, terminalWidth: terminalWidth, standardOutput, standardError) {
    case let .finished(status):
        return status
    case let .selected(command):
        do {
            return try body(command)
        } catch {
            return report(error, standardError)
        }
    }
}

/// Parses a command line and runs the selected command, which may suspend, returning the exit status.
///
/// Behaves as the synchronous ``runCommand(root:arguments:terminalWidth:standardOutput:standardError:body:)``.
///
/// - Parameters:
///   - root: The tool's top-level command.
///   - arguments: The command-line arguments without the program name.
///   - terminalWidth: The width help text is wrapped to.
///   - standardOutput: Receives the exact text for standard output.
///   - standardError: Receives the exact text for standard error.
///   - body: Runs the selected command and returns its exit status.
/// - Returns: The exit status.
package func runCommand(
    root: Command,
    arguments: [String],
    terminalWidth: Int = 80,
    standardOutput: (String) -> Void = writeToStandardOutput,
    standardError: (String) -> Void = writeToStandardError,
    body: (ParsedCommand) async throws -> Int32
) async -> Int32 {
    switch selectCommand(root: root, arguments: arguments, terminalWidth: terminalWidth, standardOutput, standardError) {
    case let .finished(status):
        return status
    case let .selected(command):
        do {
            return try await body(command)
        } catch {
            return report(error, standardError)
        }
    }
}

/// Parses the process's command line, runs the selected command and exits with its status.
///
/// See ``runCommand(root:arguments:terminalWidth:standardOutput:standardError:body:)``
/// for what is printed and the exit statuses; help is wrapped to the terminal's width.
///
/// - Parameters:
///   - root: The tool's top-level command.
///   - arguments: The command-line arguments without the program name.
///   - body: Runs the selected command and returns its exit status.
package func runMain(
    root: Command,
    arguments: [String] = Array(CommandLine.arguments.dropFirst()),
    body: (ParsedCommand) throws -> Int32
) -> Never {
    exit(runCommand(root: root, arguments: arguments, terminalWidth: standardOutputWidth(), body: body))
}

/// Parses the process's command line, runs the selected command, which may suspend, and exits with its status.
///
/// - Parameters:
///   - root: The tool's top-level command.
///   - arguments: The command-line arguments without the program name.
///   - body: Runs the selected command and returns its exit status.
package func runMain(
    root: Command,
    arguments: [String] = Array(CommandLine.arguments.dropFirst()),
    body: (ParsedCommand) async throws -> Int32
) async -> Never {
    exit(await runCommand(root: root, arguments: arguments, terminalWidth: standardOutputWidth(), body: body))
}

/// The outcome of parsing, before any command body runs.
private enum Selection {
    /// Nothing left to run; exit with this status.
    case finished(Int32)
    /// Run this command.
    case selected(ParsedCommand)
}

/// Parses, printing help, version or a usage error when that is the whole outcome.
private func selectCommand(
    root: Command,
    arguments: [String],
    terminalWidth: Int,
    _ standardOutput: (String) -> Void,
    _ standardError: (String) -> Void
) -> Selection {
    do {
        switch try parse(arguments, root: root, terminalWidth: terminalWidth) {
        case let .run(command):
            return .selected(command)
        case let .help(text), let .version(text):
            standardOutput(text + "\n")
            return .finished(0)
        case let .completionScript(script):
            standardOutput(script)
            return .finished(0)
        }
    } catch {
        return .finished(report(error, standardError))
    }
}

/// Prints an error the way swift-argument-parser does and picks the exit status.
///
/// - Parameters:
///   - error: The error thrown by parsing or by a command's body.
///   - standardError: Receives the text.
/// - Returns: 64 for a ``UsageError``, 1 for anything else.
private func report(_ error: any Error, _ standardError: (String) -> Void) -> Int32 {
    if let usageError = error as? UsageError {
        standardError(usageError.description + "\n")
        return usageErrorExitCode
    }
    standardError("Error: \(error)\n")
    return EXIT_FAILURE
}
