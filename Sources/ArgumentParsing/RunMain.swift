#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The exit status for a command line that cannot be run (`EX_USAGE` in `sysexits.h`).
public let usageErrorExitCode: Int32 = 64

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
public func runCommand(
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
public func runCommand(
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
public func runMain(
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
public func runMain(
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
