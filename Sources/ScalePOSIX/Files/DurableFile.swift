import Glibc

/// Files written so that a crash or power cut at any moment leaves either the old contents
/// or the new, never a mixture or an empty file. A process killed while it writes leaves its
/// temporary (`.<name>.tmp-<random>`) behind; its next start removes such files with
/// `removeTemporaries(in:)`.
package enum DurableFile {
    /// Replaces `name` in `directory` with `text`: writes a new temporary file beside it,
    /// flushes it to disk, renames it over the old one, and flushes the directory so the
    /// rename itself is on disk. On any failure the temporary is removed.
    /// - Parameters:
    ///   - text: The new contents.
    ///   - name: The file's name within `directory`.
    ///   - directory: An existing directory.
    ///   - mode: The new file's permissions (the umask may remove some).
    /// - Throws: `SystemError` naming the file and what can be done.
    package static func replace(_ text: String, named name: String, in directory: String, mode: mode_t = 0o600) throws(SystemError) {
        let path = directory + "/" + name
        let (temporary, descriptor) = try createTemporary(for: name, in: directory, mode: mode)
        // A failed close has closed the descriptor too: closing it again could close a file
        // that another thread has opened under the same number since.
        var isClosed = false
        do throws(Errno) {
            try Array(text.utf8).withUnsafeBytes { bytes in Result { () throws(Errno) in try descriptor.writeAll(bytes) } }.get()
            try Errno.retrying { fsync(descriptor.rawValue) }
            // close can report a delayed write error (on NFS, say): the file is not safe then.
            isClosed = true
            try descriptor.close()
        } catch {
            if !isClosed { try? descriptor.close() }
            unlink(temporary)
            throw SystemError(path: path, errno: error, hint: hint(for: error))
        }
        guard rename(temporary, path) == 0 else {
            let error = Errno.current
            unlink(temporary)
            throw SystemError(path: path, errno: error, hint: error == .isDirectory ? "a directory is in the way; remove it" : hint(for: error))
        }
        try syncDirectory(directory)
    }

    /// Removes the temporaries that `replace` left in `directory` when the process was
    /// killed mid-save: regular files named `.<name>.tmp-<random>`. For a directory only
    /// this process writes (a daemon's state directory), at its start.
    /// - Returns: How many were removed.
    @discardableResult
    package static func removeTemporaries(in directory: String) -> Int {
        guard let stream = opendir(directory) else { return 0 }
        defer { closedir(stream) }
        var removed = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            let parts = name.split(separator: "-", omittingEmptySubsequences: false)
            guard name.hasPrefix("."), parts.count >= 2, parts[parts.count - 2].hasSuffix(".tmp"), let random = parts.last,
                  !random.isEmpty, random.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLowercase) })
            else { continue }
            var status = stat()
            let path = directory + "/" + name
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, unlink(path) == 0 else { continue }
            removed += 1
        }
        return removed
    }

    /// Reads a whole file, refusing to read more than `limit` bytes (a bigger file is not
    /// one of ours, and a state file must not make the daemon allocate without bound).
    /// - Returns: The bytes (at most `limit + 1`, so that the caller sees it was too big), or
    ///   `nil` when there is no such file.
    /// - Throws: `SystemError` for any other failure, `EISDIR` included.
    package static func read(_ path: String, limit: Int) throws(SystemError) -> [UInt8]? {
        // O_NONBLOCK: a FIFO put in the file's place must not hang the daemon; for a
        // regular file it changes nothing.
        let descriptor: FileDescriptor
        do throws(Errno) {
            descriptor = try FileDescriptor.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        } catch {
            if error == .noSuchFile { return nil }
            throw SystemError(path: path, errno: error, hint: hint(for: error))
        }
        defer { try? descriptor.close() }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < bytes.count {
            let count: Int
            do throws(Errno) {
                count = try bytes.withUnsafeMutableBytes { buffer in
                    Result { () throws(Errno) in try descriptor.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...])) }
                }.get()
            } catch {
                throw SystemError(path: path, errno: error)
            }
            if count == 0 { break }
            filled += count
        }
        return Array(bytes.prefix(filled))
    }

    /// Makes `directory` if it does not exist (only the last component, with `mode`).
    /// - Throws: `SystemError` saying why it cannot be made, or that it is not a directory.
    package static func makeDirectory(_ directory: String, mode: mode_t = 0o700) throws(SystemError) {
        if mkdir(directory, mode) == 0 { return }
        var error = Errno.current
        // A user's first run: ~/.local/state may not exist yet. Make the missing parents with
        // the same mode (0700 by default, as the XDG base directory specification asks of a
        // directory it makes) and try once more.
        if error.rawValue == ENOENT, let slash = directory.lastIndex(of: "/"), slash > directory.startIndex {
            let parent = String(directory[..<slash])
            if (try? makeDirectory(parent, mode: mode)) != nil, mkdir(directory, mode) == 0 { return }
            error = Errno.current
        }
        guard error.rawValue == EEXIST else {
            let hint: String
            switch error.rawValue {
            case ENOENT: hint = "its parent directory does not exist; create it or choose another state directory"
            case ENOTDIR: hint = "part of the path is a file, not a directory"
            default: hint = Self.hint(for: error) ?? "choose another state directory"
            }
            throw SystemError(path: directory, errno: error, hint: hint)
        }
        var status = stat()
        guard stat(directory, &status) == 0 else { throw SystemError(path: directory, errno: .current) }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw SystemError(path: directory, errno: Errno(rawValue: ENOTDIR), hint: "it exists and is not a directory")
        }
    }

    /// Advice for the errors a state directory typically meets.
    package static func hint(for error: Errno) -> String? {
        switch error.rawValue {
        case EROFS: return "the file system is read-only; choose a writable state directory"
        case EACCES, EPERM: return "no permission; run as the daemon's user or fix the directory's owner"
        case ENOSPC, EDQUOT: return "the disk is full"
        default: return nil
        }
    }

    private static func createTemporary(for name: String, in directory: String, mode: mode_t) throws(SystemError) -> (String, FileDescriptor) {
        do throws(Errno) {
            return try ReplacementFile.createTemporary(directory: directory + "/", name: name, mode: mode)
        } catch {
            throw SystemError(path: directory + "/" + name, errno: error, hint: hint(for: error) ?? "check that \(directory) exists and is a writable directory")
        }
    }

    /// Flushes a directory's entries, so a rename in it survives a power cut.
    private static func syncDirectory(_ directory: String) throws(SystemError) {
        let descriptor: Int32
        do throws(Errno) {
            descriptor = try Errno.retrying { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        } catch {
            throw SystemError(path: directory, errno: error)
        }
        defer { close(descriptor) }
        do throws(Errno) {
            try Errno.retrying { fsync(descriptor) }
        } catch {
            // Some file systems cannot sync a directory (EINVAL); the rename is done regardless.
            guard error.rawValue == EINVAL else {
                throw SystemError(path: directory, errno: error, hint: "the file was replaced but may not survive a power cut")
            }
        }
    }
}
