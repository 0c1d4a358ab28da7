import Glibc

/// A file written in pieces that takes the place of `path` only once it is complete: the
/// text goes to a new temporary file beside it, which ``commit()`` flushes to disk and
/// renames over `path`. Until then (and after ``abandon()``, or a failure) `path` keeps its
/// old contents, or stays absent, and no temporary is left behind. For outputs too big to
/// hold in memory, such as an export of a million readings; `FileOutput.replace` does the
/// same for a text in hand.
///
/// Only regular files are replaced. A symbolic link has its target replaced, not itself;
/// a path that is something else (`/dev/stdout`, a FIFO, `/dev/null`) is written in place,
/// since renaming over a device node would put a plain file where the device was.
public final class ReplacementFile {
    /// The file that is replaced.
    public let path: String
    /// The temporary file, or `nil` when `path` is written in place (not a regular file).
    private let temporary: String?
    /// Where the rename goes: `path`, or the file a symbolic link at `path` points to.
    private let target: String
    private let channel: OutputChannel
    private var isOpen = true

    /// Creates the temporary file (`.<name>.tmp-<random>`, exclusively: never someone
    /// else's file, never a planted symlink).
    /// - Parameters:
    ///   - path: The file to replace.
    ///   - mode: The new file's permissions (the umask may remove some).
    /// - Throws: `SystemError` naming `path`: its directory is missing or not writable.
    public init(path: String, mode: mode_t = 0o644) throws(SystemError) {
        self.path = path
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            // A device, a FIFO, a socket: written as it is, there is nothing to replace.
            let descriptor: FileDescriptor
            do throws(Errno) {
                descriptor = try FileDescriptor.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY)
            } catch {
                throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
            }
            temporary = nil
            target = path
            channel = OutputChannel(descriptor: descriptor, capacity: 256 * 1024)
            return
        }
        // Through a symbolic link (or several) to the file it names, which is what changes.
        var resolved = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        var linkStatus = stat()
        let destination: String
        if lstat(path, &linkStatus) == 0, linkStatus.st_mode & S_IFMT == S_IFLNK, realpath(path, &resolved) != nil {
            destination = String(decoding: resolved.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            destination = path
        }
        target = destination
        let slash = destination.lastIndex(of: "/")
        let directory = slash.map { String(destination[...$0]) } ?? ""
        let name = slash.map { String(destination[destination.index(after: $0)...]) } ?? destination
        do throws(Errno) {
            let (candidate, descriptor) = try Self.createTemporary(directory: directory, name: name, mode: mode)
            temporary = candidate
            channel = OutputChannel(descriptor: descriptor, capacity: 256 * 1024)
        } catch {
            throw SystemError(path: path, errno: error, hint: Self.hint(for: error) ?? "check that the directory exists and is writable")
        }
    }

    /// Creates `<directory>.<name>.tmp-<random>` exclusively (never someone else's file,
    /// never a symlink planted there) for writing.
    /// - Parameter directory: Empty, or ending in `/`.
    /// - Returns: The temporary's path and descriptor.
    static func createTemporary(directory: String, name: String, mode: mode_t) throws(Errno) -> (path: String, descriptor: FileDescriptor) {
        while true {
            let candidate = directory + "." + name + ".tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
            do throws(Errno) {
                return (candidate, try FileDescriptor.open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, permissions: mode))
            } catch where error.rawValue == EEXIST {
                continue
            }
        }
    }

    deinit {
        if isOpen { abandon() }
    }

    /// Appends text (buffered).
    /// - Throws: `SystemError` naming `path` (a full disk, say); the caller then abandons.
    public func write(_ text: String) throws(SystemError) {
        do throws(Errno) {
            try channel.write(text)
        } catch {
            throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
        }
    }

    /// Finishes the file: flushes it, syncs it to disk and renames it over `path`.
    /// - Throws: `SystemError` naming `path`; the temporary is removed and `path` is untouched.
    public func commit() throws(SystemError) {
        precondition(isOpen, "commit after commit or abandon")
        guard let temporary else {
            defer { isOpen = false; try? channel.descriptor.close() }
            do throws(Errno) {
                try channel.flush()
            } catch {
                throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
            }
            return
        }
        do throws(Errno) {
            try channel.flush()
            guard fsync(channel.descriptor.rawValue) == 0 else { throw Errno.current }
            isOpen = false
            // close can report a delayed write error (on NFS, say): the file is not safe then.
            try channel.descriptor.close()
        } catch {
            if isOpen { try? channel.descriptor.close() }
            isOpen = false
            unlink(temporary)
            throw SystemError(path: path, errno: error, hint: Self.hint(for: error))
        }
        guard rename(temporary, target) == 0 else {
            let error = Errno.current
            unlink(temporary)
            throw SystemError(path: path, errno: error, hint: error == .isDirectory ? "a directory is in the way" : Self.hint(for: error))
        }
    }

    /// Gives up: the temporary is removed and `path` is left as it was.
    public func abandon() {
        guard isOpen else { return }
        isOpen = false
        try? channel.descriptor.close()
        if let temporary { unlink(temporary) }
    }

    static func hint(for error: Errno) -> String? {
        switch error.rawValue {
        case EROFS: "the file system is read-only"
        case EACCES, EPERM: "no permission to write there"
        case ENOSPC, EDQUOT: "the disk is full"
        default: nil
        }
    }
}

/// Holds off SIGINT, SIGTERM and SIGHUP while a ``ReplacementFile`` is written, so that an
/// interrupted export can remove its temporary file before the signal ends the process
/// (a signal's default action would leave it behind). The writer checks
/// ``isRequested`` between pieces; ``release()`` lets a pending signal take effect.
/// For single-threaded tools: the mask is the calling thread's.
public final class DeferredTermination {
    private var previous = sigset_t()
    private var signals = sigset_t()
    /// The signals held off: those of the three that this process does not ignore (a job
    /// started with `&` from a script ignores SIGINT, and must go on ignoring it).
    private let watched: [Int32]
    private var isReleased = false

    /// Blocks the three signals until ``release()``.
    public init() {
        watched = [SIGINT, SIGTERM, SIGHUP].filter { signal in
            var current = sigaction()
            sigaction(signal, nil, &current)
            // C function pointers are not Equatable in Swift: compare their addresses.
            return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) != unsafeBitCast(SIG_IGN, to: Int.self)
        }
        sigemptyset(&signals)
        for signal in watched { sigaddset(&signals, signal) }
        sigprocmask(SIG_BLOCK, &signals, &previous)
    }

    deinit { release() }

    /// Whether one of the signals arrived since ``init()``.
    public var isRequested: Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return watched.contains { sigismember(&pending, $0) == 1 }
    }

    /// Restores the signal mask; a pending signal is delivered now, and its default action
    /// ends the process.
    public func release() {
        guard !isReleased else { return }
        isReleased = true
        sigprocmask(SIG_SETMASK, &previous, nil)
    }
}
