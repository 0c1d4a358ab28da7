// The daemon's greeting and its replies (docs/protocol.md, "Talking to the daemon"), other
// than STATUS and DEVICES, which have files of their own. Each type is both what the daemon
// writes and what a client decodes; its initialisers keep numbers at the line's precision.

/// The VERSION greeting, sent as soon as a client connects.
public struct VersionMessage: DaemonLineMessage {
    public static let className = "VERSION"

    /// The daemon's release, as `forcescaled --version` prints it.
    public var release: String
    /// `proto_major`: a client should refuse a major it does not know.
    public var protocolMajor: Int
    /// `proto_minor`: raised when classes or fields are added.
    public var protocolMinor: Int

    /// The greeting.
    /// - Parameters:
    ///   - release: The daemon's release.
    ///   - protocolMajor: The protocol's major version; this build's by default.
    ///   - protocolMinor: The protocol's minor version; this build's by default.
    public init(release: String, protocolMajor: Int = DaemonMessage.protocolMajor, protocolMinor: Int = DaemonMessage.protocolMinor) {
        self.release = release
        self.protocolMajor = protocolMajor
        self.protocolMinor = protocolMinor
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            release: try fields.string("release"), protocolMajor: try fields.integer("proto_major"),
            protocolMinor: try fields.integer("proto_minor"))
    }

    /// `{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":0}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("release", string: release)
        json.add("proto_major", integer: protocolMajor)
        json.add("proto_minor", integer: protocolMinor)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .version(let message) = line else { return nil }
        self = message
    }
}

/// The reply to WATCH.
public struct WatchMessage: DaemonLineMessage {
    public static let className = "WATCH"

    /// Whether the client now receives READING and PEAK lines.
    public var enable: Bool
    /// The device watched, when the request named one.
    public var device: String?

    /// The reply.
    /// - Parameters:
    ///   - enable: Whether the client now watches.
    ///   - device: The device it watches, when it asked for one.
    public init(enable: Bool, device: String? = nil) {
        self.enable = enable
        self.device = device
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(enable: try fields.bool("enable"), device: try fields.optionalString("device"))
    }

    /// `{"class":"WATCH","enable":true,"device":"event5"}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("enable", bool: enable)
        json.add("device", string: device)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .watch(let message) = line else { return nil }
        self = message
    }
}

/// The reply to POLL: the newest reading, and when the daemon answered.
public struct PollMessage: DaemonLineMessage {
    public static let className = "POLL"

    /// When the daemon answered, in the clock of the event times; `nil` leaves it out.
    public var time: EventTime?
    /// The newest reading, exactly as its READING line; `nil` before the first.
    public var reading: ReadingMessage?

    /// The reply.
    /// - Parameters:
    ///   - time: When the daemon answered, in the clock of the event times.
    ///   - reading: The newest reading.
    public init(time: EventTime? = nil, reading: ReadingMessage?) {
        self.time = time
        self.reading = reading
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        // The nested object is a READING line's object; its "class" is not checked, since
        // the field's name already says what it is.
        var reading: ReadingMessage?
        if let nested = try fields.optionalObject("reading") { reading = try ReadingMessage(fields: nested) }
        self.init(time: try fields.optionalTime("time"), reading: reading)
    }

    /// `{"class":"POLL","time":…,"reading":{"class":"READING",…}}`: the reading is written by
    /// ``ReadingMessage``, so it is its line without the newline.
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("time", literal: time?.description)
        json.add("reading", object: reading?.json)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .poll(let message) = line else { return nil }
        self = message
    }
}

/// The reply to TARE: the tare offset now stored.
public struct TareMessage: DaemonLineMessage {
    public static let className = "TARE"

    /// The device tared.
    public var device: String?
    /// The tare offset, to 0.1 g.
    public var grams: Double

    /// The reply.
    /// - Parameters:
    ///   - device: The device tared; `nil` leaves it out.
    ///   - grams: The tare offset, rounded here to 0.1 g.
    public init(device: String? = nil, grams: Double) {
        self.device = device
        self.grams = JSONLineWriter.round(grams, decimals: ProtocolMessage.gramDecimals)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(device: try fields.optionalString("device"), grams: try fields.number("grams"))
    }

    /// `{"class":"TARE","device":"event5","grams":31.5}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("grams", number: grams, decimals: ProtocolMessage.gramDecimals)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .tare(let message) = line else { return nil }
        self = message
    }
}

/// The reply to CALIBRATE: the point added to the curve.
public struct CalibrateMessage: DaemonLineMessage {
    public static let className = "CALIBRATE"

    /// The device calibrated.
    public var device: String?
    /// The known weight, to 0.01 g.
    public var grams: Double
    /// The stable raw pressure it gave, to 0.01.
    public var raw: Double
    /// Points in the curve now.
    public var points: Int

    /// The reply.
    /// - Parameters:
    ///   - device: The device calibrated; `nil` leaves it out.
    ///   - grams: The weight, rounded here to 0.01 g.
    ///   - raw: The raw pressure, rounded here to 0.01.
    ///   - points: Points in the curve now.
    public init(device: String? = nil, grams: Double, raw: Double, points: Int) {
        self.device = device
        self.grams = JSONLineWriter.round(grams, decimals: DaemonMessage.calibrationDecimals)
        self.raw = JSONLineWriter.round(raw, decimals: DaemonMessage.calibrationDecimals)
        self.points = points
    }

    /// The reply for a point added.
    /// - Parameters:
    ///   - point: The known weight and the stable raw pressure it gave.
    ///   - points: Points in the curve now.
    ///   - device: The device calibrated.
    public init(point: CalibrationPoint, points: Int, device: String? = nil) {
        self.init(device: device, grams: point.grams, raw: point.raw, points: points)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            device: try fields.optionalString("device"), grams: try fields.number("grams"), raw: try fields.number("raw"),
            points: try fields.integer("points"))
    }

    /// `{"class":"CALIBRATE","device":"event5","grams":100.0,"raw":152.37,"points":1}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("grams", number: grams, decimals: DaemonMessage.calibrationDecimals)
        json.add("raw", number: raw, decimals: DaemonMessage.calibrationDecimals)
        json.add("points", integer: points)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .calibrate(let message) = line else { return nil }
        self = message
    }
}

/// The reply to CALIBRATION, with or without a reset: the device's curve and tare.
public struct CalibrationMessage: DaemonLineMessage {
    public static let className = "CALIBRATION"

    /// The device whose calibration this is.
    public var device: String?
    /// How many points the curve has, as the line says (STATUS and CALIBRATE count the same).
    public var points: Int
    /// The points by rising raw pressure, each number to 0.01.
    public var curve: [CalibrationPoint]
    /// The tare offset, to 0.1 g.
    public var tare: Double

    /// The reply.
    /// - Parameters:
    ///   - device: The device; `nil` leaves it out.
    ///   - points: How many points the curve has.
    ///   - curve: The points, each rounded here to 0.01.
    ///   - tare: The tare offset, rounded here to 0.1 g.
    public init(device: String? = nil, points: Int, curve: [CalibrationPoint], tare: Double) {
        self.device = device
        self.points = points
        self.curve = curve.map {
            CalibrationPoint(
                raw: JSONLineWriter.round($0.raw, decimals: DaemonMessage.calibrationDecimals),
                grams: JSONLineWriter.round($0.grams, decimals: DaemonMessage.calibrationDecimals))
        }
        self.tare = JSONLineWriter.round(tare, decimals: ProtocolMessage.gramDecimals)
    }

    /// The reply for a device's calibration.
    /// - Parameters:
    ///   - calibration: The curve and tare.
    ///   - device: The device.
    public init(_ calibration: Calibration, device: String? = nil) {
        self.init(device: device, points: calibration.points.count, curve: calibration.points, tare: calibration.tareGrams)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        var curve: [CalibrationPoint] = []
        for point in try fields.objects("curve") {
            curve.append(CalibrationPoint(raw: try point.number("raw"), grams: try point.number("grams")))
        }
        self.init(
            device: try fields.optionalString("device"), points: try fields.integer("points"), curve: curve,
            tare: try fields.number("tare"))
    }

    /// `{"class":"CALIBRATION","device":…,"points":N,"curve":[{"raw":…,"grams":…}],"tare":…}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("points", integer: points)
        json.add("curve", objects: curve.map { point in
            var entry = JSONLineWriter()
            entry.add("raw", number: point.raw, decimals: DaemonMessage.calibrationDecimals)
            entry.add("grams", number: point.grams, decimals: DaemonMessage.calibrationDecimals)
            return entry
        })
        json.add("tare", number: tare, decimals: ProtocolMessage.gramDecimals)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .calibration(let message) = line else { return nil }
        self = message
    }
}

/// The reply to RUMBLE, once the pattern has started playing.
public struct RumbleMessage: DaemonLineMessage {
    public static let className = "RUMBLE"

    /// The pattern played, by name; kept as sent even when this build does not know it.
    public var pattern: String

    /// The reply.
    /// - Parameter pattern: The name of the pattern played.
    public init(pattern: String) {
        self.pattern = pattern
    }

    /// The reply for a pattern played.
    /// - Parameter pattern: The pattern.
    public init(pattern: HapticPattern) {
        self.init(pattern: pattern.name)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(pattern: try fields.string("pattern"))
    }

    /// The pattern, when this build knows its name.
    public var hapticPattern: HapticPattern? { HapticPattern.named(pattern) }

    /// `{"class":"RUMBLE","pattern":"success"}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("pattern", string: pattern)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .rumble(let message) = line else { return nil }
        self = message
    }
}

/// ERROR: the daemon sends a ``RequestError`` as this line, and a client reads it back as one.
extension RequestError: DaemonLineMessage {
    public static let className = "ERROR"

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(message: try fields.string("message"), requestClass: try fields.optionalString("request"))
    }

    /// `{"class":"ERROR","message":…,"request":…}`; `request` only when the class was known.
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("message", string: message)
        json.add("request", string: requestClass)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .error(let message) = line else { return nil }
        self = message
    }
}
