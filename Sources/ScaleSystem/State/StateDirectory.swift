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
}
