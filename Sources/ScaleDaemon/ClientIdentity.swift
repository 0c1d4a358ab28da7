/// Who a connected client is, as the daemon's rules see it: the ids the kernel recorded when
/// it connected (`SO_PEERCRED`) and its groups, resolved once at connect time. Plain values,
/// so that the rules can be tried with any user without a socket.
struct ClientIdentity: Hashable, Sendable {
    /// The connection's number, unique for the daemon's lifetime.
    var id: Int
    /// `client 3 (pid 1234, uid 1000, gid 1000)`, for the log.
    var label: String
    /// The peer's user; `nil` when the kernel would not say (then it may only read).
    var uid: UInt32?
    /// The peer's primary group.
    var gid: UInt32?
    /// The peer's supplementary groups when it connected.
    var groups: [UInt32]

    /// Describes one client.
    /// - Parameters:
    ///   - id: The connection's number.
    ///   - label: How the log names it; `client <id>` when not given.
    ///   - uid: Its user, when known.
    ///   - gid: Its primary group, when known.
    ///   - groups: Its supplementary groups.
    init(id: Int, label: String? = nil, uid: UInt32?, gid: UInt32?, groups: [UInt32] = []) {
        self.id = id
        self.label = label ?? "client \(id)"
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }
}

/// Who may change the scale or the hardware (TARE, CALIBRATE, a CALIBRATION reset, RUMBLE,
/// GRAB): root, the daemon's own user, and the members of the control group
/// (`control-group`, `forcescale-control` by default). Everyone who can connect may read:
/// the socket's own mode and group (`group`) decide who can connect.
struct ControlPolicy: Hashable, Sendable {
    /// The daemon's effective user.
    var daemonUser: UInt32
    /// The group whose members may control; `nil` when the group does not exist, and then
    /// only root and the daemon's user may.
    var group: UInt32?
    /// The group's name, for the refusal.
    var groupName: String

    /// Creates a policy.
    /// - Parameters:
    ///   - daemonUser: The daemon's effective uid.
    ///   - group: The control group's id, when it exists.
    ///   - groupName: Its name as configured.
    init(daemonUser: UInt32, group: UInt32?, groupName: String) {
        self.daemonUser = daemonUser
        self.group = group
        self.groupName = groupName
    }

    /// Whether `client` may change state.
    /// - Parameter client: The client asking.
    /// - Returns: `true` for root, the daemon's user, and members of the group (primary or
    ///   supplementary); `false` for everyone else and for a client whose ids are unknown.
    func mayControl(_ client: ClientIdentity) -> Bool {
        guard let uid = client.uid else { return false }
        if uid == 0 || uid == daemonUser { return true }
        guard let group else { return false }
        return client.gid == group || client.groups.contains(group)
    }

    /// Who may, as the refusal names them.
    var allowed: String {
        group == nil ? "root or the daemon's user (group '\(groupName)' does not exist)" : "root, the daemon's user or members of group '\(groupName)'"
    }
}
