import Glibc

/// A filesystem path, or a name in Linux's abstract namespace, as a `sockaddr_un` ready for
/// `bind`, `connect` and `sendto`.
package struct UnixSocketAddress {
    /// Room in `sun_path`, less the terminating zero.
    package static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    package let path: String
    private var storage = sockaddr_un()
    /// What `bind` and `connect` are told: the whole structure for a path (terminated by its
    /// zero), the exact length for an abstract name, whose trailing zeros would be part of it.
    private let length: socklen_t

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
        length = socklen_t(MemoryLayout<sockaddr_un>.size)
    }

    /// A name in the abstract namespace (no file: `@name` in systemd's and ss's spelling,
    /// a leading zero byte in `sun_path`).
    /// - Parameter name: The name without its leading zero byte.
    /// - Throws: `SocketError.pathTooLong` when it does not fit.
    package init(abstractName name: [UInt8]) throws(SocketError) {
        path = "@" + String(decoding: name, as: UTF8.self)
        guard name.count <= Self.maximumPathBytes else { throw .pathTooLong(path: path, limit: Self.maximumPathBytes) }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { destination in
            destination[0] = 0
            UnsafeMutableRawBufferPointer(rebasing: destination[1...]).copyBytes(from: name)
        }
        length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + 1 + name.count)
    }

    /// Calls `body` with the address as the generic `sockaddr` that `bind` and `connect` take.
    package func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
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
