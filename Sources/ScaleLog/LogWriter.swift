import Glibc
import ScaleCore
import ScalePOSIX

/// Writes the daemon's readings to the force log on a thread of its own, so that the
/// device loop never waits for SQLite or the disk.
///
/// The loop only appends entries to a queue under a lock (`append`, a few hundred
/// nanoseconds). The writer thread takes them in batches — one transaction when 100 are
/// waiting or when the oldest has waited a second, whichever comes first — turns them into
/// sessions, readings and PEAKs, and between batches enforces retention in small steps.
///
/// When the disk is slow or failing, the queue grows up to `capacity` entries; beyond that
/// new entries are dropped and counted (never blocking the loop). A failed batch is kept
/// and retried with a growing pause (1 s doubling to a minute); the failure is reported
/// once, and its end once, through `onNotice`.
package final class LogWriter: @unchecked Sendable {
    /// What the loop hands over.
    ///
    /// `source` tells apart the devices that log at once (any number the daemon picks, one
    /// per device it serves): each has a session of its own, however their entries
    /// interleave. One device needs none (0).
    package enum Entry: Sendable {
        /// The readings of `source` from now on come from this device (sent when the
        /// source is new or its device changes; the session in progress of another device
        /// on it ends).
        case device(key: String, name: String, source: Int = 0)
        /// A reading; its monotonic time plus `wallOffset` is its wall time (the offset of a
        /// session's first reading holds for the whole session, so that a step of the wall
        /// clock shows from the next session on).
        case reading(Reading, wallOffset: Int64, source: Int = 0)
        /// A peak of the session in progress, timed as its readings are.
        case peak(Peak, source: Int = 0)
        /// The source's device went away: its session in progress ends. Every source's,
        /// when `source` is nil (the daemon is stopping).
        case sourceEnded(source: Int? = nil)
    }

    /// What the writer tells the daemon's log, from its own thread.
    package enum Notice: Sendable {
        /// The log is open (and sessions a crash left open were closed).
        case opened(path: String, schemaVersion: Int, closedUnfinished: Int)
        /// Writing failed; entries wait and the writer retries after `retrySeconds`.
        /// Sent once per failure, not once per attempt.
        case failing(LogDatabaseError, retrySeconds: Int)
        /// Writing works again after a failure; `dropped` entries were lost meanwhile.
        case resumed(path: String, dropped: Int)
        /// Entries could not be written when the writer stopped (the disk still failing).
        case lostAtStop(entries: Int, LogDatabaseError)
    }

    /// When old sessions go.
    package struct Retention: Equatable, Sendable {
        /// Sessions that ended longer ago than this many days are removed.
        var keepDays: Int?
        /// The oldest sessions are removed while the log holds more readings than this.
        var keepReadings: Int?

        package init(keepDays: Int? = nil, keepReadings: Int? = nil) {
            self.keepDays = keepDays
            self.keepReadings = keepReadings
        }

        var isEnabled: Bool { keepDays != nil || keepReadings != nil }
    }

    /// How the writer is doing, for STATUS.
    package struct Status: Equatable, Sendable {
        package var path: String
        /// Readings and PEAKs committed since the start.
        package var written: Int
        /// Entries waiting in the queue.
        package var pending: Int
        /// Entries dropped since the start because the queue was full.
        package var dropped: Int
        /// The failure in progress, if writing fails now.
        package var error: String?
    }

    /// When a batch is written.
    package struct Batching: Sendable {
        var entries: Int
        var microseconds: Int64
        init(entries: Int = 100, microseconds: Int64 = 1_000_000) {
            self.entries = entries
            self.microseconds = microseconds
        }
    }

    /// 60 000 entries: a minute of a 1 kHz stream, about 5 MB at most.
    package static let defaultCapacity = 60_000

    let path: String
    let capacity: Int
    private let batching: Batching
    private let onNotice: @Sendable (Notice) -> Void

    // Allocated, not stored inline: the two threads pass these to pthreads at once, and a
    // stored property's address taken with `&` is only meant for the length of one call.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`:
    private var queue: [Entry] = []
    /// When the oldest queued entry arrived (monotonic µs).
    private var oldestQueuedAt: Int64 = 0
    private var retention: Retention
    private var stopping = false
    private var written = 0
    private var dropped = 0
    private var failure: LogDatabaseError?

    private var thread: pthread_t?

    // The writer thread's own:
    private var database: LogDatabase?
    private var sessions = LogSessionBuilder()
    private var retryDelay: Int64 = 0
    private var droppedAtFailure = 0
    /// When retention last looked (monotonic µs); nil: at the next batch. Guarded by `mutex`.
    private var lastRetentionCheck: Int64?
    private var retentionPending = false

    /// Starts the writer thread, which opens (or makes) the log at `path`.
    /// - Parameters:
    ///   - capacity: The most entries that wait in memory.
    ///   - onNotice: Called on the writer thread.
    /// - Throws: `Errno` when the thread cannot be started.
    package init(
        path: String, retention: Retention = Retention(), capacity: Int = defaultCapacity, batching: Batching = Batching(),
        onNotice: @escaping @Sendable (Notice) -> Void
    ) throws(Errno) {
        self.path = path
        self.retention = retention
        self.capacity = capacity
        self.batching = batching
        self.onNotice = onNotice
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            let writer = Unmanaged<LogWriter>.fromOpaque(context!).takeRetainedValue()
            writer.run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<LogWriter>.fromOpaque(context).release()
            throw Errno(rawValue: result)
        }
        self.thread = thread
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Queues an entry; never blocks on the disk. A full queue drops it and counts it.
    package func append(_ entry: Entry) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard !stopping else { return }
        guard queue.count < capacity else {
            dropped += 1
            return
        }
        if queue.isEmpty {
            oldestQueuedAt = MonotonicClock.now()
            queue.append(entry)
            // The writer sleeps without a deadline while the queue is empty.
            pthread_cond_signal(condition)
        } else {
            queue.append(entry)
            if queue.count == batching.entries { pthread_cond_signal(condition) }
        }
    }

    /// Applies new retention limits from the next check on.
    package func setRetention(_ retention: Retention) {
        pthread_mutex_lock(mutex)
        self.retention = retention
        lastRetentionCheck = nil
        pthread_mutex_unlock(mutex)
    }

    package var status: Status {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return Status(path: path, written: written, pending: queue.count, dropped: dropped, error: failure?.description)
    }

    /// Ends the sessions in progress, writes what is queued (one attempt when the disk is
    /// failing) and stops the thread. Call once, from the loop's thread.
    package func stop() {
        append(.sourceEnded())
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    // MARK: - The writer thread

    private func run() {
        // The loop takes its signals through a signalfd: they must stay blocked here too,
        // or SIGTERM could land on this thread and end the process without a shutdown.
        var all = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_BLOCK, &all, nil)

        pthread_mutex_lock(mutex)
        while true {
            let now = MonotonicClock.now()
            let failing = failure != nil
            var deadline: Int64?
            if failing {
                deadline = retryAt
            } else if !queue.isEmpty, queue.count < batching.entries, !stopping {
                deadline = oldestQueuedAt + batching.microseconds
            }
            let due = stopping || (deadline.map { now >= $0 } ?? false) || (!failing && queue.count >= batching.entries)
                || (!failing && queue.isEmpty && retentionPending)
            // The file is opened at once, not with the first batch, so that a path that cannot
            // be written is reported when the daemon starts; the queue waits for its batch.
            let opening = !failing && database == nil
            if !due && !opening {
                wait(until: deadline)
                continue
            }
            var batch: [Entry] = []
            if due { swap(&batch, &queue) }
            let isLast = stopping
            pthread_mutex_unlock(mutex)

            let outcome = write(batch)
            if outcome == nil, !batch.isEmpty || database != nil { pruneIfDue() }

            pthread_mutex_lock(mutex)
            if let error = outcome {
                if isLast {
                    let lost = batch.count + queue.count
                    pthread_mutex_unlock(mutex)
                    if lost > 0 { onNotice(.lostAtStop(entries: lost, error)) }
                    pthread_mutex_lock(mutex)
                    break
                }
                // Put the batch back in front, within the capacity.
                let room = max(0, capacity - queue.count)
                if batch.count > room { dropped += batch.count - room }
                queue = Array(batch.suffix(room)) + queue
                oldestQueuedAt = MonotonicClock.now()
                let isNew = failure == nil
                failure = error
                retryDelay = isNew ? 1_000_000 : min(retryDelay * 2, 60_000_000)
                retryAt = MonotonicClock.now() + retryDelay
                if isNew {
                    droppedAtFailure = dropped
                    pthread_mutex_unlock(mutex)
                    onNotice(.failing(error, retrySeconds: Int(retryDelay / 1_000_000)))
                    pthread_mutex_lock(mutex)
                }
                continue
            }
            if failure != nil {
                failure = nil
                let lost = dropped - droppedAtFailure
                pthread_mutex_unlock(mutex)
                onNotice(.resumed(path: path, dropped: lost))
                pthread_mutex_lock(mutex)
            }
            if isLast, queue.isEmpty { break }
        }
        pthread_mutex_unlock(mutex)
        database?.close()
        database = nil
    }

    private var retryAt: Int64 = 0

    /// Sleeps on the condition (the mutex held) until signalled or `deadline`.
    private func wait(until deadline: Int64?) {
        guard let deadline else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var spec = timespec(tv_sec: Int(deadline / 1_000_000), tv_nsec: Int(deadline % 1_000_000) * 1_000)
        pthread_cond_timedwait(condition, mutex, &spec)
    }

    /// Writes one batch in one transaction. - Returns: nil on success, else the error
    /// (the session state is then as it was before the batch).
    private func write(_ batch: [Entry]) -> LogDatabaseError? {
        do throws(LogDatabaseError) {
            let database = try openedDatabase()
            guard !batch.isEmpty else { return nil }
            let before = sessions
            do throws(LogDatabaseError) {
                let count = try database.transaction { () throws(LogDatabaseError) -> Int in
                    var count = 0
                    for entry in batch { count += try sessions.take(entry, into: database) }
                    count += try sessions.flush(into: database)
                    return count
                }
                pthread_mutex_lock(mutex)
                written += count
                pthread_mutex_unlock(mutex)
                return nil
            } catch {
                sessions = before
                throw error
            }
        } catch {
            return error
        }
    }

    private func openedDatabase() throws(LogDatabaseError) -> LogDatabase {
        if let database { return database }
        let opened = try LogDatabase.open(path: path)
        let closed = try opened.closeUnfinishedSessions()
        database = opened
        retentionPending = true
        onNotice(.opened(path: path, schemaVersion: opened.schemaVersion, closedUnfinished: closed))
        return opened
    }

    /// One retention step when the last check is a minute old or the previous step left
    /// work; a failure here is left for the next batch to meet.
    private func pruneIfDue() {
        pthread_mutex_lock(mutex)
        let retention = retention
        let now = MonotonicClock.now()
        let due = retentionPending || lastRetentionCheck.map { now - $0 >= 60_000_000 } ?? true
        if due { lastRetentionCheck = now }
        pthread_mutex_unlock(mutex)
        guard due, retention.isEnabled, let database else {
            retentionPending = false
            return
        }
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let nowWall = Int64(wall.tv_sec) * 1_000_000 + Int64(wall.tv_nsec) / 1_000
        let cutoff = retention.keepDays.map { WallTime(microseconds: nowWall - Int64($0) * 86_400_000_000) }
        let deleted = (try? database.pruneStep(olderThan: cutoff, keepReadings: retention.keepReadings)) ?? 0
        retentionPending = deleted > 0
    }
}

/// `CLOCK_REALTIME − CLOCK_MONOTONIC` in microseconds: added to a monotonic event time, it
/// gives the wall-clock time of the event, as of now (the log applies a session's first
/// offset to all of the session, see `LogSessionBuilder`).
package enum WallClock {
    package static func offsetFromMonotonic() -> Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        let monotonic = MonotonicClock.now()
        return Int64(wall.tv_sec) * 1_000_000 + Int64(wall.tv_nsec) / 1_000 - monotonic
    }

    /// Now, as Unix microseconds.
    static func now() -> WallTime {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return WallTime(microseconds: Int64(wall.tv_sec) * 1_000_000 + Int64(wall.tv_nsec) / 1_000)
    }
}
