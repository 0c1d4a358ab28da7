import ScaleCore
import ScaleProtocol

/// The daemon's rules, without a socket, a device or a clock: what each request and each
/// reading does. A request (or reading) and the rules' state go in; the lines to send, the
/// new state and the effects for the daemon to perform come out. `Daemon` only moves bytes
/// and performs the effects, so every rule can be tried in a unit test.
///
/// The rules own the calibration of each device being served, keyed by the device's name on
/// the wire: this is its one place. The device's pipeline receives a copy through
/// `Effect.applyCalibration` (it needs it to weigh), the store a copy through
/// `Effect.saveCalibration` (to keep it across restarts); neither is read back. A request
/// that changes a device's state must name the device when several are served: the rules
/// never guess.
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
        /// Weigh the device's readings with this calibration from now on.
        case applyCalibration(Calibration, device: SourceDevice)
        /// Keep this calibration for the device across restarts; then confirm.
        case saveCalibration(Calibration, device: SourceDevice, confirmation: Confirmation)
        /// Play a haptic pattern on whatever rumbles; then confirm.
        case play(HapticPattern, confirmation: Confirmation)
        /// Answer STATUS, of one device or of every one (`nil`): the facts are the
        /// process's (uptime, queues, the force log).
        case reportStatus(client: Int, device: SourceDevice?)
        /// Answer DEVICES: the list comes from looking at the input devices.
        case listDevices(client: Int)
        /// Take the device for a client's weighing (EVIOCGRAB), then confirm and end the grab
        /// after `seconds` (``DaemonRules/grabExpired()``); when the device cannot be taken,
        /// send the failure and tell the rules (``DaemonRules/grabFailed(client:)``).
        case grab(SourceDevice, seconds: Double, confirmation: Confirmation)
        /// Give the device back to everyone (and forget the grab's bound); then send the reply,
        /// when a client asked: a client that has its reply has its device given back.
        case releaseGrab(SourceDevice, reply: Confirmation? = nil)
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
        /// A control request's entry in the log's audit trail: who asked for what, and
        /// whether it was allowed. Written first; `nil` for every other request.
        var audit: Audit?

        init(lines: [Line] = [], effects: [Effect] = [], audit: Audit? = nil) {
            self.lines = lines
            self.effects = effects
            self.audit = audit
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
            audit = nil
        }
    }

    /// One line of the audit trail of control (docs/security.md).
    struct Audit: Hashable, Sendable {
        var level: DaemonLog.Level
        var message: String
    }

    /// A CALIBRATE waiting for the sensor to be steady: the known weight, whether the point
    /// is added to the curve or only measured (`"add":false`), and the touch it measures.
    struct PendingPoint: Hashable, Sendable {
        var grams: Double
        var add: Bool
        /// The device measured, by its name.
        var device: String
        /// Whether the request named the device, so that the ERROR that refuses it can.
        var named: Bool
        /// The number of the touch it measures (``TouchCounter``): the one on the pad when
        /// it was asked, or else the next one placed. It never takes a later touch.
        var touch: Int

        /// The request that asked for it, named by the ERROR that refuses or replaces it.
        var request: ClientRequest {
            add ? .calibrate(grams: grams, device: named ? device : nil) : .measure(grams: grams, device: named ? device : nil)
        }
    }

    /// What the rules remember of each client.
    struct ClientState: Hashable, Sendable {
        var watching = false
        /// The device a WATCH named (a node name or a path); nil watches whatever is served.
        var watchedDevice: String?
        /// A CALIBRATE request waiting for the next stable reading of its device.
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

    /// What the rules keep of one device being served.
    struct DeviceState: Hashable, Sendable {
        /// Its calibration (the one copy the daemon keeps).
        var calibration = Calibration.none
        /// Its newest reading, for POLL and TARE.
        var lastReading: Reading?
        /// Which touch its readings belong to, so that a calibration point is taken from the
        /// touch it was asked for and no other.
        var touches = TouchCounter()
        /// The ids of the clients that watch it, in ascending order: worked out once per
        /// change of the clients rather than for every reading (a reading goes out 100 times
        /// a second per device, and every allocation and hash on that path costs the daemon
        /// CPU).
        var watchers: [Int]?
        /// The ids of the clients with a CALIBRATE waiting on it, in ascending order; cached
        /// like `watchers`, so that a stable reading (every reading while something lies on
        /// the pad) costs nothing when nobody is calibrating.
        var awaitingCalibration: [Int]?
        /// Whether the log has said that the weight a CALIBRATE waits for is drifting, since
        /// it last stopped or was lifted: said once, not with every reading.
        var driftLogged = false

        init(calibration: Calibration = .none) {
            self.calibration = calibration
        }
    }

    /// A device taken for one client's weighing (GRAB): the desktop sees none of its events
    /// until the grab ends.
    struct Grab: Hashable, Sendable {
        /// The client that holds it.
        var client: Int
        /// The device taken.
        var device: SourceDevice
        /// How long at most it stays taken, in seconds.
        var seconds: Double
    }

    /// The longest a grab lasts, in seconds, whatever a client asks: a grabbed touchpad is
    /// the desktop's pointer gone, so no client may keep it longer (a weighing that needs
    /// more is given the pad back and weighs on without it). Two minutes hold both steps of
    /// `forcescale weigh --tare-first` at its default timeout of 30 s each.
    static let maximumGrabSeconds = 120.0

    /// The daemon's release, for VERSION.
    let release: String
    /// Who may change state.
    var policy: ControlPolicy
    /// Clients connected at once (`max-clients`); one more is told so and let go.
    var maximumClients: Int
    /// Each device served, by its name on the wire (`event5`, `pen.evemu`).
    private(set) var devices: [String: DeviceState] = [:]
    private var clients: [Int: ClientState] = [:] {
        didSet { forgetRecipients() }
    }
    /// The one grab there may be at a time, by any client on any device.
    private(set) var grab: Grab?

    /// Rules with no client, no reading and no calibration yet.
    /// - Parameters:
    ///   - release: Sent in VERSION.
    ///   - policy: Who may change state.
    ///   - maximumClients: Clients connected at once.
    init(release: String, policy: ControlPolicy, maximumClients: Int = .max) {
        self.release = release
        self.policy = policy
        self.maximumClients = maximumClients
    }

    /// The calibration of a device being served.
    /// - Parameter device: The device's name.
    /// - Returns: Its calibration; `.none` for a device the rules do not know.
    func calibration(of device: String) -> Calibration {
        devices[device]?.calibration ?? .none
    }

    /// The curve fitted to a device's calibration points, on its pressure axis.
    /// - Parameter device: A device being served.
    /// - Returns: The fit; `nil` without points or without a usable pressure axis.
    func fit(for device: SourceDevice) -> CalibrationFit? {
        Self.fit(calibration(of: device.nodeName), for: device)
    }

    /// The newest reading of a device being served.
    func lastReading(of device: String) -> Reading? {
        devices[device]?.lastReading
    }

    /// The caches of who gets each device's lines, dropped when a client changes.
    private mutating func forgetRecipients() {
        var index = devices.values.startIndex
        while index != devices.values.endIndex {
            devices.values[index].watchers = nil
            devices.values[index].awaitingCalibration = nil
            devices.values.formIndex(after: &index)
        }
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
    /// - Returns: The greeting; past `maximumClients`, an ERROR that says so instead, and
    ///   the connection's end.
    mutating func connect(_ client: ClientIdentity) -> Outcome {
        var outcome = Outcome()
        guard clients.count < maximumClients else {
            let message = "too many clients: \(maximumClients) are connected, the daemon's max-clients; close one, or raise max-clients in forcescale.conf"
            outcome.send(RequestError(message: message).line, to: client.id)
            outcome.effects.append(.close(client: client.id))
            outcome.effects.append(.log(.warning, "\(client.label) refused: max-clients \(maximumClients) are connected"))
            return outcome
        }
        clients[client.id] = ClientState()
        outcome.send(VersionMessage(release: release).line, to: client.id)
        return outcome
    }

    /// A client left: its watch, any calibration it was waiting for and its grab end with it.
    /// - Parameter id: The client's connection id.
    /// - Returns: The release of its grab, when it held one.
    @discardableResult
    mutating func disconnect(_ id: Int) -> Outcome {
        clients[id] = nil
        guard let held = grab, held.client == id else { return Outcome() }
        grab = nil
        return Outcome(effects: [
            .releaseGrab(held.device), .log(.info, "client \(id) left: \(held.device.nodeName) is given back"),
        ])
    }

    // MARK: - Grabs

    /// The device could not be taken (another program holds it, it went away): the grab the
    /// rules recorded for `client` is forgotten. The daemon has sent the failure.
    /// - Parameter client: The client whose GRAB failed.
    mutating func grabFailed(client: Int) {
        if grab?.client == client { grab = nil }
    }

    /// The grab's bound passed: the device is given back and its holder told so.
    /// - Returns: The GRAB line that tells the holder (`"ended":"expired"`) and the release.
    mutating func grabExpired() -> Outcome {
        guard let held = grab else { return Outcome() }
        grab = nil
        var outcome = Outcome()
        let name = held.device.nodeName
        outcome.send(GrabMessage(device: name, grabbed: false, ended: GrabMessage.Ending.expired.rawValue).line, to: held.client)
        outcome.effects.append(.releaseGrab(held.device))
        outcome.effects.append(.log(.info, "the grab of \(name) by client \(held.client) reached its bound of \(DaemonRules.seconds(held.seconds)) s: given back"))
        return outcome
    }

    /// GRAB: take a device for the client's weighing, or give it back.
    private mutating func handleGrab(_ request: ClientRequest, enable: Bool, seconds: Double?, requested: String?, from client: ClientIdentity, serving served: [SourceDevice], into outcome: inout Outcome) {
        guard enable else {
            // Giving back needs no permission: only a client that holds a grab has one to give.
            guard let held = grab, held.client == client.id else {
                outcome.send(GrabMessage(device: requested, grabbed: false).line, to: client.id)
                return
            }
            grab = nil
            outcome.effects.append(.log(.info, "\(client.label) gave \(held.device.nodeName) back"))
            outcome.effects.append(.releaseGrab(held.device, reply: Confirmation(
                client: client.id, request: request, reply: GrabMessage(device: held.device.nodeName, grabbed: false).line,
                failure: "could not give \(held.device.nodeName) back")))
            return
        }
        guard authorize(request, device: requested, from: client, into: &outcome) else { return }
        let device: SourceDevice
        switch address(requested, among: served, for: request) {
        case .success(let addressed): device = addressed
        case .failure(let error):
            outcome.send(error.line, to: client.id)
            return
        }
        if let held = grab {
            let message = held.client == client.id
                ? "you hold \(held.device.nodeName) already: give it back (GRAB with \"enable\":false) before taking it again"
                : "one grab at a time: \(held.device.nodeName) is taken for another client's weighing; try again when it ends (within \(DaemonRules.seconds(held.seconds)) s)"
            outcome.send(RequestError(message: message, request: request).line, to: client.id)
            return
        }
        let bound = min(seconds ?? Self.maximumGrabSeconds, Self.maximumGrabSeconds)
        grab = Grab(client: client.id, device: device, seconds: bound)
        let name = device.nodeName
        outcome.effects.append(.grab(device, seconds: bound, confirmation: Confirmation(
            client: client.id, request: request, reply: GrabMessage(device: name, grabbed: true, seconds: bound).line,
            failure: "could not take \(name)")))
    }

    /// Seconds as the log and the errors write them: `120`, `2.5`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && value.magnitude < 1e15 ? String(Int(value)) : String(value)
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
    ///   - served: The devices being read now, in the order DEVICES lists them.
    /// - Returns: The reply (an ERROR for a line that is no request) and what follows from it.
    mutating func handle(line: [UInt8], from client: ClientIdentity, serving served: [SourceDevice]) -> Outcome {
        switch ClientRequest.parse(line: line) {
        case .success(let request):
            return handle(request, from: client, serving: served)
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
    ///   - served: The devices being read now, in the order DEVICES lists them: TARE,
    ///     CALIBRATE and CALIBRATION need one, named by the request when there are several;
    ///     RUMBLE does not (a gamepad may rumble without it).
    /// - Returns: Exactly one reply for the client (or an effect that sends it), and the
    ///   effects of the change. A client that is not connected gets nothing.
    mutating func handle(_ request: ClientRequest, from client: ClientIdentity, serving served: [SourceDevice]) -> Outcome {
        guard clients[client.id] != nil else { return Outcome() }
        var outcome = Outcome()
        switch request {
        case .watch(let enable, let requested):
            // A device that is not served is refused, naming those that are; with none
            // served yet, the WATCH waits for the device to appear.
            if enable, let requested, !served.isEmpty, Self.find(requested, in: served) == nil {
                outcome.send(RequestError(message: Self.unknown(requested, among: served), request: request).line, to: client.id)
                break
            }
            clients[client.id]!.watching = enable
            clients[client.id]!.watchedDevice = enable ? requested : nil
            // The reply names a device only when the request did (docs/protocol.md).
            outcome.send(WatchMessage(enable: enable, device: requested).line, to: client.id)
        case .poll(let requested):
            outcome.send(poll(requested, among: served, request: request), to: client.id)
        case .devices:
            outcome.effects.append(.listDevices(client: client.id))
        case .status(let requested):
            guard let requested else {
                outcome.effects.append(.reportStatus(client: client.id, device: nil))
                break
            }
            switch address(requested, among: served, for: request) {
            case .success(let device): outcome.effects.append(.reportStatus(client: client.id, device: device))
            case .failure(let error): outcome.send(error.line, to: client.id)
            }
        case .calibration(reset: false, let requested):
            switch address(requested, among: served, for: request) {
            case .success(let device):
                outcome.send(CalibrationMessage(calibration(of: device.nodeName), fit: fit(for: device), device: device.nodeName).line, to: client.id)
            case .failure(let error):
                outcome.send(error.line, to: client.id)
            }
        case .grab(let enable, let seconds, let requested):
            handleGrab(request, enable: enable, seconds: seconds, requested: requested, from: client, serving: served, into: &outcome)
        case .tare, .calibrate, .measure, .calibration(reset: true, _), .replaceCurve, .rumble:
            guard authorize(request, device: request.device, from: client, into: &outcome) else { break }
            change(request, for: client, serving: served, into: &outcome)
        }
        return outcome
    }

    /// Whether `client` may make a request that changes the scale or the hardware; either
    /// way the log says who asked what (the audit trail of control), and a refused client
    /// gets the ERROR naming who may.
    /// - Parameters:
    ///   - request: The request.
    ///   - device: The device it names, if any.
    ///   - client: Who asked: its label carries its pid and uid.
    /// - Returns: `true` when allowed.
    private func authorize(_ request: ClientRequest, device: String?, from client: ClientIdentity, into outcome: inout Outcome) -> Bool {
        let what = request.className + (device.map { " of \($0)" } ?? "")
        guard policy.mayControl(client) else {
            outcome.audit = Audit(level: .notice, message: "\(client.label) asked for \(what): refused, not one of \(policy.allowed)")
            outcome.send(RequestError(message: "permission denied: only \(policy.allowed) may \(request.className)", request: request).line, to: client.id)
            return false
        }
        outcome.audit = Audit(level: .info, message: "\(client.label) asked for \(what): allowed")
        return true
    }

    /// POLL's reply: the newest reading of the device named, or of any device (one gone
    /// since included), and with several devices served and none named, the newest reading
    /// of each.
    private func poll(_ requested: String?, among served: [SourceDevice], request: ClientRequest) -> String {
        // Each reading exactly as its READING line went out, with the device it came from.
        func message(_ name: String) -> ReadingMessage? {
            lastReading(of: name).map { ReadingMessage($0, device: name) }
        }
        if let requested {
            guard let device = Self.find(requested, in: served) else {
                return RequestError(message: Self.unknown(requested, among: served), request: request).line
            }
            let reading = message(device.nodeName)
            return PollMessage(time: reading?.time, reading: reading).line
        }
        let newest = devices.compactMap { name, state in state.lastReading.map { (name, $0) } }.max { $0.1.time < $1.1.time }
        let reading = newest.map { ReadingMessage($0.1, device: $0.0) }
        let readings = served.count > 1 ? served.compactMap { message($0.nodeName) } : nil
        return PollMessage(time: reading?.time, reading: reading, readings: readings).line
    }

    /// The device a request that needs one addresses: the one it names, or the only one.
    /// - Returns: The device, or the ERROR to send: no device is served, the name is not
    ///   served, or several are and the request named none (never a guess).
    private func address(_ requested: String?, among served: [SourceDevice], for request: ClientRequest) -> Result<SourceDevice, RequestError> {
        guard !served.isEmpty else {
            let what = switch request {
            case .tare: "no device to tare: none is open"
            case .calibrate, .measure, .replaceCurve: "no device to calibrate: none is open"
            case .calibration(reset: true, _): "no device whose calibration to reset: none is open"
            case .grab: "no device to take: none is open"
            default: "no device is open"
            }
            return .failure(RequestError(
                message: "\(what) (plug one in or name it with forcescaled --device; without one, try the demo: \(DemoSession.route))",
                request: request))
        }
        if let requested {
            guard let device = Self.find(requested, in: served) else {
                return .failure(RequestError(message: Self.unknown(requested, among: served), request: request))
            }
            return .success(device)
        }
        guard served.count == 1 else {
            return .failure(RequestError(
                message: "\(served.count) devices are served (\(Self.names(of: served))): name one with --device (the request's 'device')", request: request))
        }
        return .success(served[0])
    }

    /// The served device a request names by its name on the wire or its path.
    private static func find(_ name: String, in served: [SourceDevice]) -> SourceDevice? {
        served.first { $0.nodeName == name || $0.path == name }
    }

    /// `no device 'event9' is served (served: event5, event7)`.
    private static func unknown(_ name: String, among served: [SourceDevice]) -> String {
        served.isEmpty
            ? "no device '\(ClientRequest.abbreviated(name))' is served; none is open"
            : "no device '\(ClientRequest.abbreviated(name))' is served (served: \(names(of: served)))"
    }

    /// The devices' names, comma-separated.
    private static func names(of served: [SourceDevice]) -> String {
        served.map(\.nodeName).joined(separator: ", ")
    }

    /// The requests that change the scale or the hardware, once the client may.
    private mutating func change(_ request: ClientRequest, for client: ClientIdentity, serving served: [SourceDevice], into outcome: inout Outcome) {
        if case .rumble(let pattern) = request {
            // A rumble goes on without the pressure device (to a gamepad); the rest need it.
            outcome.effects.append(.play(pattern, confirmation: Confirmation(
                client: client.id, request: request, reply: RumbleMessage(pattern: pattern).line, failure: "rumble unavailable")))
            return
        }
        let device: SourceDevice
        switch address(request.device, among: served, for: request) {
        case .success(let addressed): device = addressed
        case .failure(let error):
            outcome.send(error.line, to: client.id)
            return
        }
        let name = device.nodeName
        if devices[name] == nil { devices[name] = DeviceState() }
        switch request {
        case .tare:
            // With something on the pad its weight becomes zero (its settled weight when it
            // rests, so that one frame's noise is not carried into every later reading); with
            // nothing, tare is cleared.
            if let reading = devices[name]!.lastReading, reading.contacts > 0 {
                devices[name]!.calibration.tareGrams += reading.settledGrams ?? reading.grams
            } else {
                devices[name]!.calibration.tareGrams = 0
            }
            let calibration = devices[name]!.calibration
            keep(calibration, for: device, confirming: client.id, request, reply: TareMessage(device: name, grams: calibration.tareGrams).line, into: &outcome)
        case .calibrate(let grams, let requested), .measure(let grams, let requested):
            let touches = devices[name]!.touches
            let pending = PendingPoint(
                grams: grams, add: request == .calibrate(grams: grams, device: requested), device: name, named: requested != nil,
                touch: touches.touchToMeasure)
            if let superseded = clients[client.id]!.pendingCalibration {
                outcome.send(RequestError(message: "the calibration with \(superseded.grams) g was replaced by one with \(grams) g", request: superseded.request).line, to: client.id)
            }
            clients[client.id]!.pendingCalibration = pending
            let what = pending.add ? "calibrating \(name) with" : "measuring on \(name)"
            let which = touches.down ? "the touch on the pad" : "the next touch"
            outcome.effects.append(.log(.info, "\(client.label) \(what) \(grams) g: waiting for \(which) to be steady"))
        case .replaceCurve(let points, let preview, _):
            let replaced: Calibration
            do throws(CalibrationError) {
                let axisMinimum = (try? PressureSource.select(for: device.description).axis.minimum) ?? Int32.min
                replaced = try Calibration(points: points, tareGrams: devices[name]!.calibration.tareGrams, axisMinimum: axisMinimum)
            } catch {
                outcome.send(RequestError(message: "calibration refused: \(error)", request: request).line, to: client.id)
                return
            }
            let reply = CalibrationMessage(replaced, fit: Self.fit(replaced, for: device), device: name, preview: preview).line
            if preview {
                outcome.send(reply, to: client.id)
                return
            }
            devices[name]!.calibration = replaced
            outcome.effects.append(.log(.info, "\(client.label) replaced the calibration curve of \(name) with \(points.count) points"))
            keep(replaced, for: device, confirming: client.id, request, reply: reply, into: &outcome)
        default:
            devices[name]!.calibration = .none
            keep(.none, for: device, confirming: client.id, request, reply: CalibrationMessage(.none, device: name).line, into: &outcome)
        }
    }

    /// Applies the calibration to the device's readings and saves it; the reply waits on the
    /// save. The device's newest reading is weighed again by it at once: a TARE or POLL that
    /// arrives before the next reading (two TAREs sent together, a TARE right after a
    /// CALIBRATE) must see the weights of the calibration in force, not of the one it
    /// replaced.
    private mutating func keep(_ calibration: Calibration, for device: SourceDevice, confirming client: Int, _ request: ClientRequest, reply: String, into outcome: inout Outcome) {
        if let axis = try? PressureSource.select(for: device.description).axis {
            devices[device.nodeName]?.lastReading?.reweigh(
                by: GramModel(axis: axis, calibration: calibration, likely: .likely(for: device.description.kind)))
        }
        outcome.effects.append(.applyCalibration(calibration, device: device))
        outcome.effects.append(.saveCalibration(calibration, device: device, confirmation: Confirmation(
            client: client, request: request, reply: reply, failure: "applied but not saved")))
    }

    // MARK: - Readings and the devices

    /// A device was opened and its saved calibration read (or none was there): it becomes
    /// the device's calibration in force, and the device starts afresh (no reading, no
    /// touch).
    /// - Parameters:
    ///   - calibration: The device's saved calibration, or `.none`.
    ///   - device: The device opened.
    /// - Returns: The effect that applies it to the device's readings.
    mutating func adopt(_ calibration: Calibration, for device: SourceDevice) -> Outcome {
        devices[device.nodeName] = DeviceState(calibration: calibration)
        return Outcome(effects: [.applyCalibration(calibration, device: device)])
    }

    /// A device went away (unplugged, failed, or closed to be opened afresh): each
    /// CALIBRATE waiting on it ends with an ERROR. Its newest reading stays for POLL; the
    /// rest starts afresh when it is adopted again.
    /// - Parameter device: The device's name.
    /// - Returns: The ERRORs.
    mutating func remove(_ device: String) -> Outcome {
        var outcome = Outcome()
        if let held = grab, held.device.nodeName == device {
            // The grab went with the device's descriptor; the holder is told.
            grab = nil
            outcome.send(GrabMessage(device: device, grabbed: false, ended: GrabMessage.Ending.deviceGone.rawValue).line, to: held.client)
            outcome.effects.append(.releaseGrab(held.device))
        }
        for id in clients.keys.sorted() {
            guard let pending = clients[id]!.pendingCalibration, pending.device == device else { continue }
            clients[id]!.pendingCalibration = nil
            outcome.send(RequestError(
                message: "\(device) went away before the weight settled: nothing was stored", request: pending.request).line, to: id)
        }
        return outcome
    }

    /// A reading or PEAK arrived from `device`.
    /// - Parameters:
    ///   - output: The pipeline's output.
    ///   - device: The device it came from.
    /// - Returns: The line for the clients watching that device (a READING may be dropped
    ///   for a slow client, a PEAK never), then, for a reading steady for the sensor
    ///   throughout its window with something on the pad, the points of the CALIBRATE requests that waited for its
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
        let name = device.nodeName
        // One lookup of the device's state per output; its index stays valid while only
        // values change.
        let index: [String: DeviceState].Index
        if let found = devices.index(forKey: name) {
            index = found
        } else {
            devices[name] = DeviceState()
            index = devices.index(forKey: name)!
        }
        let watchers = devices.values[index].watchers ?? watchers(of: device, at: index)
        if !watchers.isEmpty {
            // A slow client may miss READINGs, never a PEAK.
            var droppable = false
            if case .reading = output { droppable = true }
            outcome.lines.append(Line(bytes: output.lineBytes(device: name), to: watchers, droppable: droppable))
        }
        guard case .reading(let reading) = output else { return }
        devices.values[index].lastReading = reading
        let lifted = devices.values[index].touches.count(reading)
        if let drift = reading.drift {
            logDrift(drift.gramsPerSecond, on: name, at: index, into: &outcome)
        } else if reading.stable || lifted {
            devices.values[index].driftLogged = false
        }
        guard reading.steadyThroughout || lifted else { return }
        let waiting = devices.values[index].awaitingCalibration ?? clients.filter { $0.value.pendingCalibration?.device == name }.keys.sorted()
        devices.values[index].awaitingCalibration = waiting
        if waiting.isEmpty { return }
        if lifted {
            refuseLiftedCalibrations(of: waiting, on: name, into: &outcome)
        } else if reading.contacts > 0 {
            completeCalibrations(of: waiting, with: reading, from: device, into: &outcome)
        }
    }

    /// Says in the log, once until the weight stops or is lifted, that the weight a CALIBRATE
    /// waits for is drifting: no point is taken while it moves.
    private mutating func logDrift(_ gramsPerSecond: Double, on device: String, at index: [String: DeviceState].Index, into outcome: inout Outcome) {
        guard !devices.values[index].driftLogged else { return }
        let waiting = devices.values[index].awaitingCalibration ?? clients.filter { $0.value.pendingCalibration?.device == device }.keys.sorted()
        devices.values[index].awaitingCalibration = waiting
        guard !waiting.isEmpty else { return }
        devices.values[index].driftLogged = true
        outcome.effects.append(.log(.info, "\(device): the weight is drifting \(MassUnit.sentence(grams: gramsPerSecond))/s: no calibration point is taken while it moves"))
    }

    /// Ends the CALIBRATE requests whose touch was just lifted before it was steady: nothing
    /// is stored, and the client is told to place the weight again.
    private mutating func refuseLiftedCalibrations(of waiting: [Int], on device: String, into outcome: inout Outcome) {
        let touch = devices[device]!.touches.current
        for id in waiting {
            guard let pending = clients[id]!.pendingCalibration, pending.touch == touch else { continue }
            clients[id]!.pendingCalibration = nil
            outcome.send(RequestError(
                message: "\(CalibrateMessage.liftedBeforeSettling): nothing was stored; put the \(MassUnit.sentence(grams: pending.grams)) weight on again, keep it still and ask again",
                request: pending.request).line, to: id)
        }
    }

    /// The clients watching `device`, whose state is at `index`, worked out and kept until
    /// the clients change.
    private mutating func watchers(of device: SourceDevice, at index: [String: DeviceState].Index) -> [Int] {
        let ids = clients.filter { $0.value.watches(device) }.keys.sorted()
        devices.values[index].watchers = ids
        return ids
    }

    /// Adds a point for every client waiting with a known weight for this touch, in the
    /// order they connected; each is saved and confirmed on its own, as if asked one after
    /// the other. The point is the reading's settled pressure: the mean of every frame of a
    /// stability window that the pipeline judged steady for the sensor throughout (every
    /// frame after the touch was first steady, so none of the landing), with their standard
    /// deviation and count. Whether a point can be taken never depends on the grams of the
    /// curve it builds. A client that only measures gets the point back and the curve is
    /// left alone.
    private mutating func completeCalibrations(of waiting: [Int], with reading: Reading, from device: SourceDevice, into outcome: inout Outcome) {
        // A device without a usable pressure axis gives no points; the requests keep waiting.
        guard let axis = try? PressureSource.select(for: device.description).axis else { return }
        // A steady reading is stable and carries its window; without one, keep waiting.
        guard let settled = reading.settled else { return }
        let name = device.nodeName
        let touch = devices[name]!.touches.current
        for id in waiting {
            guard let pending = clients[id]!.pendingCalibration, pending.touch == touch else { continue }
            clients[id]!.pendingCalibration = nil
            let point = CalibrationPoint(
                raw: settled.mean, grams: pending.grams, spread: settled.standardDeviation, count: settled.count)
            guard pending.add else {
                outcome.send(CalibrateMessage(point: point, points: devices[name]!.calibration.points.count, device: name, added: false).line, to: id)
                continue
            }
            do throws(CalibrationError) {
                try devices[name]!.calibration.add(point, axisMinimum: axis.minimum)
            } catch {
                outcome.send(RequestError(message: "calibration point refused: \(error)", request: pending.request).line, to: id)
                continue
            }
            let calibration = devices[name]!.calibration
            keep(calibration, for: device, confirming: id, pending.request, reply: CalibrateMessage(point: point, points: calibration.points.count, device: name).line, into: &outcome)
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
