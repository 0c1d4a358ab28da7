/// What `/events` sends (docs/web.md, "The event stream"): Server-Sent Events framed by
/// `ServerSentEvents`, kept in an `EventRing` so that a client that reconnects with
/// `Last-Event-ID` gets what it missed, and handed to each client through an
/// `EventCursor`. Pure: no descriptor, no clock.

/// The kinds of event the stream carries; the raw value is the SSE `event:` field.
enum StreamEventKind: String, Sendable, Hashable {
    /// A READING line of the daemon, unchanged.
    case reading
    /// A PEAK line of the daemon, unchanged.
    case peak
    /// Whether forcescale-web is connected to the daemon: `{"up":true}` or `{"up":false}`.
    case daemon
}

/// One event as the stream sends it.
///
/// Only the encoded frame is kept, not the `data` string it is made from as well: the
/// ring holds 1024 of these, and a second copy of each READING line would be about a
/// quarter of a megabyte of forcescale-web's heap.
struct WebStreamEvent: Sendable, Hashable {
    /// The SSE `id:`: increasing along a stream (one server's ids may skip numbers: each
    /// client's greeting takes an id of its own).
    let id: UInt64
    let kind: StreamEventKind
    /// The event as it goes on the wire, made once and shared by every client that sends it.
    let frame: [UInt8]

    init(id: UInt64, kind: StreamEventKind, data: String) {
        self.id = id
        self.kind = kind
        frame = Array(ServerSentEvents.frame(id: id, event: kind.rawValue, data: data).utf8)
    }

    /// The `data:` field, read back from the frame: its `data:` lines joined by LF (a CR
    /// or CRLF in the original data comes back as LF, as a browser reads it).
    var data: String {
        let text = String(decoding: frame, as: UTF8.self)
        let prefix = "data: "
        return text.split(separator: "\n", omittingEmptySubsequences: true)
            .filter { $0.hasPrefix(prefix) }
            .map { $0.dropFirst(prefix.count) }
            .joined(separator: "\n")
    }
}

/// The text/event-stream format (the HTML standard's "Server-sent events").
package enum ServerSentEvents {
    /// How long a browser waits before reconnecting, in milliseconds: sent first.
    static let retryMilliseconds = 2000

    /// The stream's first line: the reconnection delay.
    static var retry: String { "retry: \(retryMilliseconds)\n\n" }

    /// A comment that keeps an idle connection alive (and shows a vanished client up).
    static let keepAlive = ": keep-alive\n\n"

    /// A comment saying that events were left out for a client too slow to take them.
    static func skipped(_ count: UInt64) -> String { ": skipped \(count) events\n\n" }

    /// An event: `id:`, `event:` and one `data:` line per line of `data` (a line break in
    /// the data cannot end the event early).
    static func frame(id: UInt64, event: String, data: String) -> String {
        var text = "id: \(id)\nevent: \(event)\n"
        // CR, LF and CRLF all end a line in the format (CRLF is one Character in Swift).
        for line in data.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
            text += "data: \(line)\n"
        }
        return text + "\n"
    }

    /// The id a reconnecting client names in `Last-Event-ID`; `nil` for a header that is
    /// absent or not a whole number (the stream then starts afresh).
    package static func lastEventID(_ header: String?) -> UInt64? {
        guard let header else { return nil }
        let trimmed = header.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        return UInt64(String(trimmed))
    }

    /// The `data:` of a `daemon` event.
    static func daemonData(up: Bool) -> String { up ? #"{"up":true}"# : #"{"up":false}"# }
}

/// The latest events, at most `capacity` of them, by increasing id: what clients read
/// from, and what a client reconnecting with `Last-Event-ID` resumes from. Memory is bounded
/// by the capacity whatever the number of clients: a client only holds its place here.
struct EventRing: Sendable {
    let capacity: Int
    private var storage: [WebStreamEvent] = []
    /// Where the oldest event is in `storage` once it is full.
    private var head = 0
    /// The last id given out (to an event here or to a client's greeting).
    private(set) var lastID: UInt64 = 0

    /// - Parameter capacity: Events kept; at least 1.
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        storage.reserveCapacity(self.capacity)
    }

    /// Events held.
    var count: Int { storage.count }

    /// The oldest event held, `nil` when empty.
    var oldest: WebStreamEvent? { storage.isEmpty ? nil : storage[head] }

    /// Adds an event with the next id, dropping the oldest when full.
    /// - Returns: The event added.
    @discardableResult
    mutating func append(_ kind: StreamEventKind, data: String) -> WebStreamEvent {
        lastID += 1
        let event = WebStreamEvent(id: lastID, kind: kind, data: data)
        if storage.count < capacity {
            storage.append(event)
        } else {
            storage[head] = event
            head = (head + 1) % capacity
        }
        return event
    }

    /// An id for an event sent to one client only (its greeting): after every id given so
    /// far, so that its ids still increase.
    mutating func takeID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// The event at position `index` from the oldest.
    private func event(at index: Int) -> WebStreamEvent { storage[(head + index) % storage.count] }

    /// The first event after `id`, or `nil` when there is none yet.
    /// - Returns: The event and how many ring events between `id` and it are gone (when
    ///   `id` is older than the oldest event held, minus greeting ids, which were never
    ///   here); 0 when the ring still had everything after `id`.
    func next(after id: UInt64) -> (event: WebStreamEvent, skipped: UInt64)? {
        guard !storage.isEmpty, id < lastID else { return nil }
        // Binary search: ids increase from the oldest to the newest.
        var low = 0
        var high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if event(at: middle).id <= id { low = middle + 1 } else { high = middle }
        }
        guard low < storage.count else { return nil }
        let found = event(at: low)
        // Only the very oldest can follow a gap: later ones are found right after their
        // predecessor. A gap that greetings made is no loss; an overwritten event is.
        let skipped = low == 0 && droppedAny && id + 1 < found.id ? found.id - id - 1 : 0
        return (found, skipped)
    }

    /// Whether any event was ever dropped to make room.
    private var droppedAny: Bool { storage.count == capacity && lastID > UInt64(capacity) }

    /// Where a new client starts: after `lastEventID` when the ring still holds the event
    /// after it (a reconnection that missed nothing it can no longer get), else after the
    /// newest event (live from now on).
    /// - Parameter lastEventID: The client's `Last-Event-ID`, if any.
    /// - Returns: The id the client's cursor starts after.
    func resumePoint(lastEventID: UInt64?) -> UInt64 {
        guard let lastEventID, lastEventID <= lastID else { return lastID }
        guard let oldest else { return lastID }
        // Everything after lastEventID that is still wanted must be here.
        return lastEventID + 1 >= oldest.id ? lastEventID : lastID
    }
}

/// One client's place in the stream: what it has been sent, and the bytes of the current
/// frame not yet taken. Bounded: at most one frame in hand; what it has not taken yet stays
/// in the shared ring, and when the ring has moved past it, the client skips ahead (the
/// oldest events are dropped for it) and is told so in a comment.
struct EventCursor: Sendable {
    /// The id of the last event put in hand.
    private(set) var lastID: UInt64
    private var pending: [UInt8] = []
    private var offset = 0
    /// A keep-alive is due (set by the keep-alive timer, cleared when anything is sent).
    var keepAliveDue = false
    /// Events this client never got because it fell behind the ring.
    private(set) var skippedTotal: UInt64 = 0

    /// The client's own event (the daemon's state when it connected), sent once the events
    /// before its id have been.
    private var introduction: WebStreamEvent?

    /// - Parameters:
    ///   - lastID: The id the client has seen (`EventRing.resumePoint`).
    ///   - preamble: What goes first: the `retry:` line.
    ///   - introduction: An event for this client alone, with an id from `EventRing.takeID()`:
    ///     it follows the ring's events older than it (those missed, on a resumption) and
    ///     precedes the newer ones, so that ids keep increasing.
    init(after lastID: UInt64, preamble: String, introduction: WebStreamEvent? = nil) {
        self.lastID = lastID
        pending = Array(preamble.utf8)
        self.introduction = introduction
    }

    /// Whether bytes are in hand already.
    var hasPending: Bool { offset < pending.count }

    /// Copies as much as fits into `buffer`: the frame in hand, then the next events of
    /// `ring`, then a keep-alive if one is due and nothing else went.
    /// - Returns: The number of bytes written; 0 when there is nothing to send.
    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer, from ring: EventRing) -> Int {
        var written = 0
        while written < buffer.count {
            if !hasPending {
                let next = ring.next(after: lastID)
                if let introduction, next.map({ $0.event.id > introduction.id }) ?? true {
                    self.introduction = nil
                    pending = introduction.frame
                    offset = 0
                    lastID = introduction.id
                    continue
                }
                guard let (event, skipped) = next else { break }
                if skipped > 0 {
                    skippedTotal += skipped
                    pending = Array(ServerSentEvents.skipped(skipped).utf8) + event.frame
                } else {
                    pending = event.frame    // shared with the ring, not copied
                }
                offset = 0
                lastID = event.id
            }
            let count = min(pending.count - offset, buffer.count - written)
            pending.withUnsafeBytes { source in
                buffer.baseAddress!.advanced(by: written).copyMemory(from: source.baseAddress!.advanced(by: offset), byteCount: count)
            }
            offset += count
            written += count
        }
        if written == 0 && keepAliveDue {
            pending = Array(ServerSentEvents.keepAlive.utf8)
            offset = 0
            keepAliveDue = false
            return fill(buffer, from: ring)
        }
        if written > 0 { keepAliveDue = false }
        if !hasPending {
            // Let the frame's memory go while the client waits.
            pending = []
            offset = 0
        }
        return written
    }
}
