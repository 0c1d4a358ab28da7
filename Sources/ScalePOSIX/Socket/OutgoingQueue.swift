/// The lines waiting to be written to one client, bounded so that a client that stops
/// reading costs the daemon a fixed amount of memory and no time.
///
/// Two kinds of line share the queue, in the order they were sent, with a bound each:
/// - *droppable* lines (READING): at most `maximumLines` wait. When one more comes, the
///   oldest droppable line not yet started makes room and `droppedCount` counts it, so a
///   slow client sees the newest readings, after a gap, rather than ever older ones.
/// - *replies* (answers to its requests, ERROR): never dropped, since a client waits for
///   them. When the unwritten replies would add up to more than `maximumReplyBytes`, the
///   client is asking without reading, and `append` answers `.replyLimitExceeded` so that
///   the caller disconnects it as unresponsive.
public struct OutgoingQueue: Sendable {
    /// Whether `append` kept the line.
    public enum Outcome: Hashable, Sendable {
        /// Queued (possibly after dropping an older droppable line).
        case queued
        /// The line itself was dropped: it was droppable and the only other one waiting is
        /// already partly written (possible only with `maximumLines` 1).
        case dropped
        /// A reply pushed the unwritten replies past `maximumReplyBytes`; the reply was not
        /// queued and the client should be disconnected as unresponsive.
        case replyLimitExceeded
    }

    private struct Entry: Sendable {
        var bytes: [UInt8]
        var isDroppable: Bool
    }

    public let maximumLines: Int
    public let maximumReplyBytes: Int
    /// Droppable lines thrown away since the client connected.
    public private(set) var droppedCount = 0
    /// Unwritten bytes of replies (a partly written one counts its rest).
    public private(set) var replyBytes = 0
    /// Droppable lines not completely written.
    public private(set) var droppableCount = 0

    private var entries: [Entry] = []
    /// Entries before `head` are written; removing them one by one would move the array.
    private var head = 0
    /// Bytes of `entries[head]` already written.
    private var headOffset = 0

    public init(maximumLines: Int = 256, maximumReplyBytes: Int = 1 << 20) {
        precondition(maximumLines > 0 && maximumReplyBytes > 0, "queue limits must be positive")
        self.maximumLines = maximumLines
        self.maximumReplyBytes = maximumReplyBytes
    }

    /// Lines not yet completely written.
    public var count: Int { entries.count - head }
    public var isEmpty: Bool { head == entries.count }

    /// Queues a line.
    /// - Parameters:
    ///   - bytes: The line, with its newline.
    ///   - droppable: Whether it may be thrown away when the client falls behind.
    /// - Returns: What became of it.
    public mutating func append(_ bytes: [UInt8], droppable: Bool) -> Outcome {
        if droppable {
            if droppableCount >= maximumLines, !dropOldestDroppable() {
                droppedCount += 1
                return .dropped
            }
            droppableCount += 1
        } else {
            guard replyBytes + bytes.count <= maximumReplyBytes else { return .replyLimitExceeded }
            replyBytes += bytes.count
        }
        entries.append(Entry(bytes: bytes, isDroppable: droppable))
        return .queued
    }

    /// Throws away every droppable line not yet started, counting them: for a client that is
    /// being closed, which only needs its replies.
    public mutating func dropAllDroppable() {
        let first = headOffset > 0 ? head + 1 : head
        guard first < entries.count else { return }
        let kept = entries[first...].filter { !$0.isDroppable }
        let dropped = entries.count - first - kept.count
        droppedCount += dropped
        droppableCount -= dropped
        entries.replaceSubrange(first..., with: kept)
    }

    /// Calls `body` with the next bytes to write: the rest of the first line alone when it
    /// is long, otherwise as many whole lines as fit in `scratch` (which is reused, so that
    /// one `send` carries many small lines).
    /// - Returns: What `body` returned.
    /// - Throws: What `body` throws (the writer's `Errno`).
    /// Mutating although it changes nothing: called on a class's stored queue with a closure
    /// that captures the class, a non-mutating call copies the whole queue first (a retain
    /// and release of its storage per `send`), where a mutating one takes it in place.
    public mutating func withPendingBytes<Result, Failure: Error>(
        scratch: inout [UInt8], limit: Int = 65536, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(!isEmpty, "nothing to write")
        let first = entries[head].bytes
        if count == 1 || first.count - headOffset >= limit / 2 {
            // Array's withUnsafeBytes rethrows an untyped error: carry the typed one out in a Result.
            return try first.withUnsafeBytes { bytes in
                Swift.Result { () throws(Failure) in try body(UnsafeRawBufferPointer(rebasing: bytes[headOffset...])) }
            }.get()
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: first[headOffset...])
        var index = head + 1
        while index < entries.count, scratch.count + entries[index].bytes.count <= limit {
            scratch.append(contentsOf: entries[index].bytes)
            index += 1
        }
        return try scratch.withUnsafeBytes { bytes in Swift.Result { () throws(Failure) in try body(bytes) } }.get()
    }

    /// Marks `written` bytes from the front as sent.
    public mutating func consume(_ written: Int) {
        var remaining = written
        while remaining > 0, !isEmpty {
            let entry = entries[head]
            let taken = min(remaining, entry.bytes.count - headOffset)
            if !entry.isDroppable { replyBytes -= taken }
            remaining -= taken
            headOffset += taken
            if headOffset == entry.bytes.count {
                if entry.isDroppable { droppableCount -= 1 }
                head += 1
                headOffset = 0
            }
        }
        compact()
    }

    /// Forgets everything queued, as when the client has gone.
    public mutating func removeAll() {
        entries.removeAll()
        head = 0
        headOffset = 0
        replyBytes = 0
        droppableCount = 0
    }

    /// Drops the oldest droppable line that has not started to go out (a line cut in the
    /// middle would garble the stream).
    /// - Returns: Whether there was one.
    private mutating func dropOldestDroppable() -> Bool {
        let first = headOffset > 0 ? head + 1 : head
        guard let index = entries[first...].firstIndex(where: \.isDroppable) else { return false }
        entries.remove(at: index)
        droppedCount += 1
        droppableCount -= 1
        return true
    }

    private mutating func compact() {
        if isEmpty {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= entries.count {
            entries.removeFirst(head)
            head = 0
        }
    }
}
