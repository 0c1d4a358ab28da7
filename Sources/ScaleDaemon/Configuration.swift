import ScaleCore
import ScaleEvdev
import ScaleLog

/// The keys of `forcescale.conf`, each also a `forcescaled` option of the same name
/// (`interval-ms = 20` and `--interval-ms 20`), except `rumble` (`--no-rumble`) and
/// `log-level` (`--verbose`, `--quiet`) and `log` (`--log`, `--no-log`).
public enum ConfigurationKey: String, CaseIterable, Sendable, CustomStringConvertible {
    case device
    case intervalMilliseconds = "interval-ms"
    case threshold
    case hysteresis
    case contacts
    case unit
    case stableMilliseconds = "stable-ms"
    case stableGrams = "stable-grams"
    case rumble
    case rumbleDevice = "rumble-device"
    case rumbleIntensity = "rumble-intensity"
    case socket
    case stateDirectory = "state-dir"
    case group
    case logLevel = "log-level"
    case log
    case logDatabase = "log-db"
    case logKeepDays = "log-keep-days"
    case logKeepReadings = "log-keep-readings"

    public var description: String { rawValue }

    /// The longest duration a millisecond key takes: a day, far beyond any use, and far
    /// from overflowing once turned into microseconds.
    public static let maximumMilliseconds = 86_400_000

    /// The longest `log-keep-days`: a century.
    public static let maximumKeepDays = 36_500

    /// What the key accepts, for error messages.
    public var accepted: String {
        switch self {
        case .device, .rumbleDevice: "a device path, a part of the device's name, or vendor:product in hex"
        case .intervalMilliseconds: "a whole number of milliseconds from 0 to \(Self.maximumMilliseconds) (0 lets every frame through)"
        case .threshold: "a force fraction greater than 0 and at most 1"
        case .hysteresis: "a force fraction from 0 to the threshold"
        case .contacts: ContactMode.allCases.map(\.rawValue).spelledOut
        case .unit: MassUnit.allCases.map(\.rawValue).spelledOut
        case .stableMilliseconds: "a whole number of milliseconds from 1 to \(Self.maximumMilliseconds)"
        case .stableGrams: "a number of grams, 0 or more"
        case .rumble, .log: "on or off"
        case .rumbleIntensity: "a fraction from 0 to 1"
        case .socket, .stateDirectory, .logDatabase: "an absolute path"
        case .group: "a group name"
        case .logLevel: DaemonLog.Level.allCases.map(\.name).spelledOut
        case .logKeepDays: "a whole number of days from 1 to \(Self.maximumKeepDays)"
        case .logKeepReadings: "a whole number of readings, 1 or more"
        }
    }

    /// How a change of this key reaches the running daemon on SIGHUP.
    public enum Reach: Sendable {
        /// The device is reopened (or the recording started over) with the new value.
        case source
        /// Applied at once.
        case immediate
        /// Kept for clients; nothing to apply in the daemon.
        case stored
        /// Takes effect when the daemon restarts.
        case restart
    }

    public var reach: Reach {
        switch self {
        case .device, .intervalMilliseconds, .threshold, .hysteresis, .contacts, .stableMilliseconds, .stableGrams,
             .rumble, .rumbleDevice, .rumbleIntensity:
            .source
        case .logLevel, .logKeepDays, .logKeepReadings: .immediate
        case .unit: .stored
        case .socket, .stateDirectory, .group, .log, .logDatabase: .restart
        }
    }

    /// Whether the key shapes the scale pipeline (and so matters to a recording, too).
    public var isPipelineSetting: Bool {
        [.intervalMilliseconds, .threshold, .hysteresis, .contacts, .stableMilliseconds, .stableGrams].contains(self)
    }

    /// The known key closest to `name` in spelling, when one is close enough to be a typo.
    public static func suggestion(for name: String) -> ConfigurationKey? {
        let scored = allCases.map { ($0, editDistance(name, $0.rawValue)) }.min { $0.1 < $1.1 }
        guard let (key, distance) = scored, distance <= max(1, min(3, key.rawValue.count / 3)) else { return nil }
        return key
    }
}

/// A value that a key does not accept: the message names the key and what it accepts.
public struct ConfigurationValueError: Error, Equatable, Sendable, CustomStringConvertible {
    public var key: ConfigurationKey
    public var value: String
    public var accepted: String

    public init(key: ConfigurationKey, value: String, accepted: String? = nil) {
        self.key = key
        self.value = value
        self.accepted = accepted ?? key.accepted
    }

    public var description: String {
        value.isEmpty
            ? "'\(key)' has no value; it takes \(accepted) (comment the line out for the default)"
            : "bad value '\(value)' for '\(key)': it takes \(accepted)"
    }
}

/// What one source of settings says — the configuration file, or the command line: each
/// key it sets, `nil` for those it leaves alone.
public struct ConfigurationLayer: Equatable, Sendable {
    public var device: String?
    public var intervalMilliseconds: Int?
    public var threshold: Double?
    public var hysteresis: Double?
    public var contacts: ContactMode?
    public var unit: MassUnit?
    public var stableMilliseconds: Int?
    public var stableGrams: Double?
    public var rumble: Bool?
    public var rumbleDevice: String?
    public var rumbleIntensity: Double?
    public var socket: String?
    public var stateDirectory: String?
    public var group: String?
    public var logLevel: DaemonLog.Level?
    public var log: Bool?
    public var logDatabase: String?
    public var logKeepDays: Int?
    public var logKeepReadings: Int?

    public init() {}

    /// Whether the layer sets `key`.
    public func sets(_ key: ConfigurationKey) -> Bool {
        switch key {
        case .device: device != nil
        case .intervalMilliseconds: intervalMilliseconds != nil
        case .threshold: threshold != nil
        case .hysteresis: hysteresis != nil
        case .contacts: contacts != nil
        case .unit: unit != nil
        case .stableMilliseconds: stableMilliseconds != nil
        case .stableGrams: stableGrams != nil
        case .rumble: rumble != nil
        case .rumbleDevice: rumbleDevice != nil
        case .rumbleIntensity: rumbleIntensity != nil
        case .socket: socket != nil
        case .stateDirectory: stateDirectory != nil
        case .group: group != nil
        case .logLevel: logLevel != nil
        case .log: log != nil
        case .logDatabase: logDatabase != nil
        case .logKeepDays: logKeepDays != nil
        case .logKeepReadings: logKeepReadings != nil
        }
    }

    /// Sets `key` from its text in the file, checking it on its own (the hysteresis
    /// against the threshold is checked once the whole file is read).
    /// - Throws: `ConfigurationValueError` naming the key and what it accepts.
    public mutating func set(_ key: ConfigurationKey, from text: String) throws(ConfigurationValueError) {
        let bad = ConfigurationValueError(key: key, value: text)
        guard !text.isEmpty else { throw bad }
        func milliseconds(from minimum: Int) throws(ConfigurationValueError) -> Int {
            guard let value = Int(text), value >= minimum, value <= ConfigurationKey.maximumMilliseconds else { throw bad }
            return value
        }
        func number(_ accepts: (Double) -> Bool) throws(ConfigurationValueError) -> Double {
            guard let value = Double(text), value.isFinite, accepts(value) else { throw bad }
            return value
        }
        func absolutePath() throws(ConfigurationValueError) -> String {
            guard text.hasPrefix("/") else { throw bad }
            return text
        }
        switch key {
        case .device: device = text
        case .intervalMilliseconds: intervalMilliseconds = try milliseconds(from: 0)
        case .threshold: threshold = try number { $0 > 0 && $0 <= 1 }
        case .hysteresis: hysteresis = try number { $0 >= 0 && $0 <= 1 }
        case .contacts:
            guard let mode = ContactMode(rawValue: text) else { throw bad }
            contacts = mode
        case .unit:
            guard let unit = MassUnit(rawValue: text) else { throw bad }
            self.unit = unit
        case .stableMilliseconds: stableMilliseconds = try milliseconds(from: 1)
        case .stableGrams: stableGrams = try number { $0 >= 0 }
        case .rumble:
            switch text {
            case "on": rumble = true
            case "off": rumble = false
            default: throw bad
            }
        case .rumbleDevice: rumbleDevice = text
        case .rumbleIntensity: rumbleIntensity = try number { $0 >= 0 && $0 <= 1 }
        case .socket: socket = try absolutePath()
        case .stateDirectory: stateDirectory = try absolutePath()
        case .group:
            guard !text.contains(where: { $0 == ":" || $0 == "/" || $0.isWhitespace }) else { throw bad }
            group = text
        case .logLevel:
            guard let level = DaemonLog.Level(name: text) else { throw bad }
            logLevel = level
        case .log:
            switch text {
            case "on": log = true
            case "off": log = false
            default: throw bad
            }
        case .logDatabase: logDatabase = try absolutePath()
        case .logKeepDays:
            guard let days = Int(text), days >= 1, days <= ConfigurationKey.maximumKeepDays else { throw bad }
            logKeepDays = days
        case .logKeepReadings:
            guard let readings = Int(text), readings >= 1 else { throw bad }
            logKeepReadings = readings
        }
    }
}

/// The daemon's settings in effect: the defaults, overridden by the configuration file,
/// overridden by the command line.
public struct DaemonConfiguration: Equatable, Sendable {
    /// Where the configuration file is looked for when `--config` does not say.
    public static let defaultPath = "/etc/forcescale/forcescale.conf"

    /// The device to read; `nil` for the best one.
    public var device: String?
    public var settings = ScaleSettings()
    /// The unit clients show by default. The daemon itself always speaks grams.
    public var unit = MassUnit.grams
    public var rumble = true
    /// Another device to rumble on a PEAK (a gamepad); `nil` for the pressure device.
    public var rumbleDevice: String?
    public var rumbleIntensity = 1.0
    /// `nil` for the default: `/run/forcescale/forcescale.sock` as root, in
    /// `$XDG_RUNTIME_DIR` otherwise.
    public var socket: String?
    /// `nil` for the default: `/var/lib/forcescale` as root, in `$XDG_STATE_HOME` otherwise.
    public var stateDirectory: String?
    public var group = "forcescale"
    public var logLevel = DaemonLog.Level.info
    /// The force log: `true` or `false` as set, `nil` when not said (then on exactly when
    /// `logDatabase` is set).
    public var log: Bool?
    /// The force log's file; `nil` for `log.sqlite` in the state directory.
    public var logDatabase: String?
    /// Retention: sessions that ended longer ago than this go; `nil` keeps them.
    public var logKeepDays: Int?
    /// Retention: the oldest sessions go while the log holds more readings; `nil`, no limit.
    public var logKeepReadings: Int?

    public init() {}

    /// The defaults, then each layer in turn, later ones winning.
    public init(layers: [ConfigurationLayer]) {
        self.init()
        for layer in layers { apply(layer) }
    }

    /// Takes every key the layer sets.
    public mutating func apply(_ layer: ConfigurationLayer) {
        if let value = layer.device { device = value }
        if let value = layer.intervalMilliseconds { settings.throttleInterval = Int64(value) * 1000 }
        if let value = layer.threshold { settings.peakThreshold = value }
        if let value = layer.hysteresis { settings.peakHysteresis = value }
        if let value = layer.contacts { settings.contactMode = value }
        if let value = layer.unit { unit = value }
        if let value = layer.stableMilliseconds { settings.stabilityWindow = Int64(value) * 1000 }
        if let value = layer.stableGrams { settings.stabilitySpan = value }
        if let value = layer.rumble { rumble = value }
        if let value = layer.rumbleDevice { rumbleDevice = value }
        if let value = layer.rumbleIntensity { rumbleIntensity = value }
        if let value = layer.socket { socket = value }
        if let value = layer.stateDirectory { stateDirectory = value }
        if let value = layer.group { group = value }
        if let value = layer.logLevel { logLevel = value }
        if let value = layer.log { log = value }
        if let value = layer.logDatabase { logDatabase = value }
        if let value = layer.logKeepDays { logKeepDays = value }
        if let value = layer.logKeepReadings { logKeepReadings = value }
    }

    /// Whether the force log is on: `log = on`, or a `log-db` without `log = off`.
    public var logs: Bool { log ?? (logDatabase != nil) }

    /// The force log's file when logging is on, with the state directory for the default.
    public func logPath(stateDirectory: String) -> String? {
        guard logs else { return nil }
        return logDatabase ?? LogDatabase.defaultPath(stateDirectory: stateDirectory)
    }

    /// What rumbles on a PEAK.
    public var rumbleChoice: RumbleChoice {
        guard rumble else { return .off }
        return rumbleDevice.map { .device(DeviceQuery($0)) } ?? .pressureDevice
    }

    /// A key's value as the file would spell it, or a few words for a default that has no
    /// spelling (`best`, `default`, `pressure device`).
    public func text(for key: ConfigurationKey) -> String {
        switch key {
        case .device: device ?? "the best one"
        case .intervalMilliseconds: String(settings.throttleInterval / 1000)
        case .threshold: "\(settings.peakThreshold)"
        case .hysteresis: "\(settings.peakHysteresis)"
        case .contacts: settings.contactMode.rawValue
        case .unit: unit.rawValue
        case .stableMilliseconds: String(settings.stabilityWindow / 1000)
        case .stableGrams: "\(settings.stabilitySpan)"
        case .rumble: rumble ? "on" : "off"
        case .rumbleDevice: rumbleDevice ?? "the pressure device"
        case .rumbleIntensity: "\(rumbleIntensity)"
        case .socket: socket ?? "the default"
        case .stateDirectory: stateDirectory ?? "the default"
        case .group: group
        case .logLevel: logLevel.name
        case .log: logs ? "on" : "off"
        case .logDatabase: logDatabase ?? "log.sqlite in the state directory"
        case .logKeepDays: logKeepDays.map(String.init) ?? "forever"
        case .logKeepReadings: logKeepReadings.map(String.init) ?? "no limit"
        }
    }

    /// The keys whose values differ from `other`'s, in the file's order.
    public func changes(from other: DaemonConfiguration) -> [ConfigurationKey] {
        ConfigurationKey.allCases.filter { text(for: $0) != other.text(for: $0) }
    }

    /// `interval-ms 10 → 50, rumble on → off`.
    public func describeChanges(from other: DaemonConfiguration, keys: [ConfigurationKey]) -> String {
        keys.map { "\($0) \(other.text(for: $0)) → \(text(for: $0))" }.joined(separator: ", ")
    }

    /// The settings that shape the readings, for the log: `interval-ms 10, threshold 1.0, …`.
    public var summary: String {
        ConfigurationKey.allCases.filter { ![.socket, .stateDirectory, .group, .logLevel, .log, .logDatabase, .logKeepDays, .logKeepReadings].contains($0) }
            .map { "\($0) \(text(for: $0))" }.joined(separator: ", ")
    }
}

extension [String] {
    /// `a, b or c`.
    var spelledOut: String {
        guard count > 1 else { return first ?? "" }
        return dropLast().joined(separator: ", ") + " or " + last!
    }
}

/// Levenshtein distance, for suggesting the key a typo meant.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
