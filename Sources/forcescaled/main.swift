import ArgumentParsing
import Glibc
import ScaleCore
import ScaleDaemon
import ScaleSystem

let release = "0.1.0"

let root = Command(
    name: "forcescaled",
    abstract: "The forcescale daemon: serves a pressure device's readings over a Unix socket.",
    discussion: """
        Owns the pressure device (the best one, or --device), keeps its calibration and \
        tare in the state directory, rumbles on peaks, and serves any number of clients \
        over a Unix socket with the JSON-lines protocol of docs/protocol.md. --replay \
        serves a recording as if it were a device, for demos and tests. Stops on SIGINT, \
        SIGTERM or SIGHUP.
        """,
    options: [
        Option(long: "device", valueName: "device", help: "A path, a part of the name, or vendor:product in hex."),
        Option(long: "replay", valueName: "file", help: "Serve this evemu recording instead of a device."),
        Option(long: "loop", help: "With --replay: start the recording over at its end."),
        Option(long: "socket", valueName: "path", help: "The socket to listen on. (default: /run/forcescale/forcescale.sock as root, $XDG_RUNTIME_DIR/forcescale.sock otherwise)"),
        Option(long: "state-dir", valueName: "dir", help: "Where calibrations are kept. (default: /var/lib/forcescale as root, $XDG_STATE_HOME/forcescale otherwise)"),
        Option(long: "group", valueName: "group", help: "The group allowed to connect, tare, calibrate and rumble.", defaultValue: "forcescale"),
        Option(long: "rumble-device", valueName: "device", help: "Rumble this device on a PEAK instead of the pressure device."),
        Option(long: "no-rumble", help: "Do not rumble on a PEAK."),
        Option(long: "verbose", short: "v", help: "Log every client connecting and leaving."),
        Option(long: "quiet", short: "q", help: "Log warnings and errors only."),
    ],
    version: release)

/// `$XDG_RUNTIME_DIR`-style defaults for a user, system paths for root.
func defaultPath(root: String, variable: String, fallback: () -> String?, leaf: String) -> String? {
    if geteuid() == 0 { return root }
    if let base = Environment.value(variable), !base.isEmpty { return base + "/" + leaf }
    return fallback().map { $0 + "/" + leaf }
}

runMain(root: root) { command in
    let socket = command.string("socket") ?? defaultPath(
        root: "/run/forcescale/forcescale.sock", variable: "XDG_RUNTIME_DIR", fallback: { nil }, leaf: "forcescale.sock")
    guard let socket else {
        throw command.usageError("No socket path: XDG_RUNTIME_DIR is not set; give --socket PATH")
    }
    let stateDirectory = command.string("state-dir") ?? defaultPath(
        root: "/var/lib/forcescale", variable: "XDG_STATE_HOME",
        fallback: { Environment.value("HOME").map { $0 + "/.local/state" } }, leaf: "forcescale")
    guard let stateDirectory else { throw command.usageError("No state directory: HOME is not set; give --state-dir DIR") }
    let source: Daemon.Source = command.string("replay").map { .recording(RecordingFiles(file: $0), loops: command.flag("loop")) }
        ?? .device(command.string("device").map(DeviceQuery.init))
    let rumble: RumbleChoice = command.flag("no-rumble") ? .off
        : command.string("rumble-device").map { .device(DeviceQuery($0)) } ?? .pressureDevice
    var log = DaemonLog()
    if command.flag("verbose") { log.threshold = .debug }
    if command.flag("quiet") { log.threshold = .warning }
    // A client that vanishes mid-write must cost an EPIPE, not the daemon.
    Signals.ignoreBrokenPipe()
    if geteuid() == 0, socket.hasPrefix("/run/forcescale/") { mkdir("/run/forcescale", 0o755) }
    do {
        let daemon = try Daemon(
            options: Daemon.Options(
                source: source, socketPath: socket, stateDirectory: stateDirectory, groupName: command.string("group") ?? "forcescale",
                rumble: rumble, release: release),
            log: log)
        try daemon.run()
        return 0
    } catch {
        log.log(.error, "\(error)")
        return error is DeviceSelectionError ? 69 : 1
    }
}
