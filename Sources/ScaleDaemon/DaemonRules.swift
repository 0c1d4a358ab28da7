import ScaleCore
import ScaleProtocol

/// The daemon's rules, without a socket, a device or a clock: what each request and each
/// reading does. A request (or reading) and the rules' state go in; the lines to send, the
/// new state and the effects for the daemon to perform come out. `Daemon` only moves bytes
/// and performs the effects, so every rule can be tried in a unit test.
///
/// The rules own the calibration of the device being served: this is its one place. The
/// pipeline receives a copy through `Effect.applyCalibration` (it needs it to weigh), the
/// store a copy through `Effect.saveCalibration` (to keep it across restarts); neither is
/// read back.
struct DaemonRules: Sendable {
    /// One line for some clients.
    struct Line: Hashable, Sendable {
        /// The line's UTF-8, newline included: encoded once, however many clients get it.
        var bytes: [UInt8]
        /// The clients it goes to, by connection id, in ascending order.
        var recipients: [Int]
        /// Whether a client that falls behind may miss it (READING); replies and PEAKs never are.
        var droppable: Bool

        /// - Parameters:
        ///   - text: The line; a newline is added when it has none.
        ///   - recipients: Who gets it, in ascending order.
        ///   - droppable: Whether a slow client may miss it.
        init(_ text: String, to recipients: [Int], droppable: Bool = false) {
            var bytes = Array(text.utf8)
            if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
            self.init(bytes: bytes, to: recipients, droppable: droppable)
        }

        /// A line already encoded, newline included.
        init(bytes: [UInt8], to recipients: [Int], droppable: Bool) {
            self.bytes = bytes
            self.recipients = recipients
            self.droppable = droppable
        }

        /// The line as text, newline included.
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// The reply that waits on an effect: sent when the effect succeeded, replaced by an
    /// ERROR naming the failure when it did not.
    struct Confirmation: Hashable, Sendable {
        /// The client that asked.
        var client: Int
        /// What it asked, named by the ERROR's `request`.
        var request: ClientRequest
        /// The reply for success.
        var reply: String
        /// The start of the ERROR's message, before the failure: `applied but not saved`.
        var failure: String

        /// The ERROR to send instead of `reply`.
        /// - Parameter error: What went wrong, as the failure describes itself.
        /// - Returns: `{"class":"ERROR","message":"<failure>: <error>","request":…}` and a newline.
        func failureLine(_ error: String) -> String {
            RequestError(message: "\(failure): \(error)", request: request).line
        }
    }

    /// What the daemon must do besides sending lines. Effects run after the outcome's lines,
    /// in order.
    enum Effect: Hashable, Sendable {
        /// Weigh the source's readings with this calibration from now on.
        case applyCalibration(Calibration)
        /// Keep this calibration for the device across restarts; then confirm.
        case saveCalibration(Calibration, device: SourceDevice, confirmation: Confirmation)
        /// Play a haptic pattern on whatever rumbles; then confirm.
        case play(HapticPattern, confirmation: Confirmation)
        /// Answer STATUS: the facts are the process's (uptime, queues, the force log).
        case reportStatus(client: Int)
        /// Answer DEVICES: the list comes from looking at the input devices.
        case listDevices(client: Int)
        /// End the client's connection once what is queued for it is written.
        case close(client: Int)
        /// Write a line to the daemon's log.
        case log(DaemonLog.Level, String)
    }

    /// Everything one request or reading leads to.
    struct Outcome: Hashable, Sendable {
        /// Lines to send, before the effects run.
        var lines: [Line] = []
        /// What to do, in order, after the lines are sent.
        var effects: [Effect] = []

        init(lines: [Line] = [], effects: [Effect] = []) {
            self.lines = lines
            self.effects = effects
        }

        /// Adds a line for one client.
        mutating func send(_ text: String, to client: Int) {
            lines.append(Line(text, to: [client]))
        }

        /// Empties it, keeping its arrays' room for the next one.
        mutating func removeAll() {
            // (Emptying an empty array still takes the generic path: a reading has no effects.)
            if !lines.isEmpty { lines.removeAll(keepingCapacity: true) }
            if !effects.isEmpty { effects.removeAll(keepingCapacity: true) }
        }
    }

    /// A CALIBRATE waiting for the sensor to be steady: the known weight, whether the point
    /// is added to the curve or only measured (`"add":false`), and the touch it measures.
    struct PendingPoint: Hashable, Sendable {
        var grams: Double
        var add: Bool
        /// The number of the touch it measures (``TouchCounter``): the one on the pad when
        /// it was asked, or else the next one placed. It never takes a later touch.
        var touch: Int

        /// The request that asked for it, named by the ERROR that refuses or replaces it.
        var request: ClientRequest { add ? .calibrate(grams: grams) : .measure(grams: grams) }
    }

    /// What the rules remember of each client.
    struct ClientState: Hashable, Sendable {
        var watching = false
        /// The device a WATCH named (a node name or a path); nil watches whatever is served.
        var watchedDevice: String?
        /// A CALIBRATE request waiting for the next stable reading.
        var pendingCalibration: PendingPoint?

        /// Whether this client wants the stream of `device`: a WATCH without a device takes
        /// every device's; one with a device takes that device's only, named by its node
        /// name or its path.
        func watches(_ device: SourceDevice) -> Bool {
            guard watching else { return false }
            guard let watchedDevice else { return true }
            return watchedDevice == device.path || watchedDevice == device.nodeName
        }
    }

    /// The daemon's release, for VERSION.
    let release: String
    /// Who may change state.
    var policy: ControlPolicy
    /// The calibration of the device being served (the one copy the daemon keeps).
    private(set) var calibration = Calibration.none
    /// The newest reading, from any device, for POLL and TARE.
    private(set) var lastReading: Reading?
    /// The device `lastReading` came from.
    private(set) var lastReadingDevice: SourceDevice?
    private var clients: [Int: ClientState] = [:] {
        didSet {
            watchersByPath = nil
            awaitingCalibration = nil
        }
    }
    /// The ids of the clients that watch the device at `path`, in ascending order: worked out
    /// once per device and change of the clients rather than for every reading (a reading
    /// goes out 100 times a second, and every allocation and hash on that path costs the
    /// daemon CPU).
    private var watchersByPath: (path: String, ids: [Int])?
    /// The ids of the clients with a CALIBRATE waiting, in ascending order; cached like
    /// `watchersByPath`, so that a stable reading (every reading while something lies on the
    /// scale) costs nothing when nobody is calibrating.
    private var awaitingCalibration: [Int]?
    /// Which touch the readings belong to, so that a calibration point is taken from the
    /// touch it was asked for and no other.
    private var touches = TouchCounter()

    /// Rules with no client, no reading and no calibration yet.
    /// - Parameters:
    ///   - release: Sent in VERSION.
    ///   - policy: Who may change state.
    init(release: String, policy: ControlPolicy) {
        self.release = release
        self.policy = policy
    }

    /// The curve fitted to the calibration's points, on `device`'s pressure axis.
    /// - Parameter device: The device being served.
    /// - Returns: The fit; `nil` without points or without a usable pressure axis.
    func fit(for device: SourceDevice) -> CalibrationFit? {
        Self.fit(calibration, for: device)
    }

    /// The curve fitted to some calibration's points on `device`'s axis, choosing between
    /// families as the pipeline does (``ResponseFamily/likely(for:)`` of the device's kind).
    static func fit(_ calibration: Calibration, for device: SourceDevice) -> CalibrationFit? {
        guard let axis = try? PressureSource.select(for: device.description).axis else { return nil }
        return calibration.fit(axis: axis, likely: .likely(for: device.description.kind))
    }

    /// How many clients are connected.
    var clientCount: Int { clients.count }

    // MARK: - Clients

    /// A client connected: it is greeted with VERSION before it sends anything.
    /// - Parameter client: The new client.
    /// - Returns: The greeting.
    mutating func connect(_ client: ClientIdentity) -> Outcome {
        clients[client.id] = ClientState()
        var outcome = Outcome()
        outcome.send(VersionMessage(release: release).line, to: client.id)
        return outcome
    }

    /// A client left: its watch and any calibration it was waiting for end with it.
    /// - Parameter id: The client's connection id.
    mutating func disconnect(_ id: Int) {
        clients[id] = nil
    }

    /// A client sent a line longer than the protocol allows.
    /// - Parameter client: Who sent it.
    /// - Returns: The ERROR, then the end of the connection: the client is not speaking the
    ///   protocol, and its line's end cannot be found without unbounded buffering.
    func lineTooLong(from client: ClientIdentity) -> Outcome {
        var outcome = Outcome()
        outcome.send(RequestError.lineTooLong.line, to: client.id)
        outcome.effects.append(.close(client: client.id))
        return outcome
    }

    // MARK: - Requests

    /// Reads one request line and serves it.
    /// - Parameters:
    ///   - line: The line's bytes as received, without its newline: a line that is not
    ///     UTF-8 is refused as such, at the byte where it stops being so.
    ///   - client: Who sent it.
    ///   - device: The device being read now, if any.
    /// - Returns: The reply (an ERROR for a line that is no request) and what follows from it.
    mutating func handle(line: [UInt8], from client: ClientIdentity, serving device: SourceDevice?) -> Outcome {
        switch ClientRequest.parse(line: line) {
        case .success(let request):
            return handle(request, from: client, serving: device)
        case .failure(let error):
            var outcome = Outcome()
            outcome.send(error.line, to: client.id)
            if error.closesConnection { outcome.effects.append(.close(client: client.id)) }
            return outcome
        }
    }

    /// Serves one request.
    /// - Parameters:
    ///   - request: What the client asked.
    ///   - client: Who asked; TARE, CALIBRATE, a CALIBRATION reset and RUMBLE need
    ///     `policy.mayControl(client)`.
    ///   - device: The device being read now, if any: TARE, CALIBRATE and CALIBRATION need
    ///     one; RUMBLE does not (a gamepad may rumble without it).
    /// - Returns: Exactly one reply for the client (or an effect that sends it), and the
    ///   effects of the change. A client that is not connected gets nothing.
    mutating func handle(_ request: ClientRequest, from client: ClientIdentity, serving device: SourceDevice?) -> Outcome {
        guard clients[client.id] != nil else { return Outcome() }
        var outcome = Outcome()
        switch request {
        case .watch(let enable, let requested):
            clients[client.id]!.watching = enable
            clients[client.id]!.watchedDevice = enable ? requested : nil
            // The reply names a device only when the request did (docs/protocol.md).
            outcome.send(WatchMessage(enable: enable, device: requested).line, to: client.id)
        case .poll:
            // The reading exactly as its READING line went out, with the device it came from.
            outcome.send(PollMessage(time: lastReading?.time, reading: lastReading.map { ReadingMessage($0, device: lastReadingDevice?.nodeName) }).line, to: client.id)
        case .devices:
            outcome.effects.append(.listDevices(client: client.id))
        case .status:
            outcome.effects.append(.reportStatus(client: client.id))
        case .calibration(reset: false):
            guard let device else {
                outcome.send(RequestError(message: "no device is open; waiting for one to appear", request: request).line, to: client.id)
                break
            }
            outcome.send(CalibrationMessage(calibration, fit: fit(for: device), device: device.nodeName).line, to: client.id)
        case .tare, .calibrate, .measure, .calibration(reset: true), .replaceCurve, .rumble:
            guard policy.mayControl(client) else {
                outcome.send(RequestError(message: "permission denied: only \(policy.allowed) may \(request.className)", request: request).line, to: client.id)
                break
            }
            change(request, for: client, serving: device, into: &outcome)
        }
        return outcome
    }

    /// The requests that change the scale or the hardware, once the client may.
    private mutating func change(_ request: ClientRequest, for client: ClientIdentity, serving device: SourceDevice?, into outcome: inout Outcome) {
        if case .rumble(let pattern) = request {
            // A rumble goes on without the pressure device (to a gamepad); the rest need it.
            outcome.effects.append(.play(pattern, confirmation: Confirmation(
                client: client.id, request: request, reply: RumbleMessage(pattern: pattern).line, failure: "rumble unavailable")))
            return
        }
        guard let device else {
            let what = switch request {
            case .tare: "no device to tare"
            case .calibrate, .measure, .replaceCurve: "no device to calibrate"
            default: "no device whose calibration to reset"
            }
            outcome.send(RequestError(message: "\(what); waiting for one to appear", request: request).line, to: client.id)
            return
        }
        switch request {
        case .tare:
            // With something on the pad its weight becomes zero (its settled weight when it
            // rests, so that one frame's noise is not carried into every later reading); with
            // nothing, tare is cleared.
            if let reading = lastReading, reading.contacts > 0 {
                calibration.tareGrams += reading.settledGrams ?? reading.grams
            } else {
                calibration.tareGrams = 0
            }
            keep(for: device, confirming: client.id, request, reply: TareMessage(device: device.nodeName, grams: calibration.tareGrams).line, into: &outcome)
        case .calibrate(let grams), .measure(let grams):
            let pending = PendingPoint(grams: grams, add: request == .calibrate(grams: grams), touch: touches.touchToMeasure)
            if let superseded = clients[client.id]!.pendingCalibration {
                outcome.send(RequestError(message: "the calibration with \(superseded.grams) g was replaced by one with \(grams) g", request: superseded.request).line, to: client.id)
            }
            clients[client.id]!.pendingCalibration = pending
            let what = pending.add ? "calibrating with" : "measuring"
            let which = touches.down ? "the touch on the pad" : "the next touch"
            outcome.effects.append(.log(.info, "\(client.label) \(what) \(grams) g: waiting for \(which) to be steady"))
        case .replaceCurve(let points, let preview):
            let replaced: Calibration
            do throws(CalibrationError) {
                let axisMinimum = (try? PressureSource.select(for: device.description).axis.minimum) ?? Int32.min
                replaced = try Calibration(points: points, tareGrams: calibration.tareGrams, axisMinimum: axisMinimum)
            } catch {
                outcome.send(RequestError(message: "calibration refused: \(error)", request: request).line, to: client.id)
                return
            }
            let reply = CalibrationMessage(replaced, fit: Self.fit(replaced, for: device), device: device.nodeName, preview: preview).line
            if preview {
                outcome.send(reply, to: client.id)
                return
            }
            calibration = replaced
            outcome.effects.append(.log(.info, "\(client.label) replaced the calibration curve with \(points.count) points"))
            keep(for: device, confirming: client.id, request, reply: reply, into: &outcome)
        default:
            calibration = .none
            keep(for: device, confirming: client.id, request, reply: CalibrationMessage(calibration, device: device.nodeName).line, into: &outcome)
        }
    }

    /// Applies the calibration to the readings and saves it; the reply waits on the save.
    private func keep(for device: SourceDevice, confirming client: Int, _ request: ClientRequest, reply: String, into outcome: inout Outcome) {
        outcome.effects.append(.applyCalibration(calibration))
        outcome.effects.append(.saveCalibration(calibration, device: device, confirmation: Confirmation(
            client: client, request: request, reply: reply, failure: "applied but not saved")))
    }

    // MARK: - Readings and the device

    /// A device was opened and its saved calibration read (or none was there): it becomes
    /// the calibration in force.
    /// - Parameter calibration: The device's saved calibration, or `.none`.
    /// - Returns: The effect that applies it to the readings.
    mutating func adopt(_ calibration: Calibration) -> Outcome {
        self.calibration = calibration
        return Outcome(effects: [.applyCalibration(calibration)])
    }

    /// A reading or PEAK arrived from `device`.
    /// - Parameters:
    ///   - output: The pipeline's output.
    ///   - device: The device it came from.
    /// - Returns: The line for the clients watching that device (a READING may be dropped
    ///   for a slow client, a PEAK never), then, for a reading steady for the sensor with
    ///   something on the pad, the points of the CALIBRATE requests that waited for its
    ///   touch; for a release, an ERROR to each CALIBRATE whose touch was lifted before it
    ///   was steady.
    mutating func receive(_ output: ScaleOutput, from device: SourceDevice) -> Outcome {
        var outcome = Outcome()
        receive(output, from: device, into: &outcome)
        return outcome
    }

    /// `receive(_:from:)` into an outcome the caller keeps: the daemon empties and reuses one
    /// rather than allocating its arrays for each of a hundred readings a second.
    mutating func receive(_ output: ScaleOutput, from device: SourceDevice, into outcome: inout Outcome) {
        let watchers = watchers(of: device)
        if !watchers.isEmpty {
            // A slow client may miss READINGs, never a PEAK.
            var droppable = false
            if case .reading = output { droppable = true }
            outcome.lines.append(Line(bytes: output.lineBytes(device: device.nodeName), to: watchers, droppable: droppable))
        }
        if case .reading(let reading) = output {
            lastReading = reading
            lastReadingDevice = device
            let lifted = touches.count(reading)
            if reading.steadyThroughout || lifted {
                let waiting = awaitingCalibration ?? clients.filter { $0.value.pendingCalibration != nil }.keys.sorted()
                awaitingCalibration = waiting
                if waiting.isEmpty { return }
                if lifted {
                    refuseLiftedCalibrations(of: waiting, into: &outcome)
                } else if reading.contacts > 0 {
                    completeCalibrations(of: waiting, with: reading, from: device, into: &outcome)
                }
            }
        }
    }

    /// Ends the CALIBRATE requests whose touch was just lifted before it was steady: nothing
    /// is stored, and the client is told to place the weight again.
    private mutating func refuseLiftedCalibrations(of waiting: [Int], into outcome: inout Outcome) {
        for id in waiting {
            guard let pending = clients[id]!.pendingCalibration, pending.touch == touches.current else { continue }
            clients[id]!.pendingCalibration = nil
            outcome.send(RequestError(
                message: "\(CalibrateMessage.liftedBeforeSettling): nothing was stored; put the \(MassUnit.sentence(grams: pending.grams)) weight on again, keep it still and ask again",
                request: pending.request).line, to: id)
        }
    }

    /// The clients watching `device`, from the cache while neither changes.
    private mutating func watchers(of device: SourceDevice) -> [Int] {
        if let cached = watchersByPath, cached.path == device.path { return cached.ids }
        let ids = clients.filter { $0.value.watches(device) }.keys.sorted()
        watchersByPath = (device.path, ids)
        return ids
    }

    /// Adds a point for every client waiting with a known weight for this touch, in the
    /// order they connected; each is saved and confirmed on its own, as if asked one after
    /// the other. The point is the reading's settled pressure: the mean of every frame of the
    /// stability window that the pipeline judged steady for the sensor, with their standard
    /// deviation and count. Whether a point can be taken never depends on the grams of the
    /// curve it builds. A client that only measures gets the point back and the curve is
    /// left alone.
    private mutating func completeCalibrations(of waiting: [Int], with reading: Reading, from device: SourceDevice, into outcome: inout Outcome) {
        // A device without a usable pressure axis gives no points; the requests keep waiting.
        guard let axis = try? PressureSource.select(for: device.description).axis else { return }
        // A steady reading is stable and carries its window; without one, keep waiting.
        guard let settled = reading.settled else { return }
        for id in waiting {
            guard let pending = clients[id]!.pendingCalibration, pending.touch == touches.current else { continue }
            clients[id]!.pendingCalibration = nil
            let point = CalibrationPoint(
                raw: settled.mean, grams: pending.grams, spread: settled.standardDeviation, count: settled.count)
            guard pending.add else {
                outcome.send(CalibrateMessage(point: point, points: calibration.points.count, device: device.nodeName, added: false).line, to: id)
                continue
            }
            do throws(CalibrationError) {
                try calibration.add(point, axisMinimum: axis.minimum)
            } catch {
                outcome.send(RequestError(message: "calibration point refused: \(error)", request: pending.request).line, to: id)
                continue
            }
            keep(for: device, confirming: id, pending.request, reply: CalibrateMessage(point: point, points: calibration.points.count, device: device.nodeName).line, into: &outcome)
        }
    }
}

/// Numbers the touches of the readings as they arrive: a touch starts with a reading that
/// has contacts after one without (or after none), and ends with the release.
struct TouchCounter: Hashable, Sendable {
    /// The number of the newest touch (0 before the first).
    private(set) var current = 0
    /// Whether that touch is still on the pad.
    private(set) var down = false

    /// The touch a calibration asked now measures: the one on the pad, or else the next.
    var touchToMeasure: Int { down ? current : current + 1 }

    /// Follows a reading.
    /// - Returns: Whether it lifted the current touch.
    mutating func count(_ reading: Reading) -> Bool {
        if reading.contacts > 0 {
            if !down {
                current += 1
                down = true
            }
            return false
        }
        defer { down = false }
        return down
    }
}
