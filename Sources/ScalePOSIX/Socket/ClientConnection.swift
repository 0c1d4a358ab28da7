import Glibc

/// One connected client: its socket, the unfinished line it is sending, the lines waiting
/// to go to it, and who it is. Made by `SocketServer`, which reads for it; the daemon
/// sends to it with `send` and ends it with `close`.
///
/// Nothing here blocks: a write that would block leaves the rest queued and asks the loop
/// to wake when the socket drains. Failures never reach the caller of `send` either: the
/// connection is marked, shut down, and reported through `SocketServer.onDisconnect` from
/// the loop, so that no callback runs in the middle of a `send` or a broadcast.
public final class ClientConnection: Identifiable {
    /// Numbered from 1 in order of connection, per server; never reused.
    public let id: Int
    public let descriptor: FileDescriptor
    /// The peer's pid, uid and groups when it connected; `nil` only if the kernel would not
    /// say, which does not happen for Unix sockets.
    public let credentials: PeerCredentials?

    private enum State {
        /// Reading requests and writing lines.
        case open
        /// No more input is read and no new lines are taken; once the queue is written, the
        /// connection ends for `reason`.
        case draining(DisconnectReason)
        /// Shut down and waiting for the loop to finish it off.
        case ending(DisconnectReason)
        case closed(DisconnectReason)
    }

    private var state = State.open
    private var splitter: LineSplitter
    private var queue: OutgoingQueue
    private let loop: EventLoop
    private let output: SharedOutput
    private var interest = (readable: true, writable: false)
    /// Whether a flush waits for the end of the loop's wake-up (see `send(bytes:droppable:)`).
    private var isFlushScheduled = false
    /// The loop's wake-up in which a line last went to the socket at once.
    private var lastImmediateWakeUp: Int?

    init(id: Int, descriptor: FileDescriptor, loop: EventLoop, limits: SocketServer.Limits, output: SharedOutput) {
        self.id = id
        self.descriptor = descriptor
        self.loop = loop
        self.output = output
        credentials = try? PeerCredentials.of(socket: descriptor)
        splitter = LineSplitter(maximumLineBytes: limits.maximumLineBytes)
        queue = OutgoingQueue(maximumLines: limits.maximumQueuedLines, maximumReplyBytes: limits.maximumQueuedReplyBytes)
    }

    /// Whether the connection takes lines and reads requests (not closing or closed).
    public var isOpen: Bool {
        if case .open = state { return true }
        return false
    }

    /// Why the connection ended, once it has.
    public var disconnectReason: DisconnectReason? {
        if case .closed(let reason) = state { return reason }
        return nil
    }

    /// Droppable lines thrown away because the client read too slowly.
    public var droppedCount: Int { queue.droppedCount }

    /// Lines waiting for the client to read.
    public var queuedLineCount: Int { queue.count }

    /// `client 3 (pid 1234, uid 1000, gid 1000)`, for the log.
    public var label: String {
        "client \(id)" + (credentials.map { " (\($0))" } ?? "")
    }

    /// Sends one line. Returns at once: what the socket cannot take now is queued.
    /// - Parameters:
    ///   - line: The line; a `\n` is added when it does not end with one.
    ///   - droppable: `true` for lines the client can miss when it falls behind (READING);
    ///     `false` for replies, which are never dropped (see `OutgoingQueue`).
    public func send(_ line: String, droppable: Bool = false) {
        var bytes = Array(line.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        send(bytes: bytes, droppable: droppable)
    }

    /// Ends the connection.
    /// - Parameter afterFlushing: When `true`, replies already queued (an ERROR, say) are
    ///   written first and queued droppable lines are thrown away; no more input is read.
    ///   A client that never reads them keeps the connection until it goes away, but costs
    ///   no more than those replies. When `false`, everything queued is discarded.
    public func close(afterFlushing: Bool = true) {
        guard isOpen else { return }
        if afterFlushing {
            queue.dropAllDroppable()
            state = .draining(.closedByServer)
            // The last replies go now rather than at the end of the wake-up, so that a
            // connection whose queue empties is reported ended in this same wake-up.
            flush()
        } else {
            end(.closedByServer)
        }
    }

    // MARK: For SocketServer

    /// The reason to end the connection now, once it is shut down and waiting to be closed.
    var pendingDisconnect: DisconnectReason? {
        if case .ending(let reason) = state { return reason }
        return nil
    }

    /// Sends one line already encoded: a line for many clients is encoded once, and each
    /// queues the same array. Returns at once, as `send(_:droppable:)` does.
    /// - Parameters:
    ///   - bytes: The line's UTF-8, ending with its `\n`.
    ///   - droppable: Whether the client may miss it when it falls behind.
    public func send(bytes: [UInt8], droppable: Bool) {
        guard isOpen else { return }
        // The first line of a wake-up, with nothing waiting, goes to the socket at once: one
        // line per wake-up is the daemon's usual case (a READING per throttle window), and
        // queueing it for the end of the wake-up would cost the queue, the deferred flush and
        // their bookkeeping for every line.
        var written: Int?
        if queue.isEmpty, !isFlushScheduled, lastImmediateWakeUp != loop.wakeUpNumber {
            lastImmediateWakeUp = loop.wakeUpNumber
            do throws(Errno) {
                written = try bytes.withUnsafeBytes { line in Result { () throws(Errno) in try write(line) } }.get()
            } catch where error == .wouldBlock {
                written = 0
            } catch {
                end(.failed(error))
                return
            }
            if written == bytes.count { return }
        }
        let wasIdle = queue.isEmpty
        switch queue.append(bytes, droppable: droppable) {
        case .queued:
            if let written {
                // The socket took part of the line, or none: the rest waits for it to drain.
                queue.consume(written)
                updateInterest()
                break
            }
            // With lines already waiting the loop is watching for writability and will
            // flush. Otherwise the later lines of this wake-up (a reading and a PEAK, or
            // readings a slow wake-up let pile up) go out together once the wake-up's
            // handlers are done: one `send` for all of them instead of one each.
            if isFlushScheduled { break }
            if wasIdle {
                isFlushScheduled = true
                output.flushAtEndOfWakeUp(self)
            } else {
                updateInterest()
            }
        case .dropped:
            break
        case .replyLimitExceeded:
            end(.unresponsive(limit: queue.maximumReplyBytes))
        }
    }

    /// Writes as much of the queue as the socket takes.
    func flush() {
        isFlushScheduled = false
        switch state {
        case .open, .draining: break
        case .ending, .closed: return
        }
        while !queue.isEmpty {
            let sent: Int
            do throws(Errno) {
                sent = try queue.withPendingBytes(scratch: &output.scratch) { bytes throws(Errno) in try write(bytes) }
            } catch where error == .wouldBlock {
                break
            } catch {
                end(.failed(error))
                return
            }
            queue.consume(sent)
        }
        finishIfDrained()
        updateInterest()
    }

    /// One `send` of `bytes`, never blocking.
    private func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        // MSG_NOSIGNAL: a client that has gone must cost an EPIPE, not the daemon.
        try Errno.retrying {
            Glibc.send(descriptor.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
        }
    }

    /// Reads what the client sent, at most a few buffers' worth so that one busy client
    /// cannot hold the loop (epoll reports it again if more is waiting).
    /// - Parameters:
    ///   - buffer: Scratch space for `read`.
    ///   - pieces: Gets the lines and overflows found.
    func readInput(using buffer: UnsafeMutableRawBufferPointer, into pieces: inout [LineSplitter.Piece]) {
        guard isOpen else { return }
        // One modest read per wake-up: every request read now is answered now, and a reply
        // can be 20 times its request, so this bounds the replies one wake-up can queue
        // (16 KiB of the shortest requests: about 0.3 MiB, under the reply limit).
        let chunk = min(buffer.count, Self.requestBytesPerWakeUp)
        let count: Int
        do throws(Errno) {
            count = try Errno.retrying { recv(descriptor.rawValue, buffer.baseAddress, chunk, Int32(MSG_DONTWAIT)) }
        } catch {
            if error != .wouldBlock { end(.failed(error)) }
            return
        }
        if count > 0 {
            splitter.append(UnsafeRawBufferPointer(rebasing: buffer[..<count]), to: &pieces)
        } else {
            // The client is done sending. The lines read with this end of stream are
            // still to be answered, so the server calls `endInput()` after them.
            reachedEndOfInput = true
        }
    }

    static let requestBytesPerWakeUp = 16 * 1024

    /// Whether the client has shut down its sending side (set by `readInput`).
    private(set) var reachedEndOfInput = false

    /// The client is done sending; it may still be reading its last replies (`nc -N` and
    /// `socat` shut down their write side and wait), so the connection drains first.
    func endInput() {
        guard isOpen else { return }
        queue.dropAllDroppable()
        state = .draining(.peerClosed)
        finishIfDrained()
        updateInterest()
    }

    /// Marks the connection closed; the server has unwatched and closed the descriptor.
    func markClosed(_ reason: DisconnectReason) {
        state = .closed(reason)
        queue.removeAll()
    }

    // MARK: Private

    private func finishIfDrained() {
        if case .draining(let reason) = state, queue.isEmpty { end(reason) }
    }

    /// Shuts the socket down and leaves the rest to the loop: a shut-down socket is readable
    /// (end of file), so the loop calls the server, which closes it and reports it. This is
    /// how a failure inside `send` is reported without calling back into the daemon from
    /// inside its own call.
    private func end(_ reason: DisconnectReason) {
        switch state {
        case .ending, .closed: return
        case .open, .draining: break
        }
        state = .ending(reason)
        queue.removeAll()
        shutdown(descriptor.rawValue, Int32(SHUT_RDWR))
        updateInterest()
    }

    private func updateInterest() {
        let wanted: (readable: Bool, writable: Bool)
        switch state {
        // A client that sends faster than it reads its replies is not read from until it
        // has caught up: back-pressure instead of a disconnection.
        case .open: wanted = (queue.replyBytes < queue.maximumReplyBytes / 2, !queue.isEmpty)
        case .draining: wanted = (false, true)
        case .ending: wanted = (true, false)
        case .closed: return
        }
        guard wanted != interest else { return }
        interest = wanted
        do {
            try loop.setInterest(descriptor, readable: wanted.readable, writable: wanted.writable)
        } catch {
            // Only possible if the descriptor is no longer watched; nothing could wake us
            // for it, so give up on it (SocketServer closes it at its next look).
            state = .ending(.failed(error))
        }
    }
}

/// What the clients of one server share for writing; the loop is single-threaded, so they
/// never use it at once.
final class SharedOutput {
    /// One buffer for gathering small lines into one `send`.
    var scratch: [UInt8] = []
    private let loop: EventLoop
    /// The clients with lines that wait for the end of the loop's wake-up, in order.
    private var awaitingFlush: [ClientConnection] = []

    init(loop: EventLoop) {
        self.loop = loop
        scratch.reserveCapacity(65536)
    }

    /// Flushes `client` once the handlers of this wake-up have run (at once outside one):
    /// one deferred action per wake-up for all clients.
    func flushAtEndOfWakeUp(_ client: ClientConnection) {
        awaitingFlush.append(client)
        guard awaitingFlush.count == 1 else { return }
        loop.atEndOfWakeUp(flushAwaiting)
    }

    /// Made once rather than per wake-up. By index, with no copy of the array held, so that
    /// emptying it keeps its buffer.
    private lazy var flushAwaiting: () -> Void = { [unowned self] in
        var index = 0
        while index < awaitingFlush.count {
            let client = awaitingFlush[index]
            index += 1
            client.flush()
        }
        awaitingFlush.removeAll(keepingCapacity: true)
    }
}
