import Glibc
import ScaleCore
@testable import ScaleLog
import ScaleTestSupport
import TestWaiting
import Testing

/// Notices collected from the writer's thread.
final class NoticeBox: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var notices: [LogWriter.Notice] = []
    init() { pthread_mutex_init(mutex, nil) }
    func add(_ notice: LogWriter.Notice) {
        pthread_mutex_lock(mutex)
        notices.append(notice)
        pthread_mutex_unlock(mutex)
    }
    var all: [LogWriter.Notice] {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return notices
    }
    /// `opened`, `failing`, `resumed`, `lostAtStop`, in order.
    var kinds: [String] {
        all.map {
            switch $0 {
            case .opened: "opened"
            case .failing: "failing"
            case .resumed: "resumed"
            case .lostAtStop: "lostAtStop"
            }
        }
    }
}

@Suite struct LogWriterTests {
    /// Monotonic µs; the wall offset used below turns them into 2025-11-30 times.
    static let offset: Int64 = 1_764_500_000_000_000

    static func reading(_ index: Int, grams: Double, contacts: Int = 1, stable: Bool = false, source: Int = 0) -> LogWriter.Entry {
        .reading(
            Reading(
                time: EventTime(microseconds: Int64(index) * 1_000), raw: Int32(grams), force: grams / 385, grams: grams,
                saturated: false, contacts: contacts, stable: stable, model: .nominal),
            wallOffset: offset, source: source)
    }

    func readings(in path: String) -> Int {
        (try? LogDatabase.open(path: path, readOnly: true).statistics().readings) ?? -1
    }

    @Test func aTouchBecomesOneSessionWithItsReadingsAndPeaks() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let notices = NoticeBox()
        let writer = try LogWriter(path: path, onNotice: notices.add)
        writer.append(.device(key: "0003-056a-00b9-pen", name: "Pen"))
        // A resting pad's zero readings are not a session.
        writer.append(Self.reading(0, grams: 0, contacts: 0))
        for index in 1...5 { writer.append(Self.reading(index, grams: Double(index) * 10, stable: index == 4)) }
        writer.append(.peak(Peak(time: EventTime(microseconds: 5_000), raw: 50, force: 0.2, grams: 50)))
        writer.append(Self.reading(6, grams: 0, contacts: 0))
        writer.append(Self.reading(7, grams: 0, contacts: 0))
        // The second touch is still on when the daemon stops.
        writer.append(Self.reading(8, grams: 30))
        writer.append(Self.reading(9, grams: 31))
        writer.stop()
        #expect(notices.kinds == ["opened"])
        #expect(writer.status == LogWriter.Status(path: path, written: 9, pending: 0, dropped: 0, error: nil))

        let log = try LogDatabase.open(path: path, readOnly: true)
        let sessions = try log.sessions()
        try #require(sessions.count == 2)
        let device = LoggedDevice(id: sessions[0].device.id, key: "0003-056a-00b9-pen", name: "Pen")
        #expect(sessions[0] == LoggedSession(
            id: sessions[0].id, device: device, started: WallTime(microseconds: Self.offset + 1_000),
            ended: WallTime(microseconds: Self.offset + 6_000), peakGrams: 50, stableGrams: 40, readingCount: 6, model: .nominal))
        #expect(try log.readings(session: sessions[0].id).map(\.grams) == [10, 20, 30, 40, 50, 0])
        #expect(try log.readings(session: sessions[0].id)[3].flags == [.stable])
        #expect(try log.peaks(session: sessions[0].id) == [LoggedPeak(session: sessions[0].id, time: WallTime(microseconds: Self.offset + 5_000), raw: 50, grams: 50)])
        // Stopping closed the second at its last reading.
        #expect(sessions[1].ended == WallTime(microseconds: Self.offset + 9_000))
        #expect(sessions[1].readingCount == 2)
    }

    /// The wall clock stepped an hour back, then an hour forward, in the middle of touches
    /// (as `date -s` or an NTP step does): each session's times follow the readings'
    /// monotonic times from its first reading's wall time; the step shows from the next
    /// session on.
    @Test func aStepOfTheWallClockShowsFromTheNextSessionOn() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogWriter(path: path) { _ in }
        let hour: Int64 = 3_600_000_000
        func reading(_ index: Int, grams: Double, contacts: Int = 1, offset: Int64) -> LogWriter.Entry {
            .reading(
                Reading(
                    time: EventTime(microseconds: Int64(index) * 1_000), raw: Int32(grams), force: grams / 385, grams: grams,
                    saturated: false, contacts: contacts, stable: false, model: .nominal),
                wallOffset: offset)
        }
        writer.append(.device(key: "pad", name: "Pad"))
        // First touch: the clock goes back an hour after its second reading.
        writer.append(reading(1, grams: 10, offset: Self.offset))
        writer.append(reading(2, grams: 20, offset: Self.offset))
        writer.append(reading(3, grams: 30, offset: Self.offset - hour))
        writer.append(.peak(Peak(time: EventTime(microseconds: 3_000), raw: 30, force: 0.1, grams: 30)))
        writer.append(reading(4, grams: 0, contacts: 0, offset: Self.offset - hour))
        // Second touch, on the stepped clock; forward an hour (and a bit) in its middle.
        writer.append(reading(10, grams: 15, offset: Self.offset - hour))
        writer.append(reading(11, grams: 25, offset: Self.offset + 1_000))
        writer.append(reading(12, grams: 0, contacts: 0, offset: Self.offset + 1_000))
        // Third touch, on the clock as it is now.
        writer.append(reading(20, grams: 5, offset: Self.offset + 1_000))
        writer.append(reading(21, grams: 0, contacts: 0, offset: Self.offset + 1_000))
        writer.stop()

        let log = try LogDatabase.open(path: path, readOnly: true)
        let sessions = try log.sessions().sorted { $0.id < $1.id }
        try #require(sessions.count == 3, "\(sessions)")
        #expect(try log.readings(session: sessions[0].id).map(\.time) == [1, 2, 3, 4].map { WallTime(microseconds: Self.offset + $0 * 1_000) })
        #expect(try log.peaks(session: sessions[0].id).map(\.time) == [WallTime(microseconds: Self.offset + 3_000)])
        #expect(sessions[0].started == WallTime(microseconds: Self.offset + 1_000))
        #expect(sessions[0].ended == WallTime(microseconds: Self.offset + 4_000))
        #expect(try log.readings(session: sessions[1].id).map(\.time) == [10, 11, 12].map { WallTime(microseconds: Self.offset - hour + $0 * 1_000) })
        #expect(sessions[1].ended == WallTime(microseconds: Self.offset - hour + 12_000))
        #expect(try log.readings(session: sessions[2].id).map(\.time) == [20, 21].map { WallTime(microseconds: Self.offset + 1_000 + $0 * 1_000) })
    }

    @Test func aNewDeviceEndsTheSessionOfTheOldOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogWriter(path: path) { _ in }
        writer.append(.device(key: "pad", name: "Pad"))
        writer.append(Self.reading(1, grams: 10))
        writer.append(.device(key: "pen", name: "Pen"))
        writer.append(Self.reading(2, grams: 20))
        writer.append(.sourceEnded())
        writer.append(Self.reading(3, grams: 30))
        writer.stop()
        let sessions = try LogDatabase.open(path: path, readOnly: true).sessions()
        #expect(sessions.map(\.device.name) == ["Pad", "Pen", "Pen"])
        #expect(sessions.map(\.readingCount) == [1, 1, 1])
        #expect(sessions.allSatisfy { $0.ended != nil })
    }

    /// Two devices logging at once, their entries interleaved reading by reading (as a
    /// daemon serving both hands them over), each with a batch boundary inside its touch:
    /// a session each, with its own readings and PEAK; one device going away ends only its
    /// own session.
    @Test func devicesThatLogAtOnceKeepSessionsOfTheirOwn() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogWriter(path: path, batching: .init(entries: 7, microseconds: 60_000_000)) { _ in }
        // Two sources of the same model (two replays of one recording) are still two sessions.
        writer.append(.device(key: "pad", name: "Pad", source: 3))
        writer.append(.device(key: "pad", name: "Pad", source: 4))
        writer.append(.device(key: "pen", name: "Pen", source: 5))
        for index in 1...10 {
            writer.append(Self.reading(index, grams: Double(index), source: 3))
            writer.append(Self.reading(index, grams: Double(100 + index), source: 4))
            writer.append(Self.reading(index, grams: Double(200 + index), source: 5))
        }
        writer.append(.peak(Peak(time: EventTime(microseconds: 10_000), raw: 110, force: 0.3, grams: 110), source: 4))
        // The pen goes away mid-touch; the pads' touches go on.
        writer.append(.sourceEnded(source: 5))
        writer.append(Self.reading(11, grams: 11, source: 3))
        writer.append(Self.reading(11, grams: 111, source: 4))
        writer.append(Self.reading(12, grams: 0, contacts: 0, source: 3))
        writer.append(Self.reading(12, grams: 112, source: 4))
        writer.stop()

        let log = try LogDatabase.open(path: path, readOnly: true)
        let sessions = try log.sessions().sorted { $0.peakGrams < $1.peakGrams }
        try #require(sessions.count == 3, "\(sessions)")
        #expect(sessions.map(\.device.name) == ["Pad", "Pad", "Pen"])
        #expect(try log.readings(session: sessions[0].id).map(\.grams) == (1...11).map(Double.init) + [0])
        #expect(try log.readings(session: sessions[1].id).map(\.grams) == (101...112).map(Double.init))
        #expect(try log.readings(session: sessions[2].id).map(\.grams) == (201...210).map(Double.init))
        #expect(try log.peaks(session: sessions[1].id).map(\.grams) == [110])
        #expect(try log.peaks(session: sessions[0].id).isEmpty && log.peaks(session: sessions[2].id).isEmpty)
        // The pen's session ended when it went away, the first pad's at its release, the
        // second pad's when the writer stopped: each at its own last reading.
        #expect(sessions.map(\.ended) == [12, 12, 10].map { WallTime(microseconds: Self.offset + $0 * 1_000) })
    }

    @Test func rowsAppearWhenABatchIsFullWithoutWaitingForTheWindow() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        // A window far longer than the test: only the count can start the write.
        let notices = NoticeBox()
        let writer = try LogWriter(path: path, batching: .init(entries: 100, microseconds: 60_000_000), onNotice: notices.add)
        defer { writer.stop() }
        writer.append(.device(key: "pad", name: "Pad"))
        for index in 1...98 { writer.append(Self.reading(index, grams: 10)) }
        // The writer opens the file at once, then waits for a full batch or the window.
        try waitFor("the writer to open the log", saw: { "notices \(notices.kinds)" }) { notices.kinds == ["opened"] }
        // Nothing is due for a minute: no event can show the writer deciding to wait. A
        // writer that wrongly writes a part batch does so as soon as it has opened the file;
        // this pause gives it the time to show that (a correct one passes however long it is).
        usleep(300_000)
        #expect(writer.status.pending == 99)
        #expect(readings(in: path) <= 0)
        writer.append(Self.reading(99, grams: 10))
        try waitFor("the full batch of 99 readings in the file", saw: { "\(readings(in: path))" }) { readings(in: path) == 99 }
        #expect(writer.status.pending == 0)
        #expect(writer.status.written == 99)
    }

    @Test func rowsAppearWithinTheBatchWindow() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogWriter(path: path, batching: .init(entries: 1000, microseconds: 400_000)) { _ in }
        defer { writer.stop() }
        let start = monotonicSeconds()
        writer.append(.device(key: "pad", name: "Pad"))
        for index in 1...3 { writer.append(Self.reading(index, grams: 10)) }
        try waitFor("3 readings in the file", saw: { "\(readings(in: path))" }) { readings(in: path) == 3 }
        // Not before the oldest entry waited the window.
        #expect(monotonicSeconds() - start >= 0.4)
    }

    @Test func aFullQueueDropsAndCountsInsteadOfBlocking() throws {
        let directory = TemporaryDirectory()
        // The directory does not exist, so nothing can be written yet.
        let path = directory.path + "/later/log.sqlite"
        let notices = NoticeBox()
        let writer = try LogWriter(path: path, capacity: 50, onNotice: notices.add)
        writer.append(.device(key: "pad", name: "Pad"))
        for index in 1...99 { writer.append(Self.reading(index, grams: 10)) }
        let status = writer.status
        #expect(status.pending + status.dropped == 100)
        #expect(status.dropped >= 50)
        // The file is tried at once (and retried a second later, after the stop here).
        try waitFor("the writer to report that it cannot write", saw: { "\(writer.status)" }) { writer.status.error != nil }
        writer.stop()
        // The stop's one more attempt fails too, and says what is lost.
        #expect(notices.kinds == ["failing", "lostAtStop"])
        if case .lostAtStop(let entries, let error) = notices.all.last {
            #expect(entries == 50)
            #expect(error.path == path)
        }
    }

    @Test func aFailureIsReportedOnceAndWritingResumesByItself() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/later/log.sqlite"
        let notices = NoticeBox()
        let writer = try LogWriter(path: path, batching: .init(entries: 10, microseconds: 100_000), onNotice: notices.add)
        defer { writer.stop() }
        writer.append(.device(key: "pad", name: "Pad"))
        for index in 1...30 { writer.append(Self.reading(index, grams: 10)) }
        try waitFor("the writer to report that it cannot write", saw: { "\(writer.status)" }) { writer.status.error != nil }
        // Several retries fail (1 s, then 2 s later), but the failure is told once. The time
        // for two retries is what this waits for: a retry that fails changes nothing that can
        // be seen from outside, so there is no event to wait for instead. (A correct writer
        // passes however long the pause; a busy machine may only make it see fewer retries.)
        usleep(3_500_000)
        #expect(notices.kinds == ["failing"])
        if case .failing(let error, let retry) = notices.all.first {
            #expect(error.path == path)
            #expect(retry == 1)
        }
        #expect(writer.status.error?.contains(path) == true)
        #expect(mkdir(directory.path + "/later", 0o700) == 0)
        try waitFor("the 30 readings in the file after the directory appeared", saw: { "\(readings(in: path)); notices \(notices.kinds)" }) {
            readings(in: path) == 30
        }
        try waitFor("the writer to say it resumed", saw: { "notices \(notices.kinds)" }) { notices.kinds == ["failing", "opened", "resumed"] }
        #expect(writer.status.error == nil)
        #expect(writer.status.dropped == 0)
    }

    @Test func retentionSetWhileRunningAppliesAtTheNextBatch() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        let writer = try LogWriter(path: path, batching: .init(entries: 1, microseconds: 1000)) { _ in }
        defer { writer.stop() }
        writer.append(.device(key: "pad", name: "Pad"))
        for touch in 0..<5 {
            for index in 0..<9 { writer.append(Self.reading(touch * 100 + index, grams: 10)) }
            writer.append(Self.reading(touch * 100 + 9, grams: 0, contacts: 0))
        }
        try waitFor("50 readings in the file", saw: { "\(readings(in: path))" }) { readings(in: path) == 50 }
        writer.setRetention(.init(keepReadings: 25))
        writer.append(Self.reading(1000, grams: 0, contacts: 0))
        try waitFor("retention to leave 20 readings", saw: { "\(readings(in: path))" }) { readings(in: path) == 20 }
        #expect(try LogDatabase.open(path: path, readOnly: true).sessions().count == 2)
    }

    @Test func retentionRunsInTheBackground() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/log.sqlite"
        // Ten old sessions of 20 readings, written directly.
        let database = try LogDatabase.open(path: path)
        let pad = try database.device(key: "pad", name: "Pad")
        for index in 0..<10 {
            try LogDatabaseTests.logTouch(database, device: pad, start: LogDatabaseTests.base + Int64(index) * 1_000_000, count: 20)
        }
        database.close()
        let writer = try LogWriter(path: path, retention: .init(keepReadings: 45), batching: .init(entries: 1, microseconds: 1000)) { _ in }
        defer { writer.stop() }
        writer.append(.device(key: "pad", name: "Pad"))
        try waitFor("retention to leave 40 readings", saw: { "\(readings(in: path))" }) { readings(in: path) == 40 }
        #expect(try LogDatabase.open(path: path, readOnly: true).sessions().count == 2)
    }
}
