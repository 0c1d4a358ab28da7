import ScaleOptions
import ScalePOSIX

/// An MQTT broker's address: `host`, `host:port`, `[v6 address]:port`, or a bare IPv6
/// address (more than one colon and no brackets).
package struct BrokerAddress: Hashable, Sendable, CustomStringConvertible {
    var host: String
    var port: Int

    /// MQTT's port without TLS; with TLS it is 8883, but a port is always given or 1883.
    static let defaultPort = 1883

    init(host: String, port: Int = defaultPort) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST[:PORT]`.
    /// - Returns: `nil` for an empty host, a port that is not a whole number from 1 to
    ///   65535, or an unclosed bracket.
    init?(_ text: String) {
        var host = Substring(text)
        var port = Self.defaultPort
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = Int(rest.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            guard let number = Int(host[host.index(after: colon)...]) else { return nil }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), (1...65535).contains(port) else { return nil }
        self.host = String(host)
        self.port = port
    }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A value that a setting does not take, from the command line or the file.
package struct MQTTSettingError: Error, Equatable, Sendable, CustomStringConvertible {
    var setting: String
    var value: String
    var accepted: String

    package var description: String {
        value.isEmpty ? "'\(setting)' has no value; it takes \(accepted)" : "bad value '\(value)' for '\(setting)': it takes \(accepted)"
    }
}

/// What forcescale-mqtt does: the defaults, overridden by the configuration file,
/// overridden by the command line (each layer a `set` per key it names).
package struct MQTTConfiguration: Equatable, Sendable {
    /// forcescaled's socket; `nil` for the client library's default.
    var socketPath: String?
    package var broker = BrokerAddress(host: "localhost")
    var prefix = "forcescale"
    var discoveryPrefix = "homeassistant"
    /// `nil` for `forcescale-<host>`.
    var clientID: String?
    package var caFile: String?
    package var username: String?
    package var passwordFile: String?
    /// 0 for no live readings.
    var liveIntervalMilliseconds = 0

    package init() {}

    /// Sets one setting from its text, checked against its declaration and what MQTT
    /// allows (topics without wildcards, a client id the broker must accept).
    /// - Throws: `MQTTSettingError` naming the setting and what it takes.
    package mutating func set(_ setting: Setting, from text: String) throws(MQTTSettingError) {
        let bad = MQTTSettingError(setting: setting.name, value: text, accepted: setting.accepted)
        guard let value = setting.parse(text) else { throw bad }
        switch setting {
        case MQTTSetting.socket: socketPath = value.text
        case MQTTSetting.broker:
            guard let address = BrokerAddress(text) else { throw bad }
            broker = address
        case MQTTSetting.prefix, MQTTSetting.discoveryPrefix:
            guard MQTTTopics.isValidPrefix(text) else { throw bad }
            if setting == MQTTSetting.prefix { prefix = text } else { discoveryPrefix = text }
        case MQTTSetting.clientID:
            // MQTT 3.1.1 (3.1.3.1): every broker must take 1 to 23 of these characters.
            guard text.utf8.count <= 23, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { throw bad }
            clientID = text
        case MQTTSetting.caFile: caFile = value.text
        case MQTTSetting.username: username = value.text
        case MQTTSetting.passwordFile: passwordFile = value.text
        case MQTTSetting.liveIntervalMilliseconds: liveIntervalMilliseconds = value.integer ?? 0
        default: preconditionFailure("'\(setting.name)' is not a setting of forcescale-mqtt")
        }
    }
}

/// Why the configuration file cannot be used: every problem, each as `FILE:LINE: message`.
package struct MQTTConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    var path: String
    /// The line (none for the file as a whole) and what is wrong.
    var problems: [(line: Int?, message: String)]

    init(path: String, problems: [(line: Int?, message: String)]) {
        self.path = path
        self.problems = problems
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.path == rhs.path && lhs.problems.map { "\($0.line ?? 0) \($0.message)" } == rhs.problems.map { "\($0.line ?? 0) \($0.message)" }
    }

    /// One `FILE:LINE: message` per problem.
    package var lines: [String] { problems.map { "\(path):\($0.line.map { "\($0):" } ?? "") \($0.message)" } }

    package var description: String { lines.joined(separator: "\n") }
}

extension MQTTConfiguration {
    /// Larger than this is not a configuration file.
    static let maximumFileSize = 1 << 20

    /// Reads a configuration file's settings over these, with forcescale.conf's syntax.
    /// - Parameters:
    ///   - path: The file.
    ///   - mustExist: Whether a missing file is an error (given with `--config`).
    /// - Returns: Whether there was a file.
    /// - Throws: `MQTTConfigurationError` with every problem found, by line.
    @discardableResult
    package mutating func load(path: String, mustExist: Bool) throws(MQTTConfigurationError) -> Bool {
        var bytes: [UInt8] = []
        do {
            let input = try FileInput(path: path)
            try input.forEachChunk(size: 64 << 10) { chunk in
                bytes.append(contentsOf: chunk)
                guard bytes.count <= Self.maximumFileSize else { throw MQTTConfigurationError(path: path, problems: [(nil, "larger than 1 MiB: not a configuration file")]) }
            }
        } catch let error as MQTTConfigurationError {
            throw error
        } catch let error as SystemError {
            if error.errno == .noSuchFile, !mustExist { return false }
            let advice = switch error.errno {
            case .noSuchFile: "no such file (give an existing file to --config, or leave --config out)"
            case .permissionDenied: "permission denied (forcescale-mqtt must be able to read it)"
            case .isDirectory: "is a directory (give the configuration file)"
            default: error.errno.description
            }
            throw MQTTConfigurationError(path: path, problems: [(nil, advice)])
        } catch {
            throw MQTTConfigurationError(path: path, problems: [(nil, "\(error)")])
        }
        try parse(String(decoding: bytes, as: UTF8.self), path: path)
        return true
    }

    /// Reads a configuration file's text over these settings.
    /// - Throws: `MQTTConfigurationError` with every problem found, by line.
    package mutating func parse(_ text: String, path: String) throws(MQTTConfigurationError) {
        var problems: [(line: Int?, message: String)] = []
        var seen: [String: Int] = [:]
        var text = Substring(text)
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let number = index + 1
            switch ConfigurationSyntax.parseLine(line) {
            case .blank: continue
            case .problem(let message): problems.append((number, message))
            case .entry(let key, let value):
                guard let setting = MQTTSetting.named(key) else {
                    let suggestion = MQTTSetting.suggestion(for: key).map { " (did you mean '\($0)'?)" } ?? ""
                    problems.append((number, "unknown key '\(key)'\(suggestion); the keys are " + Setting.spelledOut(MQTTSetting.all.map(\.name))))
                    continue
                }
                if let earlier = seen[key] {
                    problems.append((number, "'\(key)' is set twice (first on line \(earlier)); keep one"))
                    continue
                }
                seen[key] = number
                do throws(MQTTSettingError) {
                    try set(setting, from: value)
                } catch {
                    problems.append((number, error.description))
                }
            }
        }
        guard problems.isEmpty else { throw MQTTConfigurationError(path: path, problems: problems) }
    }
}
