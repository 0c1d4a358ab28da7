import CLinux
import Glibc

/// Who is at the other end of a Unix socket, as the kernel recorded it when the peer
/// connected (`SO_PEERCRED`, `SO_PEERGROUPS`): it cannot be forged by the client, and it
/// does not change if the process later changes its ids.
public struct PeerCredentials: Hashable, Sendable, CustomStringConvertible {
    public var pid: pid_t
    public var uid: uid_t
    public var gid: gid_t
    /// The peer's supplementary groups at connect time, or `nil` when the kernel cannot say
    /// (before Linux 4.13); membership then falls back to the group database.
    public var supplementaryGroups: [gid_t]?

    public init(pid: pid_t, uid: uid_t, gid: gid_t, supplementaryGroups: [gid_t]? = nil) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.supplementaryGroups = supplementaryGroups
    }

    /// Reads the credentials of a connected Unix socket's peer.
    /// - Parameter descriptor: A connected `AF_UNIX` socket.
    /// - Returns: The peer's pid, uid, gid and, where the kernel has them, its groups.
    /// - Throws: `Errno` from `getsockopt` (e.g. `ENOTSOCK`).
    public static func of(socket descriptor: FileDescriptor) throws(Errno) -> PeerCredentials {
        var credentials = forcescale_ucred()
        var length = socklen_t(MemoryLayout<forcescale_ucred>.size)
        guard getsockopt(descriptor.rawValue, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { throw Errno.current }
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                               supplementaryGroups: peerGroups(descriptor.rawValue))
    }

    /// Whether the peer may use the daemon: root, the daemon's own user, or a member of
    /// `group` (its primary group or a supplementary one).
    /// - Parameters:
    ///   - group: The group whose members are allowed; `nil` allows only root and the daemon's
    ///     user.
    ///   - daemonUser: The daemon's effective uid.
    /// - Returns: `true` when allowed.
    public func isAuthorized(group: gid_t?, daemonUser: uid_t = geteuid()) -> Bool {
        if uid == 0 || uid == daemonUser { return true }
        guard let group else { return false }
        return isMember(of: group)
    }

    /// Whether the peer belongs to `group`. The kernel's list, when there is one, is what
    /// the socket file's permissions were checked against, so it wins over the database
    /// (which may have changed since the peer logged in). Without it, the group database is
    /// asked for the groups of the peer uid's user name; that look-up may block on a network
    /// directory, so call this once per connection, not per line.
    public func isMember(of group: gid_t) -> Bool {
        if gid == group { return true }
        if let supplementaryGroups { return supplementaryGroups.contains(group) }
        guard let user = UserDatabase.user(id: uid) else { return false }
        return UserDatabase.groups(ofUser: user.name, primaryGroup: user.primaryGroup).contains(group)
    }

    public var description: String { "pid \(pid), uid \(uid), gid \(gid)" }

    /// SO_PEERGROUPS (Linux 4.13), asked again with more room while it says `ERANGE`.
    private static func peerGroups(_ descriptor: Int32) -> [gid_t]? {
        var capacity = 32
        while capacity <= 65536 {
            var groups = [gid_t](repeating: 0, count: capacity)
            var length = socklen_t(capacity * MemoryLayout<gid_t>.size)
            if getsockopt(descriptor, SOL_SOCKET, SO_PEERGROUPS, &groups, &length) == 0 {
                return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size))
            }
            guard errno == ERANGE else { return nil }      // ENOPROTOOPT: an older kernel
            // The kernel has put the size it needs in `length`; grow anyway, in case not.
            capacity = max(Int(length) / MemoryLayout<gid_t>.size, capacity * 2)
        }
        return nil
    }
}
