import ScalePOSIX

/// The daemon's log: standard error with syslog priority prefixes (`<3>` … `<7>`), which
/// journald files by level when the daemon runs under systemd.
public struct DaemonLog: Sendable {
    public enum Level: Int, Comparable, CaseIterable, Sendable {
        case error = 3, warning = 4, notice = 5, info = 6, debug = 7
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level's name in the configuration file (`log-level = info`).
        public var name: String {
            switch self {
            case .error: "error"
            case .warning: "warning"
            case .notice: "notice"
            case .info: "info"
            case .debug: "debug"
            }
        }

        public init?(name: String) {
            guard let level = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = level
        }
    }

    /// The least important level still written.
    public var threshold: Level

    public init(threshold: Level = .info) { self.threshold = threshold }

    public func log(_ level: Level, _ message: String) {
        guard level <= threshold else { return }
        printError("<\(level.rawValue)>\(message)")
    }
}
