import Testing
@testable import ScaleWeb

/// Drains a cursor with buffers of `size` bytes until it has nothing more, as the server's
/// content reader would.
private func drain(_ cursor: inout EventCursor, _ ring: EventRing, bufferSize size: Int = 4096) -> String {
    var bytes: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 1)
    defer { buffer.deallocate() }
    while true {
        let count = cursor.fill(buffer, from: ring)
        if count == 0 { break }
        bytes += buffer.prefix(count)
    }
    return String(decoding: bytes, as: UTF8.self)
}

@Suite struct EventStreamTests {
    @Test func anEventIsItsIDItsNameAndOneDataLinePerLine() {
        #expect(ServerSentEvents.frame(id: 7, event: "reading", data: #"{"grams":1.0}"#)
            == "id: 7\nevent: reading\ndata: {\"grams\":1.0}\n\n")
        // A line break in the data cannot end the event early or forge a field.
        #expect(ServerSentEvents.frame(id: 1, event: "x", data: "a\nid: 99\r\nb")
            == "id: 1\nevent: x\ndata: a\ndata: id: 99\ndata: b\n\n")
        #expect(ServerSentEvents.retry == "retry: 2000\n\n")
        #expect(ServerSentEvents.keepAlive.hasPrefix(":"))
        #expect(ServerSentEvents.daemonData(up: true) == #"{"up":true}"#)
        #expect(ServerSentEvents.daemonData(up: false) == #"{"up":false}"#)
    }

    @Test func lastEventIDIsAWholeNumberOrNothing() {
        #expect(ServerSentEvents.lastEventID("42") == 42)
        #expect(ServerSentEvents.lastEventID(" 42 ") == 42)
        #expect(ServerSentEvents.lastEventID(nil) == nil)
        #expect(ServerSentEvents.lastEventID("") == nil)
        #expect(ServerSentEvents.lastEventID("-1") == nil)
        #expect(ServerSentEvents.lastEventID("4x") == nil)
        #expect(ServerSentEvents.lastEventID("99999999999999999999999") == nil)
    }

    @Test func anEventKeepsOnlyItsFrameAndReadsItsDataBackFromIt() {
        let event = WebStreamEvent(id: 9, kind: .reading, data: #"{"grams":1.5}"#)
        #expect(String(decoding: event.frame, as: UTF8.self) == "id: 9\nevent: reading\ndata: {\"grams\":1.5}\n\n")
        #expect(event.data == #"{"grams":1.5}"#)
        // Lines come back joined by LF, whatever ended them, as a browser reads them; an
        // empty line of the data stays.
        #expect(WebStreamEvent(id: 1, kind: .peak, data: "a\r\n\nb\rc").data == "a\n\nb\nc")
        #expect(WebStreamEvent(id: 1, kind: .peak, data: "").data == "")
        #expect(WebStreamEvent(id: 2, kind: .daemon, data: "x") != WebStreamEvent(id: 2, kind: .daemon, data: "y"))
    }

    @Test func theRingKeepsTheNewestEventsInIDOrder() {
        var ring = EventRing(capacity: 3)
        #expect(ring.next(after: 0) == nil)
        for index in 1...5 { ring.append(.reading, data: "r\(index)") }
        #expect(ring.count == 3)
        #expect(ring.oldest?.id == 3)
        #expect(ring.next(after: 3)?.event.data == "r4")
        #expect(ring.next(after: 3)?.skipped == 0)
        #expect(ring.next(after: 5) == nil)
        // Two events were overwritten after id 0 was current.
        #expect(ring.next(after: 0)?.event.id == 3)
        #expect(ring.next(after: 0)?.skipped == 2)
    }

    @Test func aClientResumesWhereItCanAndGoesLiveWhereItCannot() {
        var ring = EventRing(capacity: 3)
        for index in 1...5 { ring.append(.reading, data: "r\(index)") }
        #expect(ring.resumePoint(lastEventID: nil) == 5)
        #expect(ring.resumePoint(lastEventID: 2) == 2)     // 3, 4, 5 are all here
        #expect(ring.resumePoint(lastEventID: 4) == 4)
        #expect(ring.resumePoint(lastEventID: 1) == 5)     // 2 is gone: live from now
        #expect(ring.resumePoint(lastEventID: 500) == 5)   // from before a restart
    }

    @Test func aNewClientGetsTheRetryLineThenTheDaemonStateThenWhatFollows() {
        var ring = EventRing(capacity: 8)
        ring.append(.reading, data: "old")
        let start = ring.resumePoint(lastEventID: nil)
        let hello = WebStreamEvent(id: ring.takeID(), kind: .daemon, data: #"{"up":true}"#)
        var cursor = EventCursor(after: start, preamble: ServerSentEvents.retry, introduction: hello)
        ring.append(.peak, data: "new")
        #expect(drain(&cursor, ring) == "retry: 2000\n\nid: 2\nevent: daemon\ndata: {\"up\":true}\n\nid: 3\nevent: peak\ndata: new\n\n")
        #expect(drain(&cursor, ring) == "")
    }

    @Test func aResumingClientGetsWhatItMissedBeforeTheDaemonState() {
        var ring = EventRing(capacity: 8)
        for index in 1...4 { ring.append(.reading, data: "r\(index)") }
        let start = ring.resumePoint(lastEventID: 2)
        let hello = WebStreamEvent(id: ring.takeID(), kind: .daemon, data: "d")
        var cursor = EventCursor(after: start, preamble: "", introduction: hello)
        let text = drain(&cursor, ring)
        #expect(text == "id: 3\nevent: reading\ndata: r3\n\nid: 4\nevent: reading\ndata: r4\n\nid: 5\nevent: daemon\ndata: d\n\n")
    }

    @Test func framesCrossBufferBoundariesWhole() {
        var ring = EventRing(capacity: 8)
        for index in 1...3 { ring.append(.reading, data: String(repeating: "x", count: 50 + index)) }
        var small = EventCursor(after: 0, preamble: ServerSentEvents.retry)
        var large = EventCursor(after: 0, preamble: ServerSentEvents.retry)
        let bySeven = drain(&small, ring, bufferSize: 7)
        #expect(bySeven == drain(&large, ring))
        #expect(bySeven.split(separator: "\n").filter { $0 == "event: reading" }.count == 3)
    }

    @Test func aKeepAliveGoesOnlyWhenNothingElseDoes() {
        var ring = EventRing(capacity: 8)
        var cursor = EventCursor(after: 0, preamble: "")
        cursor.keepAliveDue = true
        #expect(drain(&cursor, ring) == ServerSentEvents.keepAlive)
        #expect(!cursor.keepAliveDue)
        ring.append(.reading, data: "r")
        cursor.keepAliveDue = true
        #expect(drain(&cursor, ring) == "id: 1\nevent: reading\ndata: r\n\n")
        #expect(!cursor.keepAliveDue)
    }

    @Test func aClientThatFellBehindSkipsTheOldestAndIsToldSo() {
        var ring = EventRing(capacity: 4)
        var cursor = EventCursor(after: 0, preamble: "")
        for index in 1...10 { ring.append(.reading, data: "r\(index)") }
        let text = drain(&cursor, ring)
        #expect(text.hasPrefix(": skipped 6 events\n\nid: 7\n"))
        #expect(text.hasSuffix("data: r10\n\n"))
        #expect(cursor.skippedTotal == 6)
        #expect(cursor.lastID == 10)
        #expect(!cursor.hasPending)
    }
}
