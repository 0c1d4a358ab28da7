import Glibc

/// A filesystem path as a `sockaddr_un`, ready for `bind` and `connect`.
package struct UnixSocketAddress {
    /// Room in `sun_path`, less the terminating zero.
    package static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    package let path: String
    private var storage = sockaddr_un()

    /// - Throws: `SocketError.pathTooLong`, or `.notASocket` for an empty path or one with
    ///   a zero byte (that would name an abstract socket, which has no file to protect).
    package init(path: String) throws(SocketError) {
        let bytes = Array(path.utf8)
        guard bytes.count <= Self.maximumPathBytes else {
            throw .pathTooLong(path: path, limit: Self.maximumPathBytes)
        }
        guard !bytes.isEmpty, !bytes.contains(0) else { throw .notASocket(path: path) }
        self.path = path
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { destination in
            destination.copyBytes(from: bytes)
            destination[bytes.count] = 0
        }
    }

    /// Calls `body` with the address as the generic `sockaddr` that `bind` and `connect` take.
    package func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// A new non-blocking, close-on-exec stream socket.
    /// - Throws: `SocketError.system` naming `path`.
    package static func makeStreamSocket(for path: String) throws(SocketError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else { throw .current("create a socket for", path: path) }
        return descriptor
    }

    /// Whether something accepts connections at `path` right now.
    /// - Returns: `true` when a connection was accepted or the backlog was full, `false` when
    ///   the file is there but nothing listens (`ECONNREFUSED`) or it vanished (`ENOENT`).
    /// - Throws: `SocketError.system` when it cannot tell, e.g. no permission to connect.
    package static func isListening(at address: UnixSocketAddress) throws(SocketError) -> Bool {
        let probe = try makeStreamSocket(for: address.path)
        defer { close(probe) }
        let result = address.withSocketAddress { connect(probe, $0, $1) }
        if result == 0 { return true }
        switch errno {
        case EAGAIN, EINPROGRESS: return true    // listening, with a full backlog
        case ECONNREFUSED, ENOENT: return false
        default:
            throw .current("check whether something listens on", path: address.path,
                           hint: "a stale socket is only replaced once it is known to be dead")
        }
    }
}
