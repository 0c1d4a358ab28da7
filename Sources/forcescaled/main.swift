import ArgumentParsing
import Glibc
import ScaleCore
import ScaleDaemon
import ScaleEvdev
import ScaleOptions
import ScalePOSIX
import ScaleRecording

/// The daemon's command line: what only the command line says (the configuration file,
/// recordings to serve), then the settings, which the configuration file takes too.
enum Forcescaled: ParsableCommand {
    static let release = Release.version

    static let config = OptionKey<String?>(
        "config", valueName: "file",
        help: "The configuration file; a missing default one is no error. (default: \(DaemonConfiguration.defaultPath))", parser: .text)
    static let replay = OptionKey<[String]>(
        repeating: "replay", valueName: "file[:device]",
        help: "Serve this recording (evemu, or libinput record YAML) instead of devices; repeat for several. ':DEVICE' after a libinput record names its device to serve: its node (event9), its place in the list (1 is the first) or a part of its name.",
        parser: .text)
    static let loop = OptionKey(flag: "loop", help: "With --replay: start the recording over at its end.")
    static let recordingDevice = OptionKey<String?>(
        "recording-device", valueName: "node|name|index",
        help: "With --replay of libinput record files: the device to serve of each that names none with ':DEVICE'. An evemu recording holds one device and refuses it.",
        parser: .text)

    static let configuration = CommandConfiguration(
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
            groups, max-clients, log and log-db need a restart); SIGINT and SIGTERM stop the daemon.
            """,
        // The settings' options come from their declarations (SettingOption.forcescaled), in
        // the configuration file's order; before them, what only the command line says.
        options: [config, replay, loop, recordingDevice] + SettingOption.forcescaled,
        version: release)
}

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
    /// The value of an option given on the command line; `nil` for one left to the file.
    func given<Value>(_ key: OptionKey<Value?>) -> Value? {
        command.wasGiven(key) ? command[key] : nil
    }
    func milliseconds(_ key: OptionKey<Int?>) throws -> Int? {
        guard let value = given(key) else { return nil }
        guard value <= Setting.maximumMilliseconds else {
            throw command.usageError("--\(key.option.long) must be at most \(Setting.maximumMilliseconds) (a day)")
        }
        return value
    }
    if command.wasGiven(SettingOption.devices) { layer.devices = command[SettingOption.devices] }
    layer.intervalMilliseconds = try milliseconds(SettingOption.intervalMilliseconds)
    if let threshold = given(SettingOption.threshold) { layer.threshold = threshold }
    if let hysteresis = given(SettingOption.hysteresis) { layer.hysteresis = hysteresis }
    if let contacts = given(SettingOption.contacts) { layer.contacts = contacts }
    if let unit = given(SettingOption.unit) { layer.unit = unit }
    layer.stableMilliseconds = try milliseconds(SettingOption.stableMilliseconds)
    if let span = given(SettingOption.stableGrams) { layer.stableGrams = span }
    if let rumbleDevice = given(SettingOption.rumbleDevice) {
        layer.rumbleDevice = rumbleDevice
        // Naming a device to rumble asks for rumble, whatever the file says.
        layer.rumble = true
    }
    if command[Setting.Flag.noRumble.option] { layer.rumble = false }
    if let intensity = given(SettingOption.rumbleIntensity) {
        guard Setting.rumbleIntensity.accepts(intensity) else { throw command.usageError("The rumble intensity must be between 0 and 1") }
        layer.rumbleIntensity = intensity
    }
    if let socket = given(SettingOption.socket) { layer.socket = socket }
    if let stateDirectory = given(SettingOption.stateDirectory) { layer.stateDirectory = stateDirectory }
    if let group = given(SettingOption.group) { layer.group = group }
    if let group = given(SettingOption.controlGroup) { layer.controlGroup = group }
    if let count = given(SettingOption.maximumClients) {
        guard Setting.maximumClients.accepts(Double(count)) else { throw command.usageError("--max-clients takes \(Setting.maximumClients.accepted)") }
        layer.maximumClients = count
    }
    if command[Setting.Flag.log.option] { layer.log = true }
    if command.wasGiven(SettingOption.logDatabase) {
        guard let path = command[SettingOption.logDatabase], !path.isEmpty else { throw command.usageError("--log-db takes a file path") }
        // Relative to where forcescaled was started, as the user meant it.
        layer.logDatabase = path.hasPrefix("/") ? path : Environment.currentDirectory() + "/" + path
        // Naming a file to log to asks for logging, whatever the file says.
        layer.log = true
    }
    if command[Setting.Flag.noLog.option] { layer.log = false }
    if let days = given(SettingOption.logKeepDays) {
        guard Setting.logKeepDays.accepts(Double(days)) else { throw command.usageError("--log-keep-days must be from 1 to \(Setting.maximumKeepDays)") }
        layer.logKeepDays = days
    }
    if let count = given(SettingOption.logKeepReadings) {
        guard Setting.logKeepReadings.accepts(Double(count)) else { throw command.usageError("--log-keep-readings must be 1 or more") }
        layer.logKeepReadings = count
    }
    // --verbose, then --quiet: the later flag of the declaration wins when both are given.
    for flag in Setting.logLevel.flags where command[flag.option] {
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

extension Forcescaled {
    /// Reads the configuration, puts the command line over it and runs the daemon until a
    /// signal stops it.
    static func run(_ command: ParsedCommand) throws -> Int32 {
        let commandLine = try commandLineLayer(command)
        let configurationPath = command[Self.config] ?? DaemonConfiguration.defaultPath
        let configurationIsExplicit = command.wasGiven(Self.config)
        let replays = command[Self.replay]
        let recordingDevice = command[Self.recordingDevice]
        if recordingDevice != nil, replays.isEmpty {
            throw command.usageError("--recording-device goes with --replay")
        }
        let source: Daemon.Source = replays.isEmpty ? .devices : .recordings(replays.map { value in
            let (file, device) = RecordingFiles.splitReplay(value)
            var files = RecordingFiles(file: file)
            files.deviceSelection = device ?? recordingDevice
            return files
        }, loops: command[Self.loop])

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
}

runMain(Forcescaled.self)
