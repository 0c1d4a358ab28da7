import Glibc

/// Look-ups in the user and group databases (`/etc/passwd`, `/etc/group`, or whatever NSS
/// is configured to ask), with the reentrant calls so that threads cannot trample one
/// another's results. They may block on a network directory: keep them off hot paths.
public enum UserDatabase {
    /// The id of the group called `name`, or `nil` when there is none.
    public static func groupID(named name: String) -> gid_t? {
        var group = Glibc.group()
        return withGrowingBuffer { buffer in
            var result: UnsafeMutablePointer<Glibc.group>?
            let status = getgrnam_r(name, &group, buffer.baseAddress!, buffer.count, &result)
            return (status, result == nil ? nil : group.gr_gid)
        }
    }

    /// The login name and primary group of `uid`, or `nil` when the user is unknown.
    public static func user(id uid: uid_t) -> (name: String, primaryGroup: gid_t)? {
        var entry = passwd()
        return withGrowingBuffer { buffer in
            var result: UnsafeMutablePointer<passwd>?
            let status = getpwuid_r(uid, &entry, buffer.baseAddress!, buffer.count, &result)
            guard status == 0, result != nil else { return (status, nil) }
            return (status, (String(cString: entry.pw_name), entry.pw_gid))
        }
    }

    /// Every group `user` belongs to by the database: its primary group and the groups
    /// that list it as a member.
    public static func groups(ofUser user: String, primaryGroup: gid_t) -> [gid_t] {
        var count: Int32 = 16
        while true {
            var groups = [gid_t](repeating: 0, count: Int(count))
            var found = count
            if getgrouplist(user, primaryGroup, &groups, &found) >= 0 {
                return Array(groups.prefix(Int(found)))
            }
            // -1: too small; `found` now holds the number needed (grow anyway, in case not).
            count = max(found, count * 2)
            if count > 65536 { return [primaryGroup] }
        }
    }

    /// Runs a `*_r` look-up with a scratch buffer, growing it while the call says `ERANGE`.
    private static func withGrowingBuffer<Value>(_ lookup: (UnsafeMutableBufferPointer<CChar>) -> (Int32, Value?)) -> Value? {
        var size = 1024
        while size <= 1 << 20 {
            let buffer = UnsafeMutableBufferPointer<CChar>.allocate(capacity: size)
            defer { buffer.deallocate() }
            let (status, value) = lookup(buffer)
            if status != ERANGE { return value }
            size *= 4
        }
        return nil
    }
}
