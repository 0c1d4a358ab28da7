import Glibc

/// The daemon's Unix socket on the event loop: accepts clients, cuts what they send into
/// lines, and writes lines to them without ever blocking, so a slow or stopped client
/// delays nobody. All callbacks run on the loop's thread, one at a time.
public final class SocketServer {
    /// Bounds on what one client may cost.
    public struct Limits: Hashable, Sendable {
        /// The longest request line, in bytes before its newline.
        public var maximumLineBytes: Int
        /// Droppable lines (READING) queued for a client before the oldest are thrown away;
        /// replies do not count.
        public var maximumQueuedLines: Int
        /// Unwritten replies, in bytes, after which a client is disconnected as unresponsive.
        public var maximumQueuedReplyBytes: Int

        public init(maximumLineBytes: Int = 65536, maximumQueuedLines: Int = 256, maximumQueuedReplyBytes: Int = 1 << 20) {
            self.maximumLineBytes = maximumLineBytes
            self.maximumQueuedLines = maximumQueuedLines
            self.maximumQueuedReplyBytes = maximumQueuedReplyBytes
        }
    }

    public let listener: UnixListener
    public let limits: Limits

    /// A client connected; send it a greeting (VERSION) here.
    public var onConnect: (ClientConnection) -> Void = { _ in }
    /// A client sent a line: its bytes as received, without the newline (not checked for
    /// UTF-8: the protocol's parser says where a line stops being UTF-8).
    public var onLine: (ClientConnection, [UInt8]) -> Void = { _, _ in }
    /// A client sent a line longer than `limits.maximumLineBytes`. Send it an ERROR and
    /// `close()` it; the default just closes it. If it is kept, reading resumes after the
    /// next newline.
    public var onOversizedLine: (ClientConnection) -> Void = { client in client.close(afterFlushing: true) }
    /// A client's connection ended; it has already been closed.
    public var onDisconnect: (ClientConnection, DisconnectReason) -> Void = { _, _ in }
    /// Accepting failed (out of descriptors, say). The server keeps going.
    public var onError: (SocketError) -> Void = { error in printError("forcescaled: \(error)") }

    private let loop: EventLoop
    private var clientsByDescriptor: [FileDescriptor: ClientConnection] = [:]
    private var nextID = 1
    private let readBuffer: UnsafeMutableRawBufferPointer
    private let output: SharedOutput
    /// A descriptor held in reserve: when the process runs out, it is given up for a moment
    /// to accept and at once close a client, which otherwise would sit in the backlog and
    /// make epoll report the listener readable for ever.
    private var spareDescriptor: Int32
    private var isClosed = false

    /// Starts serving on the loop.
    /// - Parameters:
    ///   - listener: The listening socket; the server closes it on `close()`.
    ///   - loop: The loop to run on.
    ///   - limits: What one client may cost.
    /// - Throws: `SocketError.system` when the listener cannot be watched.
    public init(listener: UnixListener, loop: EventLoop, limits: Limits = Limits()) throws(SocketError) {
        self.listener = listener
        self.loop = loop
        self.limits = limits
        output = SharedOutput(loop: loop)
        readBuffer = .allocate(byteCount: 65536, alignment: 8)
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
        do {
            // Unowned, not weak: a weak reference gives an object a side table, and every
            // retain and release of it then takes the runtime's slow path. deinit unwatches.
            try loop.watch(listener.descriptor) { [unowned self] in acceptClients() }
        } catch {
            readBuffer.deallocate()
            if spareDescriptor >= 0 { Glibc.close(spareDescriptor) }
            throw .system(operation: "watch", SystemError(path: listener.label, errno: error))
        }
    }

    deinit {
        // No callbacks from here: whoever would receive them is going away.
        for client in clientsByDescriptor.values { release(client, .serverShutdown) }
        if !isClosed {
            loop.unwatch(listener.descriptor)
            listener.close()
        }
        if spareDescriptor >= 0 { Glibc.close(spareDescriptor) }
        readBuffer.deallocate()
    }

    /// The connected clients, oldest first.
    public var clients: [ClientConnection] {
        clientsByDescriptor.values.sorted { $0.id < $1.id }
    }

    /// Sends one line to every open client that `include` accepts. The line is encoded once;
    /// each client then costs one `send`, or a place in its queue if it is behind.
    /// - Parameters:
    ///   - line: The line; a `\n` is added when missing.
    ///   - droppable: Whether slow clients may miss it (true for READING).
    ///   - include: Which clients get it, e.g. those that asked to WATCH this device.
    public func broadcast(_ line: String, droppable: Bool = true, to include: (ClientConnection) -> Bool = { _ in true }) {
        var bytes = Array(line.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        // A dictionary's values are a snapshot: nothing here can change the set anyway,
        // since failures only end connections from the loop.
        for client in clientsByDescriptor.values where client.isOpen && include(client) {
            client.send(bytes: bytes, droppable: droppable)
        }
    }

    /// Disconnects every client (reporting each through `onDisconnect`), stops listening and
    /// removes the socket file. Calling it again does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        for client in clients { disconnect(client, .serverShutdown) }
        loop.unwatch(listener.descriptor)
        listener.close()
    }

    // MARK: Private

    private func acceptClients() {
        // Enough per wake-up for a burst of clients, few enough to let the others run.
        for _ in 0..<64 {
            let descriptor: FileDescriptor
            do {
                guard let accepted = try listener.accept() else { return }
                descriptor = accepted
            } catch {
                onError(error)
                if case .system(_, let failure) = error, failure.errno.rawValue == EMFILE || failure.errno.rawValue == ENFILE {
                    refuseOneClient()
                }
                return
            }
            let client = ClientConnection(id: nextID, descriptor: descriptor, loop: loop, limits: limits, output: output)
            nextID += 1
            do {
                // The handler holds the client until `release` unwatches it (the server's
                // deinit releases every client), and the server unowned: no weak reference,
                // which would send every retain and release of a client, several per line
                // sent, through the runtime's slow path.
                try loop.watch(descriptor, readable: true, writable: false) { [unowned self] readiness in
                    service(client, readiness)
                }
            } catch {
                try? descriptor.close()
                onError(.system(operation: "watch a client of", SystemError(path: listener.label, errno: error)))
                continue
            }
            clientsByDescriptor[descriptor] = client
            onConnect(client)
        }
    }

    /// Handles one wake-up for a client: writes what is queued if it can take it, reads and
    /// dispatches its lines, and closes it if it ended.
    private func service(_ client: ClientConnection, _ readiness: EventLoop.Readiness) {
        if client.pendingDisconnect == nil, !readiness.isDisjoint(with: [.writable, .error, .hangUp]) {
            client.flush()
        }
        if client.isOpen, !readiness.isDisjoint(with: [.readable, .error, .hangUp]) {
            var pieces: [LineSplitter.Piece] = []
            client.readInput(using: readBuffer, into: &pieces)
            for piece in pieces {
                // A callback may have closed it: what follows is not for us then.
                guard client.isOpen else { break }
                switch piece {
                case .line(let line): onLine(client, line)
                case .lineTooLong: onOversizedLine(client)
                }
            }
            if client.reachedEndOfInput { client.endInput() }
        }
        if let reason = client.pendingDisconnect { disconnect(client, reason) }
    }

    private func disconnect(_ client: ClientConnection, _ reason: DisconnectReason) {
        guard clientsByDescriptor[client.descriptor] === client else { return }
        release(client, reason)
        onDisconnect(client, reason)
    }

    /// Unwatches and closes a client's socket.
    private func release(_ client: ClientConnection, _ reason: DisconnectReason) {
        clientsByDescriptor[client.descriptor] = nil
        loop.unwatch(client.descriptor)
        discardUnreadInput(client.descriptor)
        try? client.descriptor.close()
        client.markClosed(reason)
    }

    /// Reads and throws away what the client sent and we never read. Closing a Unix socket
    /// with unread input makes the peer's next read fail with ECONNRESET instead of seeing
    /// the end of the stream, which would hide the reason we sent it.
    private func discardUnreadInput(_ descriptor: FileDescriptor) {
        for _ in 0..<8 where recv(descriptor.rawValue, readBuffer.baseAddress, readBuffer.count, Int32(MSG_DONTWAIT)) > 0 {}
    }

    private func refuseOneClient() {
        guard spareDescriptor >= 0 else { return }
        Glibc.close(spareDescriptor)
        if let descriptor = try? listener.accept() { try? descriptor.close() }
        spareDescriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
    }
}
