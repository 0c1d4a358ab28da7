import Glibc

/// Sockets handed over by a service manager (socket activation: a `.socket` unit, or
/// `systemd-socket-activate`), read from `LISTEN_PID` and `LISTEN_FDS` without libsystemd.
///
/// The protocol is three environment variables (sd_listen_fds(3)); reading it here lets
/// forcescaled and forcescale-web be socket-activated without linking libsystemd.
public enum InheritedSockets {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`); the others follow it.
    public static let first: Int32 = 3

    /// How many descriptors the variables pass to the process `pid`: 0 when they are absent
    /// or meant for another process (a parent that did not remove them).
    /// - Parameters:
    ///   - listenPID: `LISTEN_PID`'s value, or `nil` when unset.
    ///   - listenFDs: `LISTEN_FDS`'s value, or `nil` when unset.
    ///   - pid: This process's id.
    /// - Returns: The count.
    /// - Throws: `InheritedSocketsError.malformed` when a variable is not a number.
    public static func count(listenPID: String?, listenFDs: String?, pid: pid_t) throws(InheritedSocketsError) -> Int {
        guard let listenPID, let listenFDs else { return 0 }
        guard let owner = Int32(listenPID), owner > 0 else { throw .malformed(variable: "LISTEN_PID", value: listenPID) }
        guard owner == pid else { return 0 }
        guard let count = Int(listenFDs), count >= 0, count < 1024 else {
            throw .malformed(variable: "LISTEN_FDS", value: listenFDs)
        }
        return count
    }

    /// Takes the passed descriptors, once: they are made close-on-exec, and `LISTEN_PID`,
    /// `LISTEN_FDS` and `LISTEN_FDNAMES` are removed so that no child takes them for its own.
    /// - Returns: The descriptors, from 3 up; empty when none were passed to this process.
    /// - Throws: `InheritedSocketsError` when the variables are malformed or a descriptor
    ///   is not open.
    public static func take() throws(InheritedSocketsError) -> [FileDescriptor] {
        let count = try count(
            listenPID: Environment.value("LISTEN_PID"), listenFDs: Environment.value("LISTEN_FDS"), pid: getpid())
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        var descriptors: [FileDescriptor] = []
        for raw in first..<(first + Int32(count)) {
            guard fcntl(raw, F_SETFD, FD_CLOEXEC) == 0 else {
                throw .notOpen(descriptor: raw, reason: Errno.current.description)
            }
            descriptors.append(FileDescriptor(rawValue: raw))
        }
        return descriptors
    }
}

/// Why the service manager's sockets cannot be used.
public enum InheritedSocketsError: Error, Hashable, Sendable, CustomStringConvertible {
    /// `LISTEN_PID` or `LISTEN_FDS` is not a number.
    case malformed(variable: String, value: String)
    /// A descriptor the variables announce is not open.
    case notOpen(descriptor: Int32, reason: String)

    public var description: String {
        switch self {
        case .malformed(let variable, let value):
            return "\(variable)=\(value) is not a valid number (socket activation: see sd_listen_fds(3))"
        case .notOpen(let descriptor, let reason):
            return "descriptor \(descriptor), passed by the service manager (LISTEN_FDS), cannot be used: \(reason)"
        }
    }
}
