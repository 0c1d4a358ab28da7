import CSQLite
import Glibc
import ScaleCore
@testable import ScaleLog
import ScaleTestSupport
import Testing

@Suite struct LogDatabaseTests {
    static let base: Int64 = 1_764_500_000_000_000

    /// A touch: rising force, a stable plateau at 120 g, and the release (zero) reading.
    static func touch(startingAt start: Int64, count: Int = 10) -> [LoggedReading] {
        (0..<count).map { index in
            let last = index == count - 1
            let grams = last ? 0 : min(Double(index) * 30.25, 120.5)
            return LoggedReading(
                session: 0, time: WallTime(microseconds: start + Int64(index) * 1_000), raw: last ? 0 : Int32(index * 10),
                force: grams / 385, grams: grams, contacts: last ? 0 : 1,
                flags: (index >= 5 && !last) ? [.stable] : (index == 4 ? [.saturated] : []))
        }
    }

    /// Writes one whole session; returns it as stored.
    @discardableResult
    static func logTouch(_ database: LogDatabase, device: LoggedDevice, start: Int64, count: Int = 10, peak: Bool = false) throws -> LoggedSession {
        try database.transaction { () throws(LogDatabaseError) -> LoggedSession in
            var session = try database.openSession(device: device, started: WallTime(microseconds: start), model: .calibrated)
            let readings = touch(startingAt: start, count: count)
            try database.append(readings, to: &session)
            if peak { try database.append(LoggedPeak(session: session.id, time: readings[4].time, raw: 40, grams: 120.5)) }
            try database.close(&session, at: readings.last!.time)
            return session
        }
    }

    @Test func aNewLogIsInWALModeAtTheCurrentSchema() throws {
        let directory = TemporaryDirectory()
        let path = LogDatabase.defaultPath(stateDirectory: directory.path)
        #expect(path == directory.path + "/log.sqlite")
        let database = try LogDatabase.open(path: path)
        #expect(database.schemaVersion == 4)
        #expect(LogDatabase.schemaVersion == 4)
        database.close()
        let raw = try SQLiteConnection(path: path, readOnly: true, create: false)
        let mode = try raw.statement("PRAGMA journal_mode")
        #expect(try mode.step())
        #expect(mode.text(0) == "wal")
        #expect(try raw.integer("PRAGMA user_version") == 4)
    }

    @Test func aLogOfTheSecondSchemaKeepsItsPeaksAndLearnsTheirRumbles() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        // The file as the second release left it: one session with one PEAK.
        let old = try SQLiteConnection(path: path, readOnly: false, create: true)
        try old.execute("PRAGMA journal_mode = WAL")
        try old.execute(LogSchema.version1)
        try old.execute(LogSchema.migrations[0])
        try old.execute("""
            INSERT INTO devices (id, key, name) VALUES (1, 'pad', 'Pad');
            INSERT INTO sessions (id, device, started, ended, peak_grams, stable_grams, readings, model)
                VALUES (1, 1, \(Self.base), \(Self.base + 1000), 385.0, NULL, 2, 'nominal');
            INSERT INTO peaks VALUES (1, \(Self.base + 500), 255, 385.0);
            PRAGMA user_version = 2;
            """)
        old.close()
        let untried = LoggedPeak(session: 1, time: WallTime(microseconds: Self.base + 500), raw: 255, grams: 385)

        // A reader takes it as it is: the PEAK, with no rumble tried.
        let reader = try LogDatabase.open(path: path, readOnly: true)
        #expect(reader.schemaVersion == 2)
        #expect(try reader.peaks(session: 1) == [untried])
        reader.close()

        let database = try LogDatabase.open(path: path)
        #expect(database.schemaVersion == 4)
        let outcomes: [RumbleOutcome] = [.played(latencyMicroseconds: 412), .failed(errno: 5), .unavailable, .off]
        for (index, outcome) in outcomes.enumerated() {
            try database.append(LoggedPeak(
                session: 1, time: WallTime(microseconds: Self.base + 600 + Int64(index)), raw: 255, grams: 385, rumble: outcome))
        }
        #expect(try database.peaks(session: 1).map(\.rumble) == [nil] + outcomes)
        #expect(try database.integrityCheck() == ["ok"])
        database.close()
    }

    @Test func aNewLogAppearsWholeAndLeavesNoTemporaryBehind() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogDatabase.open(path: path)
        // A reader opening it now gets a log at the current schema, never an empty database.
        let reader = try LogDatabase.open(path: path, readOnly: true)
        #expect(reader.schemaVersion == 4)
        #expect(try reader.sessions(since: nil, device: nil).isEmpty)
        reader.close()
        writer.close()
        var names: [String] = []
        if let folder = opendir(directory.path) {
            while let entry = readdir(folder) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(folder)
        }
        #expect(names.allSatisfy { $0.hasPrefix("log.sqlite") }, "left behind: \(names)")
        // Opening it again for writing finds the log, and does not make another.
        let again = try LogDatabase.open(path: path)
        #expect(again.schemaVersion == 4)
        again.close()
    }

    @Test func whatIsWrittenReadsBackExactly() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let device = try database.device(key: "0003-056a-00b9-wacom-intuos4-6x9-pen", name: "Wacom Intuos4 6x9 Pen")
        #expect(try database.device(key: device.key, name: device.name) == device)
        let session = try Self.logTouch(database, device: device, start: Self.base, peak: true)

        let reader = try LogDatabase.open(path: database.path, readOnly: true)
        let sessions = try reader.sessions()
        #expect(sessions == [session])
        #expect(session.readingCount == 10)
        #expect(session.peakGrams == 120.5)
        // The last stable reading with a contact, not the release.
        #expect(session.stableGrams == 120.5)
        #expect(session.ended == WallTime(microseconds: Self.base + 9_000))
        #expect(try reader.session(id: session.id) == session)
        #expect(try reader.session(id: session.id + 1) == nil)
        let expected = Self.touch(startingAt: Self.base).map { reading -> LoggedReading in
            var reading = reading
            reading.session = session.id
            return reading
        }
        #expect(try reader.readings(session: session.id) == expected)
        #expect(try reader.peaks(session: session.id) == [LoggedPeak(session: session.id, time: expected[4].time, raw: 40, grams: 120.5)])
        #expect(try reader.peaks(since: WallTime(microseconds: Self.base + 4_001)) == [])
    }

    @Test func aDeviceIsRenamedInPlace() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let first = try database.device(key: "pad", name: "Old name")
        let renamed = try database.device(key: "pad", name: "New name")
        #expect(renamed.id == first.id)
        #expect(try database.statistics().devices == 1)
    }

    @Test func sessionsAreFilteredByTimeAndDeviceAndListedNewestLast() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "0003-056a-00b9-wacom-intuos4-6x9-pen", name: "Wacom Intuos4 6x9 Pen")
        let pad = try database.device(key: "0011-0002-0007-synps-2-synaptics-touchpad", name: "SynPS/2 Synaptics TouchPad")
        let a = try Self.logTouch(database, device: pen, start: Self.base)
        let b = try Self.logTouch(database, device: pad, start: Self.base + 1_000_000)
        let c = try Self.logTouch(database, device: pen, start: Self.base + 2_000_000)
        #expect(try database.sessions().map(\.id) == [a.id, b.id, c.id])
        #expect(try database.sessions(device: "WACOM").map(\.id) == [a.id, c.id])
        #expect(try database.sessions(device: "synps-2").map(\.id) == [b.id])
        #expect(try database.sessions(device: "nothing like it") == [])
        // A session that was still going on at `since` counts.
        #expect(try database.sessions(since: WallTime(microseconds: Self.base + 1_000_000 + 9_000)).map(\.id) == [b.id, c.id])
        #expect(try database.sessions(since: WallTime(microseconds: Self.base + 1_000_000 + 9_001), device: "pen").map(\.id) == [c.id])
        #expect(try database.sessions().map(\.device) == [pen, pad, pen])
    }

    @Test func readingsSinceATimeStreamAcrossSessionsInTimeOrder() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        let a = try Self.logTouch(database, device: pen, start: Self.base)
        let b = try Self.logTouch(database, device: pen, start: Self.base + 1_000_000)
        var seen: [(Int64, Int64)] = []
        try database.forEachReading(since: WallTime(microseconds: Self.base + 7_000)) { seen.append(($0.session, $0.time.microseconds)) }
        #expect(seen.map(\.0) == [a.id, a.id, a.id] + Array(repeating: b.id, count: 10))
        #expect(seen.map(\.1) == seen.map(\.1).sorted())
        #expect(seen.first?.1 == Self.base + 7_000)

        // The body may query the database while iterating, and its error ends the iteration.
        struct Enough: Error {}
        var count = 0
        #expect(throws: Enough.self) {
            try database.forEachReading(session: b.id) { _ in
                count += 1
                _ = try database.sessions()
                if count == 3 { throw Enough() }
            }
        }
        #expect(count == 3)
    }

    /// A plot of a session still open learns its span first: the earliest and latest times
    /// of the readings that carry a weight (an infinite one, which the plot leaves out, does
    /// not count), out of time order after a clock step too.
    @Test func aSessionsReadingTimesAreItsEarliestAndLatestWithAWeight() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        var open = try database.openSession(device: pen, started: WallTime(microseconds: Self.base), model: .nominal)
        #expect(try database.readingTimes(session: open.id) == nil)
        var readings = Self.touch(startingAt: Self.base, count: 4)
        // The clock stepped back an hour before the third reading; the last weighs infinity.
        readings[2].time = WallTime(microseconds: Self.base - 3_600_000_000)
        readings.append(LoggedReading(session: 0, time: WallTime(microseconds: Self.base + 9_000), raw: 255, force: 1,
                                      grams: .infinity, contacts: 1, flags: []))
        try database.append(readings, to: &open)
        #expect(try database.readingTimes(session: open.id)
            == WallTime(microseconds: Self.base - 3_600_000_000)...WallTime(microseconds: Self.base + 3_000))
        #expect(try database.readingTimes(session: open.id + 1) == nil)
    }

    /// What a snapshot reads is the log as it was when its first read began: a writer's
    /// readings committed meanwhile are not in it, and are there for the next read.
    @Test func aSnapshotDoesNotSeeWhatIsWrittenMeanwhile() throws {
        let directory = TemporaryDirectory()
        let writer = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try writer.device(key: "pen", name: "Pen")
        var open = try writer.openSession(device: pen, started: WallTime(microseconds: Self.base), model: .nominal)
        try writer.append(Self.touch(startingAt: Self.base, count: 5), to: &open)
        let reader = try LogDatabase.open(path: directory.path + "/log.sqlite", readOnly: true)
        let (times, count) = try reader.snapshot { () throws -> (ClosedRange<WallTime>?, Int) in
            let times = try reader.readingTimes(session: open.id)
            try writer.append(Self.touch(startingAt: Self.base + 100_000, count: 5), to: &open)
            var count = 0
            try reader.forEachReading(session: open.id) { _ in count += 1 }
            return (times, count)
        }
        #expect(times?.upperBound == WallTime(microseconds: Self.base + 4_000))
        #expect(count == 5)
        #expect(try reader.readings(session: open.id).count == 10)
    }

    @Test func aCrashLeftSessionIsClosedAtItsLastReading() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        var open = try database.openSession(device: pen, started: WallTime(microseconds: Self.base), model: .nominal)
        try database.append(Self.touch(startingAt: Self.base, count: 4), to: &open)
        let empty = try database.openSession(device: pen, started: WallTime(microseconds: Self.base + 50_000), model: .nominal)
        #expect(try database.session(id: open.id)?.ended == nil)
        #expect(try database.statistics().last == WallTime(microseconds: Self.base + 3_000))
        #expect(try database.closeUnfinishedSessions() == 2)
        #expect(try database.session(id: open.id)?.ended == WallTime(microseconds: Self.base + 3_000))
        #expect(try database.session(id: empty.id)?.ended == WallTime(microseconds: Self.base + 50_000))
        #expect(try database.closeUnfinishedSessions() == 0)
    }

    @Test func aFailedTransactionLeavesNothingBehind() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        let failure = LogDatabaseError.notALog(path: "stand-in")
        #expect(throws: failure) {
            try database.transaction { () throws(LogDatabaseError) in
                var session = try database.openSession(device: pen, started: WallTime(microseconds: Self.base), model: .nominal)
                try database.append(Self.touch(startingAt: Self.base), to: &session)
                throw failure
            }
        }
        #expect(try database.sessions() == [])
        #expect(try database.statistics().readings == 0)
        // And the connection is usable again.
        try Self.logTouch(database, device: pen, start: Self.base)
        #expect(try database.sessions().count == 1)
    }

    // MARK: - Opening

    @Test func aMissingLogIsNamedWithHowToSwitchLoggingOn() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        #expect(throws: LogDatabaseError.missing(path: path)) { try LogDatabase.open(path: path, readOnly: true) }
        #expect(LogDatabaseError.missing(path: path).description.contains("--log-db"))
        // Opening read-only made no file.
        #expect(fileStatus(path) == nil)
    }

    @Test func aFileThatIsNotADatabaseIsSaidToBeSo() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        writeFile(path, String(repeating: "interval-ms = 20\n", count: 100))
        #expect(throws: LogDatabaseError.notADatabase(path: path)) { try LogDatabase.open(path: path, readOnly: true) }
        #expect(throws: LogDatabaseError.notADatabase(path: path)) { try LogDatabase.open(path: path) }
        // Left as it was.
        #expect(readFile(path) == String(repeating: "interval-ms = 20\n", count: 100))
    }

    @Test func anotherProgramsDatabaseIsNotTakenOver() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/other.sqlite"
        try SQLiteConnection(path: path, readOnly: false, create: true).execute("CREATE TABLE bookmarks (url TEXT)")
        #expect(throws: LogDatabaseError.notALog(path: path)) { try LogDatabase.open(path: path) }
        #expect(throws: LogDatabaseError.notALog(path: path)) { try LogDatabase.open(path: path, readOnly: true) }
        let empty = directory.path + "/empty.sqlite"
        writeFile(empty, "")
        #expect(throws: LogDatabaseError.notALog(path: empty)) { try LogDatabase.open(path: empty, readOnly: true) }
    }

    /// A saturated peak or stable weight is a lower bound, and the session says so: the
    /// flag follows the reading that set the weight, so a later stable weight below the top
    /// clears it.
    @Test func aSessionSaysWhetherItsPeakAndStableWeightWereSaturated() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pad = try database.device(key: "pad", name: "Pad")
        func reading(_ index: Int64, _ grams: Double, _ flags: ReadingFlags, contacts: Int = 1) -> LoggedReading {
            LoggedReading(session: 0, time: WallTime(microseconds: Self.base + index * 1_000), raw: grams >= 385 ? 255 : Int32(grams / 385 * 255),
                          force: min(1, grams / 385), grams: grams, contacts: contacts, flags: flags)
        }
        var session = try database.openSession(device: pad, started: WallTime(microseconds: Self.base), model: .nominal)
        try database.append([reading(0, 200, []), reading(1, 385, [.saturated]), reading(2, 385, [.saturated, .stable])], to: &session)
        #expect(session.peakSaturated && session.stableSaturated)
        #expect(try database.session(id: session.id).map { [$0.peakSaturated, $0.stableSaturated] } == [true, true])
        // The object shifts and rests lower, below the top: a weight again; the peak stays a bound.
        try database.append([reading(3, 300.4, []), reading(4, 300.4, [.stable]), reading(5, 0, [], contacts: 0)], to: &session)
        try database.close(&session, at: WallTime(microseconds: Self.base + 5_000))
        let stored = try #require(try database.session(id: session.id))
        #expect(stored.peakSaturated && !stored.stableSaturated && stored.stableGrams == 300.4 && stored.peakGrams == 385)
        // A session that never reached the top claims nothing.
        var plain = try database.openSession(device: pad, started: WallTime(microseconds: Self.base + 10_000), model: .nominal)
        try database.append([reading(10, 120, []), reading(11, 120.5, [.stable]), reading(12, 0, [], contacts: 0)], to: &plain)
        #expect(try database.session(id: plain.id).map { [$0.peakSaturated, $0.stableSaturated] } == [false, false])
    }

    /// A log of the third schema learns which of its sessions were saturated from their
    /// readings' flags when it is migrated; a reader of it unmigrated claims none.
    @Test func aLogOfTheThirdSchemaLearnsWhichSessionsWereSaturated() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let old = try SQLiteConnection(path: path, readOnly: false, create: true)
        try old.execute("PRAGMA journal_mode = WAL")
        try old.execute(LogSchema.version1)
        try old.execute(LogSchema.migrations[0])
        try old.execute(LogSchema.migrations[1])
        // Session 1 rested saturated; session 2 touched the top, then rested at 300 g;
        // session 3 never reached it. flags: 1 saturated, 2 stable.
        try old.execute("""
            INSERT INTO devices (id, key, name) VALUES (1, 'pad', 'Pad');
            INSERT INTO sessions (id, device, started, ended, peak_grams, stable_grams, readings, model) VALUES
                (1, 1, \(Self.base), \(Self.base + 3000), 385.0, 385.0, 3, 'nominal'),
                (2, 1, \(Self.base + 10000), \(Self.base + 14000), 385.0, 300.0, 4, 'nominal'),
                (3, 1, \(Self.base + 20000), \(Self.base + 22000), 120.0, 120.0, 2, 'nominal');
            INSERT INTO readings VALUES
                (1, 0, \(Self.base), 255, 1, 385, 1, 1), (1, 1, \(Self.base + 1000), 255, 1, 385, 3, 1), (1, 2, \(Self.base + 3000), 0, 0, 0, 0, 0),
                (2, 0, \(Self.base + 10000), 255, 1, 385, 1, 1), (2, 1, \(Self.base + 11000), 199, 0.78, 300, 0, 1),
                (2, 2, \(Self.base + 12000), 199, 0.78, 300, 2, 1), (2, 3, \(Self.base + 14000), 0, 0, 0, 0, 0),
                (3, 0, \(Self.base + 20000), 80, 0.31, 120, 2, 1), (3, 1, \(Self.base + 22000), 0, 0, 0, 0, 0);
            PRAGMA user_version = 3;
            """)
        old.close()
        func flags(_ database: LogDatabase) throws -> [[Bool]] {
            try (1...3).map { id in
                let session = try #require(try database.session(id: Int64(id)))
                return [session.peakSaturated, session.stableSaturated]
            }
        }
        let reader = try LogDatabase.open(path: path, readOnly: true)
        #expect(reader.schemaVersion == 3)
        #expect(try flags(reader) == [[false, false], [false, false], [false, false]])
        reader.close()
        let database = try LogDatabase.open(path: path)
        #expect(database.schemaVersion == 4)
        #expect(try flags(database) == [[true, true], [true, false], [false, false]])
        #expect(try database.integrityCheck() == ["ok"])
        database.close()
    }

    @Test func aNewerSchemaIsRefusedWithoutTouchingTheFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        try LogDatabase.open(path: path).close()
        try SQLiteConnection(path: path, readOnly: false, create: false).execute("PRAGMA user_version = 5")
        let newer = LogDatabaseError.newerSchema(path: path, found: 5, supported: 4)
        #expect(throws: newer) { try LogDatabase.open(path: path, readOnly: true) }
        #expect(throws: newer) { try LogDatabase.open(path: path) }
        #expect(try SQLiteConnection(path: path, readOnly: true, create: false).integer("PRAGMA user_version") == 5)
        #expect(newer.description.contains("update forcescale"))
    }

    @Test func aReadOnlyLogCannotBeWritten() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        try LogDatabase.open(path: path).close()
        let reader = try LogDatabase.open(path: path, readOnly: true)
        do {
            _ = try reader.device(key: "pad", name: "Pad")
            Issue.record("a read-only log took a write")
        } catch {
            guard case .sqlite(let sqlite) = error else { throw error }
            #expect(sqlite.primary == SQLITE_READONLY)
        }
    }

    // MARK: - Migration

    @Test func aLogOfTheFirstSchemaIsMigratedWithItsData() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        // The file as the first release left it.
        let old = try SQLiteConnection(path: path, readOnly: false, create: true)
        try old.execute("PRAGMA journal_mode = WAL")
        try old.execute(LogSchema.version1)
        try old.execute("""
            INSERT INTO devices (id, key, name) VALUES (1, 'pad', 'Pad');
            INSERT INTO sessions (id, device, started, ended, peak_grams, stable_grams, readings, model)
                VALUES (1, 1, \(Self.base), \(Self.base + 1000), 80.5, NULL, 2, 'physical');
            INSERT INTO readings VALUES (1, 0, \(Self.base), 20, 0.25, 80.5, 0, 1), (1, 1, \(Self.base + 1000), 0, 0, 0, 0, 0);
            PRAGMA user_version = 1;
            """)
        old.close()

        // A reader takes it as it is, without PEAKs.
        let reader = try LogDatabase.open(path: path, readOnly: true)
        #expect(reader.schemaVersion == 1)
        #expect(try reader.peaks(session: 1) == [])
        #expect(try reader.readings(session: 1).count == 2)
        reader.close()

        let database = try LogDatabase.open(path: path)
        #expect(database.schemaVersion == 4)
        let session = try #require(try database.session(id: 1))
        #expect(session == LoggedSession(
            id: 1, device: LoggedDevice(id: 1, key: "pad", name: "Pad"), started: WallTime(microseconds: Self.base),
            ended: WallTime(microseconds: Self.base + 1000), peakGrams: 80.5, stableGrams: nil, readingCount: 2, model: .physical))
        #expect(try database.readings(session: 1).map(\.grams) == [80.5, 0])
        try database.append(LoggedPeak(session: 1, time: WallTime(microseconds: Self.base), raw: 20, grams: 80.5))
        #expect(try database.peaks(session: 1).count == 1)
        #expect(try database.integrityCheck() == ["ok"])
        // The tables and indexes are those of a log made new.
        let fresh = try LogDatabase.open(path: directory.path + "/fresh.sqlite")
        fresh.close()
        database.close()
        func schema(_ path: String) throws -> [String] {
            let connection = try SQLiteConnection(path: path, readOnly: true, create: false)
            let statement = try connection.statement("SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(0)) }
            return lines
        }
        #expect(try schema(path) == schema(directory.path + "/fresh.sqlite"))
        #expect(try SQLiteConnection(path: path, readOnly: true, create: false).integer("PRAGMA user_version") == 4)
    }

    // MARK: - Retention

    @Test func retentionByAgeRemovesWholeOldSessionsInSmallSteps() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        let old = try Self.logTouch(database, device: pen, start: Self.base, count: 25, peak: true)
        let recent = try Self.logTouch(database, device: pen, start: Self.base + 10_000_000, count: 25, peak: true)
        let cutoff = WallTime(microseconds: Self.base + 5_000_000)
        // The session row and its PEAK go first, so listings stop showing it at once.
        #expect(try database.pruneStep(olderThan: cutoff, keepReadings: nil, limit: 10) == 2)
        #expect(try database.sessions().map(\.id) == [recent.id])
        #expect(try database.statistics().readings == 50)
        // Then its readings, at most `limit` a step.
        #expect(try database.pruneStep(olderThan: cutoff, keepReadings: nil, limit: 10) == 10)
        #expect(try database.pruneStep(olderThan: cutoff, keepReadings: nil, limit: 10) == 10)
        #expect(try database.pruneStep(olderThan: cutoff, keepReadings: nil, limit: 10) == 5)
        #expect(try database.pruneStep(olderThan: cutoff, keepReadings: nil, limit: 10) == 0)
        #expect(try database.readings(session: old.id) == [])
        #expect(try database.readings(session: recent.id).count == 25)
        #expect(try database.peaks(since: WallTime(microseconds: 0)).map(\.session) == [recent.id])
    }

    @Test func retentionByCountKeepsTheNewestSessionsAndNeverTheOneInProgress() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let pen = try database.device(key: "pen", name: "Pen")
        let sessions = try (0..<4).map { try Self.logTouch(database, device: pen, start: Self.base + Int64($0) * 1_000_000) }
        var inProgress = try database.openSession(device: pen, started: WallTime(microseconds: Self.base + 9_000_000), model: .nominal)
        try database.append(Self.touch(startingAt: Self.base + 9_000_000, count: 30), to: &inProgress)
        // 70 readings; keeping 55 takes the two oldest sessions: whole sessions only, so 50
        // remain. One step for the two rows, one for each session's readings.
        var steps = 0
        while try database.pruneStep(olderThan: nil, keepReadings: 55) > 0 { steps += 1 }
        #expect(steps == 3)
        #expect(try database.sessions().map(\.id) == [sessions[2].id, sessions[3].id, inProgress.id])
        #expect(try database.statistics().readings == 50)
        // Keeping fewer than the open session holds removes every ended one, and not it.
        while try database.pruneStep(olderThan: nil, keepReadings: 5) > 0 {}
        #expect(try database.sessions().map(\.id) == [inProgress.id])
        #expect(try database.statistics().readings == 30)
        // Ids are never given out again, so leftover readings cannot join a new session.
        let next = try Self.logTouch(database, device: pen, start: Self.base + 20_000_000)
        #expect(next.id > inProgress.id)
    }

    @Test func statisticsCountEverything() throws {
        let directory = TemporaryDirectory()
        let database = try LogDatabase.open(path: directory.path + "/log.sqlite")
        let empty = try database.statistics()
        #expect(empty.sessions == 0 && empty.readings == 0 && empty.first == nil && empty.last == nil)
        let pen = try database.device(key: "pen", name: "Pen")
        try Self.logTouch(database, device: pen, start: Self.base, peak: true)
        try Self.logTouch(database, device: pen, start: Self.base + 1_000_000, count: 5)
        let stats = try LogDatabase.open(path: database.path, readOnly: true).statistics()
        #expect(stats.path == database.path)
        #expect(stats.schemaVersion == 4)
        #expect([stats.devices, stats.sessions, stats.readings, stats.peaks] == [1, 2, 15, 1])
        #expect(stats.first == WallTime(microseconds: Self.base))
        #expect(stats.last == WallTime(microseconds: Self.base + 1_004_000))
        #expect(stats.pageSize == 4096)
        #expect(stats.pageCount > 0)
        #expect(stats.fileBytes + stats.walBytes > 0)
    }
}
