import Glibc

/// Writing whole files safely.
public enum FileOutput {
    /// Replaces a file's contents atomically: a temporary file beside it is written,
    /// flushed to disk and renamed over it, so a crash leaves the old or the new file,
    /// never half of one.
    /// - Throws: `SystemError` naming the path.
    public static func replace(path: String, with text: String, mode: mode_t = 0o644) throws(SystemError) {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError(path: path, errno: .current, hint: "check that its directory exists and is writable") }
        let channel = OutputChannel(descriptor: fd)
        do throws(Errno) {
            try channel.write(text)
            try channel.flush()
            guard fsync(fd) == 0 else { throw Errno.current }
        } catch {
            close(fd)
            unlink(temporary)
            throw SystemError(path: path, errno: error)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = Errno.current
            unlink(temporary)
            throw SystemError(path: path, errno: error)
        }
    }
}
