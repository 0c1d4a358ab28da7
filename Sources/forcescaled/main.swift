import ArgumentParsing
import Glibc
import ScaleCore
import ScaleDaemon
import ScaleEvdev
import ScaleOptions
import ScalePOSIX
import ScaleRecording

let release = "0.1.0"

let root = Command(
    name: "forcescaled",
    abstract: "The forcescale daemon: serves pressure devices' readings over a Unix socket.",
    discussion: """
        Owns every pressure device it can read (or those --device names, each time it is \
        given), keeps each one's calibration and tare in the state directory, rumbles on \
        peaks, and serves any number of clients over a Unix socket with the JSON-lines \
        protocol of docs/protocol.md. Without a pressure device it serves all the same and \
        takes each device up when it appears. --replay serves a recording as if it were a \
        device (repeat it to serve several, each named after its file), for demos and \
        tests: an evemu recording or a libinput record (YAML), whose device \
        --replay FILE:DEVICE names when it holds several. With --log it also keeps every touch, its readings and its peaks in an \
        SQLite file that 'forcescale log' lists, exports and plots.

        Settings come from the configuration file (\(DaemonConfiguration.defaultPath), \
        or --config), whose keys are named like the options; an option given here \
        overrides the file, and the defaults shown are those without a file. SIGHUP \
        reads the file again and applies it (the socket, the state directory, the \
        group, log and log-db need a restart); SIGINT and SIGTERM stop the daemon.
        """,
    // The settings' options come from their declarations (Setting.all), in the
    // configuration file's order; before them, what only the command line says.
    options: [
        Option(long: "config", valueName: "file", help: "The configuration file; a missing default one is no error. (default: \(DaemonConfiguration.defaultPath))"),
        Option(long: "replay", valueName: "file[:device]",
               help: "Serve this recording (evemu, or libinput record YAML) instead of devices; repeat for several. ':DEVICE' after a libinput record names its device to serve: its node (event9), its place in the list (1 is the first) or a part of its name.",
               isRepeatable: true),
        Option(long: "loop", help: "With --replay: start the recording over at its end."),
        Option(long: "recording-device", valueName: "node|name|index",
               help: "With --replay of libinput record files: the device to serve of each that names none with ':DEVICE'. An evemu recording holds one device and refuses it."),
    ] + Setting.options(for: .forcescaled),
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

/// A setting that cannot be used, found after the command line was parsed: a usage error
/// at the start, a failed reload on SIGHUP.
struct SettingProblem: Error, CustomStringConvertible {
    var description: String
}

/// What the command line sets, checked as `forcescale` checks its pipeline options. Only
/// options actually given are taken: the rest leave the file's values alone.
func commandLineLayer(_ command: ParsedCommand) throws -> ConfigurationLayer {
    var layer = ConfigurationLayer()
    func given(_ setting: Setting) -> Bool { command.given(setting) }
    func flagGiven(_ setting: Setting, for value: String) -> Bool { command.flagGiven(setting, for: value) }
    func milliseconds(_ setting: Setting) throws -> Int? {
        guard given(setting), let value = try command.int(setting) else { return nil }
        let maximum = setting.maximumWholeNumber ?? Setting.maximumMilliseconds
        guard value <= maximum else {
            throw command.usageError("--\(setting.name) must be at most \(maximum) (a day)")
        }
        return value
    }
    if given(.device) { layer.devices = command.strings(Setting.device.name) }
    layer.intervalMilliseconds = try milliseconds(.intervalMilliseconds)
    if given(.threshold) { layer.threshold = try command.double(.threshold) }
    if given(.hysteresis) { layer.hysteresis = try command.double(.hysteresis) }
    if given(.contacts) { layer.contacts = command.string(.contacts).flatMap(ContactMode.init(rawValue:)) }
    if given(.unit) { layer.unit = command.string(.unit).flatMap(MassUnit.init(rawValue:)) }
    layer.stableMilliseconds = try milliseconds(.stableMilliseconds)
    if given(.stableGrams) { layer.stableGrams = try command.double(.stableGrams) }
    if given(.rumbleDevice) {
        layer.rumbleDevice = command.string(.rumbleDevice)
        // Naming a device to rumble asks for rumble, whatever the file says.
        layer.rumble = true
    }
    if flagGiven(.rumble, for: "off") { layer.rumble = false }
    if given(.rumbleIntensity), let intensity = try command.double(.rumbleIntensity) {
        guard Setting.rumbleIntensity.accepts(intensity) else { throw command.usageError("The rumble intensity must be between 0 and 1") }
        layer.rumbleIntensity = intensity
    }
    if given(.socket) { layer.socket = command.string(.socket) }
    if given(.stateDirectory) { layer.stateDirectory = command.string(.stateDirectory) }
    if given(.group) { layer.group = command.string(.group) }
    if flagGiven(.log, for: "on") { layer.log = true }
    if given(.logDatabase) {
        guard let path = command.string(.logDatabase), !path.isEmpty else { throw command.usageError("--log-db takes a file path") }
        // Relative to where forcescaled was started, as the user meant it.
        layer.logDatabase = path.hasPrefix("/") ? path : Environment.currentDirectory() + "/" + path
        // Naming a file to log to asks for logging, whatever the file says.
        layer.log = true
    }
    if flagGiven(.log, for: "off") { layer.log = false }
    if given(.logKeepDays), let days = try command.int(.logKeepDays) {
        guard Setting.logKeepDays.accepts(Double(days)) else { throw command.usageError("--log-keep-days must be from 1 to \(Setting.maximumKeepDays)") }
        layer.logKeepDays = days
    }
    if given(.logKeepReadings), let count = try command.int(.logKeepReadings) {
        guard Setting.logKeepReadings.accepts(Double(count)) else { throw command.usageError("--log-keep-readings must be 1 or more") }
        layer.logKeepReadings = count
    }
    // --verbose, then --quiet: the later flag wins when both are given.
    for flag in Setting.logLevel.flags where command.flag(flag.long) {
        layer.logLevel = DaemonLog.Level(name: flag.value)
    }
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
    let replays = command.strings("replay")
    if command.flag("recording-device"), replays.isEmpty {
        throw command.usageError("--recording-device goes with --replay")
    }
    let source: Daemon.Source = replays.isEmpty ? .devices : .recordings(replays.map { value in
        let (file, device) = RecordingFiles.splitReplay(value)
        var files = RecordingFiles(file: file)
        files.deviceSelection = device ?? command.string("recording-device")
        return files
    }, loops: command.flag("loop"))

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
        return ExitStatus.configuration
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
