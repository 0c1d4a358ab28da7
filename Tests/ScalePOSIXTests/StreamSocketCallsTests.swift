import Glibc
import ScalePOSIX
import Testing

/// A connected stream socket's own calls on `FileDescriptor` (`peek`, `send`, `shutdown`),
/// on both ends of a Unix socket pair, as forcescale-web's admission makes them on TCP.
@Suite struct StreamSocketCallsTests {
    /// Both ends of a connected, non-blocking stream socket pair; the caller closes them.
    private static func pair() throws -> (FileDescriptor, FileDescriptor) {
        var ends: [Int32] = [0, 0]
        let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends)
        try #require(made == 0, "socketpair: \(Errno.current)")
        return (FileDescriptor(rawValue: ends[0]), FileDescriptor(rawValue: ends[1]))
    }

    @Test func peekingLeavesTheBytesForTheNextRead() throws {
        let (near, far) = try Self.pair()
        defer { try? near.close(); try? far.close() }
        var buffer = [UInt8](repeating: 0, count: 64)
        // Nothing sent yet: "nothing yet", not an end of stream.
        #expect(throws: Errno.wouldBlock) { try buffer.withUnsafeMutableBytes { _ = try near.peek(into: $0) } }
        let head = Array("GET / HTTP/1.1\r\n".utf8)
        #expect(try head.withUnsafeBytes { try far.send($0) } == head.count)
        for _ in 0..<2 {
            let count = try buffer.withUnsafeMutableBytes { try near.peek(into: $0) }
            #expect(Array(buffer.prefix(count)) == head)
        }
        let count = try buffer.withUnsafeMutableBytes { try near.read(into: $0) }
        #expect(Array(buffer.prefix(count)) == head)
        #expect(throws: Errno.wouldBlock) { try buffer.withUnsafeMutableBytes { _ = try near.peek(into: $0) } }
    }

    @Test func shuttingDownSendingIsAnEndOfStreamForThePeerAfterWhatWasSent() throws {
        let (near, far) = try Self.pair()
        defer { try? near.close(); try? far.close() }
        let answer = Array("HTTP/1.1 503 Service Unavailable\r\n\r\n".utf8)
        #expect(try answer.withUnsafeBytes { try near.send($0) } == answer.count)
        try near.shutdown(.sending)
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = try buffer.withUnsafeMutableBytes { try far.read(into: $0) }
        #expect(Array(buffer.prefix(count)) == answer)
        #expect(try buffer.withUnsafeMutableBytes { try far.read(into: $0) } == 0)
        // The other direction still works until both are shut down.
        let more = Array("GET /metrics HTTP/1.1\r\n".utf8)
        #expect(try more.withUnsafeBytes { try far.send($0) } == more.count)
        let received = try buffer.withUnsafeMutableBytes { try near.read(into: $0) }
        #expect(Array(buffer.prefix(received)) == more)
        try near.shutdown(.both)
        #expect(try buffer.withUnsafeMutableBytes { try near.read(into: $0) } == 0)
        #expect(throws: Errno.brokenPipe) { try more.withUnsafeBytes { _ = try near.send($0) } }
    }

    /// A peer that has gone costs `EPIPE`, never the process's life (no `SIGPIPE`, whatever
    /// the process does with that signal).
    @Test func sendingToAPeerThatHasGoneIsBrokenPipe() throws {
        let (near, far) = try Self.pair()
        defer { try? near.close() }
        try far.close()
        let bytes = Array("late".utf8)
        #expect(throws: Errno.brokenPipe) { try bytes.withUnsafeBytes { _ = try near.send($0) } }
    }
}
