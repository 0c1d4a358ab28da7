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

/// Calls a system function until it is not interrupted by a signal.
/// - Returns: The function's non-negative result.
/// - Throws: `Errno` for any failure other than `EINTR`.
@discardableResult
package func retryingInterrupts<Result: BinaryInteger>(_ call: () -> Result) throws(Errno) -> Result {
    while true {
        let result = call()
        if result >= 0 { return result }
        let error = Errno.current
        if error != .interrupted { throw error }
    }
}
