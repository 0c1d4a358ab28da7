import ScaleCore
import ScaleEvdev
import ScaleLog
import ScaleOptions

/// The keys of `forcescale.conf`: the settings that the file takes (`Setting.all`, in its
/// order), each also a `forcescaled` option of the same name (`interval-ms = 20` and
/// `--interval-ms 20`), except `rumble` (`--no-rumble`) and `log-level` (`--verbose`,
/// `--quiet`) and `log` (`--log`, `--no-log`). The names, the values each key accepts and
/// when a reload applies it all come from the setting's declaration.
package struct ConfigurationKey: RawRepresentable, Hashable, CaseIterable, Sendable, CustomStringConvertible {
    /// The setting the key sets.
    let setting: Setting

    /// The key of a setting that the file takes.
    init(_ setting: Setting) {
        precondition(setting.isInConfigurationFile, "'\(setting.name)' is not a key of the configuration file")
        self.setting = setting
    }

    /// The key named `rawValue`, or `nil` when the file has no such key.
    package init?(rawValue: String) {
        guard let setting = Setting.named(rawValue), setting.isInConfigurationFile else { return nil }
        self.setting = setting
    }

    /// The key as the file spells it: `interval-ms`.
    package var rawValue: String { setting.name }
    package var description: String { rawValue }

    package static func == (lhs: ConfigurationKey, rhs: ConfigurationKey) -> Bool { lhs.rawValue == rhs.rawValue }
    package func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

    /// Every key, in the file's order.
    package static let allCases: [ConfigurationKey] = Setting.all.filter(\.isInConfigurationFile).map(ConfigurationKey.init)

    static let device = ConfigurationKey(.device)
    static let intervalMilliseconds = ConfigurationKey(.intervalMilliseconds)
    static let threshold = ConfigurationKey(.threshold)
    static let hysteresis = ConfigurationKey(.hysteresis)
    static let contacts = ConfigurationKey(.contacts)
    static let unit = ConfigurationKey(.unit)
    static let stableMilliseconds = ConfigurationKey(.stableMilliseconds)
    static let stableGrams = ConfigurationKey(.stableGrams)
    static let rumble = ConfigurationKey(.rumble)
    static let rumbleDevice = ConfigurationKey(.rumbleDevice)
    static let rumbleIntensity = ConfigurationKey(.rumbleIntensity)
    static let socket = ConfigurationKey(.socket)
    static let stateDirectory = ConfigurationKey(.stateDirectory)
    static let group = ConfigurationKey(.group)
    static let controlGroup = ConfigurationKey(.controlGroup)
    static let maximumClients = ConfigurationKey(.maximumClients)
    static let logLevel = ConfigurationKey(.logLevel)
    static let log = ConfigurationKey(.log)
    static let logDatabase = ConfigurationKey(.logDatabase)
    static let logKeepDays = ConfigurationKey(.logKeepDays)
    static let logKeepReadings = ConfigurationKey(.logKeepReadings)

    /// The longest duration a millisecond key takes (`Setting.maximumMilliseconds`).
    static var maximumMilliseconds: Int { Setting.maximumMilliseconds }

    /// The longest `log-keep-days` (`Setting.maximumKeepDays`).
    static var maximumKeepDays: Int { Setting.maximumKeepDays }

    /// What the key accepts, for error messages.
    var accepted: String { setting.accepted }

    /// How a change of this key reaches the running daemon on SIGHUP.
    var reach: Setting.Reload { setting.reload }

    /// Whether the key shapes the scale pipeline (and so matters to a recording, too).
    package var isPipelineSetting: Bool { Setting.pipeline.contains(setting) }

    /// The known key closest to `name` in spelling, when one is close enough to be a typo.
    static func suggestion(for name: String) -> ConfigurationKey? {
        Suggestion.closest(to: name, among: allCases.map(\.rawValue)).flatMap(ConfigurationKey.init(rawValue:))
    }
}

/// A value that a key does not accept: the message names the key and what it accepts.
struct ConfigurationValueError: Error, Equatable, Sendable, CustomStringConvertible {
    var key: ConfigurationKey
    var value: String
    var accepted: String

    init(key: ConfigurationKey, value: String, accepted: String? = nil) {
        self.key = key
        self.value = value
        self.accepted = accepted ?? key.accepted
    }

    var description: String {
        value.isEmpty
            ? "'\(key)' has no value; it takes \(accepted) (comment the line out for the default)"
            : "bad value '\(value)' for '\(key)': it takes \(accepted)"
    }
}

/// What one source of settings says — the configuration file, or the command line: each
/// key it sets, `nil` for those it leaves alone.
package struct ConfigurationLayer: Equatable, Sendable {
    /// The devices to read, as `--device` names each; `nil` leaves the key alone.
    package var devices: [String]?
    package var intervalMilliseconds: Int?
    package var threshold: Double?
    package var hysteresis: Double?
    package var contacts: ContactMode?
    package var unit: MassUnit?
    package var stableMilliseconds: Int?
    package var stableGrams: Double?
    package var rumble: Bool?
    package var rumbleDevice: String?
    package var rumbleIntensity: Double?
    package var socket: String?
    package var stateDirectory: String?
    package var group: String?
    package var controlGroup: String?
    package var maximumClients: Int?
    package var logLevel: DaemonLog.Level?
    package var log: Bool?
    package var logDatabase: String?
    package var logKeepDays: Int?
    package var logKeepReadings: Int?

    package init() {}

    /// Whether the layer sets `key`.
    package func sets(_ key: ConfigurationKey) -> Bool {
        switch key {
        case .device: devices != nil
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
        case .controlGroup: controlGroup != nil
        case .maximumClients: maximumClients != nil
        case .logLevel: logLevel != nil
        case .log: log != nil
        case .logDatabase: logDatabase != nil
        case .logKeepDays: logKeepDays != nil
        case .logKeepReadings: logKeepReadings != nil
        default: preconditionFailure("ConfigurationLayer has no field for '\(key)'")
        }
    }

    /// Sets `key` from its text in the file, checking it on its own against its setting's
    /// declaration (the hysteresis against the threshold is checked once the whole file is
    /// read).
    /// - Throws: `ConfigurationValueError` naming the key and what it accepts.
    /// The configuration file's `device`: one device, kept as written (a quoted value keeps
    /// its blanks), or several separated by commas, each trimmed.
    /// - Returns: The devices; `nil` when one of them is empty.
    static func deviceList(_ text: String) -> [String]? {
        guard text.contains(",") else { return [text] }
        let devices = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0.trimmingBlanks) }
        return devices.contains(where: \.isEmpty) ? nil : devices
    }

    mutating func set(_ key: ConfigurationKey, from text: String) throws(ConfigurationValueError) {
        let bad = ConfigurationValueError(key: key, value: text)
        guard let value = key.setting.parse(text) else { throw bad }
        func given<Value>(_ typed: Value?) throws(ConfigurationValueError) -> Value {
            guard let typed else { throw bad }
            return typed
        }
        switch key {
        case .device: devices = try given(Self.deviceList(try given(value.text)))
        case .intervalMilliseconds: intervalMilliseconds = try given(value.integer)
        case .threshold: threshold = try given(value.number)
        case .hysteresis: hysteresis = try given(value.number)
        case .contacts: contacts = try given(value.text.flatMap(ContactMode.init(rawValue:)))
        case .unit: unit = try given(value.text.flatMap(MassUnit.init(rawValue:)))
        case .stableMilliseconds: stableMilliseconds = try given(value.integer)
        case .stableGrams: stableGrams = try given(value.number)
        case .rumble: rumble = try given(value.toggle)
        case .rumbleDevice: rumbleDevice = try given(value.text)
        case .rumbleIntensity: rumbleIntensity = try given(value.number)
        case .socket: socket = try given(value.text)
        case .stateDirectory: stateDirectory = try given(value.text)
        case .group: group = try given(value.text)
        case .controlGroup: controlGroup = try given(value.text)
        case .maximumClients: maximumClients = try given(value.integer)
        case .logLevel: logLevel = try given(value.text.flatMap(DaemonLog.Level.init(name:)))
        case .log: log = try given(value.toggle)
        case .logDatabase: logDatabase = try given(value.text)
        case .logKeepDays: logKeepDays = try given(value.integer)
        case .logKeepReadings: logKeepReadings = try given(value.integer)
        default: preconditionFailure("ConfigurationLayer has no field for '\(key)'")
        }
    }
}

/// The daemon's settings in effect: the defaults, overridden by the configuration file,
/// overridden by the command line.
package struct DaemonConfiguration: Equatable, Sendable {
    /// Where the configuration file is looked for when `--config` does not say.
    package static let defaultPath = "/etc/forcescale/forcescale.conf"

    /// The devices to read, each as `--device` names one; empty for every pressure device.
    var devices: [String] = []
    package var settings = ScaleSettings()
    /// The unit clients show by default. The daemon itself always speaks grams.
    var unit = MassUnit.grams
    var rumble = true
    /// Another device to rumble on a PEAK (a gamepad); `nil` for the pressure device.
    var rumbleDevice: String?
    var rumbleIntensity = 1.0
    /// `nil` for the default: `/run/forcescale/forcescale.sock` as root, in
    /// `$XDG_RUNTIME_DIR` otherwise.
    package var socket: String?
    /// `nil` for the default: `/var/lib/forcescale` as root, in `$XDG_STATE_HOME` otherwise.
    package var stateDirectory: String?
    /// Who may connect, and so read (the socket's group when the daemon binds it).
    var group = "forcescale"
    /// Who may change the scale or the hardware (``ControlPolicy``).
    var controlGroup = "forcescale-control"
    /// Clients connected at once.
    var maximumClients = 256
    package var logLevel = DaemonLog.Level.info
    /// The force log: `true` or `false` as set, `nil` when not said (then on exactly when
    /// `logDatabase` is set).
    var log: Bool?
    /// The force log's file; `nil` for `log.sqlite` in the state directory.
    var logDatabase: String?
    /// Retention: sessions that ended longer ago than this go; `nil` keeps them.
    var logKeepDays: Int?
    /// Retention: the oldest sessions go while the log holds more readings; `nil`, no limit.
    var logKeepReadings: Int?

    init() {}

    /// The defaults, then each layer in turn, later ones winning.
    package init(layers: [ConfigurationLayer]) {
        self.init()
        for layer in layers { apply(layer) }
    }

    /// Takes every key the layer sets.
    mutating func apply(_ layer: ConfigurationLayer) {
        if let value = layer.devices { devices = value }
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
        if let value = layer.controlGroup { controlGroup = value }
        if let value = layer.maximumClients { maximumClients = value }
        if let value = layer.logLevel { logLevel = value }
        if let value = layer.log { log = value }
        if let value = layer.logDatabase { logDatabase = value }
        if let value = layer.logKeepDays { logKeepDays = value }
        if let value = layer.logKeepReadings { logKeepReadings = value }
    }

    /// Whether the force log is on: `log = on`, or a `log-db` without `log = off`.
    var logs: Bool { log ?? (logDatabase != nil) }

    /// The force log's file when logging is on, with the state directory for the default.
    func logPath(stateDirectory: String) -> String? {
        guard logs else { return nil }
        return logDatabase ?? LogDatabase.defaultPath(stateDirectory: stateDirectory)
    }

    /// What rumbles on a PEAK.
    var rumbleChoice: RumbleChoice {
        guard rumble else { return .off }
        return rumbleDevice.map { .device(DeviceQuery($0)) } ?? .pressureDevice
    }

    /// A key's value as the file would spell it, or a few words for a default that has no
    /// spelling (`best`, `default`, `pressure device`).
    func text(for key: ConfigurationKey) -> String {
        switch key {
        case .device: devices.isEmpty ? "every pressure device" : devices.joined(separator: ", ")
        case .intervalMilliseconds: String(settings.throttleInterval / 1000)
        case .threshold: "\(settings.peakThreshold)"
        case .hysteresis: "\(settings.peakHysteresis)"
        case .contacts: settings.contactMode?.rawValue ?? "sum on a pressure pad, else primary"
        case .unit: unit.rawValue
        case .stableMilliseconds: String(settings.stabilityWindow / 1000)
        case .stableGrams: "\(settings.stabilitySpan)"
        case .rumble: rumble ? "on" : "off"
        case .rumbleDevice: rumbleDevice ?? "the pressure device"
        case .rumbleIntensity: "\(rumbleIntensity)"
        case .socket: socket ?? "the default"
        case .stateDirectory: stateDirectory ?? "the default"
        case .group: group
        case .controlGroup: controlGroup
        case .maximumClients: String(maximumClients)
        case .logLevel: logLevel.name
        case .log: logs ? "on" : "off"
        case .logDatabase: logDatabase ?? "log.sqlite in the state directory"
        case .logKeepDays: logKeepDays.map(String.init) ?? "forever"
        case .logKeepReadings: logKeepReadings.map(String.init) ?? "no limit"
        default: preconditionFailure("DaemonConfiguration has no value for '\(key)'")
        }
    }

    /// The keys whose values differ from `other`'s, in the file's order.
    func changes(from other: DaemonConfiguration) -> [ConfigurationKey] {
        ConfigurationKey.allCases.filter { text(for: $0) != other.text(for: $0) }
    }

    /// `interval-ms 10 → 50, rumble on → off`.
    func describeChanges(from other: DaemonConfiguration, keys: [ConfigurationKey]) -> String {
        keys.map { "\($0) \(other.text(for: $0)) → \(text(for: $0))" }.joined(separator: ", ")
    }

    /// The settings that shape the readings, for the log: `interval-ms 10, threshold 1.0, …`.
    var summary: String {
        ConfigurationKey.allCases.filter { ![.socket, .stateDirectory, .group, .controlGroup, .maximumClients, .logLevel, .log, .logDatabase, .logKeepDays, .logKeepReadings].contains($0) }
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

