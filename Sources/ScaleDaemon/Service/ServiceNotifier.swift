import Glibc
import ScalePOSIX

/// Tells the service manager how the daemon is doing, by the protocol of `sd_notify(3)`: that
/// it is ready (`Type=notify`), what it is doing, that it is stopping, and that it is still
/// alive (`WatchdogSec=`).
///
/// The protocol is spoken here rather than through libsystemd: it is one datagram of
/// `VAR=value` lines to the socket named by `NOTIFY_SOCKET`, which systemd documents as
/// stable for other implementations, while linking libsystemd maps it and the libraries it
/// pulls in (libgcrypt, libgpg-error, liblzma, libzstd, liblz4, libcap) into the daemon for
/// about 1 MiB of its resident memory.
///
/// Everything here does nothing, and succeeds, when the process was not started with
/// `NOTIFY_SOCKET` (started by hand, or by a unit of another type), so callers need not
/// ask first. The environment is left as it is: the watchdog keeps finding it.
struct ServiceNotifier: Sendable {
    init() {}

    /// Whether a service manager is listening (`NOTIFY_SOCKET` is set).
    var isEnabled: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// The daemon has finished starting up: `READY=1`, with a status line if given.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    func ready(status: String? = nil) throws(Errno) -> Bool {
        try send(["READY=1"] + Self.statusAssignment(status))
    }

    /// A one-line status for `systemctl status`: `STATUS=…`. Newlines become spaces.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    func status(_ text: String) throws(Errno) -> Bool {
        try send(Self.statusAssignment(text))
    }

    /// The daemon has begun to shut down: `STOPPING=1`, with a status line if given.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    func stopping(status: String? = nil) throws(Errno) -> Bool {
        try send(["STOPPING=1"] + Self.statusAssignment(status))
    }

    /// How often the service manager wants `keepAlive()`, in microseconds
    /// (`WATCHDOG_USEC`), or `nil` when it wants none: no watchdog configured, one meant
    /// for another process (`WATCHDOG_PID`), or malformed variables. Send at about half
    /// this interval; `WatchdogTimer` does.
    var watchdogInterval: Int64? {
        guard let text = Environment.value("WATCHDOG_USEC"),
              let microseconds = Self.decimal(text, as: Int64.self), microseconds > 0
        else { return nil }
        if let pid = Environment.value("WATCHDOG_PID") {
            // Set by the manager for the process it started; a child that inherited the
            // variables must not feed a watchdog that is not its own.
            guard Self.decimal(pid, as: pid_t.self) == getpid() else { return nil }
        }
        return microseconds
    }

    /// Still alive: `WATCHDOG=1`.
    /// - Returns: Whether it was sent (`false`: no `NOTIFY_SOCKET`).
    /// - Throws: `Errno` when `NOTIFY_SOCKET` is set but sending failed.
    @discardableResult
    func keepAlive() throws(Errno) -> Bool {
        try send(["WATCHDOG=1"])
    }

    // MARK: Private

    private func send(_ assignments: [String]) throws(Errno) -> Bool {
        guard !assignments.isEmpty, let target = Environment.value("NOTIFY_SOCKET") else { return false }
        let address = try NotifyAddress.parse(target)
        let type = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = FileDescriptor(rawValue: try Errno.retrying { socket(AF_UNIX, type, 0) })
        defer { try? descriptor.close() }
        let message = Array(assignments.joined(separator: "\n").utf8)
        // One datagram, all or nothing; MSG_NOSIGNAL so that a manager that went away is an
        // error here rather than a SIGPIPE.
        // Array's withUnsafeBytes rethrows an untyped error: carry the typed one out in a Result.
        let sent = message.withUnsafeBytes { bytes in
            address.withSocketAddress { socketAddress, length in
                Result { () throws(Errno) in
                    try Errno.retrying {
                        sendto(descriptor.rawValue, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                    }
                }
            }
        }
        _ = try sent.get()
        return true
    }

    /// A non-negative decimal number with nothing around it (no sign, no spaces), or `nil`.
    private static func decimal<Number: FixedWidthInteger>(_ text: String, as type: Number.Type) -> Number? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return Number(text)
    }

    /// `STATUS=…` on one line (each assignment is one line of the message), or nothing.
    private static func statusAssignment(_ text: String?) -> [String] {
        guard let text else { return [] }
        let line = String(text.map { $0.isNewline ? " " : $0 })
        return ["STATUS=" + line]
    }
}

/// The address in `NOTIFY_SOCKET`: a path (`/run/systemd/notify`), or a name in the abstract
/// namespace when it starts with `@` (systemd's spelling of the leading zero byte).
enum NotifyAddress {
    /// - Throws: `EAFNOSUPPORT` for any other form (systemd's `vsock:` addresses, which only a
    ///   manager outside a virtual machine hands out), `EINVAL` for an empty or too long one.
    static func parse(_ text: String) throws(Errno) -> UnixSocketAddress {
        let bytes = Array(text.utf8)
        guard let first = bytes.first else { throw Errno(rawValue: EINVAL) }
        guard first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else { throw Errno(rawValue: EAFNOSUPPORT) }
        do {
            return first == UInt8(ascii: "/") ? try UnixSocketAddress(path: text) : try UnixSocketAddress(abstractName: Array(bytes.dropFirst()))
        } catch {
            throw Errno(rawValue: EINVAL)
        }
    }
}
