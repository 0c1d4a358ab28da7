import ScaleCore

// The daemon's greeting and its replies (docs/protocol.md, "Talking to the daemon"), other
// than STATUS and DEVICES, which have files of their own. Each type is both what the daemon
// writes and what a client decodes; its initialisers keep numbers at the line's precision.

/// The VERSION greeting, sent as soon as a client connects.
public struct VersionMessage: DaemonLineMessage {
    public static let className = "VERSION"
    /// The major version this build speaks: raised when a change would break existing clients.
    public static let currentMajor = 1
    /// The minor version this build speaks: raised when classes or fields are added; clients
    /// ignore what they do not know.
    public static let currentMinor = 8

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
    public init(release: String, protocolMajor: Int = VersionMessage.currentMajor, protocolMinor: Int = VersionMessage.currentMinor) {
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
    /// The newest reading, exactly as its READING line; `nil` before the first. Of the
    /// device the request named, or else of any device.
    public var reading: ReadingMessage?
    /// Since protocol 1.5, when the request named no device and several are served: the
    /// newest reading of each device that has read one, in the order DEVICES lists them.
    public var readings: [ReadingMessage]?

    /// The reply.
    /// - Parameters:
    ///   - time: When the daemon answered, in the clock of the event times.
    ///   - reading: The newest reading.
    ///   - readings: The newest reading of each device, when several are served.
    public init(time: EventTime? = nil, reading: ReadingMessage?, readings: [ReadingMessage]? = nil) {
        self.time = time
        self.reading = reading
        self.readings = readings
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        // The nested objects are READING lines' objects; their "class" is not checked, since
        // the field's name already says what they are.
        var reading: ReadingMessage?
        if let nested = try fields.optionalObject("reading") { reading = try ReadingMessage(fields: nested) }
        var readings: [ReadingMessage]?
        if let entries = try fields.optionalObjects("readings") {
            readings = []
            for entry in entries { readings!.append(try ReadingMessage(fields: entry)) }
        }
        self.init(time: try fields.optionalTime("time"), reading: reading, readings: readings)
    }

    /// `{"class":"POLL","time":…,"reading":{"class":"READING",…},"readings":[…]}`: each reading
    /// is written by ``ReadingMessage``, so it is its line without the newline.
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("time", time: time)
        json.add("reading", object: reading?.json)
        json.add("readings", objects: readings?.map(\.json))
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
        self.grams = JSONLineWriter.round(grams, decimals: ProtocolDecimals.grams)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(device: try fields.optionalString("device"), grams: try fields.number("grams"))
    }

    /// `{"class":"TARE","device":"event5","grams":31.5}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("grams", number: grams, decimals: ProtocolDecimals.grams)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .tare(let message) = line else { return nil }
        self = message
    }
}

/// The reply to CALIBRATE: the point added to the curve, or only measured.
public struct CalibrateMessage: DaemonLineMessage {
    public static let className = "CALIBRATE"
    /// How the ERROR that ends a CALIBRATE begins when its touch was lifted before it was
    /// steady (docs/protocol.md, CALIBRATE): clients may offer to try the weight again.
    public static let liftedBeforeSettling = "the weight was lifted before it settled"

    /// The device calibrated.
    public var device: String?
    /// The known weight, to 0.01 g.
    public var grams: Double
    /// The stable raw pressure it gave (the mean of the stability window), to 0.01.
    public var raw: Double
    /// Points in the curve now.
    public var points: Int
    /// The standard deviation of the raw readings averaged, to 0.01; `nil` leaves it out.
    public var spread: Double?
    /// How many readings were averaged; `nil` leaves it out.
    public var count: Int?
    /// `false` when the point was only measured (`"add":false`), not added; `nil` (left out)
    /// when it was added.
    public var added: Bool?

    /// The reply.
    /// - Parameters:
    ///   - device: The device calibrated; `nil` leaves it out.
    ///   - grams: The weight, rounded here to 0.01 g.
    ///   - raw: The raw pressure, rounded here to 0.01.
    ///   - points: Points in the curve now.
    ///   - spread: The raw readings' standard deviation, rounded here to 0.01.
    ///   - count: How many readings were averaged.
    ///   - added: `false` for a point only measured; `nil` for one added.
    public init(device: String? = nil, grams: Double, raw: Double, points: Int, spread: Double? = nil, count: Int? = nil, added: Bool? = nil) {
        self.device = device
        self.grams = JSONLineWriter.round(grams, decimals: ProtocolDecimals.calibration)
        self.raw = JSONLineWriter.round(raw, decimals: ProtocolDecimals.calibration)
        self.points = points
        self.spread = spread.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.calibration) }
        self.count = count
        self.added = added
    }

    /// The reply for a point added or measured.
    /// - Parameters:
    ///   - point: The known weight and the stable raw pressure it gave.
    ///   - points: Points in the curve now.
    ///   - device: The device calibrated.
    ///   - added: Whether the point was added to the curve (`false`: only measured).
    public init(point: CalibrationPoint, points: Int, device: String? = nil, added: Bool = true) {
        self.init(device: device, grams: point.grams, raw: point.raw, points: points, spread: point.spread, count: point.count, added: added ? nil : false)
    }

    /// The point as the reply gives it, with its spread and count.
    public var point: CalibrationPoint {
        CalibrationPoint(raw: raw, grams: grams, spread: spread, count: count)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            device: try fields.optionalString("device"), grams: try fields.number("grams"), raw: try fields.number("raw"),
            points: try fields.integer("points"), spread: try fields.optionalNumber("sd"), count: try fields.optionalInteger("n"),
            added: try fields.optionalBool("added"))
    }

    /// `{"class":"CALIBRATE","device":"event5","grams":100.0,"raw":152.37,"points":1,"sd":0.84,"n":48}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("grams", number: grams, decimals: ProtocolDecimals.calibration)
        json.add("raw", number: raw, decimals: ProtocolDecimals.calibration)
        json.add("points", integer: points)
        json.add("sd", number: spread, decimals: ProtocolDecimals.calibration)
        json.add("n", integer: count)
        json.add("added", bool: added)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .calibrate(let message) = line else { return nil }
        self = message
    }
}

/// The reply to CALIBRATION, with or without a reset: the device's curve and tare, and the
/// curve fitted to the points with how good it is.
public struct CalibrationMessage: DaemonLineMessage {
    public static let className = "CALIBRATION"

    /// How one point sits on the fitted curve, as the line gives it (each to 0.01 g).
    public struct PointFit: Hashable, Sendable {
        /// The known weight minus what the curve gives at the point's raw pressure.
        public var residual: Double?
        /// The known weight minus what the chosen family gives when fitted to the other
        /// points; `nil` when leave-one-out cannot judge it.
        public var leaveOneOut: Double?
        /// What the other points say the point weighs, when it disagrees with them.
        public var expected: Double?

        /// The summary.
        /// - Parameters:
        ///   - residual: The residual, rounded here to 0.01 g.
        ///   - leaveOneOut: The leave-one-out error, rounded here to 0.01 g.
        ///   - expected: What the others predict for a point that disagrees, rounded to 0.01 g.
        public init(residual: Double? = nil, leaveOneOut: Double? = nil, expected: Double? = nil) {
            self.residual = residual.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.calibration) }
            self.leaveOneOut = leaveOneOut.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.calibration) }
            self.expected = expected.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.calibration) }
        }
    }

    /// One named parameter of the fitted curve.
    public struct Parameter: Hashable, Sendable {
        /// `a`, `b` or `k`.
        public var name: String
        /// Its value in normalised pressure, to 6 decimals.
        public var value: Double

        /// The parameter.
        /// - Parameters:
        ///   - name: Its name.
        ///   - value: Its value, rounded here to 6 decimals.
        public init(name: String, value: Double) {
            self.name = name
            self.value = JSONLineWriter.round(value, decimals: ProtocolDecimals.parameters)
        }
    }

    /// The device whose calibration this is.
    public var device: String?
    /// How many points the curve has, as the line says (STATUS and CALIBRATE count the same).
    public var points: Int
    /// The points by rising raw pressure, each number to 0.01.
    public var curve: [CalibrationPoint]
    /// The tare offset, to 0.1 g.
    public var tare: Double
    /// For each point of ``curve``, in the same order, how it sits on the fitted curve;
    /// empty when the line has no fit.
    public var pointFits: [PointFit]
    /// The fitted curve's family by name (`power`); `nil` without points.
    public var model: String?
    /// The fitted curve's parameters in normalised pressure; empty for the interpolating
    /// families.
    public var parameters: [Parameter]
    /// The uncertainty of a reading in grams, to 0.1 g; `nil` when none can be given.
    public var uncertainty: Double?
    /// `true` when the reply only shows what a curve would be (`"preview":true`) and
    /// nothing was changed; `nil` (left out) otherwise.
    public var preview: Bool?

    /// The reply.
    /// - Parameters:
    ///   - device: The device; `nil` leaves it out.
    ///   - points: How many points the curve has.
    ///   - curve: The points, each rounded here to 0.01.
    ///   - tare: The tare offset, rounded here to 0.1 g.
    ///   - pointFits: How each point sits on the fit, in the order of `curve`.
    ///   - model: The fitted family's name.
    ///   - parameters: The fitted curve's parameters.
    ///   - uncertainty: The uncertainty in grams, rounded here to 0.1 g.
    ///   - preview: `true` for a preview that changed nothing.
    public init(
        device: String? = nil, points: Int, curve: [CalibrationPoint], tare: Double, pointFits: [PointFit] = [],
        model: String? = nil, parameters: [Parameter] = [], uncertainty: Double? = nil, preview: Bool? = nil
    ) {
        self.device = device
        self.points = points
        self.curve = curve.map {
            CalibrationPoint(
                raw: JSONLineWriter.round($0.raw, decimals: ProtocolDecimals.calibration),
                grams: JSONLineWriter.round($0.grams, decimals: ProtocolDecimals.calibration),
                spread: $0.spread.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.calibration) },
                count: $0.count)
        }
        self.tare = JSONLineWriter.round(tare, decimals: ProtocolDecimals.grams)
        self.pointFits = pointFits
        self.model = model
        self.parameters = parameters
        self.uncertainty = uncertainty.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
        self.preview = preview
    }

    /// The reply for a device's calibration.
    /// - Parameters:
    ///   - calibration: The curve and tare.
    ///   - fit: The curve fitted to its points, if it has any.
    ///   - device: The device.
    ///   - preview: `true` when the calibration is only shown, not in force.
    public init(_ calibration: Calibration, fit: CalibrationFit? = nil, device: String? = nil, preview: Bool = false) {
        self.init(
            device: device, points: calibration.points.count, curve: calibration.points, tare: calibration.tareGrams,
            pointFits: fit?.points.map { PointFit(residual: $0.residual, leaveOneOut: $0.leaveOneOut, expected: $0.expected) } ?? [],
            model: fit?.model.family.rawValue, parameters: fit?.model.parameters.map { Parameter(name: $0.name, value: $0.value) } ?? [],
            uncertainty: fit?.uncertainty, preview: preview ? true : nil)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        var curve: [CalibrationPoint] = []
        var pointFits: [PointFit] = []
        for point in try fields.objects("curve") {
            curve.append(CalibrationPoint(
                raw: try point.number("raw"), grams: try point.number("grams"), spread: try point.optionalNumber("sd"),
                count: try point.optionalInteger("n")))
            pointFits.append(PointFit(
                residual: try point.optionalNumber("residual"), leaveOneOut: try point.optionalNumber("loo"),
                expected: try point.optionalNumber("expected")))
        }
        // A line without any fit field (earlier daemons) has no fit, not a fit of nothing.
        if pointFits.allSatisfy({ $0 == PointFit() }) { pointFits = [] }
        var parameters: [Parameter] = []
        if let object = try fields.optionalObject("parameters") {
            for name in ["a", "b", "k"] {
                if let value = try object.optionalNumber(name) { parameters.append(Parameter(name: name, value: value)) }
            }
        }
        self.init(
            device: try fields.optionalString("device"), points: try fields.integer("points"), curve: curve,
            tare: try fields.number("tare"), pointFits: pointFits, model: try fields.optionalString("model"),
            parameters: parameters, uncertainty: try fields.optionalNumber("uncertainty"), preview: try fields.optionalBool("preview"))
    }

    /// `{"class":"CALIBRATION","device":…,"points":N,"curve":[{"raw":…,"grams":…,"sd":…,"n":…,
    /// "residual":…,"loo":…}],"tare":…,"model":…,"parameters":{…},"uncertainty":…}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("points", integer: points)
        json.add("curve", objects: curve.indices.map { index in
            let point = curve[index]
            let fit = index < pointFits.count ? pointFits[index] : PointFit()
            var entry = JSONLineWriter()
            entry.add("raw", number: point.raw, decimals: ProtocolDecimals.calibration)
            entry.add("grams", number: point.grams, decimals: ProtocolDecimals.calibration)
            entry.add("sd", number: point.spread, decimals: ProtocolDecimals.calibration)
            entry.add("n", integer: point.count)
            entry.add("residual", number: fit.residual, decimals: ProtocolDecimals.calibration)
            entry.add("loo", number: fit.leaveOneOut, decimals: ProtocolDecimals.calibration)
            entry.add("expected", number: fit.expected, decimals: ProtocolDecimals.calibration)
            return entry
        })
        json.add("tare", number: tare, decimals: ProtocolDecimals.grams)
        json.add("model", string: model)
        if !parameters.isEmpty {
            var object = JSONLineWriter()
            for parameter in parameters { object.add(name: parameter.name, number: parameter.value, decimals: ProtocolDecimals.parameters) }
            json.add("parameters", object: object)
        }
        json.add("uncertainty", number: uncertainty, decimals: ProtocolDecimals.grams)
        json.add("preview", bool: preview)
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

/// The reply to GRAB (since protocol 1.7), and the line that tells the client holding a grab
/// that it ended without being asked (its bound passed, the device went away).
public struct GrabMessage: DaemonLineMessage {
    public static let className = "GRAB"

    /// Why a grab ended without the client asking: the values of `ended`.
    public enum Ending: String, Sendable, CaseIterable {
        /// The grab's bound (its `seconds`) passed.
        case expired
        /// The device went away (unplugged, failed, or opened afresh): its grab went with it.
        case deviceGone = "device-gone"
    }

    /// The device taken or given back.
    public var device: String?
    /// Whether the client now holds the device.
    public var grabbed: Bool
    /// With `grabbed`: how long at most, in seconds, the daemon keeps it taken.
    public var seconds: Double?
    /// On the line that ends a grab unasked: why (`expired`, `device-gone`; a later daemon
    /// may add names, kept as sent).
    public var ended: String?

    /// The reply or notice.
    /// - Parameters:
    ///   - device: The device; `nil` leaves it out.
    ///   - grabbed: Whether it is held now.
    ///   - seconds: The bound of a grab taken, rounded here to 0.001 s.
    ///   - ended: Why a grab ended unasked.
    public init(device: String? = nil, grabbed: Bool, seconds: Double? = nil, ended: String? = nil) {
        self.device = device
        self.grabbed = grabbed
        self.seconds = seconds.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.uptime) }
        self.ended = ended
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            device: try fields.optionalString("device"), grabbed: try fields.bool("grabbed"),
            seconds: try fields.optionalNumber("seconds"), ended: try fields.optionalString("ended"))
    }

    /// `{"class":"GRAB","device":"event5","grabbed":true,"seconds":60.0}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("grabbed", bool: grabbed)
        json.add("seconds", number: seconds, decimals: ProtocolDecimals.uptime)
        json.add("ended", string: ended)
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .grab(let message) = line else { return nil }
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
