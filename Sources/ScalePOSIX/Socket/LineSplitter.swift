/// Cuts a client's byte stream into lines, however the reads happened to split it, and
/// refuses to hold more than one line's worth of bytes: a client that never sends a newline
/// cannot make the daemon buffer without bound.
public struct LineSplitter: Sendable {
    /// What the bytes read so far contained, in order.
    public enum Piece: Hashable, Sendable {
        /// A complete line without its `\n` (and without a `\r` before it, for clients such
        /// as telnet), its bytes as received: whether they are UTF-8 is for the reader of
        /// the line to check, so that it can say where they stop being so.
        case line([UInt8])
        /// A line grew past the limit. Its bytes are thrown away up to the next newline, after
        /// which lines are read normally again (if the caller keeps the connection).
        case lineTooLong
    }

    /// The most bytes a line may hold before its `\n` (a `\r` counts).
    public let maximumLineBytes: Int
    /// The unfinished line so far.
    private var partial: [UInt8] = []
    /// Whether the current line already overflowed and is being skipped.
    private var isDiscarding = false

    public init(maximumLineBytes: Int = 65536) {
        precondition(maximumLineBytes > 0, "a line must be allowed at least one byte")
        self.maximumLineBytes = maximumLineBytes
    }

    /// The bytes of an unfinished line held back for the next read.
    public var pendingByteCount: Int { partial.count }

    /// Adds bytes read from the client.
    /// - Parameters:
    ///   - bytes: The bytes, in the order read.
    ///   - pieces: Gets the lines completed by these bytes, and `.lineTooLong` for each line
    ///     that overflowed (reported once per line, as soon as it overflows). Empty lines are
    ///     left out: they carry nothing.
    public mutating func append(_ bytes: UnsafeRawBufferPointer, to pieces: inout [Piece]) {
        var start = 0
        while let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let segment = UnsafeRawBufferPointer(rebasing: bytes[start..<newline])
            start = newline + 1
            if isDiscarding {
                isDiscarding = false
            } else if partial.count + segment.count > maximumLineBytes {
                pieces.append(.lineTooLong)
            } else {
                partial.append(contentsOf: segment)
                if partial.last == UInt8(ascii: "\r") { partial.removeLast() }
                if !partial.isEmpty { pieces.append(.line(partial)) }
            }
            partial.removeAll(keepingCapacity: partial.count <= 4096)
        }
        guard !isDiscarding, start < bytes.count else { return }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
        if partial.count + rest.count > maximumLineBytes {
            // Report now rather than at the newline, which may never come.
            pieces.append(.lineTooLong)
            isDiscarding = true
            partial = []
        } else {
            partial.append(contentsOf: rest)
        }
    }
}
