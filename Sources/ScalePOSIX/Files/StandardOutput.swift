import Glibc

/// Buffered writing to a file descriptor with plain `write(2)`: one system call per 64 KiB
/// when output goes to a file or pipe, or per line when someone watches it live.
public final class OutputChannel {
    public let descriptor: FileDescriptor
    private var buffer: [UInt8] = []
    private let capacity: Int

    // The tools write from their one main thread only, so sharing these is safe.
    nonisolated(unsafe) public static let standardOutput = OutputChannel(descriptor: .standardOutput)
    nonisolated(unsafe) public static let standardError = OutputChannel(descriptor: .standardError, capacity: 0)

    public init(descriptor: FileDescriptor, capacity: Int = 64 * 1024) {
        self.descriptor = descriptor
        self.capacity = capacity
        buffer.reserveCapacity(capacity)
    }

    /// Whether the descriptor is a terminal.
    public var isTerminal: Bool { isatty(descriptor.rawValue) == 1 }

    /// Appends text; writes out when the buffer is full.
    /// - Throws: `Errno` when writing fails (`EPIPE` when the reader has gone).
    public func write(_ text: String) throws(Errno) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { try flush() }
    }

    /// Appends what `produce` appends to the buffer: output made as bytes goes in without a
    /// `String` made of it first. Writes out when the buffer is full.
    public func write(_ produce: (inout [UInt8]) -> Void) throws(Errno) {
        produce(&buffer)
        if buffer.count >= capacity { try flush() }
    }

    /// Writes out everything buffered.
    public func flush() throws(Errno) {
        var written = 0
        defer { buffer.removeFirst(written) }
        while written < buffer.count {
            // Array's withUnsafeBytes rethrows an untyped error: carry the typed one out in a Result.
            written += try buffer.withUnsafeBytes { bytes in
                Result { () throws(Errno) in try descriptor.write(UnsafeRawBufferPointer(rebasing: bytes[written...])) }
            }.get()
        }
    }
}

/// Prints a diagnostic to standard error, unbuffered; failures to do so are ignored
/// because there is nowhere left to report them.
public func printError(_ text: String) {
    try? OutputChannel.standardError.write(text.hasSuffix("\n") ? text : text + "\n")
}
