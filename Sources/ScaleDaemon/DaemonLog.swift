import ScaleCore
import ScalePOSIX

/// The daemon's log: standard error with syslog priority prefixes (`<3>` … `<7>`), which
/// journald files by level when the daemon runs under systemd.
///
/// A message often carries text from outside: a device's name, a recording's path, an error
/// that quotes a file, a client's request. journald takes each line of standard error as a
/// record of its own, its `<N>` first, so a newline in a name would forge a record, and a
/// terminal would act on an escape sequence. So each message is written whole as
/// ``UntrustedText/escaped(_:)`` writes it: one record, one line, no control character.
/// This is the one place the daemon escapes what it logs; callers pass the raw text.
package struct DaemonLog: Sendable {
    package enum Level: Int, Comparable, CaseIterable, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level's name in the configuration file (`log-level = info`).
        var name: String {
            switch self {
            case .error: "error"
            case .warning: "warning"
            case .notice: "notice"
            case .info: "info"
            case .debug: "debug"
            }
        }

        package init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }
    }

    /// The least important level still written.
    package var threshold: Level

    package init(threshold: Level = .info) { self.threshold = threshold }

    /// Writes `message` as one record, when `level` is at or above the threshold.
    /// - Parameters:
    ///   - level: The record's priority.
    ///   - message: The message, raw: it is escaped here.
    package func log(_ level: Level, _ message: String) {
        guard level <= threshold else { return }
        printError(Self.record(level, message))
    }

    /// `<6>message\n`: the line a record is written as, its message escaped.
    static func record(_ level: Level, _ message: String) -> String {
        "<\(level.rawValue)>\(UntrustedText.escaped(message))\n"
    }
}
