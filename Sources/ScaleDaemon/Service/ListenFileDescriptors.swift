import Glibc
import ScalePOSIX

/// Sockets handed over by the service manager (socket activation: a `.socket` unit, or
/// `systemd-socket-activate`), by the protocol of `sd_listen_fds(3)`, spoken here for the
/// reason `ServiceNotifier` gives.
public enum ListenFileDescriptors {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`); the others follow it.
    public static let first = FileDescriptor(rawValue: 3)

    /// Takes the passed descriptors, once: they are meant for this process only when
    /// `LISTEN_PID` is its own, they are made close-on-exec, and
    /// `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` are removed from the environment so
    /// that no child believes they are its own. Adopt a listening socket with
    /// `UnixListener(adopting:)`.
    /// - Returns: The descriptors, from 3 up; empty when none were passed to this process.
    /// - Throws: `Errno` when the variables are malformed (`EINVAL`) or a descriptor could
    ///   not be made close-on-exec.
    public static func take() throws(Errno) -> [FileDescriptor] {
        // Whatever comes of it, the variables go: a child started later must not take them
        // for its own.
        defer {
            for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        }
        guard let pidText = ServiceEnvironment.value(of: "LISTEN_PID") else { return [] }
        guard let pid = ServiceEnvironment.decimal(pidText, as: pid_t.self) else { throw Errno(rawValue: EINVAL) }
        guard pid == getpid() else { return [] }
        guard let countText = ServiceEnvironment.value(of: "LISTEN_FDS") else { return [] }
        guard let count = ServiceEnvironment.decimal(countText, as: Int32.self), count > 0,
              count <= Int32.max - first.rawValue
        else { throw Errno(rawValue: EINVAL) }
        let passed = descriptors(count: count)
        for descriptor in passed {
            // Not to be inherited by what the daemon might start; EBADF when the manager
            // said more descriptors than it passed.
            let flags = try Errno.retrying { fcntl(descriptor.rawValue, F_GETFD) }
            if flags & FD_CLOEXEC == 0 { try Errno.retrying { fcntl(descriptor.rawValue, F_SETFD, flags | FD_CLOEXEC) } }
        }
        return passed
    }

    static func descriptors(count: Int32) -> [FileDescriptor] {
        (first.rawValue..<(first.rawValue + count)).map(FileDescriptor.init(rawValue:))
    }
}
