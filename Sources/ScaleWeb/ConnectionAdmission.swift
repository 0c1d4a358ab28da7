import ScalePOSIX

/// A connection as libmicrohttpd holds it: the library's handle and the socket it serves.
struct LibraryConnection {
    let handle: OpaquePointer
    let descriptor: FileDescriptor
}

/// Which connections forcescale-web takes, and when it lets one go: the part of serving
/// under hostile load that libmicrohttpd 0.9.75's own options do not do, done before the
/// library has a connection. Each was tried against the library alone (docs/web.md, "How
/// connections are admitted"):
///
/// - Past `MHD_OPTION_CONNECTION_LIMIT` the library stops accepting, so a new connection
///   waits in the kernel's queue unanswered; past `MHD_OPTION_PER_IP_CONNECTION_LIMIT` it is
///   reset without an answer. Here a new connection past a limit takes the place of the one
///   that has waited longest for its request head, or gets 503 with `Retry-After` at once.
/// - `MHD_OPTION_CONNECTION_TIMEOUT` counts silence: a client that sends a byte every 5 s
///   is never dropped. Here a request head has `requestSeconds` from its first byte, then
///   408.
/// - A head too large for `MHD_OPTION_CONNECTION_MEMORY_LIMIT` gets 431 (414 for the request
///   line alone), but one that fills all but the last 200 bytes or so of that memory is
///   closed without an answer: the response's head no longer fits. Here the head is looked
///   at without being taken (`MSG_PEEK`) until it is whole; past `maximumHead` bytes or
///   `maximumHeadLines` lines it gets 431, and only a head within both reaches the library,
///   whose memory is set to hold any such head and its answer.
///
/// What the library does do stays its own: closing a client that takes nothing of its
/// response (`MHD_OPTION_CONNECTION_TIMEOUT`), parsing, and the memory of each connection.
/// Every system call goes through ScalePOSIX's funnel (`FileDescriptor`'s `peek`, `send`,
/// `shutdown`, `read`, `close`).
final class ConnectionAdmission {
    /// One connection, from its acceptance to its close.
    private final class Held {
        let accepted: InetListener.Accepted
        /// When it started waiting for its current request (microseconds, monotonic);
        /// `nil` while the request is being answered or streamed.
        var waitingSince: Int64?
        /// Whether the library has the socket (it closes it then, never this class).
        var isInLibrary = false
        /// The library's handle, once it reported the connection started.
        var connection: OpaquePointer?
        var isStream = false
        /// Being closed in the library (its socket shut down); no longer counted.
        var isLeaving = false

        var descriptor: FileDescriptor { accepted.descriptor }
        /// The peer's address without its port, for its share of the connections.
        var address: String { accepted.host }

        init(_ accepted: InetListener.Accepted, since: Int64) {
            self.accepted = accepted
            waitingSince = since
        }
    }

    private let limits: HTTPServer.Limits
    private let listener: InetListener
    private let loop: EventLoop
    private let log: (String) -> Void
    /// Fires when the connection that has waited longest for its request is due.
    private let requestTimer: DeadlineTimer
    /// What `requestTimer` is set for (`nil`: not set).
    private var requestTimerDeadline: Int64?
    /// Every connection held, by socket.
    private var held: [FileDescriptor: Held] = [:]
    /// Connections held by peer address (those being closed left out).
    private var heldByAddress: [String: Int] = [:]
    /// Connections held, those being closed left out.
    private var heldCount = 0
    private var streams = 0
    private var streamsByAddress: [String: Int] = [:]
    /// Where a request head is looked at (`maximumHead + 1` bytes).
    private let peekBuffer: UnsafeMutableRawBufferPointer
    /// Gives the library a connection whose head is in; `nil` until started and after
    /// stopping. See `start`.
    private var handOver: ((InetListener.Accepted) -> Bool)?
    /// Makes the library run soon, after its socket of a connection was shut down.
    private var libraryMustRun: () -> Void = {}

    /// - Parameters:
    ///   - listener: A listening TCP socket (ours or systemd's); it is closed by `stop()`,
    ///     never shut down.
    ///   - loop: The loop to run on.
    ///   - limits: The bounds.
    ///   - log: Gets what went wrong in accepting.
    /// - Throws: `Errno` when the timer cannot be made.
    init(listener: InetListener, loop: EventLoop, limits: HTTPServer.Limits, log: @escaping (String) -> Void) throws(Errno) {
        self.listener = listener
        self.loop = loop
        self.limits = limits
        self.log = log
        requestTimer = try DeadlineTimer()
        peekBuffer = .allocate(byteCount: limits.maximumHead + 1, alignment: 1)
    }

    deinit {
        stop()
        peekBuffer.deallocate()
    }

    /// Starts taking connections.
    /// - Parameters:
    ///   - handOver: Gives the library a connection whose head is in; the library takes its
    ///     socket, and closes it even when it refuses it (returns false).
    ///   - libraryMustRun: Makes the library run soon: after a hand-over, and after the
    ///     socket of a connection it holds was shut down to make room.
    /// - Throws: `Errno` when the loop cannot watch the listener or the timer.
    func start(handOver: @escaping (InetListener.Accepted) -> Bool, libraryMustRun: @escaping () -> Void) throws(Errno) {
        self.handOver = handOver
        self.libraryMustRun = libraryMustRun
        do throws(Errno) {
            try loop.watch(requestTimer.descriptor) { [unowned self] in
                requestTimer.acknowledge()
                endOverdueRequests()
            }
            try loop.watch(listener.descriptor) { [unowned self] in acceptConnections() }
        } catch {
            stop()
            throw error
        }
    }

    /// Stops taking connections: those the library never had are closed, and so is the
    /// listening socket (a socket from systemd must not be shut down). Those in the
    /// library are the library's to close. Calling it again does nothing.
    func stop() {
        guard handOver != nil else { return }
        handOver = nil
        loop.unwatch(listener.descriptor)
        loop.unwatch(requestTimer.descriptor)
        for entry in held.values where !entry.isInLibrary { closeUnserved(entry) }
        listener.close()
    }

    // MARK: What the library reports

    /// The library started serving a connection it was handed.
    func libraryStarted(_ connection: LibraryConnection) {
        held[connection.descriptor]?.connection = connection.handle
    }

    /// The library closed a connection.
    func libraryClosed(_ connection: LibraryConnection) {
        guard let entry = entry(for: connection) else { return }
        forget(entry)
    }

    /// The peer of a connection the library serves, as `127.0.0.1:54321`: the address
    /// `accept` gave, for the log of control requests.
    func peer(of connection: LibraryConnection) -> String? {
        entry(for: connection)?.accepted.endpoint
    }

    /// A request's head is in and the application answers it: the connection no longer
    /// waits for a request.
    func requestArrived(on connection: LibraryConnection) {
        entry(for: connection)?.waitingSince = nil
    }

    /// Counts a stream that starts on `connection`, or refuses it when the streams have
    /// their share: `connections - reservedForRequests` in all, and as much less of an
    /// address's share from one address, so that streams never keep `/metrics` or
    /// `/api/status` from being served, not even to the address that holds them.
    /// - Returns: `nil` when the stream may start (it is counted), else the 503 to answer.
    func refusalOfStream(on connection: LibraryConnection) -> HTTPResponse? {
        guard let entry = entry(for: connection), !entry.isLeaving else { return nil }
        let total = limits.connections - limits.reservedForRequests
        let perAddress = limits.connectionsPerAddress - limits.reservedForRequests
        if streams >= total || streamsByAddress[entry.address, default: 0] >= perAddress {
            let share = streams >= total ? "\(total) at once" : "\(perAddress) from one address"
            return .text(503, "Service Unavailable: forcescale-web is serving all the streams it takes (\(share)); try again in \(limits.retryAfterSeconds) s",
                         headers: [("Retry-After", "\(limits.retryAfterSeconds)")])
        }
        entry.isStream = true
        streams += 1
        streamsByAddress[entry.address, default: 0] += 1
        return nil
    }

    /// A request ended (answered, or its connection gone): a connection that stays waits
    /// for its next request's head, within the same deadline as its first.
    func requestCompleted(on connection: LibraryConnection) {
        guard let entry = entry(for: connection) else { return }
        if !entry.isLeaving { endStream(entry) }
        let since = MonotonicClock.now()
        entry.waitingSince = since
        armRequestTimer(forWaitingSince: since)
    }

    private func entry(for connection: LibraryConnection) -> Held? {
        guard let entry = held[connection.descriptor], entry.connection == connection.handle else { return nil }
        return entry
    }

    // MARK: Before the library has a connection

    /// Takes what the listening socket has, a bounded number per wake-up (the loop comes
    /// back for the rest).
    private func acceptConnections() {
        for _ in 0..<64 {
            let accepted: InetListener.Accepted?
            do {
                accepted = try listener.accept()
            } catch {
                log("accepting a connection on \(listener.address): \(error)")
                break
            }
            guard let accepted else { break }
            let since = MonotonicClock.now()
            admit(Held(accepted, since: since))
            armRequestTimer(forWaitingSince: since)
        }
    }

    private func admit(_ entry: Held) {
        let policy = AdmissionPolicy(connections: limits.connections, connectionsPerAddress: limits.connectionsPerAddress)
        switch policy.decide(held: heldCount, heldFromAddress: heldByAddress[entry.address] ?? 0) {
        case .admit:
            break
        case .admitInPlaceOfOldestWaiting(let sameAddress):
            let candidates = held.values.filter { !$0.isLeaving && $0.waitingSince != nil && (!sameAddress || $0.address == entry.address) }
            guard let oldest = candidates.min(by: { $0.waitingSince! < $1.waitingSince! }) else {
                let share = sameAddress ? "\(limits.connectionsPerAddress) from one address" : "\(limits.connections) at once"
                refuse(entry.descriptor, 503, "Service Unavailable",
                       "forcescale-web is serving all the connections it takes (\(share)); try again in \(limits.retryAfterSeconds) s",
                       extraHeaders: "Retry-After: \(limits.retryAfterSeconds)\r\n")
                return
            }
            letGo(oldest)
        }
        held[entry.descriptor] = entry
        heldCount += 1
        heldByAddress[entry.address, default: 0] += 1
        // What came with the connection is looked at now; later bytes each wake the loop
        // once (edge-triggered: the bytes stay in the socket for the library).
        guard inspectHead(entry) else { return }
        do {
            try loop.watch(entry.descriptor, edgeTriggered: true) { [unowned self] in
                guard let current = held[entry.descriptor], current === entry else { return }
                _ = inspectHead(entry)
            }
        } catch {
            log("watching a connection: \(error)")
            closeUnserved(entry)
        }
    }

    /// Looks at what the client sent so far. - Returns: whether it still waits for more.
    private func inspectHead(_ entry: Held) -> Bool {
        let count: Int
        do throws(Errno) {
            count = try entry.descriptor.peek(into: peekBuffer)
        } catch {
            // Nothing more yet: wait for it. Any other error ends the connection below.
            if error == .wouldBlock { return true }
            count = 0
        }
        guard count > 0 else {
            // Gone before sending a head.
            closeUnserved(entry)
            return false
        }
        switch RequestHeadScan.scan(UnsafeRawBufferPointer(rebasing: peekBuffer[..<count]), maximumBytes: limits.maximumHead, maximumLines: limits.maximumHeadLines) {
        case .incomplete:
            return true
        case .tooLarge:
            loop.unwatch(entry.descriptor)
            forget(entry)
            refuse(entry.descriptor, 431, "Request Header Fields Too Large",
                   "the request line and headers must fit in \(limits.maximumHead) bytes and \(limits.maximumHeadLines) lines")
            return false
        case .complete:
            giveToLibrary(entry)
            return false
        }
    }

    /// Gives the connection, its head in, to the library.
    private func giveToLibrary(_ entry: Held) {
        guard let handOver else { return closeUnserved(entry) }
        loop.unwatch(entry.descriptor)
        entry.isInLibrary = true
        if !handOver(entry.accepted) {
            forget(entry)
            log("the HTTP library refused a connection from \(entry.address)")
        }
        libraryMustRun()
    }

    /// Makes room for a new connection: one still in this class's hands is closed at once;
    /// one in the library's has its socket shut down, which the library sees as the
    /// client's leaving (and reports through `libraryClosed`).
    private func letGo(_ entry: Held) {
        if !entry.isInLibrary {
            closeUnserved(entry)
        } else {
            stopCounting(entry)
            try? entry.descriptor.shutdown(.both)
            libraryMustRun()
        }
    }

    /// Requests whose head (and body) did not come in time: 408 for those still here,
    /// a close for those in the library (which answer nothing between requests).
    private func endOverdueRequests() {
        let due = MonotonicClock.now() - Int64(limits.requestSeconds) * 1_000_000
        for entry in Array(held.values) where !entry.isLeaving {
            guard let since = entry.waitingSince, since <= due else { continue }
            if !entry.isInLibrary {
                loop.unwatch(entry.descriptor)
                forget(entry)
                refuse(entry.descriptor, 408, "Request Timeout",
                       "the request line and headers must come within \(limits.requestSeconds) s")
            } else {
                letGo(entry)
            }
        }
        armRequestTimer()
    }

    /// Sets the timer for the connection that has waited longest; from the timer's handler,
    /// which looks at every connection.
    private func armRequestTimer() {
        let oldest = held.values.lazy.filter { !$0.isLeaving }.compactMap(\.waitingSince).min()
        requestTimerDeadline = oldest.map { $0 + Int64(limits.requestSeconds) * 1_000_000 }
        requestTimer.arm(atMicroseconds: requestTimerDeadline)
    }

    /// Makes sure the timer fires by the deadline of a connection that starts waiting now:
    /// a system call only when the timer is not set for that or earlier (a connection served
    /// meanwhile leaves the timer early, which then finds nothing due and sets it again).
    private func armRequestTimer(forWaitingSince since: Int64) {
        let deadline = since + Int64(limits.requestSeconds) * 1_000_000
        if let armed = requestTimerDeadline, armed <= deadline { return }
        requestTimerDeadline = deadline
        requestTimer.arm(atMicroseconds: deadline)
    }

    /// Closes a connection the library never had.
    private func closeUnserved(_ entry: Held) {
        loop.unwatch(entry.descriptor)
        forget(entry)
        try? entry.descriptor.close()
    }

    private func stopCounting(_ entry: Held) {
        guard !entry.isLeaving else { return }
        entry.isLeaving = true
        heldCount -= 1
        Self.countDown(&heldByAddress, entry.address)
        endStream(entry)
    }

    private func endStream(_ entry: Held) {
        guard entry.isStream else { return }
        entry.isStream = false
        streams -= 1
        Self.countDown(&streamsByAddress, entry.address)
    }

    /// One fewer for `address`; an address that holds none leaves the table.
    private static func countDown(_ counts: inout [String: Int], _ address: String) {
        if let count = counts[address], count > 1 {
            counts[address] = count - 1
        } else {
            counts[address] = nil
        }
    }

    private func forget(_ entry: Held) {
        stopCounting(entry)
        if held[entry.descriptor] === entry { held[entry.descriptor] = nil }
    }

    /// Answers a connection the library never had, then closes it: what the client sent
    /// so far is read and dropped first, so that the close does not reset the connection
    /// and lose the answer.
    private func refuse(_ descriptor: FileDescriptor, _ status: Int, _ reason: String, _ message: String, extraHeaders: String = "") {
        let body = "\(reason): \(message)\n"
        let response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + extraHeaders + SecurityHeaders.lines + "Connection: close\r\n\r\n" + body
        _ = Array(response.utf8).withUnsafeBytes { try? descriptor.send($0) }
        try? descriptor.shutdown(.sending)
        for _ in 0..<16 {
            guard let count = try? descriptor.read(into: peekBuffer), count > 0 else { break }
        }
        try? descriptor.close()
    }
}
