/// The daemon's lines other than READING and PEAK (those are ``ProtocolMessage``): the
/// VERSION greeting, the reply to each ``ClientRequest``, and ERROR. Each function returns
/// one line, newline included, with keys in the order docs/protocol.md gives and fields
/// without a value left out.
public enum DaemonMessage {
    /// Raised when a change would break existing clients.
    public static let protocolMajor = 1
    /// Raised when classes or fields are added; clients ignore what they do not know.
    public static let protocolMinor = 0
    /// Decimals of calibration points (raw averages and known weights) and CALIBRATE's reply.
    public static let calibrationDecimals = 2
    /// Decimals of STATUS's uptime: milliseconds.
    public static let uptimeDecimals = 3

    /// `{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":0}`, sent on connect.
    public static func version(release: String) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "VERSION")
        json.add("release", string: release)
        json.add("proto_major", integer: protocolMajor)
        json.add("proto_minor", integer: protocolMinor)
        return json.line
    }

    /// `{"class":"ERROR","message":…,"request":…}`; `request` only when the class was known.
    public static func error(_ error: RequestError) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "ERROR")
        json.add("message", string: error.message)
        json.add("request", string: error.requestClass)
        return json.line
    }

    /// An ERROR for a failure while serving a valid request (the device is gone, no rumble
    /// device): `{"class":"ERROR","message":"no rumble device","request":"RUMBLE"}`.
    public static func error(_ message: String, request: ClientRequest? = nil) -> String {
        error(RequestError(message: message, requestClass: request?.className))
    }

    /// `{"class":"WATCH","enable":true,"device":"event5"}`
    /// - Parameters:
    ///   - enable: Whether the client now receives READING and PEAK lines.
    ///   - device: The device it watches, when it asked for one.
    public static func watch(enable: Bool, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "WATCH")
        json.add("enable", bool: enable)
        json.add("device", string: device)
        return json.line
    }

    /// `{"class":"POLL","time":…,"reading":{"class":"READING",…}}`
    /// - Parameters:
    ///   - time: The daemon's time when it answered, in the clock of the event times;
    ///     left out when `nil`.
    ///   - reading: The newest reading, exactly as its READING line but without the
    ///     newline; left out when there has been none.
    ///   - device: The `device` of the embedded reading.
    public static func poll(time: EventTime? = nil, reading: Reading?, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "POLL")
        json.add("time", literal: time?.description)
        json.add("reading", literal: reading.map { readingObject($0, device: device) })
        return json.line
    }

    /// `{"class":"DEVICES","devices":[{"path":…,"name":…,"id":…,"kind":…,"active":…,…}]}`
    public static func devices(_ devices: [DeviceSummary]) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "DEVICES")
        json.add("devices", objects: devices.map(\.json))
        return json.line
    }

    /// `{"class":"STATUS","release":…,"uptime":…,"clients":…,"device":…,"model":…,
    /// "calibration":{"points":…,"tare":…},"rumble":…,"dropped":…}`
    public static func status(_ status: StatusSnapshot) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "STATUS")
        json.add("release", string: status.release)
        json.add("uptime", number: status.uptimeSeconds, decimals: uptimeDecimals)
        json.add("clients", integer: status.clients)
        json.add("device", string: status.device)
        json.add("model", string: status.model?.rawValue)
        json.add("calibration", object: status.calibration.map { calibration in
            var summary = JSONLineWriter()
            summary.add("points", integer: calibration.points.count)
            summary.add("tare", number: calibration.tareGrams, decimals: ProtocolMessage.gramDecimals)
            return summary
        })
        json.add("rumble", string: status.rumble)
        json.add("dropped", integer: status.dropped)
        json.add("log", object: status.log.map { log in
            var summary = JSONLineWriter()
            summary.add("path", string: log.path)
            summary.add("written", integer: log.written)
            summary.add("pending", integer: log.pending)
            summary.add("dropped", integer: log.dropped)
            summary.add("error", string: log.error)
            return summary
        })
        return json.line
    }

    /// `{"class":"TARE","device":…,"grams":…}`
    /// - Parameters:
    ///   - grams: The tare offset now stored, subtracted from every reading.
    ///   - device: The device whose tare it is.
    public static func tare(grams: Double, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "TARE")
        json.add("device", string: device)
        json.add("grams", number: grams, decimals: ProtocolMessage.gramDecimals)
        return json.line
    }

    /// `{"class":"CALIBRATE","device":…,"grams":…,"raw":…,"points":…}`
    /// - Parameters:
    ///   - point: The point added: the known weight and the stable raw pressure it gave.
    ///   - points: How many points the curve has now.
    ///   - device: The device calibrated.
    public static func calibrate(_ point: CalibrationPoint, points: Int, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "CALIBRATE")
        json.add("device", string: device)
        json.add("grams", number: point.grams, decimals: calibrationDecimals)
        json.add("raw", number: point.raw, decimals: calibrationDecimals)
        json.add("points", integer: points)
        return json.line
    }

    /// `{"class":"CALIBRATION","device":…,"points":N,"curve":[{"raw":…,"grams":…}],"tare":…}`,
    /// the same shape whether or not the request reset the calibration (after a reset:
    /// `"points":0,"curve":[],"tare":0.0`).
    public static func calibration(_ calibration: Calibration, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "CALIBRATION")
        json.add("device", string: device)
        json.add("points", integer: calibration.points.count)
        json.add("curve", objects: calibration.points.map { point in
            var entry = JSONLineWriter()
            entry.add("raw", number: point.raw, decimals: calibrationDecimals)
            entry.add("grams", number: point.grams, decimals: calibrationDecimals)
            return entry
        })
        json.add("tare", number: calibration.tareGrams, decimals: ProtocolMessage.gramDecimals)
        return json.line
    }

    /// `{"class":"RUMBLE","pattern":"success"}`, once the pattern has started playing.
    public static func rumble(pattern: HapticPattern) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "RUMBLE")
        json.add("pattern", string: pattern.name)
        return json.line
    }

    /// `{"axis":"ABS_MT_PRESSURE","min":…,"max":…,"fuzz":…,"resolution":…}`, as DEVICES and
    /// `forcescale devices --json` describe a pressure axis.
    public static func pressureAxis(_ code: EventCode, _ range: AxisRange) -> JSONLineWriter {
        var entry = JSONLineWriter()
        entry.add("axis", string: code.absoluteAxisName)
        entry.add("min", integer: Int(range.minimum))
        entry.add("max", integer: Int(range.maximum))
        entry.add("fuzz", integer: Int(range.fuzz))
        entry.add("resolution", integer: Int(range.resolution))
        return entry
    }

    /// A READING as an object to nest (POLL's `reading`): its line without the newline, so
    /// the two can never differ.
    public static func readingObject(_ reading: Reading, device: String? = nil) -> String {
        var line = ProtocolMessage.reading(reading, device: device)
        if line.last == "\n" { line.removeLast() }
        return line
    }
}

/// What STATUS reports, filled in by the daemon.
public struct StatusSnapshot: Hashable, Sendable {
    /// The daemon's release, as in VERSION.
    public var release: String
    /// Seconds since the daemon started (monotonic clock).
    public var uptimeSeconds: Double
    /// Connected clients, the one asking included.
    public var clients: Int
    /// The device being read, by its node name as in READING (`event5`); `nil` when none.
    public var device: String?
    /// The gram model of that device's readings.
    public var model: GramModelKind?
    /// That device's calibration; `nil` when no device is open.
    public var calibration: Calibration?
    /// The event node that plays rumbles (`/dev/input/event7`); `nil` when there is none.
    public var rumble: String?
    /// Lines discarded since the daemon started because a client did not read them in time.
    public var dropped: Int
    /// The force log's state; `nil` when logging is off.
    public var log: LogStatusSnapshot?

    public init(
        release: String, uptimeSeconds: Double, clients: Int, device: String? = nil,
        model: GramModelKind? = nil, calibration: Calibration? = nil, rumble: String? = nil, dropped: Int = 0,
        log: LogStatusSnapshot? = nil
    ) {
        self.release = release
        self.uptimeSeconds = uptimeSeconds
        self.clients = clients
        self.device = device
        self.model = model
        self.calibration = calibration
        self.rumble = rumble
        self.dropped = dropped
        self.log = log
    }
}

/// The force log in STATUS.
public struct LogStatusSnapshot: Hashable, Sendable {
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

    public init(path: String, written: Int, pending: Int, dropped: Int, error: String? = nil) {
        self.path = path
        self.written = written
        self.pending = pending
        self.dropped = dropped
        self.error = error
    }
}

/// One entry of DEVICES, filled in by the daemon. The fields follow `forcescale devices
/// --json`.
public struct DeviceSummary: Hashable, Sendable {
    /// A pressure axis as DEVICES lists it.
    public struct Axis: Hashable, Sendable {
        public var code: EventCode
        public var range: AxisRange

        public init(code: EventCode, range: AxisRange) {
            self.code = code
            self.range = range
        }
    }

    /// The event node, `/dev/input/event5`.
    public var path: String
    /// The device's name; `nil` when it could not be opened.
    public var name: String?
    /// Bus, vendor and product.
    public var identity: DeviceIdentity?
    public var kind: DeviceKind?
    /// Whether this is the device the daemon reads.
    public var active: Bool
    /// The pressure axes it declares, `ABS_MT_PRESSURE` first.
    public var pressureAxes: [Axis]?
    /// Whether it can be used as a scale.
    public var canWeigh: Bool?
    /// Whether it can play rumble effects; `nil` when unknown.
    public var canRumble: Bool?
    /// Why it could not be opened.
    public var error: String?

    public init(
        path: String, name: String? = nil, identity: DeviceIdentity? = nil, kind: DeviceKind? = nil,
        active: Bool, pressureAxes: [Axis]? = nil, canWeigh: Bool? = nil, canRumble: Bool? = nil,
        error: String? = nil
    ) {
        self.path = path
        self.name = name
        self.identity = identity
        self.kind = kind
        self.active = active
        self.pressureAxes = pressureAxes
        self.canWeigh = canWeigh
        self.canRumble = canRumble
        self.error = error
    }

    /// The entry for a device that was opened.
    /// - Parameters:
    ///   - path: Its event node.
    ///   - description: What it declares.
    ///   - active: Whether the daemon reads it.
    ///   - canRumble: Whether it can play rumble effects, when known.
    public init(path: String, description: DeviceDescription, active: Bool, canRumble: Bool? = nil) {
        self.init(
            path: path, name: description.name, identity: description.identity, kind: description.kind,
            active: active, pressureAxes: description.pressureAxes.map { Axis(code: $0.code, range: $0.range) },
            canWeigh: description.canWeigh, canRumble: canRumble)
    }

    /// The entry for a device that could not be opened.
    public init(path: String, error: String) {
        self.init(path: path, active: false, error: error)
    }

    /// `{"path":…,"name":…,"id":…,"kind":…,"active":…,"pressure":[…],"canWeigh":…,"canRumble":…,"error":…}`
    var json: JSONLineWriter {
        var json = JSONLineWriter()
        json.add("path", string: path)
        json.add("name", string: name)
        json.add("id", string: identity?.description)
        json.add("kind", string: kind?.rawValue)
        json.add("active", bool: active)
        json.add("pressure", objects: pressureAxes?.map { DaemonMessage.pressureAxis($0.code, $0.range) })
        json.add("canWeigh", bool: canWeigh)
        json.add("canRumble", bool: canRumble)
        json.add("error", string: error)
        return json
    }
}
