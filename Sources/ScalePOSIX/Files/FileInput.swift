import Glibc

/// Reads a file in large chunks through one reused buffer, so a recording of any size is
/// read in constant memory.
public struct FileInput: ~Copyable {
    public let path: String
    private let descriptor: FileDescriptor

    /// Opens a file for reading.
    /// - Throws: `SystemError` naming the path, with a hint for the common causes.
    public init(path: String) throws(SystemError) {
        self.path = path
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_CLOEXEC)
        } catch {
            throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
        }
    }

    deinit { try? descriptor.close() }

    /// Calls `body` with each chunk of the file in order, until the end of the file.
    /// - Parameter size: The chunk's size. 64 KiB by default: larger chunks save no time worth
    ///   having (a read per 64 KiB), while the buffer and what a caller builds from one chunk
    ///   before the next (a recording's events, parsed a chunk at a time) count toward the
    ///   daemon's peak memory: a chunk as large as a whole recording would add about the
    ///   recording's size to it.
    /// - Throws: `SystemError` when reading fails, or what `body` throws.
    public func forEachChunk(size: Int = 64 << 10, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count: Int
            do {
                count = try descriptor.read(into: buffer)
            } catch {
                throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
            }
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }

    private static func hint(for error: Errno) -> String? {
        switch error {
        case .noSuchFile: return "check the path; recordings end in .events or .desc (evemu) or .yml or .yaml (libinput record)"
        case .permissionDenied: return "you cannot read this file; check its permissions"
        case .isDirectory: return "give a file, not a directory"
        default: return nil
        }
    }
}
