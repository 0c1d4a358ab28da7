import Glibc
import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// One line from the daemon: its bytes (without the newline) and its decoded message.
public struct ReceivedLine: Sendable {
    /// The line as the daemon sent it, without its `\n`: what `--json` passes through.
    public let bytes: [UInt8]
    /// The line decoded by ScaleProtocol, the same types the daemon writes it from.
    public let message: DaemonLine

    /// ``bytes`` as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `"READING"`, `"STATUS"`…, or a class this build does not know, as sent.
    public var className: String { message.className }

    /// Whether this is a line of the stream (READING or PEAK) rather than a reply.
    public var isStream: Bool { message.isStream }
}

/// The reply to a request, typed, with the line as the daemon sent it (for `--json`, and
/// for forcescale-web's answers, which pass it on with any field a later daemon added).
public struct DaemonReply<Message: DaemonLineMessage>: Sendable {
    /// The reply decoded.
    public let message: Message
    /// The line as the daemon sent it, without its `\n`.
    public let bytes: [UInt8]

    /// ``bytes`` as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Why talking to the daemon failed, said so that the user knows what to do next.
public enum DaemonClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Nothing listens on the path: no socket file, or a stale one (`ECONNREFUSED`).
    case notListening(path: String)
    /// The socket file's permissions keep this user out (`EACCES`).
    case permissionDenied(path: String, group: String)
    /// Connecting failed for another reason (the path is too long, not a socket…).
    case connectFailed(SystemError)
    /// No reply of the expected class came in time.
    case timedOut(path: String, waitingFor: String, seconds: Double)
    /// The daemon closed the connection (it stopped, or dropped this client).
    case closed(path: String)
    /// The daemon sent a line that cannot be read: not a JSON object with a `class`, or a
    /// message of a known class with a field missing or of the wrong type.
    case malformedLine(path: String, line: String, problem: ProtocolDecodeError)
    /// The daemon speaks a protocol major version this client does not know.
    case unsupportedProtocol(path: String, major: Int)
    /// The daemon answered the request with an ERROR line.
    case refused(message: String, request: String?)
    /// Sending or receiving failed.
    case failed(SystemError)

    public var description: String {
        switch self {
        case .notListening(let path):
            return "no forcescaled is listening on \(path); start it with 'forcescaled' (or 'systemctl start forcescaled'), or give --socket"
        case .permissionDenied(let path, let group):
            return "permission denied on \(path): join group '\(group)' (then log in again)"
        case .connectFailed(let error):
            return "cannot connect to forcescaled: \(error)"
        case .timedOut(let path, let what, let seconds):
            return "\(path): no \(what) reply from forcescaled within \(DaemonClient.seconds(seconds)) s"
        case .closed(let path):
            return "forcescaled closed the connection on \(path)"
        case .malformedLine(let path, let line, let problem):
            let shown = line.count > 80 ? String(line.prefix(80)) + "…" : line
            return "\(path): forcescaled sent a line that is not a protocol message (\(problem)): \(shown)"
        case .unsupportedProtocol(let path, let major):
            return "\(path): forcescaled speaks protocol \(major), this forcescale speaks \(VersionMessage.currentMajor); install matching versions"
        case .refused(let message, _):
            return message
        case .failed(let error):
            return "\(error)"
        }
    }

    /// Whether the daemon refused the request for lack of permission, or the socket did.
    public var isPermissionDenied: Bool {
        switch self {
        case .permissionDenied: return true
        case .refused(let message, _): return message.hasPrefix("permission denied")
        default: return false
        }
    }
}

/// A client of forcescaled's Unix socket (docs/protocol.md): connects, reads the VERSION
/// greeting, sends request lines and reads the daemon's lines, each with a timeout.
///
/// Blocking, one thread: every wait is a `poll(2)` on the socket with a deadline, so no
/// call waits longer than asked. For an event loop, `descriptor` can be watched and
/// `readAvailable()` called when it is readable.
public final class DaemonClient {
    /// The system daemon's socket (forcescaled running as root).
    public static let systemSocketPath = "/run/forcescale/forcescale.sock"
    /// The socket file name in `$XDG_RUNTIME_DIR` (forcescaled running as a user).
    public static let userSocketName = "forcescale.sock"

    /// Where forcescaled listens unless told otherwise: the system socket when it exists,
    /// else `$XDG_RUNTIME_DIR/forcescale.sock` (a user's daemon), as forcescaled chooses
    /// its own default as root or as a user. Without either, the system path, so that the
    /// error names it.
    public static func defaultSocketPath() -> String {
        var status = stat()
        if lstat(systemSocketPath, &status) == 0 { return systemSocketPath }
        if let base = Environment.value("XDG_RUNTIME_DIR"), !base.isEmpty { return base + "/" + userSocketName }
        return systemSocketPath
    }

    public let path: String
    /// The connected socket: an event loop watches it for readability and then calls
    /// `readAvailable()`. Blocking, but nothing here waits on it except in `poll(2)`.
    public let descriptor: FileDescriptor
    /// The daemon's VERSION greeting (set once `init` returns).
    public private(set) var version: VersionMessage!

    /// Bytes received and not yet cut into lines.
    private var pending: [UInt8] = []
    /// Lines cut and not yet handed out, each decoded or the reason it could not be: a
    /// broken line is reported when its turn comes, after the lines that came before it.
    private var lines: [Result<ReceivedLine, DaemonClientError>] = []
    private var readScratch = [UInt8](repeating: 0, count: 65536)
    private var reachedEnd = false
    private var isClosed = false

    /// Connects and reads the VERSION greeting.
    /// - Parameters:
    ///   - path: The daemon's socket.
    ///   - timeout: Seconds to wait for the greeting.
    /// - Throws: `DaemonClientError`: `.notListening`, `.permissionDenied`, `.timedOut`,
    ///   `.unsupportedProtocol`…
    public init(path: String, timeout: Double = 5) throws(DaemonClientError) {
        self.path = path
        do throws(Errno) {
            descriptor = FileDescriptor(rawValue: try Errno.checking {
                socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            })
        } catch {
            throw .connectFailed(SystemError(path: path, errno: error))
        }
        do throws(DaemonClientError) {
            try connect()
            guard let greeting = try nextLine(timeout: timeout) else {
                throw .timedOut(path: path, waitingFor: "VERSION", seconds: timeout)
            }
            guard case .version(let message) = greeting.message else {
                throw .malformedLine(
                    path: path, line: greeting.text,
                    problem: .unexpectedClass(expected: VersionMessage.className, found: greeting.className))
            }
            guard message.protocolMajor == VersionMessage.currentMajor else {
                throw .unsupportedProtocol(path: path, major: message.protocolMajor)
            }
            version = message
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the connection; calling it again does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        try? descriptor.close()
    }

    /// Sends one request.
    /// - Parameter request: The request, written as ``ClientRequest/line``.
    /// - Throws: `.closed` when the daemon has gone, `.failed`.
    public func send(_ request: ClientRequest) throws(DaemonClientError) {
        try send(request.line)
    }

    /// Sends one line as it is, for what ``ClientRequest`` cannot say (a test's bad line);
    /// a `\n` is added when missing.
    /// - Parameter line: The line.
    /// - Throws: `.closed` when the daemon has gone, `.failed`.
    public func send(_ line: String) throws(DaemonClientError) {
        var bytes = Array(line.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        var offset = 0
        while offset < bytes.count {
            do throws(Errno) {
                // MSG_NOSIGNAL: a daemon that has gone must cost an EPIPE, not this process.
                offset += try bytes.withUnsafeBytes { buffer in
                    Result { () throws(Errno) in
                        try Errno.retrying { Glibc.send(descriptor.rawValue, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL)) }
                    }
                }.get()
            } catch {
                if error == .brokenPipe || error.rawValue == ECONNRESET { throw .closed(path: path) }
                throw .failed(SystemError(path: path, errno: error))
            }
        }
    }

    /// Sends a request and waits for its reply: the next message of type `reply`, or an
    /// ERROR. READING and PEAK lines that arrive meanwhile go to `onStream`; other lines are
    /// skipped, as the protocol asks of clients.
    /// - Parameters:
    ///   - request: The request.
    ///   - reply: The type of the reply: the message of the request's class
    ///     (`StatusMessage` for `.status`).
    ///   - timeout: Seconds to wait for the reply; `nil` waits for ever.
    ///   - onStream: Gets the stream lines that arrive before the reply.
    /// - Returns: The reply, and its line as sent.
    /// - Throws: `DaemonClientError.refused` for an ERROR reply, `.timedOut`, `.closed`,
    ///   `.malformedLine`; or what `onStream` throws.
    public func request<Reply: DaemonLineMessage>(
        _ request: ClientRequest, expecting reply: Reply.Type, timeout: Double? = 5,
        onStream: (ReceivedLine) throws -> Void = { _ in }
    ) throws -> DaemonReply<Reply> {
        try send(request)
        return try awaitReply(reply, timeout: timeout, onStream: onStream)
    }

    /// Waits for the next message of type `reply` or an ERROR, as `request` does after
    /// sending.
    /// - Parameters:
    ///   - reply: The type of the reply.
    ///   - timeout: Seconds to wait for the reply; `nil` waits for ever.
    ///   - onStream: Gets the stream lines that arrive before the reply.
    /// - Returns: The reply, and its line as sent.
    /// - Throws: As ``request(_:expecting:timeout:onStream:)``.
    public func awaitReply<Reply: DaemonLineMessage>(
        _ reply: Reply.Type, timeout: Double? = 5, onStream: (ReceivedLine) throws -> Void = { _ in }
    ) throws -> DaemonReply<Reply> {
        let deadline = timeout.map { MonotonicClock.now() + Int64($0 * 1_000_000) }
        while true {
            guard let line = try nextLine(deadline: deadline) else {
                throw DaemonClientError.timedOut(path: path, waitingFor: Reply.className, seconds: timeout ?? 0)
            }
            if let message = Reply(line.message) { return DaemonReply(message: message, bytes: line.bytes) }
            switch line.message {
            case .error(let error): throw DaemonClientError.refused(message: error.message, request: error.requestClass)
            case .reading, .peak: try onStream(line)
            default: continue
            }
        }
    }

    /// The next line, waiting at most `timeout` seconds (`nil`: for ever).
    /// - Returns: The line, or `nil` when none came in time.
    /// - Throws: `.closed` at the end of the stream, `.malformedLine`, `.failed`.
    public func nextLine(timeout: Double?) throws(DaemonClientError) -> ReceivedLine? {
        try nextLine(deadline: timeout.map { MonotonicClock.now() + Int64($0 * 1_000_000) })
    }

    /// The next line, waiting until `deadline` on the monotonic clock (microseconds;
    /// `nil`: for ever).
    public func nextLine(deadline: Int64?) throws(DaemonClientError) -> ReceivedLine? {
        while true {
            if !lines.isEmpty { return try lines.removeFirst().get() }
            if reachedEnd { throw .closed(path: path) }
            var remaining: Int32 = -1
            if let deadline {
                let left = deadline - MonotonicClock.now()
                if left <= 0 { return nil }
                remaining = Int32(min((left + 999) / 1000, Int64(Int32.max)))
            }
            var entry = pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0)
            let ready: Int32
            do throws(Errno) {
                // After a signal the remaining time is worked out again at the top.
                ready = try Errno.retrying { poll(&entry, 1, remaining) }
            } catch {
                throw .failed(SystemError(path: path, errno: error))
            }
            if ready == 0 { continue }
            try receive()
        }
    }

    /// Whether lines have been read from the socket and not handed out yet: an event loop is
    /// not woken for them, so its caller asks `readAvailable()` again.
    public var hasBufferedLines: Bool { !lines.isEmpty }

    /// The lines that can be read now without waiting, for a caller on an event loop.
    /// - Throws: `.closed` once the daemon has closed the connection and every line before
    ///   that has been handed out; `.malformedLine` for a line that cannot be read, once
    ///   the lines before it have been handed out.
    public func readAvailable() throws(DaemonClientError) -> [ReceivedLine] {
        if lines.isEmpty, !reachedEnd { try receive() }
        if lines.isEmpty, reachedEnd { throw .closed(path: path) }
        var available: [ReceivedLine] = []
        while let first = lines.first, case .success(let line) = first {
            available.append(line)
            lines.removeFirst()
        }
        if available.isEmpty, let first = lines.first {
            lines.removeFirst()
            _ = try first.get()
        }
        return available
    }

    // MARK: Private

    private func connect() throws(DaemonClientError) {
        let address: UnixSocketAddress
        do throws(SocketError) {
            address = try UnixSocketAddress(path: path)
        } catch {
            throw .connectFailed(SystemError(path: path, errno: Errno(rawValue: ENAMETOOLONG), hint: "\(error)"))
        }
        do throws(Errno) {
            try Errno.retrying { address.withSocketAddress { Glibc.connect(descriptor.rawValue, $0, $1) } }
        } catch {
            switch error.rawValue {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .notListening(path: path)
            case EACCES, EPERM: throw .permissionDenied(path: path, group: Self.groupToJoin(path))
            default: throw .connectFailed(SystemError(path: path, errno: error))
            }
        }
    }

    /// Reads once and cuts what came into lines.
    private func receive() throws(DaemonClientError) {
        let count: Int
        do throws(Errno) {
            count = try readScratch.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in try Errno.retrying { recv(descriptor.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT)) } }
            }.get()
        } catch {
            if error == .wouldBlock { return }
            if error.rawValue == ECONNRESET {
                reachedEnd = true
                return
            }
            throw .failed(SystemError(path: path, errno: error))
        }
        if count == 0 {
            reachedEnd = true
            return
        }
        pending.append(contentsOf: readScratch[0..<count])
        var start = 0
        while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let bytes = pending[start..<newline]
            start = newline + 1
            guard !bytes.isEmpty else { continue }
            let line = Array(bytes)
            do {
                lines.append(.success(ReceivedLine(bytes: line, message: try DaemonLine.decode(line: line))))
            } catch {
                lines.append(.failure(.malformedLine(path: path, line: String(decoding: line, as: UTF8.self), problem: error)))
            }
        }
        pending.removeFirst(start)
    }

    /// The group whose members may connect: the socket file's group, unless that is root's
    /// (then nothing names a group to join, and the packaging's group is the advice).
    private static func groupToJoin(_ path: String) -> String {
        var status = stat()
        guard stat(path, &status) == 0, status.st_gid != 0, let name = groupName(status.st_gid) else { return "forcescale" }
        return name
    }

    private static func groupName(_ id: gid_t) -> String? {
        var group = Glibc.group()
        var result: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrgid_r(id, &group, &buffer, buffer.count, &result) == 0, result != nil else { return nil }
        return String(cString: group.gr_name)
    }

    /// `10` for 10.0, `2.5` for 2.5: a duration as a person would type it.
    public static func seconds(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int64(value)) : String(value)
    }
}
