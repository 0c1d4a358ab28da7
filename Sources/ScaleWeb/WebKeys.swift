import Glibc
import ScaleCore
import ScalePOSIX

/// forcescale-web's access keys and their files (docs/web.md, "Access"): made at each start
/// from the kernel's random generator (32 bytes, 64 hexadecimal digits), written into the key
/// directory so that exactly those allowed can read them, and removed at the end.
///
/// - `read-key` may be read by whoever may connect to forcescaled's socket: it takes the
///   socket file's group when that group may write the socket (connecting needs write
///   permission) and forcescale-web can give it, mode 0640; otherwise 0600, its own user's
///   (and root's) only. A socket that is not there yet at start is looked at again each time
///   the daemon is connected (`socketMayHaveChanged()`).
/// - `control-key` (with `--allow-control`) may be read by the control group
///   (`--control-group`, `forcescale-control` by default) when that group exists and
///   forcescale-web is in it, mode 0640; otherwise 0600.
package final class WebKeys {
    package static let readKeyName = "read-key"
    package static let controlKeyName = "control-key"

    package let directory: String
    package let readKey: String
    package let controlKey: String?
    private let socketPath: String
    private let log: (String) -> Void
    /// The group `read-key` has now (`nil`: its owner's only).
    private var readGroup: gid_t?

    /// Makes the keys and writes their files.
    /// - Parameters:
    ///   - directory: The key directory (it must exist).
    ///   - allowControl: Whether to make a control key.
    ///   - controlGroup: The group that may read the control key, by name.
    ///   - socketPath: forcescaled's socket, whose group may read the read key.
    ///   - log: Says which group each file was given, or why none.
    /// - Throws: `SystemError` (a directory that is missing or not writable), `Errno` when
    ///   the kernel gives no random bytes.
    package init(directory: String, allowControl: Bool, controlGroup: String, socketPath: String, log: @escaping (String) -> Void) throws {
        self.directory = directory
        self.socketPath = socketPath
        self.log = log
        readKey = try SecretFile.randomHex(bytes: 32)
        controlKey = allowControl ? try SecretFile.randomHex(bytes: 32) : nil
        readGroup = Self.readGroup(socketPath: socketPath)
        try write(readKey, Self.readKeyName, group: readGroup, who: readGroup == nil ? "\(socketPath) is not shared with a group, or not there yet" : "the group of \(socketPath)")
        if let controlKey {
            let group = UserDatabase.groupID(named: controlGroup).flatMap { SecretFile.processBelongs(to: $0) ? $0 : nil }
            try write(controlKey, Self.controlKeyName, group: group,
                      who: group == nil ? "forcescale-web is not in a group \(controlGroup)" : "the group \(controlGroup)")
        } else {
            SecretFile.remove(path(Self.controlKeyName))
        }
    }

    /// The path of a key file.
    package func path(_ name: String) -> String { directory + "/" + name }

    /// Looks at the daemon's socket again (it may have been made after forcescale-web
    /// started, or given another group), and gives `read-key` its group now.
    package func socketMayHaveChanged() {
        let group = Self.readGroup(socketPath: socketPath)
        guard group != readGroup else { return }
        do {
            try write(readKey, Self.readKeyName, group: group, who: group == nil ? "\(socketPath) is not shared with a group" : "the group of \(socketPath)")
            readGroup = group
        } catch {
            log("\(error)")
        }
    }

    /// Removes the key files: the keys die with this process.
    package func remove() {
        SecretFile.remove(path(Self.readKeyName))
        if controlKey != nil { SecretFile.remove(path(Self.controlKeyName)) }
    }

    /// The socket's group when that group may connect to it and this process may give a
    /// file that group.
    private static func readGroup(socketPath: String) -> gid_t? {
        guard let access = SecretFile.groupAccess(of: socketPath), access.groupMayWrite,
              SecretFile.processBelongs(to: access.group) || SecretFile.isRoot else { return nil }
        return access.group
    }

    /// Writes a key file for `group`; when the group cannot be given (a system call filter
    /// without fchown, say), for this user only, and says so.
    private func write(_ key: String, _ name: String, group: gid_t?, who: String) throws {
        var failure: SystemError?
        if group != nil {
            do throws(SystemError) {
                try SecretFile.write(key + "\n", to: path(name), group: group)
                log("wrote \(UntrustedText.escaped(path(name))), readable by \(UntrustedText.escaped(who))")
                return
            } catch {
                failure = error
            }
        }
        try SecretFile.write(key + "\n", to: path(name), group: nil)
        let why = failure.map { ": it could not be given \(who) (\($0))" } ?? " (\(who))"
        log("wrote \(UntrustedText.escaped(path(name))), readable by this user only\(UntrustedText.escaped(why))")
    }
}
