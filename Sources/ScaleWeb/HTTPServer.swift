import CMicroHTTPDShim
import ScalePOSIX

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
/// The library never sees the listening socket: `ConnectionAdmission` accepts, counts each
/// connection against `Limits` and waits for its request head, which is what the library
/// cannot do under hostile load (`ConnectionAdmission` says what was tried); only then does the
/// library get the connection (`MHD_add_connection`), with every byte still in the socket.
/// The library's own options do the rest: a client that takes nothing of its response for
/// `timeoutSeconds` is closed (`MHD_OPTION_CONNECTION_TIMEOUT`), and each connection has
/// `connectionMemory` (`MHD_OPTION_CONNECTION_MEMORY_LIMIT`).
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

    /// A request being received: its body so far.
    private final class PendingRequest {
        var body: [UInt8] = []
        /// Bytes of body received, kept or not.
        var received = 0
        var answered = false
    }

    let limits: Limits
    private let loop: EventLoop
    private let admission: ConnectionAdmission
    private let timer: DeadlineTimer
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
        self.loop = loop
        self.limits = limits
        self.log = log
        self.handler = handler
        do {
            timer = try DeadlineTimer()
            admission = try ConnectionAdmission(listener: listener, loop: loop, limits: limits, log: log)
        } catch {
            throw .startFailed("a timer: \(error)")
        }
        epollDescriptor = FileDescriptor(rawValue: -1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        // The library's own limit only bounds what it holds while connections that were let
        // go are still being closed; admission is ConnectionAdmission's.
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
            try admission.start(handOver: { [unowned self] in handOver($0) }, libraryMustRun: { [unowned self] in runSoon() })
        } catch {
            loop.unwatch(epollDescriptor)
            loop.unwatch(timer.descriptor)
            CMicroHTTPD_stop(started)
            daemon = nil
            throw .startFailed("watching its descriptors: \(error)")
        }
        run()
    }

    deinit { stop(subscribers: []) }

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

    /// Stops: no connection is taken any more, every suspended stream is resumed (the
    /// library aborts on stopping with one suspended) and ended, and the connections are
    /// closed. The listening socket, which the library never had, is only closed (a socket
    /// from systemd must not be shut down). Calling it again does nothing.
    /// - Parameter subscribers: The streams open now; they must end (`isStopping`).
    func stop(subscribers: [EventStreamSubscriber]) {
        guard let daemon else { return }
        admission.stop()
        for subscriber in subscribers { subscriber.wake() }
        _ = CMicroHTTPD_run(daemon)
        loop.unwatch(epollDescriptor)
        loop.unwatch(timer.descriptor)
        CMicroHTTPD_stop(daemon)
        self.daemon = nil
    }

    /// Gives the library a connection that `admission` took, its request head in. The
    /// library takes the socket, and closes it even when it refuses it.
    private func handOver(_ accepted: InetListener.Accepted) -> Bool {
        guard let daemon else {
            try? accepted.descriptor.close()
            return false
        }
        var peer = accepted.peer
        return withUnsafePointer(to: &peer) {
            CMicroHTTPD_add_connection(daemon, accepted.descriptor.rawValue, $0, UInt32(accepted.peerLength))
        } == 1
    }

    // MARK: The library's callbacks

    fileprivate func noticed(_ connection: OpaquePointer, started: Bool) {
        let connection = LibraryConnection(connection)
        if started {
            admission.libraryStarted(connection)
        } else {
            admission.libraryClosed(connection)
        }
    }

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
        let request = HTTPRequest(method: method, path: url, peer: admission.peer(of: LibraryConnection(connection)) ?? "?", header: { [unowned self] in header(connection, $0) },
            queryArgument: { CMicroHTTPD_query_argument(connection, $0).map { String(cString: $0) } }, body: pending.body)
        return queue(handler(request), on: connection)
    }

    fileprivate func completed(_ connection: OpaquePointer?, _ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        // The connection may carry another request: it waits for that one's head now.
        if let connection { admission.requestCompleted(on: LibraryConnection(connection)) }
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
        let library = LibraryConnection(connection)
        admission.requestArrived(on: library)
        var response = response
        if case .stream = response, let refusal = admission.refusalOfStream(on: library) { response = refusal }
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
        headers += SecurityHeaders.all
        for (name, value) in headers { _ = CMicroHTTPD_add_header(made, name, value) }
        return CMicroHTTPD_queue(connection, status, made) == 1
    }
}

extension LibraryConnection {
    /// The connection `handle` and the socket the library serves it on.
    init(_ handle: OpaquePointer) {
        self.init(handle: handle, descriptor: FileDescriptor(rawValue: CMicroHTTPD_connection_fd(handle)))
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
