import Glibc

/// Writing whole files safely.
public enum FileOutput {
    /// Replaces a file's contents atomically through ``ReplacementFile``: a crash leaves the
    /// old file or the new one, never half of one; a device or FIFO at `path` is written in
    /// place rather than replaced.
    /// - Throws: `SystemError` naming the path.
    public static func replace(path: String, with text: String, mode: mode_t = 0o644) throws(SystemError) {
        let file = try ReplacementFile(path: path, mode: mode)
        try file.write(text)
        try file.commit()
    }
}
