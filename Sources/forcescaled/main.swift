import ArgumentParsing
import Glibc
import ScaleCore
import ScaleDaemon
import ScaleEvdev
import ScaleOptions
import ScalePOSIX

let release = "0.1.0"

/// `EX_CONFIG` in `sysexits.h`: the configuration file is broken.
let configurationErrorExitCode: Int32 = 78

let root = Command(
    name: "forcescaled",
    abstract: "The forcescale daemon: serves a pressure device's readings over a Unix socket.",
    discussion: """
        Owns the pressure device (the best one, or --device), keeps its calibration and \
        tare in the state directory, rumbles on peaks, and serves any number of clients \
        over a Unix socket with the JSON-lines protocol of docs/protocol.md. Without a \
        pressure device it serves all the same and takes the device up when it appears. \
        --replay serves a recording as if it were a device, for demos and tests. With \
        --log it also keeps every touch, its readings and its peaks in an SQLite file \
        that 'forcescale log' lists, exports and plots.

        Settings come from the configuration file (\(DaemonConfiguration.defaultPath), \
        or --config), whose keys are named like the options; an option given here \
        overrides the file, and the defaults shown are those without a file. SIGHUP \
        reads the file again and applies it (the socket, the state directory, the \
        group, log and log-db need a restart); SIGINT and SIGTERM stop the daemon.
        """,
    options: [
        Option(long: "config", valueName: "file", help: "The configuration file; a missing default one is no error. (default: \(DaemonConfiguration.defaultPath))"),
        Option(long: "device", valueName: "device", help: "A path, a part of the name, or vendor:product in hex."),
        Option(long: "replay", valueName: "file", help: "Serve this evemu recording instead of a device."),
        Option(long: "loop", help: "With --replay: start the recording over at its end."),
        Option(long: "socket", valueName: "path", help: "The socket to listen on. (default: $RUNTIME_DIRECTORY/forcescale.sock under systemd, /run/forcescale/forcescale.sock as root, $XDG_RUNTIME_DIR/forcescale.sock otherwise)"),
        Option(long: "state-dir", valueName: "dir", help: "Where calibrations are kept. (default: $STATE_DIRECTORY under systemd, /var/lib/forcescale as root, $XDG_STATE_HOME/forcescale otherwise)"),
        Option(long: "group", valueName: "group", help: "The group allowed to connect, tare, calibrate and rumble.", defaultValue: "forcescale"),
    ] + PipelineOptionDeclarations.all + [
        Option(long: "unit", valueName: "unit", help: "The unit clients show by default; the protocol always carries grams.", defaultValue: "g", allowedValues: MassUnit.allCases.map(\.rawValue)),
        Option(long: "rumble-device", valueName: "device", help: "Rumble this device on a PEAK instead of the pressure device."),
        Option(long: "rumble-intensity", valueName: "fraction", help: "Strength of the PEAK rumble from 0 to 1, through FF_GAIN when the device has it.", defaultValue: "1.0"),
        Option(long: "no-rumble", help: "Do not rumble on a PEAK."),
        Option(long: "log", help: "Log sessions, readings and peaks to an SQLite file (log.sqlite in the state directory, or --log-db)."),
        Option(long: "no-log", help: "Do not log readings, whatever the configuration file says."),
        Option(long: "log-db", valueName: "path", help: "Log readings to this SQLite file (implies --log)."),
        Option(long: "log-keep-days", valueName: "days", help: "Remove logged sessions that ended longer ago than this. (default: keep them)"),
        Option(long: "log-keep-readings", valueName: "count", help: "Remove the oldest logged sessions while the log holds more readings than this. (default: no limit)"),
        Option(long: "verbose", short: "v", help: "Log every client connecting and leaving (log-level debug)."),
        Option(long: "quiet", short: "q", help: "Log warnings and errors only (log-level warning)."),
    ],
    version: release)

/// The directory systemd made for this service and named in `variable`
/// (`$STATE_DIRECTORY` for `StateDirectory=`, `$RUNTIME_DIRECTORY` for `RuntimeDirectory=`),
/// the first one when the unit lists several (they are separated by colons).
func serviceDirectory(_ variable: String) -> String? {
    guard let value = Environment.value(variable),
          let first = value.split(separator: ":", omittingEmptySubsequences: true).first else { return nil }
    return String(first)
}

/// `$XDG_RUNTIME_DIR`-style defaults for a user, system paths for root; but under a unit
/// the directory systemd made for the service comes first, since the unit's user
/// (forcescale) has neither root's rights nor an XDG session.
func defaultPath(service: String?, root: String, variable: String, fallback: () -> String?, leaf: String) -> String? {
    if let service { return service }
    if geteuid() == 0 { return root }
    if let base = Environment.value(variable), !base.isEmpty { return base + "/" + leaf }
    return fallback().map { $0 + "/" + leaf }
}

/// The working directory, for relative paths given on the command line.
func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A setting that cannot be used, found after the command line was parsed: a usage error
/// at the start, a failed reload on SIGHUP.
struct SettingProblem: Error, CustomStringConvertible {
    var description: String
}

/// What the command line sets, checked as `forcescale` checks its pipeline options. Only
/// options actually given are taken: the rest leave the file's values alone.
func commandLineLayer(_ command: ParsedCommand) throws -> ConfigurationLayer {
    var layer = ConfigurationLayer()
    func given(_ name: String) -> Bool { command.flag(name) }
    func milliseconds(_ name: String) throws -> Int? {
        guard given(name), let value = try command.int(name) else { return nil }
        guard value <= ConfigurationKey.maximumMilliseconds else {
            throw command.usageError("--\(name) must be at most \(ConfigurationKey.maximumMilliseconds) (a day)")
        }
        return value
    }
    if given("device") { layer.device = command.string("device") }
    layer.intervalMilliseconds = try milliseconds("interval-ms")
    if given("threshold") { layer.threshold = try command.double("threshold") }
    if given("hysteresis") { layer.hysteresis = try command.double("hysteresis") }
    if given("contacts") { layer.contacts = command.string("contacts").flatMap(ContactMode.init(rawValue:)) }
    if given("unit") { layer.unit = command.string("unit").flatMap(MassUnit.init(rawValue:)) }
    layer.stableMilliseconds = try milliseconds("stable-ms")
    if given("stable-grams") { layer.stableGrams = try command.double("stable-grams") }
    if given("rumble-device") {
        layer.rumbleDevice = command.string("rumble-device")
        // Naming a device to rumble asks for rumble, whatever the file says.
        layer.rumble = true
    }
    if given("no-rumble") { layer.rumble = false }
    if given("rumble-intensity"), let intensity = try command.double("rumble-intensity") {
        guard intensity >= 0, intensity <= 1 else { throw command.usageError("The rumble intensity must be between 0 and 1") }
        layer.rumbleIntensity = intensity
    }
    if given("socket") { layer.socket = command.string("socket") }
    if given("state-dir") { layer.stateDirectory = command.string("state-dir") }
    if given("group") { layer.group = command.string("group") }
    if given("log") { layer.log = true }
    if given("log-db") {
        guard let path = command.string("log-db"), !path.isEmpty else { throw command.usageError("--log-db takes a file path") }
        // Relative to where forcescaled was started, as the user meant it.
        layer.logDatabase = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        // Naming a file to log to asks for logging, whatever the file says.
        layer.log = true
    }
    if given("no-log") { layer.log = false }
    if given("log-keep-days"), let days = try command.int("log-keep-days") {
        guard days >= 1, days <= ConfigurationKey.maximumKeepDays else { throw command.usageError("--log-keep-days must be from 1 to \(ConfigurationKey.maximumKeepDays)") }
        layer.logKeepDays = days
    }
    if given("log-keep-readings"), let count = try command.int("log-keep-readings") {
        guard count >= 1 else { throw command.usageError("--log-keep-readings must be 1 or more") }
        layer.logKeepReadings = count
    }
    if command.flag("verbose") { layer.logLevel = .debug }
    if command.flag("quiet") { layer.logLevel = .warning }
    // The command line alone must make sense, as forcescale's options must.
    do {
        try DaemonConfiguration(layers: [layer]).settings.validate()
    } catch {
        throw command.usageError(error.description)
    }
    return layer
}

runMain(root: root) { command in
    let commandLine = try commandLineLayer(command)
    let configurationPath = command.string("config") ?? DaemonConfiguration.defaultPath
    let configurationIsExplicit = command.flag("config")
    let source: Daemon.Source = command.string("replay").map { .recording(RecordingFiles(file: $0), loops: command.flag("loop")) } ?? .device

    /// Reads the file and puts the command line over it: at the start, and on each SIGHUP.
    /// - Throws: `ConfigurationError` for the file, `SettingProblem` for the rest.
    func loadOptions() throws -> Daemon.Options {
        let file = try ConfigurationFile.load(path: configurationPath, mustExist: configurationIsExplicit)
        let configuration = DaemonConfiguration(layers: [file?.layer, commandLine].compactMap { $0 })
        let overrides = ConfigurationKey.allCases.filter { key in file?.layer.sets(key) == true && commandLine.sets(key) }
        do {
            try configuration.settings.validate()
        } catch {
            let fromFile = ConfigurationKey.allCases.filter { $0.isPipelineSetting && file?.layer.sets($0) == true && !commandLine.sets($0) }
            throw SettingProblem(description: error.description
                + (fromFile.isEmpty ? "" : " (with \(configurationPath)'s \(fromFile.map(\.rawValue).joined(separator: ", ")))"))
        }
        let socket = configuration.socket ?? defaultPath(
            service: serviceDirectory("RUNTIME_DIRECTORY").map { $0 + "/forcescale.sock" },
            root: "/run/forcescale/forcescale.sock", variable: "XDG_RUNTIME_DIR", fallback: { nil }, leaf: "forcescale.sock")
        guard let socket else {
            throw SettingProblem(description: "No socket path: XDG_RUNTIME_DIR is not set; give --socket PATH (or socket = PATH in the configuration file)")
        }
        let stateDirectory = configuration.stateDirectory ?? serviceDirectory("STATE_DIRECTORY") ?? StateDirectory.defaultPath()
        guard let stateDirectory else {
            throw SettingProblem(description: "No state directory: HOME is not set; give --state-dir DIR (or state-dir = DIR in the configuration file)")
        }
        return Daemon.Options(
            source: source, configuration: configuration,
            configurationOrigin: file == nil ? "the defaults (there is no \(configurationPath))" : configurationPath,
            commandLineOverrides: overrides, socketPath: socket, stateDirectory: stateDirectory, release: release)
    }

    var log = DaemonLog()
    let options: Daemon.Options
    do {
        options = try loadOptions()
    } catch let error as ConfigurationError {
        for line in error.lines { log.log(.error, line) }
        return configurationErrorExitCode
    } catch let problem as SettingProblem {
        throw command.usageError(problem.description)
    }
    log.threshold = options.configuration.logLevel
    // A client that vanishes mid-write must cost an EPIPE, not the daemon.
    Signals.ignoreBrokenPipe()
    // A file size limit (RLIMIT_FSIZE) reached by the force log must cost an error that the
    // log reports and retries, not the daemon.
    signal(SIGXFSZ, SIG_IGN)
    if geteuid() == 0, options.socketPath.hasPrefix("/run/forcescale/") { mkdir("/run/forcescale", 0o755) }
    do {
        let daemon = try Daemon(options: options, log: log, reloader: loadOptions)
        try daemon.run()
        return 0
    } catch {
        log.log(.error, "\(error)")
        return error is DeviceSelectionError ? 69 : 1
    }
}
