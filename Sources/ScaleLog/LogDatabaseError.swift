import CSQLite

/// Why the force log cannot be opened or used, naming the file and saying what to do.
package enum LogDatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No file at the path (opening read-only: the daemon has not logged there).
    case missing(path: String)
    /// The file is not an SQLite database.
    case notADatabase(path: String)
    /// An SQLite database, but without the force log's tables.
    case notALog(path: String)
    /// Written by a newer forcescale, whose schema this one does not know.
    case newerSchema(path: String, found: Int, supported: Int)
    /// Anything else SQLite reports: I/O errors, a full disk, a locked file, ….
    case sqlite(SQLiteError)

    /// The file the error is about.
    var path: String {
        switch self {
        case .missing(let path), .notADatabase(let path), .notALog(let path), .newerSchema(let path, _, _): path
        case .sqlite(let error): error.path
        }
    }

    /// The disk, or the file size limit, is full.
    var isDiskFull: Bool {
        if case .sqlite(let error) = self { return error.isDiskFull }
        return false
    }

    package var description: String {
        switch self {
        case .missing(let path):
            "\(path): no force log there (logging is off by default: start forcescaled with --log, "
                + "or --log-db PATH, or set log = on in forcescale.conf; or give the log's path with --db)"
        case .notADatabase(let path):
            "\(path): not an SQLite database (give the path of a force log written by forcescaled)"
        case .notALog(let path):
            "\(path): an SQLite database, but not a forcescale log (it has no sessions and readings tables)"
        case .newerSchema(let path, let found, let supported):
            "\(path): written by a newer forcescale (log schema \(found); this one reads up to \(supported)): update forcescale"
        case .sqlite(let error):
            switch error.primary {
            case SQLITE_FULL:
                "\(error.path): the disk is full (\(error.message)); free some space or lower --log-keep-days / --log-keep-readings"
            case SQLITE_CANTOPEN:
                "\(error.path): cannot open or make the file (\(error.message)): its directory must exist and be writable by forcescaled"
            case SQLITE_BUSY, SQLITE_LOCKED:
                "\(error.path): another process holds the file's lock (\(error.message)); close the program writing to it (an sqlite3 shell in a transaction, a second forcescaled on the same file)"
            case SQLITE_READONLY:
                "\(error.path): the file or its file system is read-only (\(error.message))"
            case SQLITE_IOERR:
                "\(error.path): \(error.message) (SQLite error \(error.code)): is the disk failing, or read-only?"
            default:
                error.description
            }
        }
    }

    init(_ error: SQLiteError) {
        self = error.isNotADatabase ? .notADatabase(path: error.path) : .sqlite(error)
    }
}
