import Glibc
import ScaleCore
import ScaleSystem

/// The service: one thread, one epoll loop that owns every piece of state — the scale
/// source (a device or a recording), the clients on the Unix socket, the calibration of
/// the device. Readings go to watching clients without ever waiting for them.
public final class Daemon {
    public enum Source: Sendable {
        case device(DeviceQuery?)
        case recording(RecordingFiles, loops: Bool)
    }

    public struct Options: Sendable {
        public var source: Source
        public var socketPath: String
        public var stateDirectory: String
        /// Members of this group may tare, calibrate and rumble (and, through the socket's
        /// mode, connect at all).
        public var groupName: String
        public var settings: ScaleSettings
        public var rumble: RumbleChoice
        public var release: String

        public init(source: Source, socketPath: String, stateDirectory: String, groupName: String = "forcescale",
                    settings: ScaleSettings = ScaleSettings(), rumble: RumbleChoice = .pressureDevice, release: String) {
            self.source = source
            self.socketPath = socketPath
            self.stateDirectory = stateDirectory
            self.groupName = groupName
            self.settings = settings
            self.rumble = rumble
            self.release = release
        }
    }

    /// What the daemon knows of each client.
    final class ClientState {
        var watching = false
        /// Grams of a CALIBRATE request waiting for the next stable reading.
        var pendingCalibration: Double?
    }

    public let options: Options
    private let log: DaemonLog
    private let loop: EventLoop
    private let server: SocketServer
    private let store: CalibrationStore
    private var source: (any ScaleSource)?
    private var clients: [Int: (connection: ClientConnection, state: ClientState)] = [:]
    private var calibration = Calibration.none
    private var lastReading: Reading?
    /// READINGs dropped for clients that have since left; STATUS counts since the start.
    private var droppedByDepartedClients = 0
    private let startedAt = MonotonicClock.now()
    private let group: gid_t?

    /// Binds the socket, opens the state directory and the source.
    /// - Throws: what stops the daemon from starting, with a message saying what to do.
    public init(options: Options, log: DaemonLog) throws {
        self.options = options
        self.log = log
        loop = try EventLoop()
        store = try CalibrationStore(directory: options.stateDirectory)
        let listener = try UnixListener(path: options.socketPath, groupName: options.groupName)
        group = listener.group
        server = try SocketServer(listener: listener, loop: loop)
        server.onConnect = { [unowned self] client in
            clients[client.id] = (client, ClientState())
            log.log(.debug, "\(client.label) connected")
            client.send(DaemonMessage.version(release: options.release))
        }
        server.onLine = { [unowned self] client, line in handle(line, from: client) }
        server.onOversizedLine = { client in
            client.send(DaemonMessage.error(RequestError.lineTooLong))
            client.close(afterFlushing: true)
        }
        server.onDisconnect = { [unowned self] client, reason in
            clients[client.id] = nil
            droppedByDepartedClients += client.droppedCount
            log.log(.debug, "\(client.label) disconnected: \(reason)")
        }
        server.onError = { error in log.log(.warning, "\(error)") }
        try openSource()
        log.log(.notice, "listening on \(options.socketPath)")
    }

    /// Serves until SIGINT, SIGTERM or SIGHUP; then stops the source (erasing rumble
    /// effects), says goodbye to the clients and removes the socket.
    public func run() throws {
        let signal = try loop.runUntilTerminated()
        if let signal { log.log(.notice, "stopping on signal \(signal)") }
        source?.stop()
        server.close()
    }

    // MARK: - Source

    private func openSource() throws {
        switch options.source {
        case .recording(let files, let loops):
            let scale = try RecordingScale(files: files, loops: loops, settings: options.settings, loop: loop) { [unowned self] in
                handle($0)
            }
            source = scale
            log.log(.notice, "serving the recording \(scale.path)" + (loops ? " in a loop" : ""))
            if let device = scale.currentDevice { takeCalibration(for: device.description) }
        case .device(let query):
            let liveOptions = LiveScale.Options(query: query, settings: options.settings, rumble: options.rumble)
            let scale = try LiveScale(options: liveOptions, loop: loop, onOutput: { [unowned self] in handle($0) }) { [unowned self] notice in
                if case .opened(_, let device, _, _) = notice { takeCalibration(for: device) }
                log.log(.notice, Self.describe(notice))
            }
            source = scale
        }
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
        let device = source?.currentDevice.map { Self.deviceName($0.path) }
        switch output {
        case .reading(let reading):
            lastReading = reading
            server.broadcast(ProtocolMessage.reading(reading, device: device), droppable: true) { [unowned self] in
                clients[$0.id]?.state.watching == true
            }
            if reading.stable, reading.contacts > 0 { completeCalibrations(with: reading) }
        case .peak(let peak):
            server.broadcast(ProtocolMessage.peak(peak, device: device), droppable: false) { [unowned self] in
                clients[$0.id]?.state.watching == true
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
                calibration: calibration, rumble: source?.rumblePath,
                dropped: clients.values.reduce(droppedByDepartedClients) { $0 + $1.connection.droppedCount })))
        case .tare, .calibrate, .calibration(reset: true), .rumble:
            guard authorize(client, request) else { return }
            changeState(request, for: client, state: state)
        case .calibration(reset: false):
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
            guard device != nil else {
                client.send(DaemonMessage.error("no device to calibrate; waiting for one to appear", request: request))
                return
            }
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
