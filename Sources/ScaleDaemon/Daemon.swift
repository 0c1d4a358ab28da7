import Glibc
import ScaleCore
import ScaleEvdev
import ScalePOSIX
import ScaleProtocol
import ScaleRecording

/// The service: one thread, one epoll loop that owns the scale sources (the live devices,
/// or recordings), the clients on the Unix socket and the calibration store. What requests and
/// readings do is decided by `DaemonRules`; the daemon moves the bytes and performs the
/// effects. Readings go to watching clients without ever waiting for them.
package final class Daemon {
    package enum Source: Sendable {
        /// Live devices: those the configuration's `device` names, or every pressure device.
        /// The daemon starts without one when none is there, and takes each up when it
        /// appears.
        case devices
        /// Recordings, each served as a device of its own named after its file.
        case recordings([RecordingFiles], loops: Bool)
    }

    package struct Options: Sendable {
        var source: Source
        /// The settings in effect: defaults, configuration file, command line.
        package var configuration: DaemonConfiguration
        /// Where the configuration came from, for the log: the file's path, or why the
        /// defaults hold.
        var configurationOrigin: String
        /// Keys the command line sets over the file's values, for the log.
        var commandLineOverrides: [ConfigurationKey]
        /// The configuration's socket, or the default for the user.
        package var socketPath: String
        /// The configuration's state directory, or the default for the user.
        var stateDirectory: String
        var release: String

        package init(
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

        /// Members of this group may connect (the socket's group when the daemon binds it),
        /// and so read.
        var groupName: String { configuration.group }
    }

    /// Reads the configuration again, on SIGHUP: the options the daemon would start with now.
    /// - Throws: `ConfigurationError` for a broken file, or any error saying what is wrong.
    package typealias Reloader = () throws -> Options

    /// Moments a service manager wants to hear of (`sd_notify`'s READY, RELOADING, STOPPING).
    enum Event: Sendable {
        /// Serving: after the start, and again after each reload.
        case ready
        /// SIGHUP arrived; the configuration is being read again.
        case reloading
        /// SIGINT or SIGTERM arrived; the daemon is shutting down.
        case stopping
    }

    private(set) var options: Options
    /// Tells systemd (when it started the daemon) that it is ready, reloading or stopping.
    private let notifier = ServiceNotifier()
    /// Keep-alives for `WatchdogSec=`; absent, and never waking, when no watchdog is asked.
    private var watchdog: WatchdogTimer?
    /// Told of the daemon's lifecycle; set before `run()`.
    var onEvent: ((Event) -> Void)?
    private var log: DaemonLog
    private let reloader: Reloader?
    private let loop: EventLoop
    private let server: SocketServer
    private let store: CalibrationStore
    /// The live scale, or one recording scale per recording.
    private var sources: [any ScaleSource] = []
    /// The force log's hand-off to its writer thread; nil when logging is off.
    private var forceLog: DaemonForceLog?
    /// The connected clients and who each is (resolved once, when it connected).
    private var clients: [Int: (connection: ClientConnection, identity: ClientIdentity)] = [:]
    /// What requests and readings do, and the calibration in force.
    private var rules: DaemonRules
    /// What a reading leads to, emptied and reused for each (see `handle(_:from:)`).
    private var readingOutcome = DaemonRules.Outcome()
    /// The connections of the recipients the rules named last: readings go to the same
    /// watchers line after line, and the rules name them by the same array while they do, so
    /// the connections are looked up in `clients` only when it changes.
    private var lastRecipients: (ids: [Int], connections: [ClientConnection]) = ([], [])
    /// READINGs dropped for clients that have since left; STATUS counts since the start.
    private var droppedByDepartedClients = 0
    /// The PEAK rumbles since the start, for STATUS.
    private var rumbles = RumbleStatistics()
    private let startedAt = MonotonicClock.now()
    /// Rings when a grab reaches its bound (``DaemonRules/grabExpired()``).
    private let grabTimer: DeadlineTimer

    /// Binds the socket, opens the state directory and the source. A live source need not
    /// have a device yet: the daemon then serves without one and waits for it.
    /// - Parameters:
    ///   - log: Its threshold is replaced by the configuration's `log-level`.
    ///   - reloader: Reads the configuration again on SIGHUP; without one, SIGHUP is
    ///     logged and ignored.
    /// - Throws: what stops the daemon from starting, with a message saying what to do.
    package init(options: Options, log: DaemonLog, reloader: Reloader? = nil) throws {
        self.options = options
        var log = log
        log.threshold = options.configuration.logLevel
        self.log = log
        self.reloader = reloader
        loop = try EventLoop()
        store = try CalibrationStore(directory: options.stateDirectory)
        if store.removedTemporaries > 0 {
            log.log(.notice, "removed \(store.removedTemporaries) unfinished calibration save\(store.removedTemporaries == 1 ? "" : "s") (a killed daemon's temporary files) from \(store.directory)")
        }
        // Under socket activation systemd has bound the socket (with the unit's mode and
        // group); otherwise the daemon binds its own.
        let listener: UnixListener
        if let inherited = try InheritedSockets.take().first {
            listener = try UnixListener(adopting: inherited, path: options.socketPath)
        } else {
            listener = try UnixListener(path: options.socketPath, groupName: options.groupName)
        }
        let controlGroup = options.configuration.controlGroup
        rules = DaemonRules(
            release: options.release,
            policy: ControlPolicy(daemonUser: geteuid(), group: UserDatabase.groupID(named: controlGroup), groupName: controlGroup),
            maximumClients: options.configuration.maximumClients)
        watchdog = try WatchdogTimer(loop: loop, notifier: notifier)
        grabTimer = try DeadlineTimer()
        server = try SocketServer(listener: listener, loop: loop)
        server.onConnect = { [unowned self] client in
            let identity = ClientIdentity(client)
            clients[client.id] = (client, identity)
            self.log.log(.debug, "\(client.label) connected")
            perform(rules.connect(identity))
        }
        server.onLine = { [unowned self] client, line in
            guard let identity = clients[client.id]?.identity else { return }
            perform(rules.handle(line: line, from: identity, serving: servedDevices.map(\.device)))
        }
        server.onOversizedLine = { [unowned self] client in
            perform(rules.lineTooLong(from: clients[client.id]?.identity ?? ClientIdentity(client)))
        }
        server.onDisconnect = { [unowned self] client, reason in
            clients[client.id] = nil
            lastRecipients = ([], [])
            perform(rules.disconnect(client.id))
            droppedByDepartedClients += client.droppedCount
            self.log.log(.debug, "\(client.label) disconnected: \(reason)")
        }
        server.onError = { [unowned self] error in self.log.log(.warning, "\(error)") }
        try loop.watch(grabTimer.descriptor) { [unowned self] in
            grabTimer.acknowledge()
            perform(rules.grabExpired())
        }
        log.log(.info, "configuration from \(options.configurationOrigin): \(options.configuration.summary)")
        if !options.commandLineOverrides.isEmpty {
            log.log(.info, "the command line overrides the file's \(options.commandLineOverrides.map(\.rawValue).joined(separator: ", "))")
        }
        if let path = options.configuration.logPath(stateDirectory: options.stateDirectory) {
            forceLog = try DaemonForceLog(path: path, retention: options.configuration.logRetention, log: log)
        }
        try openSources()
        log.log(.notice, "listening on \(options.socketPath)")
    }

    /// Serves until SIGINT or SIGTERM, reloading the configuration on SIGHUP; then stops
    /// the source (erasing rumble effects), says goodbye to the clients and removes the
    /// socket.
    package func run() throws {
        announce(.ready)
        let signal = try loop.runUntilTerminated(onHangUp: { [unowned self] in reload() })
        announce(.stopping)
        if let signal { log.log(.notice, "stopping on signal \(signal)") }
        for source in sources { source.stop() }
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
        for key in [ConfigurationKey.group, .controlGroup, .maximumClients, .log, .logDatabase] where applied.text(for: key) != old.text(for: key) {
            restartOnly.append("\(key) \(old.text(for: key)) → \(applied.text(for: key))")
        }
        applied.socket = old.socket
        applied.stateDirectory = old.stateDirectory
        applied.group = old.group
        applied.controlGroup = old.controlGroup
        applied.maximumClients = old.maximumClients
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

    /// Applies changed device, pipeline and rumble settings to the sources.
    private func reconfigureSource(changed: [ConfigurationKey]) {
        switch options.source {
        case .devices:
            guard let scale = sources.first as? LiveScale else { return }
            // Every device is closed and opened again: each starts afresh in the rules.
            for served in scale.servedDevices { perform(rules.remove(served.device.nodeName)) }
            scale.reconfigure(liveOptions())
            if scale.servedDevices.isEmpty, let reason = scale.waitingReason { log.log(.notice, reason) }
        case .recordings:
            let unused = changed.filter { $0.reach == .source && !$0.isPipelineSetting }
            if !unused.isEmpty {
                log.log(.info, "\(unused.map(\.rawValue).joined(separator: ", ")): not used while serving a recording")
            }
            guard changed.contains(where: \.isPipelineSetting) else { return }
            for source in sources {
                for served in source.servedDevices { perform(rules.remove(served.device.nodeName)) }
                source.stop()
            }
            forceLog?.sourceEnded()
            let what = sources.count == 1 ? "the recording" : "the recordings"
            sources = []
            do {
                try openSources()
                log.log(.notice, "\(what) \(sources.count == 1 ? "starts" : "start") over with the new settings")
            } catch {
                log.log(.error, "\(what) could not be started again: \(error); serving without a device")
            }
        }
    }

    // MARK: - Sources

    private func openSources() throws {
        switch options.source {
        case .recordings(let recordings, let loops):
            let names = Self.names(of: recordings.map { SourceDevice.nodeName(of: $0.eventsPath ?? $0.descriptionPath) })
            for (files, name) in zip(recordings, names) {
                let scale = try RecordingScale(
                    files: files, name: name, loops: loops, settings: options.configuration.settings, loop: loop,
                    onNotice: { [unowned self] in log.log(.warning, $0) }
                ) { [unowned self] in
                    handle($0, from: $1)
                }
                // Kept first, so that the calibration taken next is applied to it.
                sources.append(scale)
                log.log(.notice, "serving the recording \(scale.path) as \(name)" + (loops ? " in a loop" : ""))
                // Its calibration is in force before its first reading.
                takeCalibration(for: scale.device)
            }
            for source in sources { try source.start() }
        case .devices:
            let scale = try LiveScale(options: liveOptions(), loop: loop, onOutput: { [unowned self] in handle($0, from: $1) }) { [unowned self] notice in
                switch notice {
                case .opened(let path, let device, _, _):
                    takeCalibration(for: SourceDevice(path: path, description: device))
                case .removed(let path), .readFailed(let path, _):
                    // Only that device's state and log session end; the others stream on.
                    let name = SourceDevice.nodeName(of: path)
                    perform(rules.remove(name))
                    forceLog?.sourceEnded(device: name)
                default:
                    break
                }
                log.log(.notice, Self.describe(notice))
            }
            // Kept before it starts, so that `.opened` finds it to apply the calibration to.
            sources = [scale]
            try scale.start()
            guard scale.servedDevices.isEmpty else { return }
            if let error = scale.hotplugError {
                log.log(.warning, "\(error): no input device can appear there; serving without one (restart forcescaled once the directory exists)")
            } else {
                if let reason = scale.waitingReason { log.log(.notice, reason) }
                log.log(.notice, "waiting for \(scale.options.awaited)")
            }
        }
    }

    /// The names recordings are served as: each file's name, with `#2`, `#3`… after the
    /// first when several files share one (`pen.evemu`, `pen.evemu#2`).
    static func names(of fileNames: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return fileNames.map { name in
            let count = (seen[name] ?? 0) + 1
            seen[name] = count
            return count == 1 ? name : "\(name)#\(count)"
        }
    }

    /// The live scale's options from the configuration in effect.
    private func liveOptions() -> LiveScale.Options {
        let configuration = options.configuration
        return LiveScale.Options(
            devices: .every(configuration.devices.map(DeviceQuery.init)), settings: configuration.settings,
            rumble: configuration.rumbleChoice, rumbleIntensity: configuration.rumbleIntensity, waitForDevice: true)
    }

    /// Loads the device's saved calibration into the rules, which apply it; a corrupt file
    /// is moved aside with one warning.
    private func takeCalibration(for device: SourceDevice) {
        var loaded = Calibration.none
        do {
            switch try store.load(for: device.description) {
            case .loaded(let saved):
                loaded = saved
                log.log(.info, "calibration of '\(device.description.name)' (\(device.nodeName)) loaded: \(saved.points.count) points, tare \(saved.tareGrams) g")
            case .nothingSaved:
                break
            case .corrupt(let movedTo, let reason):
                log.log(.warning, "the calibration of '\(device.description.name)' was unreadable (\(reason)); moved to \(movedTo), running uncalibrated")
            }
        } catch {
            log.log(.warning, "\(error); running uncalibrated")
        }
        perform(rules.adopt(loaded, for: device))
    }

    /// The devices the sources read now, in the order they were opened.
    private var servedDevices: [SourceDeviceStatus] {
        sources.flatMap(\.servedDevices)
    }

    // MARK: - Readings

    private func handle(_ output: ScaleOutput, from device: SourceDevice) {
        if case .peak(let peak) = output, let rumble = peak.rumble { rumbles.record(rumble) }
        forceLog?.record(output, device: device)
        rules.receive(output, from: device, into: &readingOutcome)
        perform(readingOutcome)
        readingOutcome.removeAll()
    }

    // MARK: - Performing the rules' outcomes

    /// Sends the outcome's lines, then performs its effects in order.
    private func perform(_ outcome: DaemonRules.Outcome) {
        if let audit = outcome.audit { log.log(audit.level, audit.message) }
        for line in outcome.lines {
            // Every recipient queues the same bytes (shared, not copied).
            for connection in connections(of: line.recipients) {
                connection.send(bytes: line.bytes, droppable: line.droppable)
            }
        }
        for effect in outcome.effects {
            switch effect {
            case .applyCalibration(let calibration, let device):
                for source in sources { source.setCalibration(calibration, for: device) }
            case .saveCalibration(let calibration, let device, let confirmation):
                do {
                    try store.save(calibration, for: device.description)
                    send(confirmation.reply, to: confirmation.client)
                } catch {
                    log.log(.error, "\(error)")
                    send(confirmation.failureLine("\(error)"), to: confirmation.client)
                }
            case .play(let pattern, let confirmation):
                do throws(ForceFeedbackError) {
                    try play(pattern)
                    send(confirmation.reply, to: confirmation.client)
                } catch {
                    send(confirmation.failureLine(error.description), to: confirmation.client)
                }
            case .grab(let device, let seconds, let confirmation):
                do throws(DeviceOpenError) {
                    guard try setGrabbed(true, device) else {
                        throw DeviceOpenError(path: device.path, errno: Errno(rawValue: ENODEV))
                    }
                    grabTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(seconds * 1_000_000))
                    // Logged once the device is taken: a reader of the log may rely on it.
                    let label = clients[confirmation.client]?.identity.label ?? "client \(confirmation.client)"
                    log.log(.info, "\(label) takes \(device.nodeName) for at most \(DaemonRules.seconds(seconds)) s")
                    send(confirmation.reply, to: confirmation.client)
                } catch {
                    rules.grabFailed(client: confirmation.client)
                    log.log(.warning, "\(confirmation.failure): \(error)")
                    send(confirmation.failureLine(error.description), to: confirmation.client)
                }
            case .releaseGrab(let device, let reply):
                grabTimer.arm(atMicroseconds: nil)
                // Giving back cannot fail (closing the descriptor would give it back too).
                _ = try? setGrabbed(false, device)
                if let reply { send(reply.reply, to: reply.client) }
            case .reportStatus(let client, let device):
                send(status(of: device).line, to: client)
            case .listDevices(let client):
                send(DevicesMessage(devices: deviceSummaries()).line, to: client)
            case .close(let client):
                clients[client]?.connection.close(afterFlushing: true)
            case .log(let level, let message):
                log.log(level, message)
            }
        }
    }

    /// The connections of `ids` that are still connected.
    private func connections(of ids: [Int]) -> [ClientConnection] {
        // Equal arrays that share their storage compare without looking at the elements.
        if ids != lastRecipients.ids {
            lastRecipients = (ids, ids.compactMap { clients[$0]?.connection })
        }
        return lastRecipients.connections
    }

    private func send(_ line: String, to client: Int) {
        clients[client]?.connection.send(line)
    }

    /// Takes a device or gives it back through the source that serves it.
    /// - Returns: Whether a source serves it.
    private func setGrabbed(_ grabbed: Bool, _ device: SourceDevice) throws(DeviceOpenError) -> Bool {
        for source in sources where try source.setGrabbed(grabbed, device: device) { return true }
        return false
    }

    /// Plays a pattern on the first source that can rumble.
    private func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        var failure = ForceFeedbackError(path: "forcescaled", operation: "rumble", errno: nil, explanation: "no device")
        for source in sources {
            do throws(ForceFeedbackError) {
                try source.play(pattern)
                return
            } catch {
                failure = error
            }
        }
        throw failure
    }

    /// STATUS: the rules' calibrations with the process's own facts; of one device, or of
    /// every one (the top-level device fields then describe the device only when exactly one
    /// is served).
    private func status(of requested: SourceDevice?) -> StatusMessage {
        let served = servedDevices.filter { status in requested.map { status.device.nodeName == $0.nodeName } ?? true }
        let entries = served.map { status in
            let name = status.device.nodeName
            return StatusMessage.ServedDevice(
                device: name, name: status.device.description.name, model: GramModelName(status.gramModel),
                calibration: StatusMessage.CalibrationSummary(rules.calibration(of: name), fit: rules.fit(for: status.device)),
                rumble: status.rumblePath, pressure: status.pressureSource.summary(contacts: status.contactMode),
                contacts: status.contactMode.rawValue, fullScale: status.fullScale, feedback: status.feedback?.name,
                rumbleError: status.feedbackProblem, droppedEvents: status.droppedEvents)
        }
        let only = entries.count == 1 ? entries[0] : nil
        return StatusMessage(
            release: options.release, uptime: Double(MonotonicClock.now() - startedAt) / 1e6,
            clients: clients.count, device: only?.device, model: only?.model, calibration: only?.calibration, rumble: only?.rumble,
            dropped: clients.values.reduce(droppedByDepartedClients) { $0 + $1.connection.droppedCount },
            log: forceLog?.status, rumbles: StatusMessage.RumbleSummary(rumbles), devices: entries)
    }

    private func deviceSummaries() -> [DevicesMessage.Device] {
        let served = servedDevices
        if case .recordings = options.source {
            return served.map { DevicesMessage.Device(path: $0.device.path, description: $0.device.description, active: true, canRumble: false) }
        }
        let active = Set(served.map(\.device.path))
        return DeviceDiscovery.scan().map { found in
            switch found.details {
            case .success(let details):
                return DevicesMessage.Device(path: found.path, description: details.description, active: active.contains(found.path), canRumble: details.forceFeedback.canGiveFeedback)
            case .failure(let error):
                return DevicesMessage.Device(path: found.path, error: error.description)
            }
        }
    }

    static func describe(_ notice: LiveNotice) -> String {
        switch notice {
        case .opened(let path, let device, _, let model): return "reading \(path) (\(device.name)), \(model.rawValue) model"
        case .rumbleReady(let path, let device, let feedback): return "\(device): \(feedback.name) on PEAK through \(path)"
        case .unusable(let path, let reason): return "\(path): \(reason)"
        case .rumbleUnavailable(let reason): return "rumble unavailable: \(reason)"
        case .resynchronized(let path): return "\(path): events were dropped (SYN_DROPPED); state rebuilt"
        case .removed(let path): return "\(path): device removed"
        case .readFailed(let path, let errno): return "\(path): read failed: \(errno)"
        case .waiting(let what): return "waiting for \(what)"
        }
    }
}

extension ClientIdentity {
    /// The identity of a connected client, from the credentials the kernel recorded. The
    /// groups are resolved here, once per connection: without the kernel's list (before
    /// Linux 4.13) that means asking the group database, which may block on a network
    /// directory, so not on every request.
    init(_ connection: ClientConnection) {
        let credentials = connection.credentials
        var groups = credentials?.supplementaryGroups ?? []
        if let credentials, credentials.supplementaryGroups == nil, let user = UserDatabase.user(id: credentials.uid) {
            groups = UserDatabase.groups(ofUser: user.name, primaryGroup: user.primaryGroup)
        }
        self.init(id: connection.id, label: connection.label, uid: credentials?.uid, gid: credentials?.gid, groups: groups)
    }
}
