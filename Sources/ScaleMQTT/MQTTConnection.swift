import CMosquitto
import Glibc
import ScaleClient
import ScalePOSIX

/// A libmosquitto error code with mosquitto's own words for it.
struct MosquittoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The `MOSQ_ERR_*` value.
    var code: Int32
    /// `errno` when the code is `MOSQ_ERR_ERRNO`, else 0.
    var errno: Int32

    init(_ code: Int32) {
        self.code = code
        errno = code == Int32(MOSQ_ERR_ERRNO.rawValue) ? Glibc.errno : 0
    }

    var description: String {
        if errno != 0 { return String(cString: strerror(errno)) }
        // "The connection was lost." goes inside sentences of ours: without its full stop.
        let text = String(cString: mosquitto_strerror(code))
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}

/// Why the broker turned the connection down (MQTT 3.1.1's CONNACK return codes).
package struct ConnectionRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    var code: Int32

    /// Refusals that trying again cannot mend: a bad user name or password (4), or no
    /// authorisation (5). The other codes (an unacceptable protocol, a server unavailable)
    /// can pass.
    var isAuthentication: Bool { code == 4 || code == 5 }

    package var description: String { String(cString: mosquitto_connack_string(code)) }
}

/// One MQTT connection through libmosquitto, driven by a ScalePOSIX `EventLoop` rather than
/// by `mosquitto_loop_start`'s thread: the broker's socket is watched for reading (and for
/// writing while libmosquitto has something queued), `mosquitto_loop_read/write` run when
/// it is ready, and two timers do the rest: `mosquitto_loop_misc` for keep-alive pings and
/// retries, and the reconnection back-off. So every callback runs on the loop's thread,
/// where the rest of forcescale-mqtt runs, and nothing needs a lock.
final class MQTTConnection {
    /// What to connect to, as whom, and what the broker says if the connection dies.
    struct Options: Sendable {
        var broker: BrokerAddress
        var clientID: String
        var username: String?
        var password: String?
        /// A CA file: connect with TLS and check the broker's certificate against it.
        var caFile: String?
        /// The last will: published by the broker when the connection ends without a
        /// DISCONNECT (a crash, a cut network, SIGKILL). Retained, QoS 1.
        var will: (topic: String, payload: String)?
        /// Seconds between keep-alive pings when nothing else is sent.
        var keepAlive: Int32 = 30
        /// The back-off between connection attempts.
        var reconnect = ReconnectPolicy(initialDelay: 0.5, maximumDelay: 30)

        init(broker: BrokerAddress, clientID: String) {
            self.broker = broker
            self.clientID = clientID
        }
    }

    /// A change of the connection or a message, on the loop's thread.
    enum Event {
        /// The broker accepted the connection (again).
        case connected
        /// The broker refused it; with an authentication refusal no retry is scheduled.
        case refused(ConnectionRefusal)
        /// The connection ended or could not be made; attempt `attempt` follows after
        /// `delay` seconds.
        case retrying(attempt: Int, delay: Double, reason: String)
        /// A message on a subscribed topic.
        case message(topic: String, payload: [UInt8])
    }

    let options: Options
    /// Gets each `Event`.
    var onEvent: (Event) -> Void = { _ in }
    /// Whether the broker has accepted the connection and it has not ended since.
    private(set) var isConnected = false

    private let handle: OpaquePointer
    private let loop: EventLoop
    private let retryTimer: DeadlineTimer
    private let pingTimer: DeadlineTimer
    private var watchedSocket: FileDescriptor?
    private var watchesWrites = false
    /// Failed attempts since the last success, for the back-off.
    private var attempt = 0
    private var hasStarted = false
    private var isStopped = false
    /// Message ids of QoS 1 messages the broker has not acknowledged yet: `stop()` waits
    /// for them before disconnecting.
    private var unacknowledged: Set<Int32> = []

    /// `mosquitto_lib_init` once per process, before the first client.
    private static let library: Void = { mosquitto_lib_init() }()

    /// Makes the client; `start()` connects.
    /// - Throws: `MosquittoError` for options libmosquitto refuses (a CA file it cannot
    ///   read, say), `Errno` for the timers.
    init(options: Options, loop: EventLoop) throws {
        Self.library
        self.options = options
        self.loop = loop
        // A clean session: the state that matters is re-sent retained on every connection,
        // so no broker needs to keep a session (and its queue) for this client.
        guard let handle = mosquitto_new(options.clientID, true, nil) else { throw MosquittoError(Int32(MOSQ_ERR_NOMEM.rawValue)) }
        self.handle = handle
        retryTimer = try DeadlineTimer()
        pingTimer = try DeadlineTimer()
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        if let username = options.username {
            try check(mosquitto_username_pw_set(handle, username, options.password))
        }
        if let caFile = options.caFile {
            try check(mosquitto_tls_set(handle, caFile, nil, nil, nil, nil))
        }
        if let will = options.will {
            try check(Array(will.payload.utf8).withUnsafeBytes { bytes in
                mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, 1, true)
            })
        }
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue().connectAcknowledged(code)
        }
        mosquitto_message_callback_set(handle) { _, context, message in
            guard let context, let message else { return }
            let topic = String(cString: message.pointee.topic)
            let payload = message.pointee.payloadlen > 0 && message.pointee.payload != nil
                ? Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: Int(message.pointee.payloadlen)))
                : []
            Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue().onEvent(.message(topic: topic, payload: payload))
        }
        mosquitto_publish_callback_set(handle) { _, context, messageID in
            guard let context else { return }
            Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue().unacknowledged.remove(messageID)
        }
        try loop.watch(retryTimer.descriptor) { [unowned self] in
            retryTimer.acknowledge()
            connectNow()
        }
        try loop.watch(pingTimer.descriptor) { [unowned self] in
            pingTimer.acknowledge()
            housekeeping()
        }
    }

    deinit {
        stop()
        loop.unwatch(retryTimer.descriptor)
        loop.unwatch(pingTimer.descriptor)
        mosquitto_destroy(handle)
    }

    private func check(_ code: Int32) throws(MosquittoError) {
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else { throw MosquittoError(code) }
    }

    /// Starts connecting; failures are retried with back-off and reported as `.retrying`.
    func start() {
        isStopped = false
        connectNow()
    }

    /// Publishes a message. With QoS 1 libmosquitto keeps it until the broker acknowledges
    /// it, and sends it again after a reconnection.
    /// - Returns: Whether libmosquitto took it (not while disconnected).
    @discardableResult
    func publish(_ topic: String, _ payload: String, qos: Int32, retain: Bool) -> Bool {
        guard isConnected else { return false }
        var messageID: Int32 = 0
        let code = Array(payload.utf8).withUnsafeBytes { bytes in
            mosquitto_publish(handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, qos, retain)
        }
        let taken = code == Int32(MOSQ_ERR_SUCCESS.rawValue)
        if taken, qos > 0 { unacknowledged.insert(messageID) }
        follow()
        return taken
    }

    /// Subscribes to a topic (QoS 1); call again after each `.connected`, since the session
    /// is clean.
    func subscribe(_ topic: String) {
        guard isConnected else { return }
        _ = mosquitto_subscribe(handle, nil, topic, 1)
        follow()
    }

    /// Disconnects cleanly (no last will), after writing what is queued, waiting at most
    /// `timeout` seconds for the socket; then stops reconnecting.
    func stop(timeout: Double = 2) {
        guard !isStopped else { return }
        isStopped = true
        retryTimer.arm(atMicroseconds: nil)
        pingTimer.arm(atMicroseconds: nil)
        if isConnected {
            let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
            // The broker's acknowledgements first. Closing a socket with unread data in it
            // makes the kernel reset the connection, and a reset makes the broker's kernel
            // throw away what the broker had not read yet: the last messages, and the
            // DISCONNECT, which would then fire the last will.
            exchange(until: deadline) { unacknowledged.isEmpty }
            _ = mosquitto_disconnect(handle)
            exchange(until: deadline) { !mosquitto_want_write(handle) }
        }
        isConnected = false
        unwatchSocket()
    }

    /// Reads and writes on the socket, blocking (at most until `deadline`), until `done`:
    /// for the last messages before exiting, when the loop no longer runs.
    private func exchange(until deadline: Int64, _ done: () -> Bool) {
        while !done(), MonotonicClock.now() < deadline {
            let socket = mosquitto_socket(handle)
            guard socket >= 0 else { return }
            let wantsWrite = mosquitto_want_write(handle)
            var entry = pollfd(fd: socket, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0)
            let left = max(0, (deadline - MonotonicClock.now()) / 1000)
            guard poll(&entry, 1, Int32(left)) > 0 else { return }
            if entry.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                guard mosquitto_loop_read(handle, 1) == Int32(MOSQ_ERR_SUCCESS.rawValue) else { return }
            }
            if entry.revents & Int16(POLLOUT) != 0 || mosquitto_want_write(handle) {
                guard mosquitto_loop_write(handle, 1) == Int32(MOSQ_ERR_SUCCESS.rawValue) else { return }
            }
        }
    }

    // MARK: - The connection's life

    private func connectNow() {
        guard !isStopped else { return }
        unwatchSocket()
        let code = hasStarted
            ? mosquitto_reconnect_async(handle)
            : mosquitto_connect_async(handle, options.broker.host, Int32(options.broker.port), options.keepAlive)
        hasStarted = true
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            connectionEnded(reason: reason(for: code))
            return
        }
        follow()
    }

    /// What a failure says, with advice where a setting is the likely cause.
    private func reason(for code: Int32) -> String {
        let text = MosquittoError(code).description
        guard code == Int32(MOSQ_ERR_TLS.rawValue) else { return text }
        return text + " (check --cafile: the broker's certificate must be signed by it and name the host given to --broker)"
    }

    private func connectAcknowledged(_ code: Int32) {
        guard code == 0 else {
            let refusal = ConnectionRefusal(code: code)
            isConnected = false
            if refusal.isAuthentication {
                // Trying again would be refused the same way: the owner decides (exit 77).
                isStopped = true
                retryTimer.arm(atMicroseconds: nil)
                onEvent(.refused(refusal))
            } else {
                onEvent(.refused(refusal))
                // The broker closes the connection; the read that sees it schedules a retry.
            }
            return
        }
        isConnected = true
        attempt = 0
        armPing()
        onEvent(.connected)
    }

    private func socketReady(_ readiness: EventLoop.Readiness) {
        var code = Int32(MOSQ_ERR_SUCCESS.rawValue)
        if !readiness.isDisjoint(with: [.readable, .hangUp, .error]) {
            code = mosquitto_loop_read(handle, 1)
        }
        if code == Int32(MOSQ_ERR_SUCCESS.rawValue), readiness.contains(.writable) || mosquitto_want_write(handle) {
            code = mosquitto_loop_write(handle, 1)
        }
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
            // libmosquitto has closed the socket; forget it before anything reuses its number.
            connectionEnded(reason: reason(for: code))
            return
        }
        follow()
    }

    private func housekeeping() {
        guard !isStopped else { return }
        let code = mosquitto_loop_misc(handle)
        guard code == Int32(MOSQ_ERR_SUCCESS.rawValue) || code == Int32(MOSQ_ERR_NO_CONN.rawValue) && !isConnected else {
            connectionEnded(reason: MosquittoError(code).description)
            return
        }
        armPing()
        follow()
    }

    /// Keep-alive: libmosquitto pings when `keepAlive` seconds passed without a message
    /// out, and notices a broker that stopped answering; a third of it between checks.
    private func armPing() {
        pingTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(max(1, options.keepAlive / 3)) * 1_000_000)
    }

    private func connectionEnded(reason: String) {
        unwatchSocket()
        isConnected = false
        // What is re-sent after reconnecting is the retained state, published anew; ids
        // of this connection's messages would only make `stop()` wait for nothing.
        unacknowledged.removeAll()
        pingTimer.arm(atMicroseconds: nil)
        guard !isStopped else { return }
        attempt += 1
        let delay = options.reconnect.delay(beforeAttempt: attempt)
        retryTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(delay * 1_000_000))
        onEvent(.retrying(attempt: attempt, delay: delay, reason: reason))
    }

    /// Watches the socket libmosquitto has now, for writing only while it has something to
    /// write (a socket is nearly always writable: asking otherwise would spin).
    private func follow() {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else {
            unwatchSocket()
            return
        }
        let wantsWrite = mosquitto_want_write(handle)
        if let watchedSocket, watchedSocket.rawValue == socket {
            if wantsWrite != watchesWrites {
                try? loop.setInterest(watchedSocket, readable: true, writable: wantsWrite)
                watchesWrites = wantsWrite
            }
            return
        }
        unwatchSocket()
        let descriptor = FileDescriptor(rawValue: socket)
        do {
            try loop.watch(descriptor, readable: true, writable: wantsWrite) { [unowned self] in socketReady($0) }
            watchedSocket = descriptor
            watchesWrites = wantsWrite
        } catch {
            connectionEnded(reason: "cannot watch the broker's socket: \(error)")
        }
    }

    private func unwatchSocket() {
        if let watchedSocket { loop.unwatch(watchedSocket) }
        watchedSocket = nil
        watchesWrites = false
    }
}
