import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScaleLog
import ScalePOSIX

/// `forcescale log`: the force log forcescaled keeps (`--log`), read-only: its sessions,
/// their readings as CSV or JSON lines, a plot of one session, and the log's statistics.
enum LogCommand: CommandGroup {
    static let configuration = GroupConfiguration(
        name: "log",
        abstract: "List, export and plot the force log forcescaled keeps.",
        discussion: """
            forcescaled logs every touch as a session (its readings and PEAKs) to an SQLite \
            file when logging is on (forcescaled --log, or log = on in forcescale.conf). \
            These subcommands read that file, never write it, and can run while the daemon \
            logs. Without a subcommand, 'log' lists the sessions.
            """,
        subcommands: [
            .command(LogSessionsCommand.self), .command(LogExportCommand.self),
            .command(LogPlotCommand.self), .command(LogStatsCommand.self),
        ],
        defaultSubcommand: LogSessionsCommand.self)

    // MARK: - Shared by the subcommands

    static let database = OptionKey<String?>(
        "db", valueName: "path",
        help: "The force log to read. (default: /var/lib/forcescale/log.sqlite as root or when it exists, else $XDG_STATE_HOME/forcescale/log.sqlite)",
        parser: .text)

    static let since = OptionKey<TypedTime?>(
        "since", valueName: "time",
        help: "Only from this time on: 2026-11-30, 2026-11-30T14:00 (local), 2026-11-30T13:00Z, Unix seconds, or a time ago (30m, 2h, 7d).",
        parser: ValueParser { text throws(InvalidValue) in
            guard let specification = TimeSpecification(text) else { throw .reason("give \(TimeSpecification.examples)") }
            return TypedTime(text: text, specification: specification)
        })

    /// A time as `--since` takes it, with the text it was typed as.
    struct TypedTime: Sendable {
        var text: String
        var specification: TimeSpecification
    }

    /// The log the command line names, or the one forcescaled writes by default: the system
    /// daemon's when it is there, else the one this user's daemon would write.
    static func databasePath(_ command: ParsedCommand) -> String {
        command[database] ?? StateDirectory.clientPath(of: LogDatabase.defaultFileName)
    }

    /// Opens the log read-only.
    /// - Throws: `CommandFailure`: 66 when there is no log (with how to switch logging on),
    ///   65 when the file is not a force log this forcescale can read.
    static func open(_ command: ParsedCommand) throws -> LogDatabase {
        let path = databasePath(command)
        do {
            return try LogDatabase.open(path: path, readOnly: true)
        } catch {
            throw CommandFailure(log: error)
        }
    }

    /// `--since`, as the time it means now.
    /// - Throws: A usage error naming the option and showing the forms it takes, for a
    ///   local time that the time zone does not have.
    static func since(_ command: ParsedCommand) throws -> WallTime? {
        guard let typed = command[since] else { return nil }
        let text = typed.text
        guard let time = typed.specification.resolve(now: LocalTime.now(), local: { local in
                  LocalTime.wallTime(year: local.year, month: local.month, day: local.day, hour: local.hour,
                                     minute: local.minute, second: local.second, microsecond: local.microsecond)
              })
        else {
            throw command.usageError("The value \(UsageError.typed(text)) is invalid for '--since <time>': give \(TimeSpecification.examples)")
        }
        return time
    }

    /// Runs a body as `reportingFailures` does, with the log's errors mapped to statuses.
    static func run(_ body: () throws -> Void) -> Int32 {
        reportingFailures {
            do {
                try body()
            } catch let error as LogDatabaseError {
                throw CommandFailure(log: error)
            }
        }
    }
}

extension CommandFailure {
    /// The log's errors: 66 for a log that is not there or cannot be opened, 65 for a
    /// file that is not a force log, is newer than this forcescale or is damaged, 69 for a
    /// log that stayed locked, 74 for an I/O error while reading it.
    init(log error: any Error) {
        guard let error = error as? LogDatabaseError else {
            self.init(error)
            return
        }
        switch error {
        case .missing:
            self.init(message: error.description, status: ExitStatus.noInput)
        case .notADatabase, .notALog, .newerSchema:
            self.init(message: error.description, status: ExitStatus.dataError)
        case .sqlite(let failure):
            // SQLITE_CANTOPEN: there, but not readable by this user (or its directory is not).
            if failure.primary == 14 {
                self.init(message: "\(failure.path): cannot be opened (\(failure.message)); check that this user may read it and its directory "
                          + "(the system's log belongs to the forcescale user: read it as root or as a member of the forcescale group)",
                          status: ExitStatus.noInput)
            } else if failure.primary == 8 {
                // SQLITE_READONLY on a read-only open: a log in WAL mode can only be read with
                // its -shm file beside it, which this user cannot create there.
                self.init(message: "\(failure.path): cannot be read here: its \(fileName(failure.path))-shm file is missing and this user "
                          + "may not create it in that directory (copy the log together with its -wal file to a directory you can write, "
                          + "or read it as the daemon's user)",
                          status: ExitStatus.noInput)
            } else {
                let status = switch failure.primary {
                // SQLITE_BUSY, SQLITE_LOCKED: still locked after the busy timeout; try again.
                case 5, 6: ExitStatus.unavailable
                // SQLITE_IOERR, SQLITE_FULL.
                case 10, 13: ExitStatus.ioError
                // SQLITE_CORRUPT and the rest: the file is not what it should be.
                default: ExitStatus.dataError
                }
                // SQLITE_CORRUPT: say what can still be done.
                let hint = failure.primary == 11 ? "; the file is damaged: sqlite3's .recover command saves what can still be read" : ""
                self.init(message: error.description + hint, status: status)
            }
        }
    }

    /// A session id the log does not have.
    static func noSession(_ id: Int64, in path: String) -> CommandFailure {
        CommandFailure(message: "\(path): the log has no session \(id) ('forcescale log sessions' lists them)", status: ExitStatus.noInput)
    }
}

/// The last component of a path: `log.sqlite` for `/var/lib/forcescale/log.sqlite`.
private func fileName(_ path: String) -> Substring {
    path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path)
}

/// Where an output goes: standard output, or a file that replaces `--output` only once it
/// is complete (so an interrupted export leaves no half file behind).
struct LogOutput {
    private let file: ReplacementFile?
    private let standardOutput: OutputChannel?
    /// While a file is written, Ctrl-C waits for the temporary file to be removed.
    private let termination: DeferredTermination?

    init(path: String?) throws {
        if let path, path != "-" {
            let termination = DeferredTermination()
            do {
                file = try ReplacementFile(path: path)
            } catch {
                termination.release()
                throw CommandFailure(message: error.description, status: ExitStatus.cannotCreate)
            }
            self.termination = termination
            standardOutput = nil
        } else {
            file = nil
            standardOutput = OutputChannel.standardOutput
            termination = nil
        }
    }

    func write(_ text: String) throws {
        if let termination, termination.isRequested {
            // Interrupted: the old file stays and the temporary goes; then the signal,
            // released, ends the process as it would have.
            abandon()
            throw CommandFailure(message: "interrupted; \(file?.path ?? "the output") was left as it was", status: ExitStatus.failure)
        }
        try quietOnBrokenPipe {
            if let file { try file.write(text) } else { try standardOutput?.write(text) }
        }
    }

    /// Flushes standard output, or puts the file in place.
    func finish() throws {
        defer { termination?.release() }
        try quietOnBrokenPipe {
            if let file { try file.commit() } else { try standardOutput?.flush() }
        }
    }

    /// `--output /dev/stdout | head` ends as quietly as standard output does: a reader that
    /// went away is no error.
    private func quietOnBrokenPipe(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as SystemError where error.errno == .brokenPipe {
            throw Errno.brokenPipe
        }
    }

    /// Leaves the file as it was (nothing for standard output).
    func abandon() {
        file?.abandon()
        termination?.release()
    }
}
