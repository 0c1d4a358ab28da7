import Glibc

/// Where forcescaled keeps its state (calibrations, the force log) unless told otherwise:
/// `/var/lib/forcescale` as root, `$XDG_STATE_HOME/forcescale` (or
/// `~/.local/state/forcescale`) for anyone else. The daemon and the clients that read its
/// files share this one answer.
public enum StateDirectory {
    /// The system daemon's state directory.
    public static let system = "/var/lib/forcescale"

    /// The default state directory for the user running this process.
    /// - Returns: The path, or `nil` when neither `XDG_STATE_HOME` nor `HOME` is set.
    public static func defaultPath() -> String? {
        if geteuid() == 0 { return system }
        if let base = Environment.value("XDG_STATE_HOME"), !base.isEmpty { return base + "/forcescale" }
        guard let home = Environment.value("HOME"), !home.isEmpty else { return nil }
        return home + "/.local/state/forcescale"
    }

    /// Where a client finds one of the daemon's files, as it finds the daemon's socket: the
    /// system daemon's when that file exists (a member of the daemon's group reading the
    /// service's log, say), else the one a daemon run by this user would keep; for a user
    /// with no home (a service's user), the system daemon's, there or not yet.
    /// - Parameter name: The file's name in the state directory, such as `log.sqlite`.
    public static func clientPath(of name: String) -> String {
        let systemFile = system + "/" + name
        var status = stat()
        if stat(systemFile, &status) == 0 { return systemFile }
        return defaultPath().map { $0 + "/" + name } ?? systemFile
    }
}
