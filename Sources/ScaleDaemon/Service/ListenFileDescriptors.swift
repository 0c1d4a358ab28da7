import CSystemd
import Glibc
import ScalePOSIX

/// Sockets handed over by the service manager (socket activation: a `.socket` unit, or
/// `systemd-socket-activate`), through libsystemd's `sd_listen_fds`.
public enum ListenFileDescriptors {
    /// The first passed descriptor (`SD_LISTEN_FDS_START`); the others follow it.
    public static let first = FileDescriptor(rawValue: CSystemd_LISTEN_FDS_START)

    /// Takes the passed descriptors, once: they are meant for this process only when
    /// `LISTEN_PID` is its own (which libsystemd checks), they are made close-on-exec, and
    /// `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` are removed from the environment so
    /// that no child believes they are its own. Adopt a listening socket with
    /// `UnixListener(adopting:)`.
    /// - Returns: The descriptors, from 3 up; empty when none were passed to this process.
    /// - Throws: `Errno` when the variables are malformed (`EINVAL`) or a descriptor could
    ///   not be made close-on-exec.
    public static func take() throws(Errno) -> [FileDescriptor] {
        let count = sd_listen_fds(1)
        if count < 0 { throw Errno(rawValue: -count) }
        return descriptors(count: count)
    }

    static func descriptors(count: Int32) -> [FileDescriptor] {
        (first.rawValue..<(first.rawValue + count)).map(FileDescriptor.init(rawValue:))
    }
}
