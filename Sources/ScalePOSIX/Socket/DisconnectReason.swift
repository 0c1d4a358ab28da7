/// Why a client connection ended, for the daemon's log.
public enum DisconnectReason: Hashable, Sendable, CustomStringConvertible {
    /// The client closed its end (after its last replies were written, if it still read).
    case peerClosed
    /// Reading or writing failed: `EPIPE` or `ECONNRESET` when the client vanished.
    case failed(Errno)
    /// The client stopped reading while asking for replies, until more than `limit` bytes
    /// of them were waiting; readings alone never cause this, they are dropped instead.
    case unresponsive(limit: Int)
    /// The daemon closed it (`ClientConnection.close`), e.g. after a line too long.
    case closedByServer
    /// The server itself shut down.
    case serverShutdown

    public var description: String {
        switch self {
        case .peerClosed: return "closed by the client"
        case .failed(let error): return "connection failed: \(error)"
        case .unresponsive(let limit): return "unresponsive: stopped reading with more than \(limit) bytes of replies waiting"
        case .closedByServer: return "closed by the daemon"
        case .serverShutdown: return "daemon shutting down"
        }
    }
}
