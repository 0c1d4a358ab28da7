@testable import ScalePOSIX
import Testing

@Suite struct OutgoingQueueTests {
    func bytes(_ text: String) -> [UInt8] { Array((text + "\n").utf8) }

    func pending(_ queue: OutgoingQueue) -> String {
        var scratch: [UInt8] = []
        var copy = queue
        var text = ""
        while !copy.isEmpty {
            let chunk = copy.withPendingBytes(scratch: &scratch, limit: 1 << 20) { Array($0) }
            text += String(decoding: chunk, as: UTF8.self)
            copy.consume(chunk.count)
        }
        return text
    }

    @Test func whenFullTheOldestDroppableLineGoes() {
        var queue = OutgoingQueue(maximumLines: 3, maximumReplyBytes: 1000)
        #expect(queue.append(bytes("r1"), droppable: true) == .queued)
        #expect(queue.append(bytes("A"), droppable: false) == .queued)
        #expect(queue.append(bytes("r2"), droppable: true) == .queued)
        #expect(queue.append(bytes("r3"), droppable: true) == .queued)
        #expect(queue.droppedCount == 0)
        #expect(queue.append(bytes("r4"), droppable: true) == .queued)
        #expect(queue.droppedCount == 1)
        #expect(pending(queue) == "A\nr2\nr3\nr4\n")
    }

    @Test func repliesAreNeverDroppedAndDoNotCountAgainstTheLineLimit() {
        var queue = OutgoingQueue(maximumLines: 2, maximumReplyBytes: 1000)
        for reply in ["A", "B", "C"] { #expect(queue.append(bytes(reply), droppable: false) == .queued) }
        #expect(queue.append(bytes("r1"), droppable: true) == .queued)
        #expect(queue.append(bytes("r2"), droppable: true) == .queued)
        #expect(queue.append(bytes("r3"), droppable: true) == .queued)
        #expect(queue.droppedCount == 1)
        #expect(queue.count == 5)
        #expect(pending(queue) == "A\nB\nC\nr2\nr3\n")
    }

    @Test func withOneLineAllowedAndItHalfWrittenTheNewLineGoes() {
        var queue = OutgoingQueue(maximumLines: 1, maximumReplyBytes: 1000)
        _ = queue.append(bytes("first"), droppable: true)
        queue.consume(1)
        #expect(queue.append(bytes("second"), droppable: true) == .dropped)
        #expect(pending(queue) == "irst\n")
    }

    @Test func tooManyReplyBytesMeanTheClientIsUnresponsive() {
        var queue = OutgoingQueue(maximumLines: 100, maximumReplyBytes: 10)
        #expect(queue.append(bytes("12345678"), droppable: false) == .queued)
        #expect(queue.replyBytes == 9)
        #expect(queue.append(bytes("x"), droppable: false) == .replyLimitExceeded)
        queue.consume(5)
        #expect(queue.replyBytes == 4)
        #expect(queue.append(bytes("x"), droppable: false) == .queued)
    }

    @Test func aLinePartlyWrittenIsNeverDropped() {
        var queue = OutgoingQueue(maximumLines: 2, maximumReplyBytes: 1000)
        _ = queue.append(bytes("first"), droppable: true)
        _ = queue.append(bytes("second"), droppable: true)
        queue.consume(2)                      // "fi" went out
        _ = queue.append(bytes("third"), droppable: true)
        #expect(pending(queue) == "rst\nthird\n")
        #expect(queue.droppedCount == 1)
    }

    @Test func smallLinesAreGatheredIntoOneWrite() {
        var queue = OutgoingQueue()
        for number in 0..<10 { _ = queue.append(bytes("line \(number)"), droppable: true) }
        var scratch: [UInt8] = []
        let first = queue.withPendingBytes(scratch: &scratch, limit: 30) { $0.count }
        #expect(first == 28)                  // four 7-byte lines fit in 30
        queue.consume(first)
        #expect(queue.count == 6)
    }

    @Test func closingKeepsOnlyTheReplies() {
        var queue = OutgoingQueue()
        _ = queue.append(bytes("r1"), droppable: true)
        _ = queue.append(bytes("A"), droppable: false)
        _ = queue.append(bytes("r2"), droppable: true)
        queue.dropAllDroppable()
        #expect(pending(queue) == "A\n")
        #expect(queue.droppedCount == 2)
    }
}
