import ScalePOSIX

/// The daemon's log: standard error with syslog priority prefixes (`<3>` … `<7>`), which
/// journald files by level when the daemon runs under systemd.
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

    package func log(_ level: Level, _ message: String) {
        guard level <= threshold else { return }
        printError("<\(level.rawValue)>\(message)")
    }
}
