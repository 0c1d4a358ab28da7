import Glibc
@testable import ScaleDaemon
@testable import ScalePOSIX
import ScaleTestSupport
import TestWaiting
import Testing

/// sd_notify, sd_watchdog_enabled and sd_listen_fds (the daemon's own implementations of
/// their protocols; sd_listen_fds's is ScalePOSIX's InheritedSockets, shared with forcescale-web) with real sockets and no systemd: the
/// service manager's end is a datagram socket in a temporary directory, and the variables
/// it would set are set in this process. Serialized, since they are process-wide.
@Suite(.serialized) struct ServiceNotifierTests {
    static let variables = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    // MARK: Notifications

    @Test func readySendsReadyAndAOneLineStatus() throws {
        let manager = try NotifyReceiver()
        try withEnvironment(["NOTIFY_SOCKET": manager.path]) { () throws in
            let notifier = ServiceNotifier()
            #expect(notifier.isEnabled)
            #expect(try notifier.ready(status: "Watching /dev/input/event5\nsecond line"))
            let messages = manager.receive()
            #expect(messages == ["READY=1\nSTATUS=Watching /dev/input/event5 second line"])
            #expect(messages.first?.split(separator: "\n").contains("READY=1") == true)

            #expect(try notifier.ready())
            #expect(manager.receive() == ["READY=1"])
        }
    }

    @Test func statusStoppingAndKeepAliveEachSendTheirAssignment() throws {
        let manager = try NotifyReceiver()
        try withEnvironment(["NOTIFY_SOCKET": manager.path]) { () throws in
            let notifier = ServiceNotifier()
            try notifier.status("2 clients")
            try notifier.keepAlive()
            try notifier.stopping()
            try notifier.stopping(status: "Shutting down")
            #expect(manager.receive() == ["STATUS=2 clients", "WATCHDOG=1", "STOPPING=1", "STOPPING=1\nSTATUS=Shutting down"])
        }
    }

    @Test func withoutNotifySocketNothingIsSentAndNothingFails() throws {
        let manager = try NotifyReceiver()
        try withEnvironment([:]) { () throws in
            let notifier = ServiceNotifier()
            #expect(!notifier.isEnabled)
            #expect(try notifier.ready(status: "ready") == false)
            #expect(try notifier.status("idle") == false)
            #expect(try notifier.keepAlive() == false)
            #expect(try notifier.stopping() == false)
            #expect(notifier.watchdogInterval == nil)
            #expect(manager.receive() == [])
        }
    }

    /// systemd names an abstract socket with a leading `@` (systemd-run --user, nspawn).
    @Test func anAbstractNotifySocketIsReached() throws {
        let manager = try NotifyReceiver(abstract: true)
        #expect(manager.path.hasPrefix("@"))
        try withEnvironment(["NOTIFY_SOCKET": manager.path]) { () throws in
            #expect(try ServiceNotifier().ready(status: "abstract"))
            #expect(manager.receive() == ["READY=1\nSTATUS=abstract"])
        }
        // The name is exact: with one byte more, or less, nobody is there.
        try withEnvironment(["NOTIFY_SOCKET": manager.path + "x"]) { () throws in
            #expect(throws: Errno(rawValue: ECONNREFUSED)) { try ServiceNotifier().ready() }
        }
        try withEnvironment(["NOTIFY_SOCKET": String(manager.path.dropLast())]) { () throws in
            #expect(throws: Errno(rawValue: ECONNREFUSED)) { try ServiceNotifier().ready() }
        }
        #expect(manager.receive() == [])
    }

    @Test func aNotifySocketOfAnotherFormIsAnError() throws {
        try withEnvironment(["NOTIFY_SOCKET": "vsock:2:1234"]) { () throws in
            #expect(throws: Errno(rawValue: EAFNOSUPPORT)) { try ServiceNotifier().ready() }
        }
        try withEnvironment(["NOTIFY_SOCKET": "/" + String(repeating: "d", count: 200)]) { () throws in
            #expect(throws: Errno(rawValue: EINVAL)) { try ServiceNotifier().keepAlive() }
        }
        try withEnvironment(["NOTIFY_SOCKET": ""]) { () throws in
            #expect(throws: Errno(rawValue: EINVAL)) { try ServiceNotifier().status("x") }
        }
    }

    @Test func aNotifySocketWithNobodyThereIsAnError() throws {
        let manager = try NotifyReceiver()
        try withEnvironment(["NOTIFY_SOCKET": manager.directory.path + "/nobody"]) { () throws in
            #expect(throws: Errno.self) { try ServiceNotifier().ready() }
        }
    }

    // MARK: Watchdog

    @Test func theWatchdogIntervalIsForThisProcessOnly() {
        let own = String(getpid())
        withEnvironment(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": own]) {
            #expect(ServiceNotifier().watchdogInterval == 200_000)
        }
        withEnvironment(["WATCHDOG_USEC": "200000"]) {
            #expect(ServiceNotifier().watchdogInterval == 200_000)
        }
        withEnvironment(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": String(getpid() + 1)]) {
            #expect(ServiceNotifier().watchdogInterval == nil)
        }
        withEnvironment(["WATCHDOG_USEC": "soon", "WATCHDOG_PID": own]) {
            #expect(ServiceNotifier().watchdogInterval == nil)
        }
        for malformed in ["0", "-200000", "+200000", " 200000", "200000 ", "99999999999999999999"] {
            withEnvironment(["WATCHDOG_USEC": malformed]) {
                #expect(ServiceNotifier().watchdogInterval == nil, "WATCHDOG_USEC=\(malformed)")
            }
        }
        withEnvironment(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "self"]) {
            #expect(ServiceNotifier().watchdogInterval == nil)
        }
        withEnvironment([:]) {
            #expect(ServiceNotifier().watchdogInterval == nil)
        }
    }

    @Test func theWatchdogTimerSendsAtHalfTheInterval() throws {
        let manager = try NotifyReceiver()
        let loop = try EventLoop()
        try withEnvironment(["NOTIFY_SOCKET": manager.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": String(getpid())]) { () throws in
            // Taken before the timer is made, so every deadline of the timer is after it.
            let start = MonotonicClock.now()
            let watchdog = try #require(try WatchdogTimer(loop: loop))
            #expect(watchdog.intervalMicroseconds == 200_000)
            #expect(watchdog.periodMicroseconds == 100_000)
            var errors: [Errno] = []
            watchdog.onError = { errors.append($0) }

            // Ten keep-alives, each with the moment the loop had sent it.
            var sent: [String] = []
            var sentAt: [Int64] = []
            var wakeUps = 0
            try waitFor("ten keep-alives", saw: { "\(sent.count): \(sent)" }, between: {
                wakeUps += try loop.runOnce(timeoutMilliseconds: 100)
                let now = MonotonicClock.now()
                for message in manager.receive() {
                    sent.append(message)
                    sentAt.append(now)
                }
            }) { sent.count >= 10 }
            #expect(sent.allSatisfy { $0 == "WATCHDOG=1" })
            #expect(wakeUps == sent.count)
            #expect(errors.isEmpty)
            // Never early: the k-th is due k half-intervals after the start at the soonest,
            // however the machine schedules the loop.
            for (index, time) in sentAt.enumerated() {
                #expect(time - start >= Int64(index + 1) * 100_000, "keep-alive \(index + 1) after \(time - start) µs")
            }
            // And at half the interval, not the whole: ten at the whole interval take 2 s at
            // the soonest; at half, 1 s plus whatever the machine delayed the loop by.
            let tenth = try #require(sentAt.dropFirst(9).first)
            #expect(tenth - start < 2_000_000, "ten keep-alives took \(tenth - start) µs")

            // Stopped, it leaves the loop: nothing wakes it any more. Looked at once a marker
            // timer three periods ahead has fired (a timer still armed would be due first).
            watchdog.stop()
            #expect(try runLoopPastMarker(loop, microseconds: 300_000) == 0)
            #expect(manager.receive() == [])
        }
    }

    @Test func noWatchdogAskedForMeansNoTimerAtAll() throws {
        let manager = try NotifyReceiver()
        let loop = try EventLoop()
        try withEnvironment(["NOTIFY_SOCKET": manager.path]) { () throws in
            #expect(try WatchdogTimer(loop: loop) == nil)
            // Nothing is watched: until a marker timer fires, nothing wakes the loop.
            #expect(try runLoopPastMarker(loop, microseconds: 100_000) == 0)
        }
        try withEnvironment(["NOTIFY_SOCKET": manager.path, "WATCHDOG_USEC": "200000", "WATCHDOG_PID": String(getpid() + 1)]) { () throws in
            #expect(try WatchdogTimer(loop: loop) == nil)
        }
        #expect(manager.receive() == [])
    }

    @Test func aReleasedWatchdogTimerLeavesTheLoop() throws {
        let manager = try NotifyReceiver()
        let loop = try EventLoop()
        try withEnvironment(["NOTIFY_SOCKET": manager.path]) { () throws in
            var watchdog: WatchdogTimer? = try WatchdogTimer(loop: loop, intervalMicroseconds: 20_000)
            #expect(watchdog != nil)
            watchdog = nil
            // Six of its periods: a timer left behind would have woken the loop before the marker.
            #expect(try runLoopPastMarker(loop, microseconds: 60_000) == 0)
            #expect(manager.receive() == [])
        }
    }

    // MARK: Socket activation (ScalePOSIX's InheritedSockets, as the daemon takes them)

    @Test func withoutPassedSocketsThereAreNone() throws {
        try withEnvironment([:]) { () throws in
            #expect(try InheritedSockets.take() == [])
        }
        // Meant for another process (a parent that did not clean up): not taken, and the
        // variables are removed so that they mislead nobody else.
        try withEnvironment(["LISTEN_PID": String(getpid() + 1), "LISTEN_FDS": "1"]) { () throws in
            #expect(try InheritedSockets.take() == [])
            #expect(getenv("LISTEN_PID") == nil)
            #expect(getenv("LISTEN_FDS") == nil)
        }
    }

    @Test func malformedListenVariablesAreAnError() throws {
        for count in ["many", "-1", ""] {
            try withEnvironment(["LISTEN_PID": String(getpid()), "LISTEN_FDS": count]) { () throws in
                #expect(throws: InheritedSocketsError.malformed(variable: "LISTEN_FDS", value: count)) { try InheritedSockets.take() }
            }
        }
        try withEnvironment(["LISTEN_PID": "me", "LISTEN_FDS": "1"]) { () throws in
            #expect(throws: InheritedSocketsError.malformed(variable: "LISTEN_PID", value: "me")) { try InheritedSockets.take() }
        }
        // Only the pid, no count: nothing was passed.
        try withEnvironment(["LISTEN_PID": String(getpid())]) { () throws in
            #expect(try InheritedSockets.take() == [])
        }
    }

    /// Descriptor 3 may be in use in this process (by the test runner, or another test
    /// running in parallel), so the passing is done in a forked child, where replacing it
    /// harms nothing. The child only does what a freshly started daemon would.
    @Test func aPassedSocketIsTakenFromDescriptorThreeAndAdopted() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/activated.sock"
        let listener = try UnixListener(path: path)
        // What the child allocates, already instantiated here.
        _ = [FileDescriptor](repeating: FileDescriptor(rawValue: InheritedSockets.first), count: 1)
        let pidText = UnsafeMutablePointer<CChar>.allocate(capacity: 24)
        defer { pidText.deallocate() }

        let child = fork()
        if child == 0 { _exit(Self.takeListenFileDescriptorsInChild(listener: listener.descriptor, path: path, pidText: pidText)) }
        try #require(child > 0, "fork: \(Errno.current)")

        var status: Int32 = 0
        do {
            try waitFor("the forked child to finish") {
                let result = waitpid(child, &status, WNOHANG)
                if result < 0, errno != EINTR { throw Errno.current }
                return result == child
            }
        } catch {
            kill(child, SIGKILL)
            _ = waitpid(child, &status, 0)
            throw error
        }
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        #expect(exited, "child killed by signal \(status & 0x7f)")
        #expect(code == 0, "child failed: \(Self.childFailures[code] ?? "exit \(code)")")
        // The parent's listener is untouched.
        #expect(fileStatus(path) != nil)
        listener.close()
    }

    static let childFailures: [Int32: String] = [
        10: "dup2 to descriptor 3",
        11: "setenv",
        20: "take() threw",
        21: "take() did not return [3]",
        22: "LISTEN_PID or LISTEN_FDS left in the environment",
        23: "descriptor 3 not close-on-exec",
        24: "UnixListener(adopting: 3) failed",
        25: "the adopted listener has the wrong path",
    ]

    /// Runs in the forked child: only this thread exists there, so as little as possible
    /// happens, and the child ends with `_exit` (no atexit handlers, no flushing).
    /// - Returns: 0, or one of `childFailures`.
    static func takeListenFileDescriptorsInChild(listener: FileDescriptor, path: String, pidText: UnsafeMutablePointer<CChar>) -> Int32 {
        let first = InheritedSockets.first
        guard dup2(listener.rawValue, first) == first else { return 10 }
        // The own pid in decimal, without formatting machinery.
        var length = 0
        var rest = Int(getpid())
        repeat { length += 1; rest /= 10 } while rest > 0
        rest = Int(getpid())
        pidText[length] = 0
        for index in stride(from: length - 1, through: 0, by: -1) {
            pidText[index] = CChar(48 + rest % 10)
            rest /= 10
        }
        guard setenv("LISTEN_PID", pidText, 1) == 0, setenv("LISTEN_FDS", "1", 1) == 0, unsetenv("LISTEN_FDNAMES") == 0 else { return 11 }

        let descriptors: [FileDescriptor]
        do throws(InheritedSocketsError) { descriptors = try InheritedSockets.take() } catch { return 20 }
        guard descriptors.count == 1, descriptors[0].rawValue == 3 else { return 21 }
        guard getenv("LISTEN_PID") == nil, getenv("LISTEN_FDS") == nil else { return 22 }
        guard fcntl(3, F_GETFD) & FD_CLOEXEC != 0 else { return 23 }
        guard let adopted = try? UnixListener(adopting: descriptors[0]) else { return 24 }
        guard adopted.path == path else { return 25 }
        return 0
    }
}

/// The service manager's end of `NOTIFY_SOCKET`: a datagram socket in a temporary directory,
/// or in the abstract namespace (`path` is then `@name`, as systemd writes it).
final class NotifyReceiver {
    let directory = TemporaryDirectory()
    let path: String
    let descriptor: Int32

    init(abstract: Bool = false) throws {
        // A name of this process and this receiver: tests run in parallel.
        path = abstract ? "@forcescale-test-notify-\(getpid())-\(UInt32.random(in: 0 ... .max))" : directory.path + "/notify"
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else { throw Errno.current }
        let bound = abstract
            ? Self.bindAbstract(descriptor, name: Array(path.utf8.dropFirst()))
            : try UnixSocketAddress(path: path).withSocketAddress { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            let error = Errno.current
            close(descriptor)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Binds to `name` in the abstract namespace, built here rather than by ScalePOSIX's
    /// `UnixSocketAddress`, so that the test does not check that type against itself: a zero
    /// byte, the name, and a length that ends exactly where the name ends.
    static func bindAbstract(_ descriptor: Int32, name: [UInt8]) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path[0] = 0
            for (index, byte) in name.enumerated() { path[index + 1] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + 1 + name.count)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
    }

    /// The datagrams that have arrived, each as text, oldest first.
    func receive() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count >= 0 { messages.append(String(decoding: buffer[..<count], as: UTF8.self)); continue }
            if errno == EINTR { continue }
            return messages
        }
    }
}

/// Runs `body` with the service manager's variables set to `values` (the others of
/// `ServiceNotifierTests.variables` unset), then puts back what was there.
func withEnvironment(_ values: [String: String], _ body: () throws -> Void) rethrows {
    let names = Set(ServiceNotifierTests.variables).union(values.keys)
    let saved = Dictionary(uniqueKeysWithValues: names.map { ($0, getenv($0).map { String(cString: $0) }) })
    for name in names {
        if let value = values[name] { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    try body()
}
