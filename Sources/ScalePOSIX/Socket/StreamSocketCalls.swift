import Glibc

/// A connected stream socket's own calls, which `read` and `write` cannot make: looking at
/// what the peer sent without taking it, sending without a `SIGPIPE`, and shutting one or
/// both directions down. Through the funnel, like the descriptor's other calls, so that a
/// module serving sockets (forcescale-web's admission) makes no system call itself.
extension FileDescriptor {
    /// Which direction `shutdown` ends.
    public enum ShutdownDirection: Sendable {
        /// Nothing more is sent: the peer reads an end of stream after what was sent.
        case sending
        /// Nothing more either way: whoever else holds the socket (a library serving it)
        /// sees the connection end at its next read or write.
        case both
    }

    /// Copies what the peer has sent so far without taking it off the socket (`recv` with
    /// `MSG_PEEK`), without waiting: the bytes stay there for whoever reads the socket next.
    /// - Parameter buffer: Where the copy goes; at most its size is looked at.
    /// - Returns: How many bytes were copied; 0 when the peer has closed its side.
    /// - Throws: `Errno`; `.wouldBlock` when nothing has come yet.
    public func peek(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try Errno.retrying { recv(rawValue, buffer.baseAddress, buffer.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) }
    }

    /// Sends what the socket takes now, without waiting (`MSG_DONTWAIT`), and without a
    /// `SIGPIPE` when the peer has gone (`MSG_NOSIGNAL`): that costs an `EPIPE` here instead.
    /// - Parameter bytes: What to send.
    /// - Returns: How many bytes the socket took, which may be fewer than all.
    /// - Throws: `Errno`; `.wouldBlock` when the socket's buffer is full, `.brokenPipe` or
    ///   `ECONNRESET` when the peer has gone.
    public func send(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Errno.retrying { Glibc.send(rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }

    /// Ends one or both directions of the connection (`shutdown(2)`), for every holder of
    /// the socket, where `close` would only drop this descriptor.
    /// - Parameter direction: What ends.
    /// - Throws: `Errno`; `ENOTCONN` when the connection has already ended.
    public func shutdown(_ direction: ShutdownDirection) throws(Errno) {
        let how = switch direction {
        case .sending: Int32(SHUT_WR)
        case .both: Int32(SHUT_RDWR)
        }
        _ = try Errno.retrying { Glibc.shutdown(rawValue, how) }
    }
}
