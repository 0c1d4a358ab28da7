import ScaleCore

// The daemon's lines as values, and requests as lines: the one place in ScaleClient that
// knows the protocol's field names. It reads `JSONValue` as the CLI does today; when
// ScaleCore has typed decoders for every daemon message, they replace the bodies below and
// the public types stay as they are.

/// A line of the stream that WATCH starts.
public enum StreamEvent: Hashable, Sendable {
    /// A READING: the measurement, and the node it came from (`event5`; `nil` for replays).
    case reading(Reading, device: String?)
    /// A PEAK: the frame that reached the peak threshold. The line carries its time, raw
    /// pressure and grams, and no force (the threshold is the daemon's setting).
    case peak(time: EventTime, raw: Int32, grams: Double, device: String?)
}

/// What STATUS says about the daemon.
public struct DaemonStatus: Hashable, Sendable {
    /// The daemon's release, as `forcescaled --version` prints it.
    public var release: String
    public var uptimeSeconds: Double
    /// Connected clients, this one included.
    public var clients: Int
    /// The node being read (`event5`); `nil` while no device is open.
    public var device: String?
    public var model: GramModelKind?
    /// Calibration points of the open device; `nil` when STATUS has no calibration.
    public var calibrationPoints: Int?
    /// The tare offset of the open device, in grams; `nil` when STATUS has no calibration.
    public var tareGrams: Double?
    /// The device that rumbles on a PEAK.
    public var rumble: String?
    /// Readings dropped for clients that read too slowly.
    public var dropped: Int
    /// The force log, when it is on.
    public var log: LogStatusSnapshot?

    public init(
        release: String, uptimeSeconds: Double, clients: Int, device: String? = nil, model: GramModelKind? = nil,
        calibrationPoints: Int? = nil, tareGrams: Double? = nil, rumble: String? = nil, dropped: Int = 0,
        log: LogStatusSnapshot? = nil
    ) {
        self.release = release
        self.uptimeSeconds = uptimeSeconds
        self.clients = clients
        self.device = device
        self.model = model
        self.calibrationPoints = calibrationPoints
        self.tareGrams = tareGrams
        self.rumble = rumble
        self.dropped = dropped
        self.log = log
    }
}

/// What TARE stored.
public struct TareResult: Hashable, Sendable {
    /// The tare offset now subtracted from every reading.
    public var grams: Double
    /// The device tared.
    public var device: String?

    public init(grams: Double, device: String? = nil) {
        self.grams = grams
        self.device = device
    }
}

/// The point CALIBRATE added.
public struct CalibrationResult: Hashable, Sendable {
    /// The known weight and the stable raw pressure it gave.
    public var point: CalibrationPoint
    /// How many points the device's curve has now.
    public var points: Int
    /// The device calibrated.
    public var device: String?

    public init(point: CalibrationPoint, points: Int, device: String? = nil) {
        self.point = point
        self.points = points
        self.device = device
    }
}

/// Reading the daemon's lines into values; each returns `nil` when a field the protocol
/// requires is missing or of the wrong type (fields a newer daemon adds are ignored).
enum ClientMessages {
    /// A READING or PEAK line as a stream event; `nil` for any other line.
    static func streamEvent(_ json: JSONValue) -> StreamEvent? {
        let device = json["device"]?.stringValue
        switch json["class"]?.stringValue {
        case "READING":
            guard let time = json["time"]?.numberValue.flatMap(eventTime), let raw = integer(json["raw"]).flatMap(Int32.init(exactly:)),
                  let force = json["force"]?.numberValue, let grams = json["grams"]?.numberValue,
                  let saturated = json["saturated"]?.boolValue, let contacts = integer(json["contacts"]),
                  let stable = json["stable"]?.boolValue,
                  let model = json["model"]?.stringValue.flatMap(GramModelKind.init(rawValue:))
            else { return nil }
            let reading = Reading(time: time, raw: raw, force: force, grams: grams, saturated: saturated,
                                  contacts: contacts, stable: stable, model: model)
            return .reading(reading, device: device)
        case "PEAK":
            guard let time = json["time"]?.numberValue.flatMap(eventTime), let raw = integer(json["raw"]).flatMap(Int32.init(exactly:)),
                  let grams = json["grams"]?.numberValue else { return nil }
            return .peak(time: time, raw: raw, grams: grams, device: device)
        default:
            return nil
        }
    }

    static func status(_ json: JSONValue) -> DaemonStatus? {
        guard let release = json["release"]?.stringValue, let uptime = json["uptime"]?.numberValue,
              let clients = integer(json["clients"]), let dropped = integer(json["dropped"]) else { return nil }
        let log = json["log"].flatMap { log -> LogStatusSnapshot? in
            guard let path = log["path"]?.stringValue, let written = integer(log["written"]),
                  let pending = integer(log["pending"]), let lost = integer(log["dropped"]) else { return nil }
            return LogStatusSnapshot(path: path, written: written, pending: pending, dropped: lost, error: log["error"]?.stringValue)
        }
        return DaemonStatus(
            release: release, uptimeSeconds: uptime, clients: clients, device: json["device"]?.stringValue,
            model: json["model"]?.stringValue.flatMap(GramModelKind.init(rawValue:)),
            calibrationPoints: integer(json["calibration"]?["points"]), tareGrams: json["calibration"]?["tare"]?.numberValue,
            rumble: json["rumble"]?.stringValue, dropped: dropped, log: log)
    }

    static func devices(_ json: JSONValue) -> [DeviceSummary]? {
        guard let entries = json["devices"]?.arrayValue else { return nil }
        var devices: [DeviceSummary] = []
        for entry in entries {
            guard let path = entry["path"]?.stringValue, let active = entry["active"]?.boolValue else { return nil }
            let axes = entry["pressure"]?.arrayValue?.compactMap { axis -> DeviceSummary.Axis? in
                guard let code = axis["axis"]?.stringValue.flatMap(absoluteAxis),
                      let minimum = integer(axis["min"]).flatMap(Int32.init(exactly:)),
                      let maximum = integer(axis["max"]).flatMap(Int32.init(exactly:)) else { return nil }
                let fuzz = integer(axis["fuzz"]).flatMap(Int32.init(exactly:)) ?? 0
                let resolution = integer(axis["resolution"]).flatMap(Int32.init(exactly:)) ?? 0
                return DeviceSummary.Axis(code: code, range: AxisRange(minimum: minimum, maximum: maximum, fuzz: fuzz, resolution: resolution))
            }
            devices.append(DeviceSummary(
                path: path, name: entry["name"]?.stringValue, identity: entry["id"]?.stringValue.flatMap(identity),
                kind: entry["kind"]?.stringValue.flatMap(DeviceKind.init(rawValue:)), active: active, pressureAxes: axes,
                canWeigh: entry["canWeigh"]?.boolValue, canRumble: entry["canRumble"]?.boolValue, error: entry["error"]?.stringValue))
        }
        return devices
    }

    static func tare(_ json: JSONValue) -> TareResult? {
        guard let grams = json["grams"]?.numberValue else { return nil }
        return TareResult(grams: grams, device: json["device"]?.stringValue)
    }

    static func calibrate(_ json: JSONValue) -> CalibrationResult? {
        guard let grams = json["grams"]?.numberValue, let raw = json["raw"]?.numberValue, let points = integer(json["points"]) else { return nil }
        return CalibrationResult(point: CalibrationPoint(raw: raw, grams: grams), points: points, device: json["device"]?.stringValue)
    }

    /// The request as the line the daemon reads (docs/protocol.md), without its newline.
    static func line(for request: ClientRequest) -> String {
        var json = JSONLineWriter()
        json.add("class", string: request.className)
        switch request {
        case .watch(let enable, let device):
            json.add("enable", bool: enable)
            json.add("device", string: device)
        case .calibrate(let grams):
            // Shortest form that reads back as the same number, as the calibration file does.
            json.add("grams", literal: grams.description)
        case .calibration(let reset):
            json.add("reset", bool: reset)
        case .rumble(let pattern):
            json.add("pattern", string: pattern.name)
        case .poll, .devices, .status, .tare:
            break
        }
        var line = json.line
        if line.last == "\n" { line.removeLast() }
        return line
    }

    // MARK: Fields

    /// A number that is a whole integer, as the protocol's integer fields are.
    private static func integer(_ value: JSONValue?) -> Int? {
        guard let number = value?.numberValue, number == number.rounded(), number.magnitude < 9e15 else { return nil }
        return Int(number)
    }

    /// Protocol seconds with six decimals as an event time.
    private static func eventTime(_ seconds: Double) -> EventTime? {
        guard seconds.isFinite, seconds.magnitude < 9e12 else { return nil }
        return EventTime(microseconds: Int64((seconds * 1_000_000).rounded()))
    }

    /// `0003:056a:00b9`; the version is not in the line, so it reads as 0.
    private static func identity(_ text: String) -> DeviceIdentity? {
        let parts = text.split(separator: ":").compactMap { UInt16($0, radix: 16) }
        guard parts.count == 3 else { return nil }
        return DeviceIdentity(bus: parts[0], vendor: parts[1], product: parts[2], version: 0)
    }

    /// `ABS_MT_PRESSURE` back to its code, by the names `EventCode.absoluteAxisName` writes.
    private static func absoluteAxis(_ name: String) -> EventCode? {
        if name.hasPrefix("ABS_0x") { return UInt16(name.dropFirst(6), radix: 16).map(EventCode.init(rawValue:)) }
        let known: [EventCode] = [.absX, .absY, .absPressure, .absMTSlot, .absMTPositionX, .absMTPositionY, .absMTTrackingID, .absMTPressure]
        return known.first { $0.absoluteAxisName == name }
    }
}
