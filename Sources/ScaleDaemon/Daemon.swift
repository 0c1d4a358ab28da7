import Glibc
import ScaleCore
import ScaleEvdev
import ScalePOSIX

/// The service: one thread, one epoll loop that owns every piece of state — the scale
/// source (a device or a recording), the clients on the Unix socket, the calibration of
/// the device. Readings go to watching clients without ever waiting for them.
public final class Daemon {
    public enum Source: Sendable {
        /// A live device: the configuration's `device`, or the best one. The daemon starts
        /// without one when none is there, and takes it up when it appears.
        case device
        case recording(RecordingFiles, loops: Bool)
    }

    public struct Options: Sendable {
        public var source: Source
        /// The settings in effect: defaults, configuration file, command line.
        public var configuration: DaemonConfiguration
        /// Where the configuration came from, for the log: the file's path, or why the
        /// defaults hold.
        public var configurationOrigin: String
        /// Keys the command line sets over the file's values, for the log.
        public var commandLineOverrides: [ConfigurationKey]
        /// The configuration's socket, or the default for the user.
        public var socketPath: String
        /// The configuration's state directory, or the default for the user.
        public var stateDirectory: String
        public var release: String

        public init(
            source: Source, configuration: DaemonConfiguration = DaemonConfiguration(), configurationOrigin: String = "the defaults",
            commandLineOverrides: [ConfigurationKey] = [], socketPath: String, stateDirectory: String, release: String
        ) {
            self.source = source
            self.configuration = configuration
            self.configurationOrigin = configurationOrigin
            self.commandLineOverrides = commandLineOverrides
            self.socketPath = socketPath
            self.stateDirectory = stateDirectory
            self.release = release
        }

        /// Members of this group may tare, calibrate and rumble (and, through the socket's
        /// mode, connect at all).
        public var groupName: String { configuration.group }
    }

    /// Reads the configuration again, on SIGHUP: the options the daemon would start with now.
    /// - Throws: `ConfigurationError` for a broken file, or any error saying what is wrong.
    public typealias Reloader = () throws -> Options

    /// Moments a service manager wants to hear of (`sd_notify`'s READY, RELOADING, STOPPING).
    public enum Event: Sendable {
        /// Serving: after the start, and again after each reload.
        case ready
        /// SIGHUP arrived; the configuration is being read again.
        case reloading
        /// SIGINT or SIGTERM arrived; the daemon is shutting down.
        case stopping
    }

    /// What the daemon knows of each client.
    final class ClientState {
        var watching = false
        /// The device a WATCH named (a node name or a path); nil watches whatever is served.
        var watchedDevice: String?

        /// Whether this client wants the stream of the device at `path`.
        func watches(path: String?) -> Bool {
            guard watching else { return false }
            guard let watchedDevice else { return true }
            guard let path else { return false }
            return watchedDevice == path || watchedDevice == Daemon.deviceName(path)
        }
        /// Grams of a CALIBRATE request waiting for the next stable reading.
        var pendingCalibration: Double?
    }

    public private(set) var options: Options
    /// Tells systemd (when it started the daemon) that it is ready, reloading or stopping.
    private let notifier = ServiceNotifier()
    /// Keep-alives for `WatchdogSec=`; absent, and never waking, when no watchdog is asked.
    private var watchdog: WatchdogTimer?
    /// Told of the daemon's lifecycle; set before `run()`.
    public var onEvent: ((Event) -> Void)?
    private var log: DaemonLog
    private let reloader: Reloader?
    private let loop: EventLoop
    private let server: SocketServer
    private let store: CalibrationStore
    private var source: (any ScaleSource)?
    /// The force log's hand-off to its writer thread; nil when logging is off.
    private var forceLog: DaemonForceLog?
    private var clients: [Int: (connection: ClientConnection, state: ClientState)] = [:]
    private var calibration = Calibration.none
    private var lastReading: Reading?
    /// READINGs dropped for clients that have since left; STATUS counts since the start.
    private var droppedByDepartedClients = 0
    private let startedAt = MonotonicClock.now()
    private let group: gid_t?

    /// Binds the socket, opens the state directory and the source. A live source need not
    /// have a device yet: the daemon then serves without one and waits for it.
    /// - Parameters:
    ///   - log: Its threshold is replaced by the configuration's `log-level`.
    ///   - reloader: Reads the configuration again on SIGHUP; without one, SIGHUP is
    ///     logged and ignored.
    /// - Throws: what stops the daemon from starting, with a message saying what to do.
    public init(options: Options, log: DaemonLog, reloader: Reloader? = nil) throws {
        self.options = options
        var log = log
        log.threshold = options.configuration.logLevel
        self.log = log
        self.reloader = reloader
        loop = try EventLoop()
        store = try CalibrationStore(directory: options.stateDirectory)
        // Under socket activation systemd has bound the socket (with the unit's mode and
        // group); otherwise the daemon binds its own.
        let listener: UnixListener
        if let inherited = try ListenFileDescriptors.take().first {
            listener = try UnixListener(adopting: inherited, path: options.socketPath)
        } else {
            listener = try UnixListener(path: options.socketPath, groupName: options.groupName)
        }
        group = listener.group ?? UserDatabase.groupID(named: options.groupName)
        watchdog = try WatchdogTimer(loop: loop, notifier: notifier)
        server = try SocketServer(listener: listener, loop: loop)
        server.onConnect = { [unowned self] client in
            clients[client.id] = (client, ClientState())
            self.log.log(.debug, "\(client.label) connected")
            client.send(DaemonMessage.version(release: self.options.release))
        }
        server.onLine = { [unowned self] client, line in handle(line, from: client) }
        server.onOversizedLine = { client in
            client.send(DaemonMessage.error(RequestError.lineTooLong))
            client.close(afterFlushing: true)
        }
        server.onDisconnect = { [unowned self] client, reason in
            clients[client.id] = nil
            droppedByDepartedClients += client.droppedCount
            self.log.log(.debug, "\(client.label) disconnected: \(reason)")
        }
        server.onError = { [unowned self] error in self.log.log(.warning, "\(error)") }
        log.log(.info, "configuration from \(options.configurationOrigin): \(options.configuration.summary)")
        if !options.commandLineOverrides.isEmpty {
            log.log(.info, "the command line overrides the file's \(options.commandLineOverrides.map(\.rawValue).joined(separator: ", "))")
        }
        if let path = options.configuration.logPath(stateDirectory: options.stateDirectory) {
            forceLog = try DaemonForceLog(path: path, retention: options.configuration.logRetention, log: log)
        }
        try openSource()
        log.log(.notice, "listening on \(options.socketPath)")
    }

    /// Serves until SIGINT or SIGTERM, reloading the configuration on SIGHUP; then stops
    /// the source (erasing rumble effects), says goodbye to the clients and removes the
    /// socket.
    public func run() throws {
        announce(.ready)
        let signal = try loop.runUntilTerminated(onHangUp: { [unowned self] in reload() })
        announce(.stopping)
        if let signal { log.log(.notice, "stopping on signal \(signal)") }
        source?.stop()
        forceLog?.stop()
        server.close()
    }

    /// Tells the service manager and `onEvent`; a manager that cannot be told is logged
    /// (without READY=1 systemd would time the start out).
    private func announce(_ event: Event) {
        onEvent?(event)
        do throws(Errno) {
            switch event {
            case .ready: try notifier.ready(status: "serving on \(options.socketPath)")
            case .reloading: try notifier.status("reloading the configuration")
            case .stopping:
                watchdog?.stop()
                try notifier.stopping()
            }
        } catch {
            log.log(.warning, "could not notify the service manager: \(error)")
        }
    }

    // MARK: - Reloading

    /// Reads the configuration again and applies what can change while running; a broken
    /// file changes nothing.
    private func reload() {
        announce(.reloading)
        defer { announce(.ready) }
        guard let reloader else {
            log.log(.notice, "SIGHUP: there is no configuration to reload")
            return
        }
        let new: Options
        do {
            new = try reloader()
        } catch let error as ConfigurationError {
            for line in error.lines { log.log(.error, line) }
            log.log(.error, "reload failed: the configuration in effect is kept")
            return
        } catch {
            log.log(.error, "reload failed: \(error); the configuration in effect is kept")
            return
        }
        let old = options.configuration
        var applied = new.configuration
        // What only a restart can change keeps its running value (and is reported again on
        // every reload until then).
        var restartOnly: [String] = []
        if new.socketPath != options.socketPath { restartOnly.append("socket \(options.socketPath) → \(new.socketPath)") }
        if new.stateDirectory != options.stateDirectory { restartOnly.append("state-dir \(options.stateDirectory) → \(new.stateDirectory)") }
        if applied.group != old.group { restartOnly.append("group \(old.group) → \(applied.group)") }
        for key in [ConfigurationKey.log, .logDatabase] where applied.text(for: key) != old.text(for: key) {
            restartOnly.append("\(key) \(old.text(for: key)) → \(applied.text(for: key))")
        }
        applied.socket = old.socket
        applied.stateDirectory = old.stateDirectory
        applied.group = old.group
        applied.log = old.log
        applied.logDatabase = old.logDatabase
        let changed = applied.changes(from: old)

        let summary = changed.isEmpty ? "nothing changed" : applied.describeChanges(from: old, keys: changed)
        log.log(.notice, "reloaded the configuration from \(new.configurationOrigin): \(summary)")
        if !new.commandLineOverrides.isEmpty {
            log.log(.notice, "the command line overrides the file's \(new.commandLineOverrides.map(\.rawValue).joined(separator: ", "))")
        }
        if !restartOnly.isEmpty {
            log.log(.warning, "\(restartOnly.joined(separator: ", ")): \(restartOnly.count == 1 ? "takes" : "take") effect when forcescaled restarts")
        }
        options.configuration = applied
        options.configurationOrigin = new.configurationOrigin
        options.commandLineOverrides = new.commandLineOverrides
        log.threshold = applied.logLevel
        if applied.logRetention != old.logRetention { forceLog?.writer.setRetention(applied.logRetention) }
        if changed.contains(where: { $0.reach == .source }) { reconfigureSource(changed: changed) }
    }

    /// Applies changed device, pipeline and rumble settings to the source.
    private func reconfigureSource(changed: [ConfigurationKey]) {
        switch options.source {
        case .device:
            guard let scale = source as? LiveScale else { return }
            scale.reconfigure(liveOptions())
            if scale.currentDevice == nil, let reason = scale.waitingReason { log.log(.notice, reason) }
        case .recording:
            let unused = changed.filter { $0.reach == .source && !$0.isPipelineSetting }
            if !unused.isEmpty {
                log.log(.info, "\(unused.map(\.rawValue).joined(separator: ", ")): not used while serving a recording")
            }
            guard changed.contains(where: \.isPipelineSetting) else { return }
            source?.stop()
            forceLog?.sourceEnded()
            source = nil
            do {
                try openSource()
                log.log(.notice, "the recording starts over with the new settings")
            } catch {
                log.log(.error, "the recording could not be started again: \(error); serving without a device")
            }
        }
    }

    // MARK: - Source

    private func openSource() throws {
        switch options.source {
        case .recording(let files, let loops):
            let scale = try RecordingScale(files: files, loops: loops, settings: options.configuration.settings, loop: loop) { [unowned self] in
                handle($0)
            }
            source = scale
            log.log(.notice, "serving the recording \(scale.path)" + (loops ? " in a loop" : ""))
            if let device = scale.currentDevice { takeCalibration(for: device.description) }
        case .device:
            let scale = try LiveScale(options: liveOptions(), loop: loop, onOutput: { [unowned self] in handle($0) }) { [unowned self] notice in
                if case .opened(_, let device, _, _) = notice { takeCalibration(for: device) }
                if case .removed = notice { forceLog?.sourceEnded() }
                log.log(.notice, Self.describe(notice))
            }
            source = scale
            // The device opened inside the initializer, before `source` was set.
            scale.setCalibration(calibration)
            guard scale.currentDevice == nil else { return }
            if let error = scale.hotplugError {
                log.log(.warning, "\(error): no input device can appear there; serving without one (restart forcescaled once the directory exists)")
            } else {
                if let reason = scale.waitingReason { log.log(.notice, reason) }
                log.log(.notice, "waiting for \(scale.options.query?.description ?? "a pressure device")")
            }
        }
    }

    /// The live scale's options from the configuration in effect.
    private func liveOptions() -> LiveScale.Options {
        let configuration = options.configuration
        return LiveScale.Options(
            query: configuration.device.map(DeviceQuery.init), settings: configuration.settings,
            rumble: configuration.rumbleChoice, rumbleIntensity: configuration.rumbleIntensity, waitForDevice: true)
    }

    /// Loads the device's saved calibration; a corrupt file is moved aside with one warning.
    private func takeCalibration(for device: DeviceDescription) {
        do {
            switch try store.load(for: device) {
            case .loaded(let saved):
                calibration = saved
                log.log(.info, "calibration of '\(device.name)' loaded: \(saved.points.count) points, tare \(saved.tareGrams) g")
            case .nothingSaved:
                calibration = .none
            case .corrupt(let movedTo, let reason):
                calibration = .none
                log.log(.warning, "the calibration of '\(device.name)' was unreadable (\(reason)); moved to \(movedTo), running uncalibrated")
            }
        } catch {
            calibration = .none
            log.log(.warning, "\(error); running uncalibrated")
        }
        source?.setCalibration(calibration)
    }

    // MARK: - Readings

    private func handle(_ output: ScaleOutput) {
        forceLog?.record(output, device: source?.currentDevice)
        let path = source?.currentDevice?.path
        let device = path.map(Self.deviceName)
        switch output {
        case .reading(let reading):
            lastReading = reading
            server.broadcast(ProtocolMessage.reading(reading, device: device), droppable: true) { [unowned self] in
                clients[$0.id]?.state.watches(path: path) == true
            }
            if reading.stable, reading.contacts > 0 { completeCalibrations(with: reading) }
        case .peak(let peak):
            server.broadcast(ProtocolMessage.peak(peak, device: device), droppable: false) { [unowned self] in
                clients[$0.id]?.state.watches(path: path) == true
            }
        }
    }

    // MARK: - Requests

    private func handle(_ line: String, from client: ClientConnection) {
        let request: ClientRequest
        switch ClientRequest.parse(line: line) {
        case .success(let parsed): request = parsed
        case .failure(let error):
            client.send(DaemonMessage.error(error))
            if error.closesConnection { client.close(afterFlushing: true) }
            return
        }
        guard let state = clients[client.id]?.state else { return }
        let device = source?.currentDevice.map { Self.deviceName($0.path) }
        switch request {
        case .watch(let enable, let requested):
            state.watching = enable
            state.watchedDevice = enable ? requested : nil
            // The reply names a device only when the request did (docs/protocol.md).
            client.send(DaemonMessage.watch(enable: enable, device: requested))
        case .poll:
            client.send(DaemonMessage.poll(time: lastReading?.time, reading: lastReading, device: device))
        case .devices:
            client.send(DaemonMessage.devices(deviceSummaries()))
        case .status:
            client.send(DaemonMessage.status(StatusSnapshot(
                release: options.release, uptimeSeconds: Double(MonotonicClock.now() - startedAt) / 1e6,
                clients: clients.count, device: device, model: source?.gramModel,
                calibration: device == nil ? nil : calibration, rumble: source?.rumblePath,
                dropped: clients.values.reduce(droppedByDepartedClients) { $0 + $1.connection.droppedCount },
                log: forceLog?.status)))
        case .tare, .calibrate, .calibration(reset: true), .rumble:
            guard authorize(client, request) else { return }
            changeState(request, for: client, state: state)
        case .calibration(reset: false):
            guard device != nil else {
                client.send(DaemonMessage.error("no device is open; waiting for one to appear", request: request))
                return
            }
            client.send(DaemonMessage.calibration(calibration, device: device))
        }
    }

    private func authorize(_ client: ClientConnection, _ request: ClientRequest) -> Bool {
        if client.credentials?.isAuthorized(group: group) == true { return true }
        let who = group.map { _ in "root, the daemon's user or members of group '\(options.groupName)'" } ?? "root or the daemon's user"
        client.send(DaemonMessage.error("permission denied: only \(who) may \(request.className)", request: request))
        return false
    }

    private func changeState(_ request: ClientRequest, for client: ClientConnection, state: ClientState) {
        let device = source?.currentDevice
        // A rumble goes on without the pressure device (to a gamepad); the rest need it.
        if device == nil {
            let what: String? = switch request {
            case .tare: "no device to tare"
            case .calibrate: "no device to calibrate"
            case .calibration: "no device whose calibration to reset"
            default: nil
            }
            if let what {
                client.send(DaemonMessage.error("\(what); waiting for one to appear", request: request))
                return
            }
        }
        switch request {
        case .tare:
            // With something on the pad its weight becomes zero; with nothing, tare is cleared.
            if let reading = lastReading, reading.contacts > 0 {
                calibration.tareGrams += reading.grams
            } else {
                calibration.tareGrams = 0
            }
            if save(for: client, request) { client.send(DaemonMessage.tare(grams: calibration.tareGrams, device: device.map { Self.deviceName($0.path) })) }
        case .calibrate(let grams):
            if let superseded = state.pendingCalibration {
                client.send(DaemonMessage.error("the calibration with \(superseded) g was replaced by one with \(grams) g", request: .calibrate(grams: superseded)))
            }
            state.pendingCalibration = grams
            log.log(.info, "\(client.label) calibrating with \(grams) g: waiting for a stable reading")
        case .calibration:
            calibration = .none
            if save(for: client, request) { client.send(DaemonMessage.calibration(calibration, device: device.map { Self.deviceName($0.path) })) }
        case .rumble(let pattern):
            do throws(ForceFeedbackError) {
                guard let source else { throw ForceFeedbackError(path: "forcescaled", operation: "rumble", errno: nil, explanation: "no device") }
                try source.play(pattern)
                client.send(DaemonMessage.rumble(pattern: pattern))
            } catch {
                client.send(DaemonMessage.error("rumble unavailable: \(error)", request: request))
            }
        default:
            break
        }
    }

    /// Stores a point for every client waiting with a known weight.
    private func completeCalibrations(with reading: Reading) {
        guard let device = source?.currentDevice, let axis = try? PressureSource.select(for: device.description).axis else { return }
        for (_, entry) in clients {
            guard let grams = entry.state.pendingCalibration else { continue }
            entry.state.pendingCalibration = nil
            let point = CalibrationPoint(raw: Double(reading.raw), grams: grams)
            let request = ClientRequest.calibrate(grams: grams)
            do throws(CalibrationError) {
                try calibration.add(point, axisMinimum: axis.minimum)
            } catch {
                entry.connection.send(DaemonMessage.error("calibration point refused: \(error)", request: request))
                continue
            }
            if save(for: entry.connection, request) {
                entry.connection.send(DaemonMessage.calibrate(point, points: calibration.points.count, device: Self.deviceName(device.path)))
            }
        }
    }

    /// Persists and applies the calibration. - Returns: whether it could be saved.
    private func save(for client: ClientConnection, _ request: ClientRequest) -> Bool {
        source?.setCalibration(calibration)
        guard let device = source?.currentDevice else { return true }
        do {
            try store.save(calibration, for: device.description)
            return true
        } catch {
            log.log(.error, "\(error)")
            client.send(DaemonMessage.error("applied but not saved: \(error)", request: request))
            return false
        }
    }

    private func deviceSummaries() -> [DeviceSummary] {
        let active = source?.currentDevice?.path
        if case .recording = options.source, let device = source?.currentDevice {
            return [DeviceSummary(path: device.path, description: device.description, active: true, canRumble: false)]
        }
        return DeviceDiscovery.scan().map { found in
            switch found.details {
            case .success(let details):
                return DeviceSummary(path: found.path, description: details.description, active: found.path == active, canRumble: details.forceFeedback.canRumble)
            case .failure(let error):
                return DeviceSummary(path: found.path, error: error.description)
            }
        }
    }

    /// `event5` for `/dev/input/event5`, the file name for a recording.
    static func deviceName(_ path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    static func describe(_ notice: LiveNotice) -> String {
        switch notice {
        case .opened(let path, let device, _, let model): return "reading \(path) (\(device.name)), \(model.rawValue) model"
        case .rumbleReady(let path): return "rumble on PEAK through \(path)"
        case .rumbleUnavailable(let reason): return "rumble unavailable: \(reason)"
        case .resynchronized(let path): return "\(path): events were dropped (SYN_DROPPED); state rebuilt"
        case .removed(let path): return "\(path): device removed"
        case .readFailed(let path, let errno): return "\(path): read failed: \(errno)"
        case .waiting(let what): return "waiting for \(what)"
        }
    }
}
