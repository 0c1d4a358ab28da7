import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// The typed client of forcescaled (what libgps is to gpsd): requests return ScaleCore's
/// typed messages (`StatusMessage`, `TareMessage`…), the stream of readings comes as
/// `StreamEvent`s, and a lost daemon can be found again by itself, with back-off.
///
/// Two ways to use it, on one thread:
/// - Blocking, from a command-line tool: `connect()`, `watch()`, then `nextEvent(timeout:)`
///   in a loop; requests (`status()`, `tare()`…) in between.
/// - From an event loop: watch `descriptor` for readability, arm a timer for
///   `reconnectDeadline`, and call `step()` when either fires; `attach(to:)` does that on a
///   ScalePOSIX `EventLoop`. Requests still block until their reply (the daemon answers at
///   once, except CALIBRATE, which waits for a stable reading).
///
/// Built on `DaemonClient`, which it uses for one connection at a time.
public final class ForcescaleClient {
    /// Where to connect and what to do when the connection is lost.
    public struct Options: Sendable {
        /// The daemon's socket.
        public var socketPath: String
        /// Seconds to wait for the greeting when connecting, and for each reply.
        public var timeout: Double
        /// Try again after losing the daemon, or `nil` to report the loss as an error.
        public var reconnect: ReconnectPolicy?

        /// - Parameters:
        ///   - socketPath: The daemon's socket; by default where forcescaled listens unless
        ///     told otherwise (`DaemonClient.defaultSocketPath()`).
        ///   - timeout: Seconds for the greeting and each reply.
        ///   - reconnect: A back-off policy, or `nil` (the default) for none.
        public init(socketPath: String = DaemonClient.defaultSocketPath(), timeout: Double = 5, reconnect: ReconnectPolicy? = nil) {
            self.socketPath = socketPath
            self.timeout = timeout
            self.reconnect = reconnect
        }
    }

    /// A change of connection, for logs and for an event loop that watches `descriptor`.
    public enum ConnectionEvent: Hashable, Sendable {
        /// Connected (again); `release` is the daemon's, from its greeting. A WATCH that was
        /// on before the loss is asked for again right after this is reported.
        case connected(release: String)
        /// The connection ended or failed.
        case lost(DaemonClientError)
        /// Connecting failed or the connection was lost; attempt `attempt` follows in
        /// `delay` seconds (only with a reconnect policy).
        case retrying(attempt: Int, delay: Double, error: DaemonClientError)
    }

    public let options: Options
    /// Called on every change of connection, on the thread that made it happen.
    public var onConnectionEvent: (ConnectionEvent) -> Void = { _ in }

    /// The current connection, or `nil` while there is none.
    public private(set) var connection: DaemonClient?
    /// When the next connection attempt is due, in microseconds of `MonotonicClock`; `nil`
    /// while connected, before the first attempt, and after `close()`.
    public private(set) var reconnectDeadline: Int64?

    /// When the daemon last sent a line (its greeting, a reply, an event), in microseconds
    /// of `MonotonicClock`: whether it still answers, for a client that cannot tell an idle
    /// daemon from a stopped one by its stream alone (`probe()`).
    public private(set) var lastHeard: Int64?

    /// Stream events that came while a request waited for its reply.
    private var pendingEvents: [StreamEvent] = []
    /// The WATCH to ask for again after reconnecting: `.some(device)` while watching.
    private var watchedDevice: String??
    /// Attempts that failed since the last success or loss.
    private var failures = 0
    private var isClosed = false

    /// Events held while a request waits are bounded: a client that never reads its stream
    /// must not grow without end (the daemon drops what it cannot send, likewise).
    static let maximumPendingEvents = 4096

    /// Makes a client; nothing is connected until `connect()`, a request, `nextEvent` or
    /// `step()`.
    /// - Parameter options: Where to connect, timeouts, reconnecting.
    public init(options: Options = Options()) {
        self.options = options
    }

    deinit { connection?.close() }

    /// Whether a connection is open.
    public var isConnected: Bool { connection != nil }

    /// The socket of the current connection, for an event loop to watch for readability.
    public var descriptor: FileDescriptor? { connection?.descriptor }

    /// The daemon's release, from the current connection's greeting.
    public var release: String? { connection?.version.release }

    /// Whether `step()` has events (or lines) in hand that an event loop would not be woken
    /// for: call `step()` again while this is true.
    public var hasBufferedEvents: Bool { !pendingEvents.isEmpty || (connection?.hasBufferedLines ?? false) }

    // MARK: Connecting

    /// Connects now, once, and reads the greeting; does nothing when connected.
    /// - Throws: `DaemonClientError` (`.notListening`, `.permissionDenied`,
    ///   `.unsupportedProtocol`…). No retry is scheduled: `nextEvent` and `step` do that.
    public func connect() throws(DaemonClientError) {
        guard connection == nil else { return }
        isClosed = false
        try open()
    }

    /// Closes the connection and stops reconnecting; a later `connect()` starts again.
    public func close() {
        isClosed = true
        reconnectDeadline = nil
        connection?.close()
        connection = nil
        pendingEvents.removeAll()
    }

    // MARK: Requests

    /// Asks for STATUS without waiting for the reply: `step()` reads it and sets `lastHeard`,
    /// like any line. For a client on an event loop that checks the daemon still answers
    /// without stopping the loop for it. Does nothing while not connected.
    /// - Throws: `DaemonClientError` when the connection is lost and there is no reconnect
    ///   policy (with one, the loss is reported and a retry scheduled).
    public func probe() throws(DaemonClientError) {
        guard let connection else { return }
        do {
            try connection.send(ClientRequest.status())
        } catch {
            try lose(error)
        }
    }

    /// Asks for the daemon's state.
    /// - Parameters:
    ///   - device: One device served (its name or path), or `nil` for every one.
    ///   - timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Returns: STATUS.
    /// - Throws: `DaemonClientError`: not connected and connecting failed, `.refused` for an
    ///   ERROR reply (a device that is not served), `.timedOut`, `.closed`, `.malformedLine`
    ///   for a reply it cannot read.
    public func status(device: String? = nil, timeout: Double? = nil) throws(DaemonClientError) -> StatusMessage {
        try request(.status(device: device), expecting: StatusMessage.self, timeout: timeout).message
    }

    /// Asks for the input devices the daemon knows.
    /// - Parameter timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Returns: DEVICES's entries, in the daemon's order.
    /// - Throws: `DaemonClientError`, as for `status()`.
    public func devices(timeout: Double? = nil) throws(DaemonClientError) -> [DevicesMessage.Device] {
        try request(.devices, expecting: DevicesMessage.self, timeout: timeout).message.devices
    }

    /// Takes the current weight as zero.
    /// - Parameters:
    ///   - device: The device to tare (its name or path); `nil` for the only one served.
    ///   - timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Returns: The tare offset now stored, and the device.
    /// - Throws: `DaemonClientError`, as for `status()`; `.refused` when no device is open,
    ///   several are and none was named, or this user may not tare.
    public func tare(device: String? = nil, timeout: Double? = nil) throws(DaemonClientError) -> TareMessage {
        try request(.tare(device: device), expecting: TareMessage.self, timeout: timeout).message
    }

    /// Adds a calibration point: the daemon waits for the next stable reading with `grams`
    /// on the pad and takes its raw pressure.
    /// - Parameters:
    ///   - grams: The known weight now on the pad, more than 0.
    ///   - device: The device to calibrate (its name or path); `nil` for the only one served.
    ///   - timeout: Seconds to wait for the reply, which comes only once the reading has
    ///     settled; `options.timeout` when `nil`, which may be too short.
    /// - Returns: The point added and the size of the curve.
    /// - Throws: `DaemonClientError`, as for `status()`; `.refused` when the point does not
    ///   make a rising curve, or several devices are served and none was named.
    public func calibrate(grams: Double, device: String? = nil, timeout: Double? = nil) throws(DaemonClientError) -> CalibrateMessage {
        try request(.calibrate(grams: grams, device: device), expecting: CalibrateMessage.self, timeout: timeout).message
    }

    /// Plays a haptic pattern on the daemon's rumble device.
    /// - Parameters:
    ///   - pattern: What to play.
    ///   - timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Returns: The reply, once the pattern has started playing.
    /// - Throws: `DaemonClientError`, as for `status()`; `.refused` when nothing can rumble.
    @discardableResult
    public func rumble(_ pattern: HapticPattern = .impactMedium, timeout: Double? = nil) throws(DaemonClientError) -> RumbleMessage {
        try request(.rumble(pattern: pattern), expecting: RumbleMessage.self, timeout: timeout).message
    }

    /// Starts the stream of READING and PEAK lines (of one device, if given). It is asked
    /// for again after every reconnection, until `stopWatching()`.
    /// - Parameters:
    ///   - device: A node name (`event5`) or path, or `nil` for every device.
    ///   - timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Throws: `DaemonClientError`, as for `status()`.
    public func watch(device: String? = nil, timeout: Double? = nil) throws(DaemonClientError) {
        _ = try request(.watch(enable: true, device: device), expecting: WatchMessage.self, timeout: timeout)
        watchedDevice = .some(device)
    }

    /// Asks for the stream without waiting for a reply, from the current connection if there
    /// is one, and on every connection after it until `stopWatching()`: for a client that
    /// may start before the daemon does (with a reconnect policy, `step()` and `nextEvent`
    /// connect, and the WATCH follows the greeting). The reply is skipped with the stream,
    /// so an ERROR for an unknown device is not reported: `watch(device:)` reports it.
    /// - Parameter device: A node name (`event5`) or path, or `nil` for every device.
    /// - Throws: `DaemonClientError` when the request cannot be sent and there is no
    ///   reconnect policy.
    public func watchWhenConnected(device: String? = nil) throws(DaemonClientError) {
        watchedDevice = .some(device)
        if let connection { try askToWatch(device, on: connection) }
    }

    /// Ends the stream; events already received are still handed out.
    /// - Parameter timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Throws: `DaemonClientError`, as for `status()`.
    public func stopWatching(timeout: Double? = nil) throws(DaemonClientError) {
        watchedDevice = nil
        _ = try request(.watch(enable: false, device: nil), expecting: WatchMessage.self, timeout: timeout)
    }

    // MARK: The stream, blocking

    /// The next READING or PEAK, waiting at most `timeout` seconds. Without a connection it
    /// connects first; with a reconnect policy, a lost connection is made again (reported
    /// through `onConnectionEvent`), sleeping between attempts.
    /// - Parameter timeout: Seconds to wait; `nil` waits for ever.
    /// - Returns: The event, or `nil` when none came in time.
    /// - Throws: `DaemonClientError` when the connection is lost or cannot be made and there
    ///   is no reconnect policy, or after `close()` (`.closed`); `.malformedLine` for a line
    ///   that cannot be read, after which the connection goes on (call again).
    public func nextEvent(timeout: Double? = nil) throws(DaemonClientError) -> StreamEvent? {
        let deadline = timeout.map { MonotonicClock.now() + Int64($0 * 1_000_000) }
        while true {
            if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
            guard !isClosed else { throw .closed(path: options.socketPath) }
            if let connection {
                let line: ReceivedLine?
                do throws(DaemonClientError) {
                    line = try connection.nextLine(deadline: deadline)
                } catch {
                    if case .malformedLine = error { throw error }
                    try lose(error)
                    continue
                }
                guard let line else { return nil }
                lastHeard = MonotonicClock.now()
                if let event = StreamEvent(line) { return event }
                continue    // a reply nobody waits for (WATCH again after reconnecting), or a class this client does not know
            }
            let due = reconnectDeadline ?? MonotonicClock.now()
            if let deadline, due > deadline {
                MonotonicClock.sleep(until: deadline)
                return nil
            }
            MonotonicClock.sleep(until: due)
            try attempt()
        }
    }

    // MARK: The stream, from an event loop

    /// Does what can be done now without waiting: reads what the socket has, or makes the
    /// connection attempt that is due. Call it when `descriptor` is readable and when
    /// `reconnectDeadline` has passed; after it, watch the (possibly new) `descriptor` and
    /// arm the timer for the (possibly new) deadline. Without a connection or a deadline
    /// (the first call), it connects.
    /// - Returns: The READING and PEAK events read, in order.
    /// - Throws: `DaemonClientError` when the connection is lost or cannot be made and there
    ///   is no reconnect policy; `.malformedLine` for a line that cannot be read, after which
    ///   the connection goes on (the events before it come with the next call).
    public func step() throws(DaemonClientError) -> [StreamEvent] {
        guard !isClosed else { return [] }
        if connection == nil {
            guard reconnectDeadline.map({ $0 <= MonotonicClock.now() }) ?? true else { return takePending() }
            try attempt()
            // Lines that came with the greeting are read already: epoll will not report them.
            guard connection != nil else { return takePending() }
        }
        guard let connection else { return takePending() }
        do throws(DaemonClientError) {
            let lines = try connection.readAvailable()
            if !lines.isEmpty { lastHeard = MonotonicClock.now() }
            for line in lines {
                if let event = StreamEvent(line) { keep(event) }
            }
        } catch {
            if case .malformedLine = error { throw error }
            try lose(error)
        }
        return takePending()
    }

    // MARK: Any request

    /// Sends a request and waits for its reply or an ERROR; stream events that come
    /// meanwhile are kept for `nextEvent` and `step`. Connects first when not connected
    /// (once: the caller asked for an answer, not for waiting on a back-off schedule).
    /// - Parameters:
    ///   - request: The request.
    ///   - reply: The type of its reply (`StatusMessage` for `.status`).
    ///   - timeout: Seconds to wait for the reply; `options.timeout` when `nil`.
    /// - Returns: The reply, with its line as the daemon sent it.
    /// - Throws: `DaemonClientError`, as for `status()`.
    public func request<Reply: DaemonLineMessage>(
        _ request: ClientRequest, expecting reply: Reply.Type, timeout: Double? = nil
    ) throws(DaemonClientError) -> DaemonReply<Reply> {
        if connection == nil {
            isClosed = false
            try open()
        }
        guard let connection else { throw .closed(path: options.socketPath) }
        let seconds = timeout ?? options.timeout
        let deadline = MonotonicClock.now() + Int64(seconds * 1_000_000)
        do throws(DaemonClientError) {
            try connection.send(request)
            while true {
                guard let line = try connection.nextLine(deadline: deadline) else {
                    throw DaemonClientError.timedOut(path: options.socketPath, waitingFor: Reply.className, seconds: seconds)
                }
                lastHeard = MonotonicClock.now()
                if let message = Reply(line.message) { return DaemonReply(message: message, bytes: line.bytes) }
                if case .error(let error) = line.message {
                    throw DaemonClientError.refused(message: error.message, request: error.requestClass)
                }
                if let event = StreamEvent(line) { keep(event) }
            }
        } catch {
            switch error {
            case .timedOut, .refused, .malformedLine:
                // The connection is fine: the reply is late, an ERROR, or a line this build
                // cannot read (the lines after it are read as usual).
                throw error
            default:
                // Anything else (closed, failed, a line that is not the protocol) ends the
                // connection; the next call connects again.
                drop(error)
                throw error
            }
        }
    }

    // MARK: Private

    /// Opens a connection and asks for the WATCH that was on before.
    private func open() throws(DaemonClientError) {
        let made = try DaemonClient(path: options.socketPath, timeout: options.timeout)
        connection = made
        lastHeard = MonotonicClock.now()
        failures = 0
        reconnectDeadline = nil
        onConnectionEvent(.connected(release: release ?? "?"))
        if let device = watchedDevice { try askToWatch(device, on: made) }
    }

    /// Sends WATCH; the reply is read with the stream and skipped there, so that nothing
    /// waits here.
    private func askToWatch(_ device: String?, on connection: DaemonClient) throws(DaemonClientError) {
        do {
            try connection.send(ClientRequest.watch(enable: true, device: device))
        } catch {
            try lose(error)
        }
    }

    /// One connection attempt, from `nextEvent` or `step`: on failure the next is scheduled
    /// by the policy, or the error is thrown without one.
    private func attempt() throws(DaemonClientError) {
        do {
            try open()
        } catch {
            guard let policy = options.reconnect, !isClosed else { throw error }
            failures += 1
            schedule(policy, after: error)
        }
    }

    /// The connection ended: report it, then schedule the first retry, or throw.
    private func lose(_ error: DaemonClientError) throws(DaemonClientError) {
        drop(error)
        guard let policy = options.reconnect, !isClosed else { throw error }
        failures = 0
        schedule(policy, after: error)
    }

    private func drop(_ error: DaemonClientError) {
        connection?.close()
        connection = nil
        onConnectionEvent(.lost(error))
    }

    private func schedule(_ policy: ReconnectPolicy, after error: DaemonClientError) {
        let delay = policy.delay(beforeAttempt: failures + 1)
        reconnectDeadline = MonotonicClock.now() + Int64(delay * 1_000_000)
        onConnectionEvent(.retrying(attempt: failures + 1, delay: delay, error: error))
    }

    private func keep(_ event: StreamEvent) {
        if pendingEvents.count >= Self.maximumPendingEvents { pendingEvents.removeFirst() }
        pendingEvents.append(event)
    }

    private func takePending() -> [StreamEvent] {
        defer { pendingEvents.removeAll() }
        return pendingEvents
    }
}
