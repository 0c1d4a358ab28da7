import CLinux
import Glibc

/// Secrets that a server hands to the users allowed to read them through the file system: a
/// random key, written to a file whose group and mode say who may read it. forcescale-web's
/// access keys (docs/web.md, "Access").
public enum SecretFile {
    /// Random bytes from the kernel's generator (`getrandom(2)`, which blocks only until the
    /// generator is first seeded at boot), as lowercase hexadecimal.
    /// - Parameter count: How many bytes (the text has twice as many digits).
    /// - Throws: `Errno` when the kernel gives none (`ENOSYS` on a kernel before 3.17).
    public static func randomHex(bytes count: Int) throws(Errno) -> String {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let start = filled
            filled += try Errno.retrying {
                bytes[start...].withUnsafeMutableBytes { forcescale_getrandom($0.baseAddress, UInt($0.count), 0) }
            }
        }
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// Who may use a file: its group, and whether that group may write it (connecting to a
    /// Unix socket needs write permission, so for a socket this says whether the group may
    /// connect).
    public struct GroupAccess: Sendable, Hashable {
        public var group: gid_t
        public var groupMayWrite: Bool
    }

    /// The group and group-write bit of `path` (`stat(2)`, following links), or `nil` when it
    /// cannot be looked at (absent, or a directory on the way is closed to this user).
    public static func groupAccess(of path: String) -> GroupAccess? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return GroupAccess(group: status.st_gid, groupMayWrite: status.st_mode & S_IWGRP != 0)
    }

    /// Whether this process has `group` among its groups (effective or supplementary), so
    /// that it may give a file of its own to that group.
    public static func processBelongs(to group: gid_t) -> Bool {
        if getegid() == group { return true }
        let count = getgroups(0, nil)
        guard count > 0 else { return false }
        var groups = [gid_t](repeating: 0, count: Int(count))
        let found = getgroups(count, &groups)
        return found > 0 && groups.prefix(Int(found)).contains(group)
    }

    /// Whether this process runs as root, which may give a file any group.
    public static var isRoot: Bool { geteuid() == 0 }

    /// Writes `text` to `path` atomically (a temporary beside it, renamed over it) with
    /// mode 0600, or 0640 and group `group` when one is given: never world-readable, and
    /// readable to the group only once the file has that group. The rename replaces the
    /// file's old permissions with the new ones at once.
    /// - Parameters:
    ///   - path: The file.
    ///   - text: Its contents.
    ///   - group: The group that may read it, `nil` for its owner only.
    /// - Throws: `SystemError` naming `path`: its directory is missing or not writable, or
    ///   the group cannot be given (this process does not belong to it).
    public static func write(_ text: String, to path: String, group: gid_t?) throws(SystemError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary: String
        let descriptor: FileDescriptor
        do throws(Errno) {
            (temporary, descriptor) = try ReplacementFile.createTemporary(directory: directory, name: name, mode: 0o600)
        } catch {
            throw SystemError(path: path, errno: error, hint: "check that the directory exists and is writable")
        }
        var isOpen = true
        do throws(Errno) {
            let bytes = Array(text.utf8)
            var written = 0
            while written < bytes.count {
                let start = written
                written += try Errno.retrying { bytes[start...].withUnsafeBytes { Glibc.write(descriptor.rawValue, $0.baseAddress, $0.count) } }
            }
            if let group {
                try Errno.retrying { fchown(descriptor.rawValue, uid_t.max, group) }
                try Errno.retrying { fchmod(descriptor.rawValue, 0o640) }
            }
            try Errno.retrying { fsync(descriptor.rawValue) }
            isOpen = false
            try descriptor.close()
            try Errno.retrying { rename(temporary, path) }
        } catch {
            if isOpen { try? descriptor.close() }
            unlink(temporary)
            throw SystemError(path: path, errno: error, hint: error.rawValue == EPERM ? "this process is not in the group it would give the file" : nil)
        }
    }

    /// Makes `path` a directory only its owner may enter (0700) when it is missing; an
    /// existing directory is left as it is.
    /// - Throws: `SystemError` naming `path`.
    public static func makePrivateDirectory(_ path: String) throws(SystemError) {
        if mkdir(path, 0o700) == 0 { return }
        let error = Errno.current
        var status = stat()
        if error.rawValue == EEXIST, stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR { return }
        throw SystemError(path: path, errno: error)
    }

    /// Removes `path`, quietly when it is already gone.
    public static func remove(_ path: String) {
        unlink(path)
    }
}
