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

    /// Work deferred in a wake-up runs after every handler of that wake-up, once; outside a
    /// dispatch there is nothing to wait for and it runs at once.
    @Test func workDeferredToTheEndOfAWakeUpRunsAfterItsHandlers() throws {
        let loop = try EventLoop()
        var pairs: [[Int32]] = []
        for _ in 0..<2 {
            var pair: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0)
            pairs.append(pair)
        }
        defer { for pair in pairs { close(pair[0]); close(pair[1]) } }
        var order: [String] = []
        for (index, pair) in pairs.enumerated() {
            try loop.watch(FileDescriptor(rawValue: pair[0])) {
                var byte: UInt8 = 0
                _ = read(pair[0], &byte, 1)
                order.append("handler \(index)")
                loop.atEndOfWakeUp { order.append("deferred by \(index)") }
            }
        }
        for pair in pairs { _ = write(pair[1], "x", 1) }
        // Both are readable before the wait, so one epoll_wait returns both.
        #expect(try loop.runOnce(timeoutMilliseconds: Int32(patience * 1000)) == 2)
        #expect(order.count == 4)
        #expect(Set(order.prefix(2)) == ["handler 0", "handler 1"])
        #expect(Set(order.suffix(2)) == ["deferred by 0", "deferred by 1"])
        var ranAtOnce = false
        loop.atEndOfWakeUp { ranAtOnce = true }
        #expect(ranAtOnce)
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

/// The throttle's timer says whether it really expired: the live loop takes an expiry as
/// "the deadline has come" without reading a clock, so a cancelled one must read as 0.
@Suite struct DeadlineTimerTests {
    /// Waits (up to `patience`) for the timer to be readable.
    private func waitReadable(_ timer: DeadlineTimer) -> Bool {
        var poller = pollfd(fd: timer.descriptor.rawValue, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, Int32(patience * 1000)) == 1
    }

    @Test func acknowledgeCountsExpiriesAndZeroWhenNoneCame() throws {
        let timer = try DeadlineTimer()
        #expect(timer.acknowledge() == 0)  // never armed
        timer.arm(atMicroseconds: MonotonicClock.now())  // already due: fires at once
        #expect(waitReadable(timer))
        #expect(timer.acknowledge() == 1)
        #expect(timer.acknowledge() == 0)  // consumed
    }

    @Test func reArmingCancelsAnExpiryNotYetRead() throws {
        let timer = try DeadlineTimer()
        timer.arm(atMicroseconds: MonotonicClock.now())
        #expect(waitReadable(timer))
        // As when the device's handler re-arms before the timer's handler runs.
        timer.arm(atMicroseconds: MonotonicClock.now() + 3_600_000_000)
        #expect(timer.acknowledge() == 0)
        timer.arm(atMicroseconds: nil)
        #expect(timer.acknowledge() == 0)
    }
}
