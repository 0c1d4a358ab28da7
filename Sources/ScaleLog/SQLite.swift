import CSQLite
import Glibc

/// A failed SQLite call: the result code, SQLite's own message, and the database's path.
package struct SQLiteError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_IOERR_WRITE`, …); `primary` is its low byte.
    var code: Int32
    package var message: String
    package var path: String

    init(code: Int32, message: String, path: String) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The primary result code: `SQLITE_FULL`, `SQLITE_READONLY`, `SQLITE_NOTADB`, ….
    package var primary: Int32 { code & 0xff }

    /// `SQLITE_FULL`: the disk (or the file size limit) is full.
    var isDiskFull: Bool { primary == SQLITE_FULL }
    /// `SQLITE_NOTADB`: the file is not an SQLite database.
    var isNotADatabase: Bool { primary == SQLITE_NOTADB }

    package var description: String { "\(path): \(message) (SQLite error \(code))" }
}

/// One SQLite connection, used by one thread at a time. Statements are prepared once and
/// reused; the connection closes when released.
final class SQLiteConnection {
    let path: String
    private(set) var handle: OpaquePointer?
    private var cache: [String: SQLiteStatement] = [:]

    /// Opens (and with `create`, makes) the database file.
    /// - Parameters:
    ///   - readOnly: `SQLITE_OPEN_READONLY`: the connection can never write.
    ///   - create: Make the file when it is missing (ignored when read-only).
    /// - Throws: `SQLiteError` naming the path.
    init(path: String, readOnly: Bool, create: Bool) throws(SQLiteError) {
        self.path = path
        var flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0)
        // Each connection belongs to one thread; SQLite's per-connection mutex is not needed.
        flags |= SQLITE_OPEN_NOMUTEX
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(path, &handle, flags, nil)
        self.handle = handle
        guard result == SQLITE_OK else {
            let error = SQLiteError(code: result, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(result)), path: path)
            sqlite3_close_v2(handle)
            self.handle = nil
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
    }

    deinit { close() }

    /// Finalises the statements and closes the connection; later calls fail with `SQLITE_MISUSE`.
    func close() {
        cache.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func error(_ code: Int32) -> SQLiteError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return SQLiteError(code: handle.map { sqlite3_extended_errcode($0) } ?? code, message: message, path: path)
    }

    /// Runs one or more statements that return no rows (`CREATE …; PRAGMA …`).
    func execute(_ sql: String) throws(SQLiteError) {
        guard let handle else { throw error(SQLITE_MISUSE) }
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw error(result) }
    }

    /// A prepared statement for `sql`, made once per connection and reset for reuse.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        guard let handle else { throw error(SQLITE_MISUSE) }
        var raw: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard result == SQLITE_OK, let raw else { throw error(result) }
        let statement = SQLiteStatement(raw, connection: self)
        cache[sql] = statement
        return statement
    }

    /// The first column of the first row of `sql`, as an integer; nil when there is no row
    /// or the value is NULL.
    func integer(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return statement.isNull(0) ? nil : statement.int64(0)
    }

    /// Runs a statement that returns no rows, with bound values.
    func run(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        while try statement.step() {}
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    var lastInsertedRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Whether a transaction is open (a failed COMMIT may leave one).
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }
}

/// A value to bind to a statement's `?`.
enum SQLiteValue {
    case integer(Int64)
    case real(Double)
    case text(String)
    case null
}

/// A prepared statement of a `SQLiteConnection`, owned by its cache.
final class SQLiteStatement {
    private let raw: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(_ raw: OpaquePointer, connection: SQLiteConnection) {
        self.raw = raw
        self.connection = connection
    }

    deinit { sqlite3_finalize(raw) }

    /// Binds the values to `?1`, `?2`, … in order.
    func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let result: Int32
            switch value {
            case .integer(let integer): result = sqlite3_bind_int64(raw, index, integer)
            case .real(let real): result = sqlite3_bind_double(raw, index, real)
            case .null: result = sqlite3_bind_null(raw, index)
            case .text(let text):
                var text = text
                result = text.withUTF8 { bytes in
                    // A NULL pointer would bind NULL: an empty string gets a literal (static) one.
                    guard bytes.count > 0 else { return sqlite3_bind_text(raw, index, "", 0, nil) }
                    return bytes.withMemoryRebound(to: CChar.self) {
                        CSQLite_bind_text_transient(raw, index, $0.baseAddress, Int32($0.count))
                    }
                }
            }
            guard result == SQLITE_OK else { throw connection.error(result) }
        }
    }

    func bind(_ values: SQLiteValue...) throws(SQLiteError) { try bind(values) }

    /// Steps once. - Returns: true for a row, false when done.
    func step() throws(SQLiteError) -> Bool {
        let result = sqlite3_step(raw)
        switch result {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.error(result)
            sqlite3_reset(raw)
            throw error
        }
    }

    /// Rewinds the statement and clears its bindings, for the next use.
    func reset() {
        sqlite3_reset(raw)
        sqlite3_clear_bindings(raw)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(raw, column) }
    func double(_ column: Int32) -> Double { sqlite3_column_double(raw, column) }
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(raw, column) == SQLITE_NULL }
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(raw, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(raw, column))), as: UTF8.self)
    }
}
