import Glibc

/// A file descriptor: the kernel's number for an open file, socket, timer or device, in a
/// type of its own so that it cannot be mixed up with a count, a pid or a return value
/// across module boundaries, and so that reading, writing and closing go through the
/// funnel (``Errno/retrying(_:)``) instead of each caller handling `EINTR` and -1 itself.
///
/// It does not own the descriptor, as swift-system's `FileDescriptor` does not: copying it
/// copies the number, and nothing closes it by itself. The classes that own one (the
/// loop's timers, `UnixListener`, `DaemonClient`, `EvdevDevice`) close it when released.
public struct FileDescriptor: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The number, for C functions that this type does not wrap (`ioctl`, `getsockopt`…).
    public let rawValue: CInt

    /// Wraps a number the caller got from the kernel (or inherited: 0, 1, 2, 3…).
    public init(rawValue: CInt) { self.rawValue = rawValue }

    public static let standardInput = FileDescriptor(rawValue: STDIN_FILENO)
    public static let standardOutput = FileDescriptor(rawValue: STDOUT_FILENO)
    public static let standardError = FileDescriptor(rawValue: STDERR_FILENO)

    /// `descriptor 7`, for messages.
    public var description: String { "descriptor \(rawValue)" }

    /// Opens a file; `open(2)` through the funnel (it can be interrupted on a FIFO).
    /// - Parameters:
    ///   - path: The file.
    ///   - flags: `O_RDONLY`, `O_WRONLY | O_CREAT`…; pass `O_CLOEXEC` too, so that the
    ///     descriptor does not leak into child processes.
    ///   - permissions: The mode of a file that `O_CREAT` makes (the umask may remove some).
    /// - Returns: The new descriptor, which the caller closes.
    /// - Throws: `Errno` (`ENOENT`, `EACCES`, `EEXIST` with `O_EXCL`…).
    public static func open(_ path: String, _ flags: CInt, permissions: mode_t = 0) throws(Errno) -> FileDescriptor {
        FileDescriptor(rawValue: try Errno.retrying { Glibc.open(path, flags, permissions) })
    }

    /// Closes the descriptor, once and without retrying (see ``Errno/checking(_:)``).
    /// - Throws: `Errno`; after `EIO` from a network file system the written data may be
    ///   lost, but the descriptor is closed whatever the error.
    public func close() throws(Errno) {
        try Errno.checking { Glibc.close(rawValue) }
    }

    /// Reads what is there, up to the buffer's size.
    /// - Parameter buffer: Where the bytes go.
    /// - Returns: How many bytes were read; 0 at the end of a file or stream.
    /// - Throws: `Errno`; `.wouldBlock` when a non-blocking descriptor has nothing yet.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try Errno.retrying { Glibc.read(rawValue, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the descriptor takes now, which may be less than all of it.
    /// - Parameter bytes: What to write.
    /// - Returns: How many bytes were written.
    /// - Throws: `Errno`; `.wouldBlock` when a non-blocking descriptor is full, `EPIPE` when
    ///   the reader has gone.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try Errno.retrying { Glibc.write(rawValue, bytes.baseAddress, bytes.count) }
    }

    /// Writes all of `bytes`, in as many writes as it takes (a pipe or a socket may take
    /// less than was offered). For blocking descriptors: a non-blocking one that fills up
    /// throws `.wouldBlock` with part of the bytes written.
    /// - Parameter bytes: What to write.
    /// - Throws: `Errno` from the first write that fails.
    public func writeAll(_ bytes: UnsafeRawBufferPointer) throws(Errno) {
        var offset = 0
        while offset < bytes.count {
            offset += try write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
        }
    }
}
