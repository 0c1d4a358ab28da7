import CMicroHTTPDShim
import Glibc
import ScalePOSIX

/// A request as the application sees it, once its body has been read.
public struct HTTPRequest {
    public var method: String
    public var path: String
    /// A request header by name (case does not matter), `nil` when absent.
    public let header: (String) -> String?
    /// The body, at most `HTTPServer.Limits.maximumBody` bytes.
    public var body: [UInt8]
}

/// What the application answers.
public enum HTTPResponse {
    /// A whole response.
    case complete(status: UInt32, contentType: String, body: [UInt8], headers: [(String, String)] = [])
    /// A stream that the application feeds through the subscriber: `/events`.
    case stream(EventStreamSubscriber)

    /// A plain-text response, for errors.
    public static func text(_ status: UInt32, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8), headers: headers)
    }

    /// A JSON response.
    public static func json(_ status: UInt32, _ object: String) -> HTTPResponse {
        .complete(status: status, contentType: "application/json", body: Array((object + "\n").utf8))
    }
}

/// One `/events` client: its place in the stream and its suspended-or-not connection. The
/// server asks it for bytes; with none to give it suspends the connection, and the
/// application resumes it when an event or a keep-alive is due.
public final class EventStreamSubscriber {
    public var cursor: EventCursor
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
    public func wake() {
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

/// GNU libmicrohttpd on the caller's `EventLoop`: one thread, no thread per client.
///
/// The library runs in its epoll mode (`MHD_USE_EPOLL`) without a thread of its own: its
/// epoll descriptor is watched by the loop, a timerfd follows `MHD_get_timeout` (a
/// connection's timeout), and `MHD_run` does the work when either fires. Suspended
/// connections cost nothing until they are resumed, which the library signals through its
/// inter-thread channel, an eventfd in that same epoll set. So an idle server sleeps.
public final class HTTPServer {
    /// Bounds on what a client can make the server hold.
    public struct Limits: Sendable {
        /// Connections at once; more are refused by closing them.
        public var connections: UInt32 = 256
        /// Seconds a connection may make no progress: a client that sends its headers too
        /// slowly, or does not read what it is sent, is closed. (Suspended connections are
        /// exempt; keep-alives resume them.)
        public var timeoutSeconds: UInt32 = 10
        /// Bytes per connection for the request line, headers and the response's buffer:
        /// headers that do not fit get 431.
        public var connectionMemory = 8 * 1024
        /// Largest request body; a longer one gets 413.
        public var maximumBody = 1024
        /// Largest body read (and dropped) in order to answer 413; a longer one has the
        /// connection closed.
        public var maximumDiscardedBody = 64 * 1024
        /// The buffer of each stream's response, for HTTP/1.0 clients only: libmicrohttpd
        /// makes the chunks of an HTTP/1.1 stream in the connection's own memory
        /// (`connectionMemory`) and never touches this one, yet allocates it for every
        /// `/events` client. An event (about 300 bytes) that does not fit goes over two
        /// calls; 4 KiB cost 0.35 MiB with 100 clients (BENCHMARKS.md, Web).
        public var streamBlock = 512

        public init() {}
    }

    /// A request being received: its body so far.
    private final class PendingRequest {
        var body: [UInt8] = []
        /// Bytes of body received, kept or not.
        var received = 0
        var answered = false
    }

    public let limits: Limits
    private let loop: EventLoop
    private let listener: InetListener
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
    ///   - log: Gets the library's error messages.
    ///   - handler: Answers each request, on the loop's thread.
    /// - Throws: `HTTPServerError` when the library does not start.
    public init(
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
        } catch {
            throw .startFailed("a timer: \(error)")
        }
        epollDescriptor = FileDescriptor(rawValue: -1)
        let context = Unmanaged.passUnretained(self).toOpaque()
        var settings = CMicroHTTPD_Settings(
            listen_socket: listener.descriptor.rawValue, connection_limit: limits.connections,
            connection_timeout: limits.timeoutSeconds, connection_memory_limit: limits.connectionMemory,
            handler: accessTrampoline, handler_context: context, completed: completedTrampoline,
            completed_context: context, log: logTrampoline, log_context: context)
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
        } catch {
            loop.unwatch(epollDescriptor)
            CMicroHTTPD_stop(started)
            daemon = nil
            throw .startFailed("watching its descriptors: \(error)")
        }
        run()
    }

    deinit { stop(subscribers: []) }

    /// Does what the library can do now, then arms the timer for its next deadline.
    public func run() {
        guard let daemon else { return }
        _ = CMicroHTTPD_run(daemon)
        let milliseconds = CMicroHTTPD_timeout(daemon)
        timer.arm(atMicroseconds: milliseconds < 0 ? nil : MonotonicClock.now() + milliseconds * 1000)
    }

    /// Makes the loop run the library at once, after connections were resumed from outside
    /// its callbacks: in the epoll mode without a thread of its own, libmicrohttpd 0.9.75's
    /// resumption is only taken up by the next `MHD_run`, which its own epoll descriptor
    /// does not announce, so the timer is made due now (the loop runs it; no recursion).
    public func runSoon() {
        guard daemon != nil else { return }
        timer.arm(atMicroseconds: MonotonicClock.now())
    }

    /// Stops: every suspended stream is resumed (the library aborts on stopping with one
    /// suspended) and ended, the listening socket is taken back from the library untouched
    /// (`MHD_quiesce_daemon`: a socket from systemd must not be shut down), and the
    /// connections are closed. Calling it again does nothing.
    /// - Parameter subscribers: The streams open now; they must end (`isStopping`).
    public func stop(subscribers: [EventStreamSubscriber]) {
        guard let daemon else { return }
        for subscriber in subscribers { subscriber.wake() }
        _ = CMicroHTTPD_run(daemon)
        loop.unwatch(epollDescriptor)
        loop.unwatch(timer.descriptor)
        _ = CMicroHTTPD_quiesce(daemon)
        CMicroHTTPD_stop(daemon)
        self.daemon = nil
        listener.close()
    }

    // MARK: The library's callbacks

    fileprivate func access(
        _ connection: OpaquePointer, url: String, method: String, version: String, upload: UnsafePointer<CChar>?,
        uploadSize: UnsafeMutablePointer<Int>, state: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> Bool {
        let tooLarge = HTTPResponse.text(413, "Content Too Large: at most \(limits.maximumBody) bytes of body")
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
            return queue(.text(400, "Bad Request: an HTTP/1.1 request needs a Host header"), on: connection)
        }
        let request = HTTPRequest(method: method, path: url, header: { [unowned self] in header(connection, $0) }, body: pending.body)
        return queue(handler(request), on: connection)
    }

    fileprivate func completed(_ state: UnsafeMutablePointer<UnsafeMutableRawPointer?>) {
        if let raw = state.pointee {
            Unmanaged<PendingRequest>.fromOpaque(raw).release()
            state.pointee = nil
        }
    }

    fileprivate func logMessage(_ message: String) { log(message) }

    private func header(_ connection: OpaquePointer, _ name: String) -> String? {
        CMicroHTTPD_header(connection, name).map { String(cString: $0) }
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> Bool {
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
        }
        guard let made else { return false }
        defer { CMicroHTTPD_destroy(made) }
        // Nothing here is for other origins' scripts to read or frame.
        headers += [("X-Content-Type-Options", "nosniff")]
        for (name, value) in headers { _ = CMicroHTTPD_add_header(made, name, value) }
        return CMicroHTTPD_queue(connection, status, made) == 1
    }
}

/// Why the server did not start.
public enum HTTPServerError: Error, Sendable, CustomStringConvertible {
    case startFailed(String)
    public var description: String {
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

private let completedTrampoline: CMicroHTTPD_Completed = { context, _, state, _ in
    guard let context, let state else { return }
    Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().completed(state)
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

