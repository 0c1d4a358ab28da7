import CLinux
import Glibc

/// One thread, one `epoll`: every source (device, timer, signals, hotplug, sockets) is a
/// file descriptor with a handler, and nothing wakes the process unless one of them has
/// something to say. No polling timers.
public final class EventLoop {
    /// What epoll reported a descriptor ready for. Hang-ups and errors are reported
    /// whatever was asked for, so a handler learns of them through a read or write.
    public struct Readiness: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let readable = Readiness(rawValue: EPOLLIN.rawValue)
        public static let writable = Readiness(rawValue: EPOLLOUT.rawValue)
        public static let hangUp = Readiness(rawValue: EPOLLHUP.rawValue)
        public static let error = Readiness(rawValue: EPOLLERR.rawValue)
    }

    private let epoll: Int32
    /// Handlers by descriptor number. Descriptors are small (the kernel hands out the lowest
    /// free one), so this is no longer than a dictionary would be, and a wake-up finds its
    /// handler without hashing.
    private var handlers: [((Readiness) -> Void)?] = []
    private var isRunning = false
    /// How deep in `dispatch` the loop is (a handler may step the loop itself).
    private var dispatchDepth = 0
    /// Work deferred to the end of the batch being dispatched (`atEndOfWakeUp`).
    private var endOfWakeUp: [() -> Void] = []
    /// Counts the batches dispatched, so that a handler can tell whether it has already done
    /// something in this one (a client's first line of a wake-up goes at once, the rest with
    /// the batch's end: `ClientConnection.send`).
    private(set) var wakeUpNumber = 0

    public init() throws(Errno) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw Errno.current }
    }

    deinit { close(epoll) }

    /// Calls `handler` whenever `descriptor` is readable (or has hung up).
    public func watch(_ descriptor: FileDescriptor, handler: @escaping () -> Void) throws(Errno) {
        try watch(descriptor, readable: true, writable: false) { _ in handler() }
    }

    /// Calls `handler` when `descriptor` becomes readable: once each time more arrives
    /// (`EPOLLET`), not for as long as it stays readable. For a reader that looks at the
    /// bytes without taking them (`MSG_PEEK`), which level-triggered readiness would wake
    /// again and again.
    public func watch(_ descriptor: FileDescriptor, edgeTriggered: Bool, handler: @escaping () -> Void) throws(Errno) {
        try watch(descriptor, readable: true, writable: false) { _ in handler() }
        guard edgeTriggered else { return }
        var event = epoll_event()
        event.events = Self.mask(readable: true, writable: false) | EPOLLET.rawValue
        event.data.fd = descriptor.rawValue
        guard epoll_ctl(epoll, EPOLL_CTL_MOD, descriptor.rawValue, &event) == 0 else {
            let error = Errno.current
            unwatch(descriptor)
            throw error
        }
    }

    /// Calls `handler` with what `descriptor` is ready for whenever it is ready for one of
    /// the things asked for (or has hung up or failed).
    /// - Parameters:
    ///   - descriptor: A file descriptor, best non-blocking: epoll may wake spuriously.
    ///   - readable: Whether to wake when there is something to read.
    ///   - writable: Whether to wake when a write would not block; ask only while there is
    ///     something waiting to be written, or the loop wakes continually.
    ///   - handler: Called on the loop's thread.
    /// - Throws: `Errno` from `epoll_ctl` (`EEXIST` when already watched).
    public func watch(_ descriptor: FileDescriptor, readable: Bool, writable: Bool, handler: @escaping (Readiness) -> Void) throws(Errno) {
        var event = epoll_event()
        event.events = Self.mask(readable: readable, writable: writable)
        event.data.fd = descriptor.rawValue
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor.rawValue, &event) == 0 else { throw Errno.current }
        let index = Int(descriptor.rawValue)
        if index >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: index + 1 - handlers.count)) }
        handlers[index] = handler
    }

    /// Changes what a watched descriptor wakes the loop for, keeping its handler.
    /// - Throws: `Errno` from `epoll_ctl` (`ENOENT` when it is not watched).
    public func setInterest(_ descriptor: FileDescriptor, readable: Bool, writable: Bool) throws(Errno) {
        var event = epoll_event()
        event.events = Self.mask(readable: readable, writable: writable)
        event.data.fd = descriptor.rawValue
        guard epoll_ctl(epoll, EPOLL_CTL_MOD, descriptor.rawValue, &event) == 0 else { throw Errno.current }
    }

    /// Stops watching; call before closing the descriptor.
    public func unwatch(_ descriptor: FileDescriptor) {
        let index = Int(descriptor.rawValue)
        guard handlers.indices.contains(index), handlers[index] != nil else { return }
        handlers[index] = nil
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, descriptor.rawValue, nil)
    }

    /// Dispatches until `stop()` is called from a handler.
    public func run() throws(Errno) {
        isRunning = true
        while isRunning {
            _ = try dispatch(timeoutMilliseconds: -1, untilStopped: true)
        }
    }

    /// Waits for one batch of events and dispatches it: for tests and for callers that
    /// interleave the loop with other work.
    /// - Parameter timeoutMilliseconds: How long to wait for the first event; 0 only
    ///   collects what is ready, -1 waits for ever.
    /// - Returns: How many descriptors were ready (0 on timeout or a signal).
    /// - Throws: `Errno` from `epoll_wait`.
    @discardableResult
    public func runOnce(timeoutMilliseconds: Int32) throws(Errno) -> Int {
        try dispatch(timeoutMilliseconds: timeoutMilliseconds, untilStopped: false)
    }

    public func stop() { isRunning = false }

    /// Runs `action` once every handler of the batch being dispatched has run: output that
    /// several handlers (or one handler several times) produce in one wake-up goes out in
    /// one system call instead of one each. Outside a dispatch there is no batch to wait
    /// for, and `action` runs at once.
    public func atEndOfWakeUp(_ action: @escaping () -> Void) {
        if dispatchDepth > 0 { endOfWakeUp.append(action) } else { action() }
    }

    private func dispatch(timeoutMilliseconds: Int32, untilStopped: Bool) throws(Errno) -> Int {
        dispatchDepth += 1
        wakeUpNumber &+= 1
        defer {
            dispatchDepth -= 1
            // An action may defer more (a flush that ends a connection, say): until none is
            // left. By index, with no copy of the array held, so that emptying it keeps its
            // buffer rather than allocating a new one for every wake-up.
            if !endOfWakeUp.isEmpty {
                var index = 0
                while index < endOfWakeUp.count {
                    let action = endOfWakeUp[index]
                    index += 1
                    action()
                }
                endOfWakeUp.removeAll(keepingCapacity: true)
            }
        }
        // On the stack, per batch: no allocation per wake-up, and a handler that runs the
        // loop itself (a test stepping it, say) cannot overwrite the batch being dispatched.
        let result = withUnsafeTemporaryAllocation(of: epoll_event.self, capacity: 16) { events -> Int32 in
            let count = epoll_wait(epoll, events.baseAddress, Int32(events.count), timeoutMilliseconds)
            if count < 0 { return -errno }
            for index in 0..<Int(count) where isRunning || !untilStopped {
                // A handler may have unwatched a later descriptor of this batch.
                let descriptor = Int(events[index].data.fd)
                guard handlers.indices.contains(descriptor), let handler = handlers[descriptor] else { continue }
                handler(Readiness(rawValue: events[index].events))
            }
            return count
        }
        if result < 0 {
            let error = Errno(rawValue: -result)
            if error == .interrupted { return 0 }
            throw error
        }
        return Int(result)
    }

    private static func mask(readable: Bool, writable: Bool) -> UInt32 {
        (readable ? EPOLLIN.rawValue : 0) | (writable ? EPOLLOUT.rawValue : 0)
    }
}

/// A `timerfd` on `CLOCK_MONOTONIC`, armed for one absolute deadline at a time.
public final class DeadlineTimer {
    public let descriptor: FileDescriptor

    public init() throws(Errno) {
        descriptor = FileDescriptor(rawValue: try Errno.checking { timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC)) })
    }

    deinit { try? descriptor.close() }

    /// Fires once at `microseconds` of `CLOCK_MONOTONIC`; `nil` disarms.
    public func arm(atMicroseconds deadline: Int64?) {
        var setting = itimerspec()
        if let deadline {
            // A zero it_value would disarm; a deadline already past still fires at once.
            let clamped = max(deadline, 1)
            setting.it_value = timespec(tv_sec: Int(clamped / 1_000_000), tv_nsec: Int(clamped % 1_000_000) * 1_000)
        }
        _ = timerfd_settime(descriptor.rawValue, Int32(TFD_TIMER_ABSTIME), &setting, nil)
    }

    /// Consumes the expiry so the descriptor stops being readable.
    /// - Returns: How many times the timer expired since it was last read or armed; 0 when
    ///   it has not (arming again resets the count, so an expiry that epoll reported can be
    ///   gone by the time this reads).
    @discardableResult
    public func acknowledge() -> UInt64 {
        var expirations: UInt64 = 0
        let count = try? withUnsafeMutableBytes(of: &expirations) { bytes throws(Errno) in try descriptor.read(into: bytes) }
        return count == MemoryLayout<UInt64>.size ? expirations : 0
    }
}

/// Delivers SIGINT, SIGTERM and SIGHUP through a `signalfd`, so they are handled in the
/// loop like any other input instead of interrupting whatever runs.
public final class SignalWatcher {
    public let descriptor: FileDescriptor

    public init(signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) throws(Errno) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        guard sigprocmask(SIG_BLOCK, &set, nil) == 0 else { throw Errno.current }
        descriptor = FileDescriptor(rawValue: try Errno.checking { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) })
    }

    deinit { try? descriptor.close() }

    /// The next pending signal, or `nil` when none is left.
    public func next() -> Int32? {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        let count = try? withUnsafeMutableBytes(of: &info) { bytes throws(Errno) in try descriptor.read(into: bytes) }
        return count == size ? Int32(info.ssi_signo) : nil
    }
}

/// Reports changes in a directory through inotify: device nodes appearing, disappearing,
/// or having their permissions fixed by udev a moment after they appear.
public final class DirectoryWatcher {
    public let descriptor: FileDescriptor
    public let directory: String

    public init(directory: String) throws(SystemError) {
        self.directory = directory
        let raw = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard raw >= 0 else { throw SystemError(path: directory, errno: .current) }
        descriptor = FileDescriptor(rawValue: raw)
        let mask = UInt32(IN_CREATE | IN_ATTRIB | IN_DELETE | IN_MOVED_TO)
        guard inotify_add_watch(raw, directory, mask) >= 0 else {
            let error = Errno.current
            try? descriptor.close()
            throw SystemError(path: directory, errno: error)
        }
    }

    deinit { try? descriptor.close() }

    /// Reads all pending notifications. - Returns: the names that changed.
    public func drain() -> [String] {
        var names: [String] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            // 0 or an error (EAGAIN: nothing more) both end the drain.
            guard let count = try? descriptor.read(into: buffer), count > 0 else { return names }
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                let nameStart = offset + MemoryLayout<inotify_event>.size
                if event.len > 0 {
                    let bytes = UnsafeRawBufferPointer(rebasing: buffer[nameStart..<(nameStart + Int(event.len))])
                    names.append(String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
                }
                offset = nameStart + Int(event.len)
            }
        }
    }
}
