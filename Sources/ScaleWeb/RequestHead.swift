/// Whether the bytes a client has sent so far hold a whole request head (the request line
/// and the headers, up to the empty line), and whether it is within the limits. The server
/// looks at them without taking them off the socket (`MSG_PEEK`), so that libmicrohttpd gets
/// the connection with every byte still there.
enum RequestHeadScan: Equatable {
    /// The head ends after `length` bytes.
    case complete(length: Int)
    /// No empty line yet, and within the limits so far.
    case incomplete
    /// More bytes or more lines than allowed before the empty line: the answer is 431.
    case tooLarge

    /// - Parameters:
    ///   - bytes: What the client sent so far (at least `maximumBytes + 1` of it when there is
    ///     that much, so that a head one byte too long is seen as such).
    ///   - maximumBytes: The most a head may take, its empty line included.
    ///   - maximumLines: The most lines a head may have, the request line included.
    static func scan(_ bytes: UnsafeRawBufferPointer, maximumBytes: Int, maximumLines: Int) -> RequestHeadScan {
        var lines = 0
        var lineLength = 0
        for (index, byte) in bytes.enumerated() {
            guard index < maximumBytes else { return .tooLarge }
            if byte == UInt8(ascii: "\n") {
                if lineLength == 0 {
                    // An empty line: the end of the head, or (before the request line) one of
                    // the empty lines a server ignores (RFC 9112, 2.2).
                    if lines > 0 { return .complete(length: index + 1) }
                } else {
                    lines += 1
                    if lines > maximumLines { return .tooLarge }
                }
                lineLength = 0
            } else if byte != UInt8(ascii: "\r") {
                lineLength += 1
            }
        }
        return .incomplete
    }
}

/// Which connections the server takes, and which it lets go to make room: a pure function
/// of what it holds, so that it can be tested without sockets.
///
/// A connection that is still waiting for its request head (a slow or a silent client) can
/// be let go for a new one; one being served (its head in, or a stream) cannot. So clients
/// that trickle their headers never keep a quick request from being served, and the server
/// answers a connection it cannot take at once instead of leaving it in the kernel's queue.
struct AdmissionPolicy {
    /// Connections at once, all addresses together.
    var connections: Int
    /// Connections at once from one address.
    var connectionsPerAddress: Int

    enum Decision: Equatable {
        /// Room enough.
        case admit
        /// Take it in place of the connection that has waited longest for its head: among
        /// those of its own address when `sameAddress` (the address has its share), else
        /// among all.
        case admitInPlaceOfOldestWaiting(sameAddress: Bool)
    }

    /// - Parameters:
    ///   - held: The connections held now.
    ///   - heldFromAddress: Those from the new connection's address.
    /// - Returns: What to do with a new connection; when no connection waits to be let go,
    ///   a decision to take one in place of another means a refusal (503).
    func decide(held: Int, heldFromAddress: Int) -> Decision {
        if heldFromAddress >= connectionsPerAddress { return .admitInPlaceOfOldestWaiting(sameAddress: true) }
        if held >= connections { return .admitInPlaceOfOldestWaiting(sameAddress: false) }
        return .admit
    }
}
