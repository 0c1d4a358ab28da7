import Glibc

/// An `errno` value with the C library's message for it.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(rawValue: errno) }

    public static let noSuchFile = Errno(rawValue: ENOENT)
    public static let permissionDenied = Errno(rawValue: EACCES)
    public static let interrupted = Errno(rawValue: EINTR)
    public static let brokenPipe = Errno(rawValue: EPIPE)
    public static let isDirectory = Errno(rawValue: EISDIR)

    public var description: String { String(cString: strerror(rawValue)).lowercased() }
}

/// A failed operation on a path, with what the user can do about it.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Errno
    public var hint: String?

    public init(path: String, errno: Errno, hint: String? = nil) {
        self.path = path
        self.errno = errno
        self.hint = hint
    }

    public var description: String {
        "\(path): \(errno)" + (hint.map { " (\($0))" } ?? "")
    }
}

// MARK: - The funnel

extension Errno {
    /// Calls a system function that fails with -1 and `errno`, again for as long as a signal
    /// interrupts it: the one place where `EINTR` is retried, so that no caller forgets to,
    /// and where the -1 becomes a typed error (swift-system's `valueOrErrno`).
    ///
    /// Not for `close(2)`: see ``checking(_:)``.
    /// - Parameter call: The call, e.g. `{ read(fd, buffer, count) }`.
    /// - Returns: The call's result, which is not negative.
    /// - Throws: `Errno` for any failure other than `EINTR` (`EAGAIN` included: a
    ///   non-blocking caller decides what that means).
    @discardableResult
    public static func retrying<Result: BinaryInteger>(_ call: () -> Result) throws(Errno) -> Result {
        while true {
            let result = call()
            if result >= 0 { return result }
            let error = Errno.current
            if error != .interrupted { throw error }
        }
    }

    /// Calls a system function once and turns its -1 into a typed error, `EINTR` included.
    /// For `close(2)`: Linux releases the descriptor even when close is interrupted, so a
    /// retry could close a descriptor that another thread has opened under the same number
    /// in the meantime.
    /// - Parameter call: The call, e.g. `{ close(fd) }`.
    /// - Returns: The call's result, which is not negative.
    /// - Throws: `Errno` for any failure.
    @discardableResult
    public static func checking<Result: BinaryInteger>(_ call: () -> Result) throws(Errno) -> Result {
        let result = call()
        if result >= 0 { return result }
        throw Errno.current
    }

    /// `EAGAIN`: a non-blocking descriptor has nothing to read, or no room to write.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
}
