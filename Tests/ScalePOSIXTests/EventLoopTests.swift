import Glibc
@testable import ScalePOSIX
import TestWaiting
import Testing

@Suite struct EventLoopTests {
    @Test func runOnceTimesOutWithNothingReady() throws {
        let loop = try EventLoop()
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 0)
    }

    @Test func writableInterestCanBeTurnedOnAndOff() throws {
        let loop = try EventLoop()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        let watched = FileDescriptor(rawValue: pair[0])
        var seen: [EventLoop.Readiness] = []
        try loop.watch(watched, readable: true, writable: false) { seen.append($0) }
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 0)
        try loop.setInterest(watched, readable: true, writable: true)
        #expect(try loop.runOnce(timeoutMilliseconds: 0) == 1)
        #expect(seen == [.writable])
        try loop.setInterest(watched, readable: true, writable: false)
        _ = write(pair[1], "x", 1)
        // Readable already; the long timeout only bounds a broken loop's wait.
        #expect(try loop.runOnce(timeoutMilliseconds: Int32(patience * 1000)) == 1)
        #expect(seen.last == .readable)
        loop.unwatch(watched)
    }

    @Test func theOldWatchStillWorks() throws {
        let loop = try EventLoop()
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        var calls = 0
        try loop.watch(FileDescriptor(rawValue: pair[0])) { calls += 1 }
        _ = write(pair[1], "x", 1)
        _ = try loop.runOnce(timeoutMilliseconds: Int32(patience * 1000))
        #expect(calls == 1)
    }
}
