import ScaleCore

/// The reply to STATUS: what the daemon is doing. The daemon fills it in and a client
/// decodes the same type.
public struct StatusMessage: DaemonLineMessage {
    public static let className = "STATUS"

    /// STATUS's `calibration`: the size of the curve, the tare, and the fitted curve's
    /// family and uncertainty.
    public struct CalibrationSummary: Hashable, Sendable {
        /// Points in the curve.
        public var points: Int
        /// The tare offset, to 0.1 g.
        public var tare: Double
        /// The fitted curve's family by name; `nil` without points.
        public var model: String?
        /// The uncertainty of a reading, to 0.1 g; `nil` when none can be given.
        public var uncertainty: Double?

        /// The summary.
        /// - Parameters:
        ///   - points: Points in the curve.
        ///   - tare: The tare offset, rounded here to 0.1 g.
        ///   - model: The fitted family's name.
        ///   - uncertainty: The uncertainty in grams, rounded here to 0.1 g.
        public init(points: Int, tare: Double, model: String? = nil, uncertainty: Double? = nil) {
            self.points = points
            self.tare = JSONLineWriter.round(tare, decimals: ProtocolDecimals.grams)
            self.model = model
            self.uncertainty = uncertainty.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
        }

        /// The summary of a device's calibration.
        /// - Parameters:
        ///   - calibration: The curve and tare.
        ///   - fit: The curve fitted to its points, if any.
        public init(_ calibration: Calibration, fit: CalibrationFit? = nil) {
            self.init(points: calibration.points.count, tare: calibration.tareGrams, model: fit?.model.family.rawValue, uncertainty: fit?.uncertainty)
        }

        init(fields summary: MessageFields) throws(ProtocolDecodeError) {
            self.init(
                points: try summary.integer("points"), tare: try summary.number("tare"), model: try summary.optionalString("model"),
                uncertainty: try summary.optionalNumber("uncertainty"))
        }

        /// `{"points":…,"tare":…,"model":…,"uncertainty":…}`
        var json: JSONLineWriter {
            var summary = JSONLineWriter()
            summary.add("points", integer: points)
            summary.add("tare", number: tare, decimals: ProtocolDecimals.grams)
            summary.add("model", string: model)
            summary.add("uncertainty", number: uncertainty, decimals: ProtocolDecimals.grams)
            return summary
        }
    }

    /// STATUS's `log`: the force log's state.
    public struct LogSummary: Hashable, Sendable {
        /// The database file.
        public var path: String
        /// Readings and PEAKs committed since the daemon started.
        public var written: Int
        /// Entries waiting to be written.
        public var pending: Int
        /// Entries dropped since the start because the disk could not keep up.
        public var dropped: Int
        /// The failure in progress; `nil` while writing works.
        public var error: String?

        /// The summary.
        /// - Parameters:
        ///   - path: The database file.
        ///   - written: Entries committed since the start.
        ///   - pending: Entries waiting for the writer.
        ///   - dropped: Entries lost since the start.
        ///   - error: The write failure in progress, if any.
        public init(path: String, written: Int, pending: Int, dropped: Int, error: String? = nil) {
            self.path = path
            self.written = written
            self.pending = pending
            self.dropped = dropped
            self.error = error
        }
    }

    /// One entry of STATUS's `devices` (since protocol 1.5): a device the daemon serves.
    public struct ServedDevice: Hashable, Sendable {
        /// Its name on the wire, as READING's `device` gives it (`event5`, `pen.evemu`).
        public var device: String
        /// The name the device gives itself.
        public var name: String
        /// The gram model of its readings, kept by name.
        public var model: GramModelName?
        /// Its calibration.
        public var calibration: CalibrationSummary
        /// The event node its PEAKs rumble through; `nil` when they cannot rumble.
        public var rumble: String?
        /// Since protocol 1.6: the pressure axis its force is read from and how, e.g.
        /// `ABS_MT_PRESSURE, the sum of the contacts`.
        public var pressure: String?
        /// Since protocol 1.6: how several contacts make its force (`primary`, `sum`, `max`).
        public var contacts: String?
        /// Since protocol 1.7: the most it can weigh, after tare, to 0.1 g: the gram model's
        /// value at the axis maximum. A reading there is saturated, its weight a lower bound.
        public var fullScale: Double?
        /// Since protocol 1.6: how its PEAKs are felt (`rumble`, `haptic click`, `haptic buzz`).
        public var feedback: String?
        /// Since protocol 1.6: why its PEAKs cannot be felt although rumble is on (for a pad
        /// that refuses every haptic waveform: no haptic on this pad).
        public var rumbleError: String?
        /// How often the kernel dropped its events (`SYN_DROPPED`) since it was opened.
        public var droppedEvents: Int

        /// An entry, field by field.
        /// - Parameters:
        ///   - device: Its name on the wire.
        ///   - name: The device's own name.
        ///   - model: Its gram model's name.
        ///   - calibration: Its calibration's summary.
        ///   - rumble: The node its PEAKs rumble through.
        ///   - pressure: Its pressure axis and how it is read.
        ///   - contacts: Its contact mode.
        ///   - fullScale: The most it can weigh, rounded here to 0.1 g.
        ///   - feedback: How its PEAKs are felt.
        ///   - rumbleError: Why they cannot be.
        ///   - droppedEvents: Its `SYN_DROPPED` count.
        public init(
            device: String, name: String, model: GramModelName?, calibration: CalibrationSummary, rumble: String?,
            pressure: String? = nil, contacts: String? = nil, fullScale: Double? = nil, feedback: String? = nil, rumbleError: String? = nil,
            droppedEvents: Int
        ) {
            self.fullScale = fullScale.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
            self.device = device
            self.name = name
            self.model = model
            self.calibration = calibration
            self.rumble = rumble
            self.pressure = pressure
            self.contacts = contacts
            self.feedback = feedback
            self.rumbleError = rumbleError
            self.droppedEvents = droppedEvents
        }

        init(fields: MessageFields) throws(ProtocolDecodeError) {
            self.init(
                device: try fields.string("device"), name: try fields.string("name"),
                model: try fields.optionalString("model").map(GramModelName.init(rawValue:)),
                calibration: try CalibrationSummary(fields: try fields.object("calibration")),
                rumble: try fields.optionalString("rumble"), pressure: try fields.optionalString("pressure"),
                contacts: try fields.optionalString("contacts"), fullScale: try fields.optionalNumber("full_scale"),
                feedback: try fields.optionalString("feedback"),
                rumbleError: try fields.optionalString("rumble_error"), droppedEvents: try fields.integer("dropped_events"))
        }

        /// `{"device":…,"name":…,"model":…,"calibration":{…},"rumble":…,"pressure":…,"contacts":…,"full_scale":…,"feedback":…,"rumble_error":…,"dropped_events":…}`
        public var json: JSONLineWriter {
            var json = JSONLineWriter()
            json.add("device", string: device)
            json.add("name", string: name)
            json.add("model", string: model?.rawValue)
            json.add("calibration", object: calibration.json)
            json.add("rumble", string: rumble)
            json.add("pressure", string: pressure)
            json.add("contacts", string: contacts)
            json.add("full_scale", number: fullScale, decimals: ProtocolDecimals.grams)
            json.add("feedback", string: feedback)
            json.add("rumble_error", string: rumbleError)
            json.add("dropped_events", integer: droppedEvents)
            return json
        }
    }

    /// The daemon's release, as in VERSION.
    public var release: String
    /// Seconds since the daemon started (monotonic clock), to the millisecond.
    public var uptime: Double
    /// Connected clients, the one asking included.
    public var clients: Int
    /// The device being read, by its node name as in READING (`event5`); `nil` when none, or
    /// when several are served (``devices`` then lists each).
    public var device: String?
    /// The gram model of that device's readings, kept by name.
    public var model: GramModelName?
    /// That device's calibration; `nil` when no device is open.
    public var calibration: CalibrationSummary?
    /// The event node that plays rumbles (`/dev/input/event7`); `nil` when there is none.
    public var rumble: String?
    /// Lines discarded since the daemon started because a client did not read them in time.
    public var dropped: Int
    /// The force log's state; `nil` when logging is off.
    public var log: LogSummary?
    /// The PEAK rumbles since the start; `nil` before the first was played or failed.
    public var rumbles: RumbleSummary?
    /// Since protocol 1.5: every device served, one entry each (empty when none is); `nil`
    /// from an older daemon.
    public var devices: [ServedDevice]?

    /// The reply, field by field as its line holds them.
    /// - Parameters:
    ///   - release: The daemon's release.
    ///   - uptime: Seconds since the start, rounded here to the millisecond.
    ///   - clients: Connected clients.
    ///   - device: The device being read.
    ///   - model: Its gram model's name.
    ///   - calibration: Its calibration's size and tare.
    ///   - rumble: The rumble device.
    ///   - dropped: Stream lines discarded for slow clients.
    ///   - log: The force log's state.
    ///   - rumbles: The PEAK rumbles' counts and latencies.
    ///   - devices: Every device served.
    public init(
        release: String, uptime: Double, clients: Int, device: String? = nil, model: GramModelName? = nil,
        calibration: CalibrationSummary? = nil, rumble: String? = nil, dropped: Int = 0, log: LogSummary? = nil,
        rumbles: RumbleSummary? = nil, devices: [ServedDevice]? = nil
    ) {
        self.release = release
        self.uptime = JSONLineWriter.round(uptime, decimals: ProtocolDecimals.uptime)
        self.clients = clients
        self.device = device
        self.model = model
        self.calibration = calibration
        self.rumble = rumble
        self.dropped = dropped
        self.log = log
        self.rumbles = rumbles
        self.devices = devices
    }

    /// The reply from the daemon's own state.
    /// - Parameters:
    ///   - release: The daemon's release.
    ///   - uptimeSeconds: Seconds since the start.
    ///   - clients: Connected clients.
    ///   - device: The device being read.
    ///   - model: Its gram model.
    ///   - calibration: Its calibration.
    ///   - fit: The curve fitted to the calibration's points, if any.
    ///   - rumble: The rumble device.
    ///   - dropped: Stream lines discarded for slow clients.
    ///   - log: The force log's state.
    ///   - rumbles: The PEAK rumbles since the start.
    ///   - devices: Every device served.
    public init(
        release: String, uptimeSeconds: Double, clients: Int, device: String? = nil,
        model: GramModelKind? = nil, calibration: Calibration? = nil, fit: CalibrationFit? = nil, rumble: String? = nil, dropped: Int = 0,
        log: LogSummary? = nil, rumbles: RumbleStatistics = RumbleStatistics(), devices: [ServedDevice]? = nil
    ) {
        self.init(
            release: release, uptime: uptimeSeconds, clients: clients, device: device, model: model.map(GramModelName.init),
            calibration: calibration.map { CalibrationSummary($0, fit: fit) }, rumble: rumble, dropped: dropped, log: log,
            rumbles: RumbleSummary(rumbles), devices: devices)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        var calibration: CalibrationSummary?
        if let summary = try fields.optionalObject("calibration") { calibration = try CalibrationSummary(fields: summary) }
        var devices: [ServedDevice]?
        if let entries = try fields.optionalObjects("devices") {
            devices = []
            for entry in entries { devices!.append(try ServedDevice(fields: entry)) }
        }
        var log: LogSummary?
        if let summary = try fields.optionalObject("log") {
            log = LogSummary(
                path: try summary.string("path"), written: try summary.integer("written"),
                pending: try summary.integer("pending"), dropped: try summary.integer("dropped"),
                error: try summary.optionalString("error"))
        }
        self.init(
            release: try fields.string("release"), uptime: try fields.number("uptime"), clients: try fields.integer("clients"),
            device: try fields.optionalString("device"), model: try fields.optionalString("model").map(GramModelName.init(rawValue:)),
            calibration: calibration, rumble: try fields.optionalString("rumble"), dropped: try fields.integer("dropped"),
            log: log, rumbles: try fields.optionalObject("rumbles").map { fields throws(ProtocolDecodeError) in try RumbleSummary(fields: fields) },
            devices: devices)
    }

    /// `{"class":"STATUS","release":…,"uptime":…,"clients":…,"device":…,"model":…,
    /// "calibration":{"points":…,"tare":…},"rumble":…,"dropped":…,"log":{…},"rumbles":{…},"devices":[…]}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("release", string: release)
        json.add("uptime", number: uptime, decimals: ProtocolDecimals.uptime)
        json.add("clients", integer: clients)
        json.add("device", string: device)
        json.add("model", string: model?.rawValue)
        json.add("calibration", object: calibration?.json)
        json.add("rumble", string: rumble)
        json.add("dropped", integer: dropped)
        json.add("log", object: log.map { log in
            var summary = JSONLineWriter()
            summary.add("path", string: log.path)
            summary.add("written", integer: log.written)
            summary.add("pending", integer: log.pending)
            summary.add("dropped", integer: log.dropped)
            summary.add("error", string: log.error)
            return summary
        })
        json.add("rumbles", object: rumbles?.json)
        json.add("devices", objects: devices?.map(\.json))
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .status(let message) = line else { return nil }
        self = message
    }
}
