import ArgumentParsing
import ScaleCore
import ScaleOptions

/// forcescale-mqtt's settings, declared once as `Setting`s, the declarations forcescaled's
/// settings use: each is a `--name` option and a key of the same name in the
/// configuration file (`/etc/forcescale/mqtt.conf`, or `--config`), which is read by the
/// same syntax as forcescale.conf (`ConfigurationSyntax`). They are not in `Setting.all`,
/// which is forcescaled's file: forcescaled takes none of them.
package enum MQTTSetting {
    /// Where the configuration file is looked for when `--config` does not say.
    package static let defaultConfigurationPath = "/etc/forcescale/mqtt.conf"

    static let socket = Setting(
        "socket", valueName: "path", kind: .absolutePath,
        defaultDescription: "/run/forcescale/forcescale.sock when it exists, else $XDG_RUNTIME_DIR/forcescale.sock",
        help: "The socket of forcescaled to read from.", programs: [], reload: .restart)

    static let broker = Setting(
        "broker", valueName: "host[:port]", kind: .text(noun: "a host name or address with an optional :port from 1 to 65535"),
        defaultValue: "localhost:1883", help: "The MQTT broker; an IPv6 address goes in brackets: [::1]:1883.",
        programs: [], reload: .restart)

    static let prefix = Setting(
        "prefix", valueName: "topic", kind: .text(noun: Self.topicNoun),
        defaultValue: "forcescale", help: "The topics go under <prefix>/<host>/<device>.", programs: [], reload: .restart)

    static let discoveryPrefix = Setting(
        "discovery-prefix", valueName: "topic", kind: .text(noun: Self.topicNoun),
        defaultValue: "homeassistant", help: "Home Assistant's discovery prefix, where the configs go and its status is heard.",
        programs: [], reload: .restart)

    static let clientID = Setting(
        "client-id", valueName: "id", kind: .text(noun: "an MQTT client identifier of at most 23 letters, digits, '-' and '_'"),
        defaultDescription: "forcescale-<host>", help: "The client identifier given to the broker; two clients with one identifier push each other out.",
        programs: [], reload: .restart)

    static let caFile = Setting(
        "cafile", valueName: "file", kind: .absolutePath,
        help: "Connect with TLS, checking the broker's certificate against this CA file (PEM).", programs: [], reload: .restart)

    static let username = Setting(
        "username", valueName: "name", kind: .text(noun: "a user name"),
        help: "The user name to log in to the broker with.", programs: [], reload: .restart)

    static let passwordFile = Setting(
        "password-file", valueName: "file", kind: .absolutePath,
        help: "A file whose first line is the password (never on the command line, where ps shows it).",
        programs: [], reload: .restart)

    static let liveIntervalMilliseconds = Setting(
        "live-interval-ms", valueName: "ms",
        kind: .wholeNumber(of: "milliseconds", minimum: 0, maximum: Setting.maximumMilliseconds, note: "0 publishes no live readings"),
        defaultValue: "0", help: "Publish the live reading at most this often; 0 (the default) publishes none.",
        programs: [], reload: .restart)

    /// Every setting, in the configuration file's order.
    package static let all: [Setting] = [
        socket, broker, prefix, discoveryPrefix, clientID, caFile, username, passwordFile, liveIntervalMilliseconds,
    ]

    /// The setting of a configuration key, or `nil`.
    static func named(_ name: String) -> Setting? { all.first { $0.name == name } }

    static let topicNoun = "a topic of letters, digits, '-', '_', '.' and '/' without '+', '#' or a '/' at either end"

    /// The known key closest to `name` in spelling, when one is close enough to be a typo.
    static func suggestion(for name: String) -> String? {
        Suggestion.closest(to: name, among: all.map(\.name))
    }
}
