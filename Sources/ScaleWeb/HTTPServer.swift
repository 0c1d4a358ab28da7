import CMicroHTTPDShim
import Glibc
import ScalePOSIX
import ScaleProtocol

/// A request as the application sees it, once its body has been read.
struct HTTPRequest {
    var method: String
    var path: String
    /// A request header by name (case does not matter), `nil` when absent.
    let header: (String) -> String?
    /// An argument of the URL's query by name (`device` of `/api/tare?device=event5`),
    /// decoded; `nil` when absent.
    let queryArgument: (String) -> String?
    /// The body, at most `HTTPServer.Limits.maximumBody` bytes.
    var body: [UInt8]
}

/// What the application answers.
enum HTTPResponse {
    /// A whole response.
    case complete(status: UInt32, contentType: String, body: [UInt8], headers: [(String, String)] = [])
    /// A stream that the application feeds through the subscriber: `/events`.
    case stream(EventStreamSubscriber)
    /// A body made a piece at a time as the client takes it (chunked), for one too large
    /// to hold whole: a session's export.
    case pieces(contentType: String, body: StreamedBody, headers: [(String, String)] = [])

    /// A plain-text response, for errors.
    static func text(_ status: UInt32, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8), headers: headers)
    }

    /// A JSON response.
    static func json(_ status: UInt32, _ object: String, headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, contentType: "application/json", body: Array((object + "\n").utf8), headers: headers)
    }

    /// An error of `/api/`, in the one shape every such error has (docs/web.md, "Errors"):
    /// `{"error":"…","status":N}`, the message saying what is wrong and what to do, and
    /// `"log":"missing"` when the force log is not there, so that a client reads any failure
    /// one way.
    static func apiError(_ status: UInt32, _ message: String, logMissing: Bool = false, headers: [(String, String)] = []) -> HTTPResponse {
        var json = JSONLineWriter()
        json.add("error", string: message)
        json.add("status", integer: Int(status))
        if logMissing { json.add("log", string: "missing") }
        return .json(status, json.object, headers: headers)
    }

    /// An error answered before the application sees the request: JSON in `/api/`'s shape
    /// for a path under `/api/`, plain text elsewhere.
    static func error(_ status: UInt32, _ message: String, path: String, headers: [(String, String)] = []) -> HTTPResponse {
        path.hasPrefix("/api/") ? apiError(status, message, headers: headers) : text(status, message, headers: headers)
    }
}

/// One `/events` client: its place in the stream and its suspended-or-not connection. The
/// server asks it for bytes; with none to give it suspends the connection, and the
/// application resumes it when an event or a keep-alive is due.
final class EventStreamSubscriber {
    var cursor: EventCursor
    fileprivate var connection: OpaquePointer?
    fileprivate(set) var isSuspended = false
    /// Set when the connection is gone; the subscriber is then dropped.
    fileprivate(set) var isFinished = false
    /// Where it reads events from.
    let ring: () -> EventRing
    /// Whether the server is stopping: the stream then ends.
    let isStopping: () -> Bool

    init(cursor: EventCursor, ring: @escaping () -> EventRing, isStopping: @escaping () -> Bool) {
        self.cursor = cursor
        self.ring = ring
        self.isStopping = isStopping
    }

    /// Wakes the connection if it waits: the library then asks for bytes again at its next
    /// run. Resuming a connection that is not suspended is undefined in libmicrohttpd, so
    /// this is the one place that does it, and only for a suspended one.
    func wake() {
        guard isSuspended, !isFinished, let connection else { return }
        isSuspended = false
        CMicroHTTPD_resume(connection)
    }

    /// The library's content reader.
    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if isStopping() { return Int(CMicroHTTPD_END_OF_STREAM) }
        let written = cursor.fill(buffer, from: ring())
        if written > 0 { return written }
        // Nothing to send: park the connection (no polling) until wake().
        if let connection, !isSuspended {
            isSuspended = true
            CMicroHTTPD_suspend(connection)
        }
        return 0
    }
}

/// A response body made while it is sent: the library asks for the next bytes whenever the
/// client has taken the last ones, so that only a piece is ever held in memory.
final class StreamedBody {
    /// Fills the buffer with the next bytes. - Returns: how many; 0 at the end, -1 when
    /// the body cannot be finished (the connection is then closed, the response cut short).
    private let produce: (UnsafeMutableRawBufferPointer) -> Int
    /// Called once when the library is done with the body, sent whole or not.
    private let finish: () -> Void

    init(produce: @escaping (UnsafeMutableRawBufferPointer) -> Int, finish: @escaping () -> Void) {
        self.produce = produce
        self.finish = finish
    }

    fileprivate func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        switch produce(buffer) {
        case 0: Int(CMicroHTTPD_END_OF_STREAM)
        case ..<0: Int(CMicroHTTPD_END_WITH_ERROR)
        case let count: count
        }
    }

    fileprivate func released() { finish() }
}

/// GNU libmicrohttpd on the caller's `EventLoop`: one thread, no thread per client.
///
/// The library runs in its epoll mode (`MHD_USE_EPOLL`) without a thread of its own: its
/// epoll descriptor is watched by the loop, a timerfd follows `MHD_get_timeout` (a
/// connection's timeout), and `MHD_run` does the work when either fires. Suspended
/// connections cost nothing until they are resumed, which the library signals through its
/// inter-thread channel, an eventfd in that same epoll set. So an idle server sleeps.
///
/// The library never sees the listening socket: this class accepts, counts each
/// connection against `Limits` (all together and per peer address), and looks at what the
/// client sends without taking it (`MSG_PEEK`) until the request head is whole; only then
/// does the library get the connection (`MHD_add_connection`), with every byte still in the
/// socket. A head too long gets 431, one too slow 408, a connection past the limits 503 at
/// once (or takes the place of one that has waited longest for its head), all answered here.
package final class HTTPServer {
    /// Bounds on what a client can make the server hold.
    package struct Limits: Sendable {
        /// Connections at once. Past it, a new connection takes the place of the one that has
        /// waited longest for its request head, or, when every connection is being served,
        /// gets 503 with `Retry-After` at once.
        var connections = 256
        /// Connections at once from one address (its share of `connections`); past it, the
        /// same as past `connections`, among that address's own connections.
        var connectionsPerAddress = 192
        /// Connections kept for requests other than `/events`, in all and in each address's
        /// share: a stream past `connections - reservedForRequests`, or past
        /// `connectionsPerAddress - reservedForRequests` from one address, gets 503, so that
        /// streams never keep `/metrics` or `/api/status` from being served, not even to
        /// the address that holds them.
        var reservedForRequests = 16
        /// Seconds a connection has for each request's head and body, from its first byte
        /// (or from the end of the previous response), however steadily it trickles in:
        /// past it, the connection is answered 408 (or, after a response, closed).
        var requestSeconds = 10
        /// Seconds a connection may make no progress: a client that does not read what it
        /// is sent is closed. (Suspended connections are exempt; keep-alives resume them.)
        var timeoutSeconds: UInt32 = 10
        /// The most bytes of a request head (request line, headers, the empty line); a
        /// longer one gets 431.
        var maximumHead = 7680
        /// The most lines of a request head (request line and headers); more get 431.
        var maximumHeadLines = 100
        /// Seconds in the `Retry-After` of a 503.
        var retryAfterSeconds = 5
        /// Bytes per connection for the request head, the library's record of each header
        /// and the response's head and buffer. Twice `maximumHead`: libmicrohttpd 0.9.75
        /// closes a connection without an answer when a head fits in this memory but its
        /// records or the response's head do not, so every head within the limits above
        /// must leave room for both (100 records of about 64 bytes and a response head
        /// of under 1 KiB).
        var connectionMemory = 16 * 1024
        /// Largest request body; a longer one gets 413.
        var maximumBody = 1024
        /// Largest body read (and dropped) in order to answer 413; a longer one has the
        /// connection closed.
        var maximumDiscardedBody = 64 * 1024
        /// The buffer of each stream's response, for HTTP/1.0 clients only: libmicrohttpd
        /// makes the chunks of an HTTP/1.1 stream in the connection's own memory
        /// (`connectionMemory`) and never touches this one, yet allocates it for every
        /// `/events` client. An event (about 300 bytes) that does not fit goes over two
        /// calls; 4 KiB would take 0.35 MiB for 100 clients.
        var streamBlock = 512
        /// The same buffer for a body sent in pieces (an export), for HTTP/1.0 clients.
        var pieceBlock = 4096

        package init() {}
    }

    /// One connection, from its acceptance to its close.
    private final class Admitted {
        let descriptor: Int32
        /// The peer's address without its port, for its share of the connections.
        let address: String
        let peer: sockaddr_storage
        let peerLength: socklen_t
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

        init(descriptor: Int32, address: String, peer: sockaddr_storage, peerLength: socklen_t, since: Int64) {
            self.descriptor = descriptor
            self.address = address
            self.peer = peer
            self.peerLength = peerLength
            waitingSince = since
        }
    }

    /// A request being received: its body so far.
    private final class PendingRequest {
        var body: [UInt8] = []
        /// Bytes of body received, kept or not.
        var received = 0
        var answered = false
    }

    let limits: Limits
    private let loop: EventLoop
    private let listener: InetListener
    private let timer: DeadlineTimer
    /// Fires when the connection that has waited longest for its request is due.
    private let requestTimer: DeadlineTimer
    /// What `requestTimer` is set for (`nil`: not set).
    private var requestTimerDeadline: Int64?
    /// Every connection held, by socket.
    private var admitted: [Int32: Admitted] = [:]
    /// Connections held by peer address (those being closed left out).
    private var heldByAddress: [String: Int] = [:]
    /// Connections held, those being closed left out.
    private var held = 0
    private var streams = 0
    private var streamsByAddress: [String: Int] = [:]
    /// Where a request head is looked at (`maximumHead + 1` bytes).
    private let peekBuffer: UnsafeMutableRawBufferPointer
    private var daemon: OpaquePointer?
    private var epollDescriptor: FileDescriptor
    private let handler: (HTTPRequest) -> HTTPResponse
    private let log: (String) -> Void

    /// Starts serving on `listener`.
    /// - Parameters:
    ///   - listener: A listening TCP socket (ours or systemd's); it stays open until `stop()`
    ///     and is never shut down, only closed.
    ///   - loop: The loop to run on.
    ///   - limits: The bounds.
    ///   - log: Gets the library's error messages, but for a client that went away.
    ///   - handler: Answers each request, on the loop's thread.
    /// - Throws: `HTTPServerError` when the library does not start.
    init(
        listener: InetListener, loop: EventLoop, limits: Limits = Limits(), log: @escaping (String) -> Void,
        handler: @escaping (HTTPRequest) -> HTTPResponse
    ) throws(HTTPServerError) {
        self.listener = listener
        self.loop = loop
        self.limits = limits
        self.log = log
        self.handler = handler
        do {
            timer = try DeadlineTimer()
            requestTimer = try DeadlineTimer()
        } catch {
            throw .startFailed("a timer: \(error)")
        }
        peekBuffer = .allocate(byteCount: limits.maximumHead + 1, alignment: 1)
        epollDescriptor = FileDescriptor(rawValue: -1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        // The library's own limit only bounds what it holds while connections that were let
        // go are still being closed; admission is this class's.
        var settings = CMicroHTTPD_Settings(
            connection_limit: UInt32(limits.connections * 2),
            connection_timeout: limits.timeoutSeconds, connection_memory_limit: limits.connectionMemory,
            handler: accessTrampoline, handler_context: context, completed: completedTrampoline,
            completed_context: context, log: logTrampoline, log_context: context,
            notice: noticeTrampoline, notice_context: context)
        guard let started = CMicroHTTPD_start(&settings) else {
            throw .startFailed("libmicrohttpd did not start on \(listener.address) (see the message above)")
        }
        daemon = started
        let epoll = CMicroHTTPD_epoll_fd(started)
        guard epoll >= 0 else {
            CMicroHTTPD_stop(started)
            daemon = nil
            throw .startFailed("libmicrohttpd has no epoll descriptor")
        }
        epollDescriptor = FileDescriptor(rawValue: epoll)
        do {
            try loop.watch(epollDescriptor) { [unowned self] in run() }
            try loop.watch(timer.descriptor) { [unowned self] in
                timer.acknowledge()
                run()
            }
            try loop.watch(requestTimer.descriptor) { [unowned self] in
                requestTimer.acknowledge()
                endOverdueRequests()
            }
            try loop.watch(listener.descriptor) { [unowned self] in acceptConnections() }
        } catch {
            loop.unwatch(epollDescriptor)
            loop.unwatch(timer.descriptor)
            loop.unwatch(requestTimer.descriptor)
            CMicroHTTPD_stop(started)
            daemon = nil
            throw .startFailed("watching its descriptors: \(error)")
        }
        run()
    }

    deinit {
        stop(subscribers: [])
        peekBuffer.deallocate()
    }

    /// Does what the library can do now, then arms the timer for its next deadline.
    func run() {
        guard let daemon else { return }
        _ = CMicroHTTPD_run(daemon)
        let milliseconds = CMicroHTTPD_timeout(daemon)
        timer.arm(atMicroseconds: milliseconds < 0 ? nil : MonotonicClock.now() + milliseconds * 1000)
    }

    /// Makes the loop run the library at once, after connections were resumed from outside
    /// its callbacks: in the epoll mode without a thread of its own, libmicrohttpd 0.9.75's
    /// resumption is only taken up by the next `MHD_run`, which its own epoll descriptor
    /// does not announce, so the timer is made due now (the loop runs it; no recursion).
    func runSoon() {
        guard daemon != nil else { return }
        timer.arm(atMicroseconds: MonotonicClock.now())
    }

    /// Stops: every suspended stream is resumed (the library aborts on stopping with one
    /// suspended) and ended, and the connections are closed. The listening socket, which
    /// the library never had, is only closed (a socket from systemd must not be shut
    /// down). Calling it again does nothing.
    /// - Parameter subscribers: The streams open now; they must end (`isStopping`).
    func stop(subscribers: [EventStreamSubscriber]) {
        guard let daemon else { return }
        loop.unwatch(listener.descriptor)
        for subscriber in subscribers { subscriber.wake() }
        _ = CMicroHTTPD_run(daemon)
        loop.unwatch(epollDescriptor)
        loop.unwatch(timer.descriptor)
        loop.unwatch(requestTimer.descriptor)
        for entry in admitted.values where !entry.isInLibrary { closeUnserved(entry) }
        CMicroHTTPD_stop(daemon)
        self.daemon = nil
        listener.close()
    }

    // MARK: Admission: before the library sees a connection

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
            admit(Admitted(descriptor: accepted.descriptor.rawValue, address: accepted.host, peer: accepted.peer, peerLength: accepted.peerLength, since: since))
            armRequestTimer(forWaitingSince: since)
        }
    }

    private func admit(_ entry: Admitted) {
        let policy = AdmissionPolicy(connections: limits.connections, connectionsPerAddress: limits.connectionsPerAddress)
        switch policy.decide(held: held, heldFromAddress: heldByAddress[entry.address] ?? 0) {
        case .admit:
            break
        case .admitInPlaceOfOldestWaiting(let sameAddress):
            let candidates = admitted.values.filter { !$0.isLeaving && $0.waitingSince != nil && (!sameAddress || $0.address == entry.address) }
            guard let oldest = candidates.min(by: { $0.waitingSince! < $1.waitingSince! }) else {
                let share = sameAddress ? "\(limits.connectionsPerAddress) from one address" : "\(limits.connections) at once"
                refuse(entry.descriptor, 503, "Service Unavailable",
                       "forcescale-web is serving all the connections it takes (\(share)); try again in \(limits.retryAfterSeconds) s",
                       extraHeaders: "Retry-After: \(limits.retryAfterSeconds)\r\n")
                return
            }
            letGo(oldest)
        }
        admitted[entry.descriptor] = entry
        held += 1
        heldByAddress[entry.address, default: 0] += 1
        // What came with the connection is looked at now; later bytes each wake the loop
        // once (edge-triggered: the bytes stay in the socket for the library).
        guard inspectHead(entry) else { return }
        do {
            try loop.watch(FileDescriptor(rawValue: entry.descriptor), edgeTriggered: true) { [unowned self] in
                guard let current = admitted[entry.descriptor], current === entry else { return }
                _ = inspectHead(entry)
            }
        } catch {
            log("watching a connection: \(error)")
            closeUnserved(entry)
        }
    }

    /// Looks at what the client sent so far. - Returns: whether it still waits for more.
    private func inspectHead(_ entry: Admitted) -> Bool {
        let count: Int
        do throws(Errno) {
            count = try Errno.retrying { recv(entry.descriptor, peekBuffer.baseAddress, peekBuffer.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) }
        } catch {
            // Nothing more yet: wait for it. Any other error ends the connection below.
            if error.rawValue == EAGAIN { return true }
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
            forget(entry)
            refuse(entry.descriptor, 431, "Request Header Fields Too Large",
                   "the request line and headers must fit in \(limits.maximumHead) bytes and \(limits.maximumHeadLines) lines")
            return false
        case .complete:
            handOver(entry)
            return false
        }
    }

    /// Gives the connection, its head in, to the library.
    private func handOver(_ entry: Admitted) {
        guard let daemon else { return closeUnserved(entry) }
        loop.unwatch(FileDescriptor(rawValue: entry.descriptor))
        entry.isInLibrary = true
        var peer = entry.peer
        // The library takes the socket, and closes it even when it fails.
        let taken = withUnsafePointer(to: &peer) { CMicroHTTPD_add_connection(daemon, entry.descriptor, $0, UInt32(entry.peerLength)) }
        if taken != 1 {
            forget(entry)
            log("the HTTP library refused a connection from \(entry.address)")
        }
        runSoon()
    }

    /// Makes room for a new connection: one still in this class's hands is closed at once;
    /// one in the library's has its socket shut down, which the library sees as the
    /// client's leaving (and reports through `closed`).
    private func letGo(_ entry: Admitted) {
        if !entry.isInLibrary {
            closeUnserved(entry)
        } else {
            stopCounting(entry)
            shutdown(entry.descriptor, Int32(SHUT_RDWR))
            runSoon()
        }
    }

    /// Requests whose head (and body) did not come in time: 408 for those still here,
    /// a close for those in the library (which answer nothing between requests).
    private func endOverdueRequests() {
        let due = MonotonicClock.now() - Int64(limits.requestSeconds) * 1_000_000
        for entry in Array(admitted.values) where !entry.isLeaving {
            guard let since = entry.waitingSince, since <= due else { continue }
            if !entry.isInLibrary {
                loop.unwatch(FileDescriptor(rawValue: entry.descriptor))
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
        let oldest = admitted.values.lazy.filter { !$0.isLeaving }.compactMap(\.waitingSince).min()
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
    private func closeUnserved(_ entry: Admitted) {
        loop.unwatch(FileDescriptor(rawValue: entry.descriptor))
        forget(entry)
        close(entry.descriptor)
    }

    private func stopCounting(_ entry: Admitted) {
        guard !entry.isLeaving else { return }
        entry.isLeaving = true
        held -= 1
        Self.countDown(&heldByAddress, entry.address)
        endStream(entry)
    }

    private func endStream(_ entry: Admitted) {
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

    private func forget(_ entry: Admitted) {
        stopCounting(entry)
        if admitted[entry.descriptor] === entry { admitted[entry.descriptor] = nil }
    }

    /// Answers a connection the library never had, then closes it: what the client sent
    /// so far is read and dropped first, so that the close does not reset the connection
    /// and lose the answer.
    private func refuse(_ descriptor: Int32, _ status: Int, _ reason: String, _ message: String, extraHeaders: String = "") {
        let body = "\(reason): \(message)\n"
        let response = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + extraHeaders + "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n" + body
        var bytes = Array(response.utf8)
        _ = bytes.withUnsafeMutableBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        shutdown(descriptor, Int32(SHUT_WR))
        for _ in 0..<16 {
            guard recv(descriptor, peekBuffer.baseAddress, peekBuffer.count, Int32(MSG_DONTWAIT)) > 0 else { break }
        }
        close(descriptor)
    }

    // MARK: Connections in the library

    fileprivate func noticed(_ connection: OpaquePointer, started: Bool) {
        let descriptor = CMicroHTTPD_connection_fd(connection)
        guard let entry = admitted[descriptor] else { return }
        if started {
            entry.connection = connection
        } else if entry.connection == connection {
            forget(entry)
        }
    }

    private func entry(for connection: OpaquePointer) -> Admitted? {
        guard let entry = admitted[CMicroHTTPD_connection_fd(connection)], entry.connection == connection else { return nil }
        return entry
    }

    // MARK: The library's callbacks

    fileprivate func access(
        _ connection: OpaquePointer, url: String, method: String, version: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        let tooLarge = HTTPResponse.error(413, "Content Too Large: at most \(limits.maximumBody) bytes of body", path: url)
        guard let raw = state.pointee else {
            // The headers are in: the request starts. A body announced far too big is refused
            // now, before any of it is read (the library closes the connection after the
            // answer); one that is merely too big is read and dropped first, so that the 413
            // reaches a client that sends its body without waiting (a close with unread data
            // would reset the connection and lose the answer).
            let pending = PendingRequest()
            state.pointee = Unmanaged.passRetained(pending).toOpaque()
            if let length = header(connection, "Content-Length").flatMap({ Int($0) }), length > limits.maximumDiscardedBody {
                pending.answered = true
                return queue(tooLarge, on: connection)
            }
            return true
        }
        let pending = Unmanaged<PendingRequest>.fromOpaque(raw).takeUnretainedValue()
        if uploadSize.pointee > 0 {
            let count = uploadSize.pointee
            uploadSize.pointee = 0
            pending.received += count
            // A chunked body that grows far past the limit: the connection is closed.
            guard pending.received <= limits.maximumDiscardedBody else { return false }
            if pending.received <= limits.maximumBody, let upload {
                upload.withMemoryRebound(to: UInt8.self, capacity: count) { pending.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count)) }
            } else {
                pending.body = []
            }
            return true
        }
        guard !pending.answered else { return true }
        pending.answered = true
        if pending.received > limits.maximumBody { return queue(tooLarge, on: connection) }
        // HTTP/1.1 requires Host (RFC 9112, 3.2), which libmicrohttpd 0.9.75 does not check;
        // the tare endpoint's origin check relies on it.
        if version == "HTTP/1.1", header(connection, "Host") == nil {
            return queue(.error(400, "Bad Request: an HTTP/1.1 request needs a Host header", path: url), on: connection)
        }
        let request = HTTPRequest(method: method, path: url, header: { [unowned self] in header(connection, $0) },
            queryArgument: { CMicroHTTPD_query_argument(connection, $0).map { String(cString: $0) } }, body: pending.body)
        return queue(handler(request), on: connection)
    }

    fileprivate func completed(_ connection: OpaquePointer?, _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        // The connection may carry another request: it waits for that one's head now.
        if let connection, let entry = entry(for: connection) {
            if !entry.isLeaving { endStream(entry) }
            let since = MonotonicClock.now()
            entry.waitingSince = since
            armRequestTimer(forWaitingSince: since)
        }
        if let raw = state.pointee {
            Unmanaged<PendingRequest>.fromOpaque(raw).release()
            state.pointee = nil
        }
    }

    fileprivate func logMessage(_ message: String) {
        guard !Self.saysTheClientLeft(message) else { return }
        log(message)
    }

    /// Whether a message of libmicrohttpd's says only that the client closed its connection
    /// while a response was going out: how every `/events` stream ends when a page is
    /// closed, so nothing to warn about.
    static func saysTheClientLeft(_ message: String) -> Bool {
        // libmicrohttpd 0.9.75's words for EPIPE/ENOTCONN and ECONNRESET, which it puts at the
        // end of "Failed to send ... Error: ...".
        message.hasSuffix("Error: The socket is no longer available for sending")
            || message.hasSuffix("Error: The connection was forcibly closed by remote peer")
    }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        CMicroHTTPD_header(connection, name).map { String(cString: $0) }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> Bool {
        let entry = entry(for: connection)
        entry?.waitingSince = nil
        var response = response
        if case .stream = response, let entry, !entry.isLeaving {
            let total = limits.connections - limits.reservedForRequests
            let perAddress = limits.connectionsPerAddress - limits.reservedForRequests
            if streams >= total || streamsByAddress[entry.address, default: 0] >= perAddress {
                let share = streams >= total ? "\(total) at once" : "\(perAddress) from one address"
                response = .text(503, "Service Unavailable: forcescale-web is serving all the streams it takes (\(share)); try again in \(limits.retryAfterSeconds) s",
                                 headers: [("Retry-After", "\(limits.retryAfterSeconds)")])
            } else {
                entry.isStream = true
                streams += 1
                streamsByAddress[entry.address, default: 0] += 1
            }
        }
        let made: OpaquePointer?
        var headers: [(String, String)]
        var status: UInt32
        switch response {
        case .complete(let code, let contentType, let body, let extra):
            made = body.withUnsafeBytes { CMicroHTTPD_response_copying($0.baseAddress, $0.count) }
            headers = [("Content-Type", contentType)] + extra
            status = code
        case .stream(let subscriber):
            subscriber.connection = connection
            made = CMicroHTTPD_response_streaming(
                limits.streamBlock, streamReader, Unmanaged.passRetained(subscriber).toOpaque(), streamRelease)
            headers = [
                ("Content-Type", "text/event-stream; charset=utf-8"),
                // No cache and no proxy buffering may hold events back.
                ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no"),
            ]
            status = 200
        case .pieces(let contentType, let body, let extra):
            made = CMicroHTTPD_response_streaming(
                limits.pieceBlock, piecesReader, Unmanaged.passRetained(body).toOpaque(), piecesRelease)
            headers = [("Content-Type", contentType)] + extra
            status = 200
        }
        guard let made else {
            if case .pieces(_, let body, _) = response { body.released() }
            return false
        }
        defer { CMicroHTTPD_destroy(made) }
        // Nothing here is for other origins' scripts to read or frame.
        headers += [("X-Content-Type-Options", "nosniff")]
        for (name, value) in headers { _ = CMicroHTTPD_add_header(made, name, value) }
        return CMicroHTTPD_queue(connection, status, made) == 1
    }
}

/// Why the server did not start.
enum HTTPServerError: Error, Sendable, CustomStringConvertible {
    case startFailed(String)
    var description: String {
        switch self {
        case .startFailed(let what): return "cannot start the HTTP server: \(what)"
        }
    }
}

// MARK: - C trampolines (no captures: the context pointer carries the Swift object)

private let accessTrampoline: CMicroHTTPD_AccessHandler = { context, connection, url, method, version, upload, uploadSize, state in
    guard let context, let connection, let uploadSize, let state else { return 0 }
    let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
    return server.access(
        connection, url: url.map { String(cString: $0) } ?? "/", method: method.map { String(cString: $0) } ?? "",
        version: version.map { String(cString: $0) } ?? "", upload: upload, uploadSize: uploadSize, state: state) ? 1 : 0
}

private let completedTrampoline: CMicroHTTPD_Completed = { context, connection, state, _ in
    guard let context, let state else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(connection, state)
}

private let noticeTrampoline: CMicroHTTPD_ConnectionNotice = { context, connection, started in
    guard let context, let connection else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().noticed(connection, started: started != 0)
}

private let logTrampoline: CMicroHTTPD_Log = { context, message in
    guard let context, let message else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().logMessage(String(cString: message))
}

private let streamReader: CMicroHTTPD_Reader = { context, _, buffer, max in
    guard let context, let buffer else { return Int(CMicroHTTPD_END_WITH_ERROR) }
    let subscriber = Unmanaged<EventStreamSubscriber>.fromOpaque(context).takeUnretainedValue()
    return subscriber.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

private let streamRelease: CMicroHTTPD_Free = { context in
    guard let context else { return }
    let subscriber = Unmanaged<EventStreamSubscriber>.fromOpaque(context).takeRetainedValue()
    subscriber.isFinished = true
    subscriber.connection = nil
}

private let piecesReader: CMicroHTTPD_Reader = { context, _, buffer, max in
    guard let context, let buffer else { return Int(CMicroHTTPD_END_WITH_ERROR) }
    return Unmanaged<StreamedBody>.fromOpaque(context).takeUnretainedValue().read(into: UnsafeMutableRawBufferPointer(start: buffer, count: max))
}

private let piecesRelease: CMicroHTTPD_Free = { context in
    guard let context else { return }
    Unmanaged<StreamedBody>.fromOpaque(context).takeRetainedValue().released()
}
