import ArgumentParsing
import ScaleCore

/// Every setting, declared once. The order is `forcescale.conf`'s: the configuration file
/// lists its keys in it, and so do the daemon's messages.
extension Setting {
    /// The longest duration a millisecond setting takes: a day, far beyond any use, and far
    /// from overflowing once turned into microseconds.
    package static let maximumMilliseconds = 86_400_000
    /// The longest `log-keep-days`: a century.
    package static let maximumKeepDays = 36_500

    /// The programs that shape readings with the pipeline's settings.
    static let pipelinePrograms: Set<Program> = [.demo, .replay, .read, .forcescaled]

    package static let device = Setting(
        "device", valueName: "device", kind: .device,
        help: "A path, a part of the name, or vendor:product in hex.",
        programs: [.read, .record, .rumble, .forcescaled], reload: .source, repeatsIn: [.forcescaled])

    package static let intervalMilliseconds = Setting(
        "interval-ms", valueName: "ms",
        kind: .wholeNumber(of: "milliseconds", minimum: 0, maximum: maximumMilliseconds, note: "0 lets every frame through"),
        defaultValue: "10", help: "Minimum time between two readings; 0 lets every frame through.",
        programs: pipelinePrograms, reload: .source)

    package static let threshold = Setting(
        "threshold", valueName: "force",
        kind: .number(noun: "a force fraction", minimum: 0, minimumIncluded: false, maximum: 1),
        defaultValue: "1.0", help: "Force (0 to 1) at which a PEAK fires; 1 is saturation.",
        programs: pipelinePrograms, reload: .source)

    package static let hysteresis = Setting(
        "hysteresis", valueName: "force",
        // Checked on its own up to 1; against the threshold once both are known.
        kind: .number(noun: "a force fraction", minimum: 0, minimumIncluded: true, maximum: 1, maximumName: "the threshold"),
        defaultValue: "0.05", help: "How far force must fall below the threshold before the next PEAK.",
        programs: pipelinePrograms, reload: .source)

    package static let contacts = Setting(
        "contacts", valueName: "mode", kind: .choice(ContactMode.allCases.map(\.rawValue)),
        defaultDescription: "sum on a pressure pad, else primary",
        help: "Which contacts make the force: the oldest (primary), their sum or the hardest (max).",
        programs: pipelinePrograms, reload: .source)

    package static let unit = Setting(
        "unit", valueName: "unit", kind: .choice(MassUnit.allCases.map(\.rawValue)),
        defaultValue: MassUnit.grams.rawValue, help: "The unit clients show by default; the protocol always carries grams.",
        programs: [.forcescaled], reload: .stored)

    package static let stableMilliseconds = Setting(
        "stable-ms", valueName: "ms", kind: .wholeNumber(of: "milliseconds", minimum: 1, maximum: maximumMilliseconds),
        defaultValue: "500", help: "How long a weight must hold still to be stable.",
        programs: pipelinePrograms, reload: .source)

    package static let stableGrams = Setting(
        "stable-grams", valueName: "grams", kind: .number(noun: "a number of grams", minimum: 0, minimumIncluded: true, maximum: nil),
        defaultValue: "2.0", help: "Grams a still weight may spread over the window; a spread the sensor cannot avoid (two raw units, twice the fuzz, its own noise) is still whatever it weighs.",
        programs: pipelinePrograms, reload: .source)

    package static let rumble = Setting(
        "rumble", valueName: nil, kind: .onOff, defaultValue: "on", help: "Whether a PEAK plays a rumble.",
        programs: [.read, .forcescaled], flags: [Flag.noRumble], reload: .source)

    package static let rumbleDevice = Setting(
        "rumble-device", valueName: "device", kind: .device,
        help: "Rumble this device (a gamepad, say) on the PEAKs of pressure devices that cannot rumble themselves.",
        programs: [.read, .forcescaled], reload: .source)

    package static let rumbleIntensity = Setting(
        "rumble-intensity", valueName: "fraction", kind: .number(noun: "a fraction", minimum: 0, minimumIncluded: true, maximum: 1),
        defaultValue: "1.0", help: "Strength of the PEAK rumble from 0 to 1, through FF_GAIN when the device has it.",
        programs: [.read, .forcescaled], reload: .source)

    package static let socket = Setting(
        "socket", valueName: "path", kind: .absolutePath,
        defaultDescription: "$RUNTIME_DIRECTORY/forcescale.sock under systemd, /run/forcescale/forcescale.sock as root, $XDG_RUNTIME_DIR/forcescale.sock otherwise",
        help: "The socket to listen on.", programs: [.forcescaled], reload: .restart)

    package static let stateDirectory = Setting(
        "state-dir", valueName: "dir", kind: .absolutePath,
        defaultDescription: "$STATE_DIRECTORY under systemd, /var/lib/forcescale as root, $XDG_STATE_HOME/forcescale otherwise",
        help: "Where calibrations are kept.", programs: [.forcescaled], reload: .restart)

    package static let group = Setting(
        "group", valueName: "group", kind: .groupName, defaultValue: "forcescale",
        help: "The group allowed to connect and read: watch, status, the force log.", programs: [.forcescaled], reload: .restart)

    package static let controlGroup = Setting(
        "control-group", valueName: "group", kind: .groupName, defaultValue: "forcescale-control",
        help: "The group allowed to tare, calibrate, take the pad and rumble.", programs: [.forcescaled], reload: .restart)

    package static let maximumClients = Setting(
        "max-clients", valueName: "count", kind: .wholeNumber(of: "clients", minimum: 1, maximum: 100_000),
        defaultValue: "256", help: "Clients connected at once; one more is told so and let go.",
        programs: [.forcescaled], reload: .restart)

    package static let logLevel = Setting(
        "log-level", valueName: nil, kind: .choice(["error", "warning", "notice", "info", "debug"]), defaultValue: "info",
        help: "The least important messages still logged.", programs: [.forcescaled],
        flags: [Flag.verbose, Flag.quiet],
        reload: .immediate)

    package static let log = Setting(
        "log", valueName: nil, kind: .onOff, defaultValue: "off",
        help: "Whether to log sessions, readings and PEAKs to an SQLite file.", programs: [.forcescaled],
        flags: [Flag.log, Flag.noLog],
        reload: .restart)

    package static let logDatabase = Setting(
        "log-db", valueName: "path", kind: .absolutePath,
        help: "Log readings to this SQLite file (implies --log).", programs: [.forcescaled], reload: .restart)

    package static let logKeepDays = Setting(
        "log-keep-days", valueName: "days", kind: .wholeNumber(of: "days", minimum: 1, maximum: maximumKeepDays),
        defaultDescription: "keep them", help: "Remove logged sessions that ended longer ago than this.",
        programs: [.forcescaled], reload: .immediate)

    package static let logKeepReadings = Setting(
        "log-keep-readings", valueName: "count", kind: .wholeNumber(of: "readings", minimum: 1, maximum: nil),
        defaultDescription: "no limit", help: "Remove the oldest logged sessions while the log holds more readings than this.",
        programs: [.forcescaled], reload: .immediate)

    /// Every setting, in the configuration file's order.
    package static let all: [Setting] = [
        device, intervalMilliseconds, threshold, hysteresis, contacts, unit, stableMilliseconds, stableGrams,
        rumble, rumbleDevice, rumbleIntensity, socket, stateDirectory, group, controlGroup, maximumClients, logLevel, log,
        logDatabase, logKeepDays, logKeepReadings,
    ]

    /// The settings of the measuring pipeline, which `forcescale replay`, `demo` and `read`
    /// take as well as the daemon.
    package static var pipeline: [Setting] { all.filter { $0.programs.isSuperset(of: pipelinePrograms) } }

    /// The setting of a name, or `nil`.
    /// - Parameter name: An option's long name or a configuration key.
    package static func named(_ name: String) -> Setting? { all.first { $0.name == name } }
}

/// The flags that stand for a setting's value, each declared once.
extension Setting.Flag {
    /// `rumble = off`.
    package static let noRumble = Setting.Flag("no-rumble", help: "Do not rumble on a PEAK.", sets: "off")
    /// `log-level = debug`.
    package static let verbose = Setting.Flag("verbose", short: "v", help: "Log every client connecting and leaving (log-level debug).", sets: "debug")
    /// `log-level = warning`.
    package static let quiet = Setting.Flag("quiet", short: "q", help: "Log warnings and errors only (log-level warning).", sets: "warning")
    /// `log = on`.
    package static let log = Setting.Flag(
        "log", help: "Log sessions, readings and peaks to an SQLite file (log.sqlite in the state directory, or --log-db).", sets: "on")
    /// `log = off`.
    package static let noLog = Setting.Flag("no-log", help: "Do not log readings, whatever the configuration file says.", sets: "off")
}
