import CSQLite
import Glibc
import ScaleCore

/// The force log: an SQLite file of devices, sessions (one touch each), their readings and
/// their PEAKs. The daemon's writer opens it read-write; the CLI opens it read-only.
///
/// The file is in WAL mode with `synchronous = FULL`: every committed transaction is on
/// disk before the commit returns, so a crash or a power cut loses at most the batch being
/// written, and readers (the CLI) never wait for the writer. One `LogDatabase` belongs to
/// one thread at a time.
package final class LogDatabase {
    /// The file name under the daemon's state directory when logging is just switched on.
    package static let defaultFileName = "log.sqlite"

    /// `<state dir>/log.sqlite`.
    package static func defaultPath(stateDirectory: String) -> String {
        (stateDirectory.hasSuffix("/") ? stateDirectory : stateDirectory + "/") + defaultFileName
    }

    /// The schema version this code writes and reads (`PRAGMA user_version`).
    package static var schemaVersion: Int { LogSchema.currentVersion }

    package let path: String
    let isReadOnly: Bool
    /// The file's schema version (older files are read as they are when opened read-only).
    private(set) var schemaVersion: Int
    private let connection: SQLiteConnection

    private init(path: String, isReadOnly: Bool, connection: SQLiteConnection, schemaVersion: Int) {
        self.path = path
        self.isReadOnly = isReadOnly
        self.connection = connection
        self.schemaVersion = schemaVersion
    }

    /// Opens the log at `path`.
    /// - Parameters:
    ///   - readOnly: For reading (the CLI): `SQLITE_OPEN_READONLY`; the file must exist and
    ///     is read at whatever schema version it has, up to this code's.
    ///     Otherwise (the daemon) the file is made when missing (its directory must exist)
    ///     and migrated forward to the current schema in one transaction.
    /// - Throws: `LogDatabaseError`: `.missing` when a file to read is not there,
    ///   `.notADatabase`, `.notALog`, `.newerSchema`, or `.sqlite` for the rest.
    package static func open(path: String, readOnly: Bool = false) throws(LogDatabaseError) -> LogDatabase {
        var status = stat()
        if stat(path, &status) != 0, errno == ENOENT {
            if readOnly { throw .missing(path: path) }
            try create(path: path)
        }
        return try wrapping {
            let connection = try SQLiteConnection(path: path, readOnly: readOnly, create: !readOnly)
            // A reader waits a little for a checkpoint or recovery instead of failing at once.
            try connection.execute("PRAGMA busy_timeout = 5000")
            let database = LogDatabase(path: path, isReadOnly: readOnly, connection: connection, schemaVersion: 0)
            if readOnly {
                database.schemaVersion = try database.checkedVersion()
                guard database.schemaVersion > 0 else { throw LogDatabaseError.notALog(path: path) }
            } else {
                // WAL must be chosen outside a transaction; it then stays with the file.
                // After a checkpoint the WAL file is cut back to 4 MiB (the auto-checkpoint's
                // size), whatever a long backlog once made it grow to.
                try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 4194304")
                // Keep the -wal and -shm files when the daemon closes the log, so that a
                // reader without write access to the directory can still open it.
                var persist: Int32 = 1
                sqlite3_file_control(connection.handle, "main", SQLITE_FCNTL_PERSIST_WAL, &persist)
                try database.migrate()
            }
            return database
        }
    }

    /// Makes a new log with its whole schema beside `path` and only then links it into
    /// place, so that a reader (the CLI, polling while the daemon starts) finds no file or a
    /// complete log, never an empty database in between.
    private static func create(path: String) throws(LogDatabaseError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = directory + "." + name + ".new-" + String(getpid())
        for leftover in [temporary, temporary + "-wal", temporary + "-shm", temporary + "-journal"] { unlink(leftover) }
        defer { unlink(temporary) }
        do {
            let connection = try SQLiteConnection(path: temporary, readOnly: false, create: true)
            let database = LogDatabase(path: path, isReadOnly: false, connection: connection, schemaVersion: 0)
            // WAL is recorded in the file's header, so it holds once the file is in place.
            try connection.execute("PRAGMA journal_mode = WAL")
            try database.migrate()
            // Closing the last connection checkpoints the WAL into the file and removes it.
            connection.close()
        } catch var error as SQLiteError {
            // Named by the file the user gave, not by the temporary.
            error.path = path
            throw LogDatabaseError(error)
        } catch let error as LogDatabaseError {
            throw error
        } catch {
            preconditionFailure("unexpected \(error)")
        }
        // link, not rename: a log that appeared meanwhile is kept, never replaced. A file
        // system without hard links (EPERM) gets the rename.
        if link(temporary, path) != 0, errno != EEXIST {
            guard errno == EPERM, rename(temporary, path) == 0 else {
                throw LogDatabaseError(SQLiteError(code: SQLITE_CANTOPEN, message: String(cString: strerror(errno)), path: path))
            }
        }
    }

    /// Closes the file; the object must not be used afterwards.
    package func close() { connection.close() }

    // MARK: - Schema

    /// The file's version; throws for a newer one, or a database of something else.
    private func checkedVersion() throws -> Int {
        let version = Int(try connection.integer("PRAGMA user_version") ?? 0)
        if version > LogSchema.currentVersion {
            throw LogDatabaseError.newerSchema(path: path, found: version, supported: LogSchema.currentVersion)
        }
        if version == 0, try connection.integer("SELECT count(*) FROM sqlite_master") ?? 0 > 0 {
            throw LogDatabaseError.notALog(path: path)
        }
        return version
    }

    /// Brings the file to the current version in one transaction: all of it or none.
    private func migrate() throws {
        try connection.execute("BEGIN IMMEDIATE")
        do {
            var version = try checkedVersion()
            if version == 0 {
                try connection.execute(LogSchema.version1)
                version = 1
            }
            while version < LogSchema.currentVersion {
                try connection.execute(LogSchema.migrations[version - 1])
                version += 1
            }
            try connection.execute("PRAGMA user_version = \(version)")
            try connection.execute("COMMIT")
            schemaVersion = version
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: - Writing

    /// Runs `body` in one transaction: committed when it returns, rolled back when it
    /// throws (and after a failed commit, such as a full disk).
    package func transaction<Result>(_ body: () throws(LogDatabaseError) -> Result) throws(LogDatabaseError) -> Result {
        do throws(SQLiteError) {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            throw LogDatabaseError(error)
        }
        do throws(LogDatabaseError) {
            let result = try body()
            do throws(SQLiteError) { try connection.execute("COMMIT") } catch { throw LogDatabaseError(error) }
            return result
        } catch {
            if connection.inTransaction { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    /// The device's row, made or renamed as needed.
    /// - Parameters:
    ///   - key: The calibration store's name for the device (`DeviceDescription.stateIdentity`).
    ///   - name: The kernel's name, or a recording's file name.
    package func device(key: String, name: String) throws(LogDatabaseError) -> LoggedDevice {
        try Self.wrapping {
            let id = try connection.integer(
                "INSERT INTO devices (key, name) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET name = excluded.name RETURNING id",
                .text(key), .text(name))
            return LoggedDevice(id: id ?? 0, key: key, name: name)
        }
    }

    /// Starts a session with no readings yet.
    package func openSession(device: LoggedDevice, started: WallTime, model: GramModelKind) throws(LogDatabaseError) -> LoggedSession {
        try Self.wrapping {
            try connection.run(
                "INSERT INTO sessions (device, started, peak_grams, readings, model) VALUES (?1, ?2, 0, 0, ?3)",
                .integer(device.id), .integer(started.microseconds), .text(model.rawValue))
            return LoggedSession(
                id: connection.lastInsertedRowID, device: device, started: started, ended: nil, peakGrams: 0, stableGrams: nil,
                readingCount: 0, model: model)
        }
    }

    /// Appends readings to the session, in order, and saves its summary: the count, the
    /// peak grams, and the settled weight of the last stable reading that had a contact.
    /// - Parameter session: Updated with the readings; its `session` field is used in
    ///   place of each reading's.
    package func append(_ readings: some Sequence<LoggedReading>, to session: inout LoggedSession) throws(LogDatabaseError) {
        try Self.wrapping {
            let insert = try connection.statement(
                "INSERT INTO readings (session, n, time, raw, force, grams, flags, contacts) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
            for reading in readings {
                insert.reset()
                try insert.bind(
                    .integer(session.id), .integer(Int64(session.readingCount)), .integer(reading.time.microseconds),
                    .integer(Int64(reading.raw)), .real(reading.force), .real(reading.grams), .integer(Int64(reading.flags.rawValue)),
                    .integer(Int64(reading.contacts)))
                while try insert.step() {}
                session.readingCount += 1
                let saturated = reading.flags.contains(.saturated)
                if reading.grams > session.peakGrams || (reading.grams == session.peakGrams && saturated) {
                    session.peakGrams = reading.grams
                    session.peakSaturated = saturated
                }
                if reading.flags.contains(.stable), reading.contacts > 0 {
                    session.stableGrams = reading.settledGrams ?? reading.grams
                    session.stableSaturated = saturated
                }
            }
            insert.reset()
            try saveSummary(session)
        }
    }

    /// Records a PEAK of a session.
    package func append(_ peak: LoggedPeak) throws(LogDatabaseError) {
        try Self.wrapping {
            try connection.run(
                "INSERT INTO peaks (session, time, raw, grams, rumble, rumble_latency, rumble_errno) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                .integer(peak.session), .integer(peak.time.microseconds), .integer(Int64(peak.raw)), .real(peak.grams),
                peak.rumble.map { .text($0.name) } ?? .null,
                peak.rumble?.latencyMicroseconds.map { .integer($0) } ?? .null,
                peak.rumble?.errno.map { .integer(Int64($0)) } ?? .null)
        }
    }

    /// Ends the session at `time` and saves its summary.
    package func close(_ session: inout LoggedSession, at time: WallTime) throws(LogDatabaseError) {
        session.ended = time
        try Self.wrapping { try saveSummary(session) }
    }

    private func saveSummary(_ session: LoggedSession) throws {
        try connection.run(
            "UPDATE sessions SET ended = ?2, peak_grams = ?3, stable_grams = ?4, readings = ?5, peak_saturated = ?6, stable_saturated = ?7 WHERE id = ?1",
            .integer(session.id), session.ended.map { .integer($0.microseconds) } ?? .null, .real(session.peakGrams),
            session.stableGrams.map { .real($0) } ?? .null, .integer(Int64(session.readingCount)),
            .integer(session.peakSaturated ? 1 : 0), .integer(session.stableSaturated ? 1 : 0))
    }

    /// Ends the sessions a crash left open at their last reading (at their start when they
    /// have none). - Returns: How many were open.
    @discardableResult
    func closeUnfinishedSessions() throws(LogDatabaseError) -> Int {
        try Self.wrapping {
            try connection.run("""
                UPDATE sessions SET ended = coalesce((SELECT max(time) FROM readings WHERE session = sessions.id), started)
                WHERE ended IS NULL
                """)
            return connection.changes
        }
    }

    // MARK: - Retention

    /// One small step of retention, in its own transaction, so that the writer never holds
    /// the file for long: either up to `limit` readings of sessions already removed, or up
    /// to 100 ended sessions (their rows and PEAKs) that are too old or that take the log
    /// over `keepReadings`, oldest first. The session in progress is never removed.
    /// - Parameters:
    ///   - olderThan: Sessions that ended before this go.
    ///   - keepReadings: The oldest sessions go while the sessions hold more readings than this.
    /// - Returns: Rows deleted; 0 when there is nothing (more) to do.
    func pruneStep(olderThan: WallTime?, keepReadings: Int?, limit: Int = 2000) throws(LogDatabaseError) -> Int {
        try transaction { () throws(LogDatabaseError) -> Int in
            try Self.wrapping {
                let oldestKept = try connection.integer("SELECT min(id) FROM sessions") ?? .max
                if let orphaned = try connection.integer("SELECT session FROM readings ORDER BY session LIMIT 1"), orphaned < oldestKept {
                    try connection.run(
                        "DELETE FROM readings WHERE session = ?1 AND n < (SELECT min(n) FROM readings WHERE session = ?1) + ?2",
                        .integer(orphaned), .integer(Int64(limit)))
                    return connection.changes
                }
                var doomed: [Int64] = []
                if let olderThan {
                    let old = try connection.statement("SELECT id FROM sessions WHERE ended < ?1 ORDER BY id LIMIT 100")
                    try old.bind(.integer(olderThan.microseconds))
                    while try old.step() { doomed.append(old.int64(0)) }
                    old.reset()
                }
                if let keepReadings, doomed.count < 100 {
                    var excess = (try connection.integer("SELECT total(readings) FROM sessions WHERE id NOT IN (\(doomed.map(String.init).joined(separator: ",")))") ?? 0) - Int64(keepReadings)
                    if excess > 0 {
                        let oldest = try connection.statement("SELECT id, readings FROM sessions WHERE ended IS NOT NULL ORDER BY id LIMIT 200")
                        while excess > 0, doomed.count < 100, try oldest.step() {
                            let id = oldest.int64(0)
                            guard !doomed.contains(id) else { continue }
                            doomed.append(id)
                            excess -= oldest.int64(1)
                        }
                        oldest.reset()
                    }
                }
                guard !doomed.isEmpty else { return 0 }
                let list = doomed.map(String.init).joined(separator: ",")
                try connection.execute("DELETE FROM sessions WHERE id IN (\(list))")
                var deleted = connection.changes
                if schemaVersion >= 2 {
                    try connection.execute("DELETE FROM peaks WHERE session IN (\(list))")
                    deleted += connection.changes
                }
                return deleted
            }
        }
    }

    // MARK: - Reading

    /// The sessions, oldest first (newest last).
    /// - Parameters:
    ///   - since: Only sessions still going on at or after this time: ended then or later,
    ///     or not ended.
    ///   - device: Only sessions of devices whose name or key contains this, ignoring case.
    package func sessions(since: WallTime? = nil, device: String? = nil) throws(LogDatabaseError) -> [LoggedSession] {
        try Self.wrapping {
            let devices = try allDevices()
            let wanted = device.map { filter in
                let needle = filter.lowercased()
                return Set(devices.values.filter { $0.name.lowercased().contains(needle) || $0.key.lowercased().contains(needle) }.map(\.id))
            }
            if let wanted, wanted.isEmpty { return [] }
            let statement = try connection.statement(
                "SELECT \(sessionColumns) FROM sessions WHERE ?1 IS NULL OR ended IS NULL OR ended >= ?1 ORDER BY id")
            defer { statement.reset() }
            try statement.bind(since.map { .integer($0.microseconds) } ?? .null)
            var sessions: [LoggedSession] = []
            while try statement.step() {
                guard wanted?.contains(statement.int64(1)) ?? true else { continue }
                sessions.append(Self.session(from: statement, devices: devices))
            }
            return sessions
        }
    }

    /// A page of sessions, newest first: those with an id below `before` (all when nil),
    /// at most `limit` of them. The next page is the one before the last id of this one.
    package func sessions(before: Int64?, limit: Int) throws(LogDatabaseError) -> [LoggedSession] {
        try Self.wrapping {
            let statement = try connection.statement(
                "SELECT \(sessionColumns) FROM sessions WHERE ?1 IS NULL OR id < ?1 ORDER BY id DESC LIMIT ?2")
            defer { statement.reset() }
            try statement.bind(before.map { .integer($0) } ?? .null, .integer(Int64(limit)))
            let devices = try allDevices()
            var sessions: [LoggedSession] = []
            while try statement.step() { sessions.append(Self.session(from: statement, devices: devices)) }
            return sessions
        }
    }

    /// Keeps this connection's page cache to about `kibibytes` (SQLite's default is 2 MiB),
    /// for a reader whose memory matters more than the speed of re-reading pages.
    package func limitCache(kibibytes: Int) throws(LogDatabaseError) {
        try Self.wrapping { try connection.execute("PRAGMA cache_size = -\(kibibytes)") }
    }

    /// One session; nil when there is none with that id.
    package func session(id: Int64) throws(LogDatabaseError) -> LoggedSession? {
        try Self.wrapping {
            let statement = try connection.statement("SELECT \(sessionColumns) FROM sessions WHERE id = ?1")
            defer { statement.reset() }
            try statement.bind(.integer(id))
            guard try statement.step() else { return nil }
            return Self.session(from: statement, devices: try allDevices())
        }
    }

    /// Calls `body` with each reading of the session in time order, one row at a time, so
    /// that a session of millions of readings needs no more memory than one.
    /// - Throws: `LogDatabaseError`, or what `body` throws (which stops the iteration).
    package func forEachReading(session: Int64, _ body: (LoggedReading) throws -> Void) throws {
        try forEachReading(session: session, from: nil, body)
    }

    /// Calls `body` with the readings of a session numbered `first` up to `first + count`
    /// (their order of arrival, from 0), in that order: a piece of a session for a reader
    /// that takes it a piece at a time, with no statement held open between pieces.
    /// - Throws: `LogDatabaseError`, or what `body` throws (which stops the iteration).
    package func forEachReading(session: Int64, first: Int, count: Int, _ body: (LoggedReading) throws -> Void) throws {
        try forEachReading(session: session, from: nil, numbers: Int64(first)..<Int64(first + count), body)
    }

    /// Calls `body` with each reading at or after `since`, across sessions, in time order,
    /// one row at a time.
    /// - Throws: `LogDatabaseError`, or what `body` throws (which stops the iteration).
    package func forEachReading(since: WallTime, _ body: (LoggedReading) throws -> Void) throws {
        // Sessions do not overlap (the daemon reads one device), so session order is time order.
        for id in try sessionIDs(since: since) {
            try forEachReading(session: id, from: since, body)
        }
    }

    /// The earliest and the latest time of a session's readings that carry a weight (grams
    /// a finite number): what a plot of a session still open needs before its readings come
    /// (``ForcePlot``'s `readingTimes`). Nil when it has none.
    package func readingTimes(session: Int64) throws(LogDatabaseError) -> ClosedRange<WallTime>? {
        try Self.wrapping {
            // ±Infinity are outside the finite range; SQLite stores no NaN (it becomes NULL).
            let statement = try connection.statement("""
                SELECT min(time), max(time) FROM readings
                WHERE session = ?1 AND grams >= -1.7976931348623157e308 AND grams <= 1.7976931348623157e308
                """)
            defer { statement.reset() }
            try statement.bind(.integer(session))
            guard try statement.step(), !statement.isNull(0), !statement.isNull(1) else { return nil }
            return WallTime(microseconds: statement.int64(0))...WallTime(microseconds: statement.int64(1))
        }
    }

    /// Runs `body` on one snapshot of the log (a read transaction): whatever it reads is the
    /// log as it was when its first read began, however the daemon writes meanwhile, so
    /// that two looks at a session still growing (its readings' times, then its readings)
    /// agree. A WAL reader neither waits for the writer nor holds it up; it only keeps the
    /// writer's checkpoint from passing it, so `body` should not wait on a client.
    package func snapshot<Result>(_ body: () throws -> Result) throws -> Result {
        do throws(SQLiteError) {
            try connection.execute("BEGIN")
        } catch {
            throw LogDatabaseError(error)
        }
        // Ends the read transaction; a read has nothing to commit, so this cannot lose data.
        defer { if connection.inTransaction { try? connection.execute("COMMIT") } }
        return try body()
    }

    /// One session read for a plot, on one snapshot (a session still being written is drawn
    /// from the readings it had when the read began): `start` gets the session, its PEAKs
    /// and, for a session still open, the times its readings span (``readingTimes(session:)``,
    /// so that the plot can decimate them as they come), then `add` each reading in time
    /// order. Nil when the log has no such session. `forcescale log plot` and forcescale-web
    /// draw a session this one way, so their pictures are the same byte for byte.
    package func plot<Plot>(
        session id: Int64, start: (LoggedSession, [LoggedPeak], ClosedRange<WallTime>?) throws -> Plot,
        add: (inout Plot, LoggedReading) -> Void
    ) throws -> Plot? {
        try snapshot { () throws -> Plot? in
            guard let session = try self.session(id: id) else { return nil }
            var plot = try start(session, try peaks(session: id), session.ended == nil ? try readingTimes(session: id) : nil)
            try forEachReading(session: id) { add(&plot, $0) }
            return plot
        }
    }

    /// The readings of a session, in time order, all in memory (for tests of small logs).
    func readings(session: Int64) throws(LogDatabaseError) -> [LoggedReading] {
        var readings: [LoggedReading] = []
        do {
            try forEachReading(session: session) { readings.append($0) }
        } catch let error as LogDatabaseError {
            throw error
        } catch {
            preconditionFailure("unexpected \(error)")
        }
        return readings
    }

    /// The PEAKs of a session, in time order.
    package func peaks(session: Int64) throws(LogDatabaseError) -> [LoggedPeak] {
        try peaks(where: "session = ?1", .integer(session))
    }

    /// The PEAKs at or after `since`, in time order.
    package func peaks(since: WallTime) throws(LogDatabaseError) -> [LoggedPeak] {
        try peaks(where: "time >= ?1", .integer(since.microseconds))
    }

    /// Counts, extent and size of the log.
    package func statistics() throws(LogDatabaseError) -> LogStatistics {
        try Self.wrapping {
            let first = try connection.integer("SELECT min(started) FROM sessions")
            let lastEnded = try connection.integer("SELECT max(ended) FROM sessions")
            let lastOpen = try connection.integer(
                "SELECT max(time) FROM readings WHERE session IN (SELECT id FROM sessions WHERE ended IS NULL)")
            let last = [lastEnded, lastOpen].compactMap { $0 }.max()
            var sizes: [Int64] = []
            for suffix in ["", "-wal"] {
                var status = stat()
                sizes.append(stat(path + suffix, &status) == 0 ? Int64(status.st_size) : 0)
            }
            return LogStatistics(
                path: path, schemaVersion: schemaVersion,
                devices: Int(try connection.integer("SELECT count(*) FROM devices") ?? 0),
                sessions: Int(try connection.integer("SELECT count(*) FROM sessions") ?? 0),
                readings: Int(try connection.integer("SELECT count(*) FROM readings") ?? 0),
                peaks: schemaVersion >= 2 ? Int(try connection.integer("SELECT count(*) FROM peaks") ?? 0) : 0,
                first: first.map(WallTime.init(microseconds:)), last: last.map(WallTime.init(microseconds:)),
                fileBytes: sizes[0], walBytes: sizes[1],
                pageSize: Int(try connection.integer("PRAGMA page_size") ?? 0),
                pageCount: Int(try connection.integer("PRAGMA page_count") ?? 0),
                freelistPages: Int(try connection.integer("PRAGMA freelist_count") ?? 0))
        }
    }

    /// Copies the write-ahead log into the database file and empties it
    /// (`PRAGMA wal_checkpoint(TRUNCATE)`), so that the file's size is the log's size.
    package func checkpoint() throws(LogDatabaseError) {
        try Self.wrapping { try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
    }

    /// `PRAGMA integrity_check`: `["ok"]` for a sound file, else SQLite's list of problems.
    func integrityCheck() throws(LogDatabaseError) -> [String] {
        try Self.wrapping {
            let statement = try connection.statement("PRAGMA integrity_check")
            defer { statement.reset() }
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines
        }
    }

    // MARK: - Helpers

    /// A log before version 4, read as it is, knows no saturation: none is claimed.
    private var sessionColumns: String {
        "id, device, started, ended, peak_grams, stable_grams, readings, model, "
            + (schemaVersion >= 4 ? "peak_saturated, stable_saturated" : "0, 0")
    }

    private static func session(from row: SQLiteStatement, devices: [Int64: LoggedDevice]) -> LoggedSession {
        let deviceID = row.int64(1)
        return LoggedSession(
            id: row.int64(0), device: devices[deviceID] ?? LoggedDevice(id: deviceID, key: "", name: ""),
            started: WallTime(microseconds: row.int64(2)), ended: row.isNull(3) ? nil : WallTime(microseconds: row.int64(3)),
            peakGrams: row.double(4), stableGrams: row.isNull(5) ? nil : row.double(5), readingCount: Int(row.int64(6)),
            model: GramModelKind(rawValue: row.text(7)) ?? .nominal, peakSaturated: row.int64(8) != 0, stableSaturated: row.int64(9) != 0)
    }

    private func allDevices() throws -> [Int64: LoggedDevice] {
        let statement = try connection.statement("SELECT id, key, name FROM devices")
        defer { statement.reset() }
        var devices: [Int64: LoggedDevice] = [:]
        while try statement.step() {
            devices[statement.int64(0)] = LoggedDevice(id: statement.int64(0), key: statement.text(1), name: statement.text(2))
        }
        return devices
    }

    private func sessionIDs(since: WallTime) throws(LogDatabaseError) -> [Int64] {
        try Self.wrapping {
            let statement = try connection.statement("SELECT id FROM sessions WHERE ended IS NULL OR ended >= ?1 ORDER BY id")
            defer { statement.reset() }
            try statement.bind(.integer(since.microseconds))
            var ids: [Int64] = []
            while try statement.step() { ids.append(statement.int64(0)) }
            return ids
        }
    }

    /// Streams rows with a statement of its own, so that `body` may run other queries (a
    /// cached statement would be reset under the iteration).
    private func forEachReading(
        session: Int64, from: WallTime?, numbers: Range<Int64> = 0..<Int64.max, _ body: (LoggedReading) throws -> Void
    ) throws {
        guard let handle = connection.handle else { throw LogDatabaseError(connection.error(SQLITE_MISUSE)) }
        var raw: OpaquePointer?
        let sql = """
            SELECT time, raw, force, grams, flags, contacts FROM readings
            WHERE session = ?1 AND time >= ?2 AND n >= ?3 AND n < ?4 ORDER BY n
            """
        let prepared = sqlite3_prepare_v2(handle, sql, -1, &raw, nil)
        guard prepared == SQLITE_OK, let raw else { throw LogDatabaseError(connection.error(prepared)) }
        let statement = SQLiteStatement(raw, connection: connection)
        do throws(SQLiteError) {
            try statement.bind(.integer(session), .integer(from?.microseconds ?? .min), .integer(numbers.lowerBound), .integer(numbers.upperBound))
        } catch {
            throw LogDatabaseError(error)
        }
        while true {
            let more: Bool
            do throws(SQLiteError) { more = try statement.step() } catch { throw LogDatabaseError(error) }
            guard more else { break }
            try body(LoggedReading(
                session: session, time: WallTime(microseconds: statement.int64(0)), raw: Int32(truncatingIfNeeded: statement.int64(1)),
                force: statement.double(2), grams: statement.double(3), contacts: Int(statement.int64(5)),
                flags: ReadingFlags(rawValue: Int(statement.int64(4)))))
        }
    }

    private func peaks(where condition: String, _ value: SQLiteValue) throws(LogDatabaseError) -> [LoggedPeak] {
        guard schemaVersion >= 2 else { return [] }
        return try Self.wrapping {
            // A log read at version 2 has no rumble columns: its PEAKs read as untried.
            let rumbleColumns = schemaVersion >= 3 ? "rumble, rumble_latency, rumble_errno" : "NULL, NULL, NULL"
            let statement = try connection.statement(
                "SELECT session, time, raw, grams, \(rumbleColumns) FROM peaks WHERE \(condition) ORDER BY time")
            defer { statement.reset() }
            try statement.bind(value)
            var peaks: [LoggedPeak] = []
            while try statement.step() {
                let rumble = statement.isNull(4) ? nil : RumbleOutcome(
                    name: statement.text(4), latencyMicroseconds: statement.isNull(5) ? nil : statement.int64(5),
                    errno: statement.isNull(6) ? nil : Int32(truncatingIfNeeded: statement.int64(6)))
                peaks.append(LoggedPeak(
                    session: statement.int64(0), time: WallTime(microseconds: statement.int64(1)),
                    raw: Int32(truncatingIfNeeded: statement.int64(2)), grams: statement.double(3), rumble: rumble))
            }
            return peaks
        }
    }

    /// Runs SQLite calls, turning their errors into `LogDatabaseError`.
    private static func wrapping<Result>(_ body: () throws -> Result) throws(LogDatabaseError) -> Result {
        do {
            return try body()
        } catch let error as LogDatabaseError {
            throw error
        } catch let error as SQLiteError {
            throw LogDatabaseError(error)
        } catch {
            preconditionFailure("unexpected \(error)")
        }
    }
}

/// What `forcescale log stats` shows.
package struct LogStatistics: Hashable, Sendable {
    package var path: String
    package var schemaVersion: Int
    package var devices: Int
    package var sessions: Int
    package var readings: Int
    package var peaks: Int
    /// The start of the first session; nil for an empty log.
    package var first: WallTime?
    /// The last reading's time (the latest session end, or an open session's newest reading).
    package var last: WallTime?
    /// The database file's size; `walBytes` is the write-ahead log's beside it.
    package var fileBytes: Int64
    package var walBytes: Int64
    package var pageSize: Int
    package var pageCount: Int
    /// Pages freed by retention, reused by new rows before the file grows.
    package var freelistPages: Int

    init(
        path: String, schemaVersion: Int, devices: Int, sessions: Int, readings: Int, peaks: Int, first: WallTime?, last: WallTime?,
        fileBytes: Int64, walBytes: Int64, pageSize: Int, pageCount: Int, freelistPages: Int
    ) {
        self.path = path
        self.schemaVersion = schemaVersion
        self.devices = devices
        self.sessions = sessions
        self.readings = readings
        self.peaks = peaks
        self.first = first
        self.last = last
        self.fileBytes = fileBytes
        self.walBytes = walBytes
        self.pageSize = pageSize
        self.pageCount = pageCount
        self.freelistPages = freelistPages
    }
}
