import Glibc

/// Why a Unix socket could not be set up or used, said so that whoever reads the log knows
/// what to do next.
public enum SocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The path does not fit `sockaddr_un` (107 bytes and a terminating zero).
    case pathTooLong(path: String, limit: Int)
    /// Something accepts connections on the path: most likely another forcescaled.
    case alreadyListening(path: String)
    /// The path exists and is not a socket, so it is not ours to remove.
    case notASocket(path: String)
    /// An inherited descriptor (socket activation) is not a listening stream socket.
    case notAListeningSocket(descriptor: FileDescriptor, reason: String)
    /// A system call failed; `operation` says what was being done ("bind", "listen on").
    case system(operation: String, SystemError)

    public var description: String {
        switch self {
        case .pathTooLong(let path, let limit):
            return "\(path): socket path is longer than \(limit) bytes; choose a shorter path"
        case .alreadyListening(let path):
            return "\(path): another process (probably forcescaled) is already listening there; stop it or choose another socket path"
        case .notASocket(let path):
            return "\(path): exists and is not a socket; remove it or choose another socket path"
        case .notAListeningSocket(let descriptor, let reason):
            return "inherited descriptor \(descriptor.rawValue) is not a listening Unix stream socket (\(reason)); check the .socket unit's ListenStream="
        case .system(let operation, let error):
            return "cannot \(operation) \(error)"
        }
    }

    /// A `.system` error for the calling thread's `errno`.
    package static func current(_ operation: String, path: String, hint: String? = nil) -> SocketError {
        .system(operation: operation, SystemError(path: path, errno: .current, hint: hint))
    }
}
