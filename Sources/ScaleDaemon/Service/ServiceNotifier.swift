import CSystemd
import Glibc
import ScalePOSIX

/// Tells the service manager how the daemon is doing, through libsystemd's `sd_notify`: that
/// it is ready (`Type=notify`), what it is doing, that it is stopping, and that it is still
/// alive (`WatchdogSec=`).
///
/// Everything here does nothing, and succeeds, when the process was not started with
/// `NOTIFY_SOCKET` (started by hand, or by a unit of another type), so callers need not
/// ask first. The environment is left as it is: the watchdog keeps finding it.
public struct ServiceNotifier: Sendable {
    public init() {}

    /// Whether a service manager is listening (`NOTIFY_SOCKET` is set).
    public var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// The daemon has finished starting up: `READY=1`, with a status line if given.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    public func ready(status: String? = nil) throws(Errno) -> Bool {
        try send(["READY=1"] + Self.statusAssignment(status))
    }

    /// A one-line status for `systemctl status`: `STATUS=…`. Newlines become spaces.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    public func status(_ text: String) throws(Errno) -> Bool {
        try send(Self.statusAssignment(text))
    }

    /// The daemon has begun to shut down: `STOPPING=1`, with a status line if given.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    public func stopping(status: String? = nil) throws(Errno) -> Bool {
        try send(["STOPPING=1"] + Self.statusAssignment(status))
    }

    /// How often the service manager wants `keepAlive()`, in microseconds
    /// (`WATCHDOG_USEC`), or `nil` when it wants none: no watchdog configured, one meant
    /// for another process (`WATCHDOG_PID`), or malformed variables. Send at about half
    /// this interval; `WatchdogTimer` does.
    public var watchdogInterval: Int64? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return Int64(clamping: microseconds)
    }

    /// Still alive: `WATCHDOG=1`.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    public func keepAlive() throws(Errno) -> Bool {
        try send(["WATCHDOG=1"])
    }

    // MARK: Private

    private func send(_ assignments: [String]) throws(Errno) -> Bool {
        guard !assignments.isEmpty else { return false }
        let result = sd_notify(0, assignments.joined(separator: "\n"))
        if result < 0 { throw Errno(rawValue: -result) }
        return result > 0
    }

    /// `STATUS=…` on one line (each assignment is one line of the message), or nothing.
    private static func statusAssignment(_ text: String?) -> [String] {
        guard let text else { return [] }
        let line = String(text.map { $0.isNewline ? " " : $0 })
        return ["STATUS=" + line]
    }
}
