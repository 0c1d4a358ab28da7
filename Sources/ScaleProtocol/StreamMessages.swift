import ScaleCore

/// A READING line (docs/protocol.md, "READING"): what the daemon writes for each reading
/// and what a client reads back, one type for both so that the two can never disagree.
///
/// The initialisers keep each number at the precision the line carries (force to 4
/// decimals, grams to 0.1 g, time to the microsecond), so a decoded line equals the message
/// it was written from.
public struct ReadingMessage: DaemonLineMessage {
    public static let className = "READING"

    /// The evdev node's name (`event5`); `nil` for replays.
    public var device: String?
    public var time: EventTime
    /// Pressure in device units.
    public var raw: Int32
    /// Normalised force, 0…1, to 4 decimals.
    public var force: Double
    /// Weight after tare, to 0.1 g; always grams.
    public var grams: Double
    public var saturated: Bool
    /// Active contacts; 0 marks a release.
    public var contacts: Int
    public var stable: Bool
    /// The model that produced the grams, kept by name even when this build does not know it.
    public var model: GramModelName
    /// The heaviest calibration weight, to 0.1 g, when the reading presses past it (its grams
    /// are then an extrapolation); `nil` inside the calibrated range. Since protocol 1.2.
    public var beyondCalibration: Double?
    /// The weight of the stability window's mean pressure, to 0.1 g, on a stable reading:
    /// what a scale shows for a resting weight, without the noise of a single frame; `nil`
    /// while not stable. Since protocol 1.3.
    public var settledGrams: Double?
    /// The reading's trend in grams per second, to 0.1 g/s (negative when falling), while
    /// the weight moves steadily; `nil` otherwise (a reading with one is never stable).
    /// Since protocol 1.8.
    public var drift: Double?

    /// A reading as its line holds it.
    /// - Parameters:
    ///   - device: The evdev node's name; `nil` leaves the field out.
    ///   - time: The event time.
    ///   - raw: Pressure in device units.
    ///   - force: Normalised force, rounded here to 4 decimals.
    ///   - grams: Weight after tare, rounded here to 0.1 g.
    ///   - saturated: Whether raw reached the axis maximum.
    ///   - contacts: Active contacts.
    ///   - stable: Whether the weight has settled.
    ///   - model: The gram model's name.
    ///   - beyondCalibration: The heaviest calibration weight when the reading is past it,
    ///     rounded here to 0.1 g; `nil` leaves the field out.
    ///   - settledGrams: The weight of the stable window's mean pressure, rounded here to
    ///     0.1 g; `nil` leaves the field out.
    ///   - drift: The trend in grams per second, rounded here to 0.1 g/s; `nil` leaves the
    ///     field out.
    public init(
        device: String? = nil, time: EventTime, raw: Int32, force: Double, grams: Double, saturated: Bool,
        contacts: Int, stable: Bool, model: GramModelName, beyondCalibration: Double? = nil, settledGrams: Double? = nil,
        drift: Double? = nil
    ) {
        self.device = device
        self.time = time
        self.raw = raw
        self.force = JSONLineWriter.round(force, decimals: ProtocolDecimals.force)
        self.grams = JSONLineWriter.round(grams, decimals: ProtocolDecimals.grams)
        self.saturated = saturated
        self.contacts = contacts
        self.stable = stable
        self.model = model
        self.beyondCalibration = beyondCalibration.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
        self.settledGrams = settledGrams.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
        self.drift = drift.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.grams) }
    }

    /// The line of a pipeline reading.
    /// - Parameters:
    ///   - reading: The reading.
    ///   - device: The evdev node's name; `nil` for replays.
    public init(_ reading: Reading, device: String? = nil) {
        self.init(
            device: device, time: reading.time, raw: reading.raw, force: reading.force, grams: reading.grams,
            saturated: reading.saturated, contacts: reading.contacts, stable: reading.stable, model: GramModelName(reading.model),
            beyondCalibration: reading.beyondCalibration, settledGrams: reading.settledGrams,
            drift: reading.drift?.gramsPerSecond)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            device: try fields.optionalString("device"), time: try fields.time("time"), raw: try fields.integer32("raw"),
            force: try fields.number("force"), grams: try fields.number("grams"), saturated: try fields.bool("saturated"),
            contacts: try fields.integer("contacts"), stable: try fields.bool("stable"),
            model: GramModelName(rawValue: try fields.string("model")),
            beyondCalibration: try fields.optionalNumber("beyond_calibration"),
            settledGrams: try fields.optionalNumber("settled_grams"), drift: try fields.optionalNumber("drift"))
    }

    /// Whether this is the weight of something resting on the pad: settled, and touching.
    public var isSettledWeight: Bool { stable && contacts > 0 }

    /// The grams to show for this reading: the settled weight while stable (a daemon before
    /// protocol 1.3 sends none, and then the frame's grams stand in), the frame's otherwise.
    public var shownGrams: Double { settledGrams ?? grams }

    /// `{"class":"READING","device":…,"time":…,"raw":…,"force":…,"grams":…,"saturated":…,
    /// "contacts":…,"stable":…,"model":…,"beyond_calibration":…,"settled_grams":…,"drift":…}`, as an object to nest
    /// (POLL's `reading`).
    public var json: JSONLineWriter {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("time", time: time)
        json.add("raw", integer: Int(raw))
        json.add("force", number: force, decimals: ProtocolDecimals.force)
        json.add("grams", number: grams, decimals: ProtocolDecimals.grams)
        json.add("saturated", bool: saturated)
        json.add("contacts", integer: contacts)
        json.add("stable", bool: stable)
        json.add("model", string: model.rawValue)
        json.add("beyond_calibration", number: beyondCalibration, decimals: ProtocolDecimals.grams)
        json.add("settled_grams", number: settledGrams, decimals: ProtocolDecimals.grams)
        json.add("drift", number: drift, decimals: ProtocolDecimals.grams)
        return json
    }

    /// "beyond the heaviest calibration weight, 70 g" when the reading is past it.
    public var beyondCalibrationText: String? {
        beyondCalibration.map(Self.beyondCalibrationText)
    }

    /// "beyond the heaviest calibration weight, 70 g": how every client says that a reading
    /// is an extrapolation past the heaviest weight.
    public static func beyondCalibrationText(heaviest: Double) -> String {
        "beyond the heaviest calibration weight, \(MassUnit.sentence(grams: heaviest))"
    }

    /// "at least 384.8 g (saturated)": how every client says the weight of a saturated
    /// reading. The sensor was at the top of its range, so the object weighs at least that
    /// and maybe far more: the number is a lower bound, never a weight.
    /// - Parameter weight: The weight as the client writes it, with its unit (`384.8 g`).
    public static func lowerBoundText(_ weight: String) -> String {
        "at least \(weight) (saturated)"
    }

    public var line: String { json.line }

    public init?(_ line: DaemonLine) {
        guard case .reading(let message) = line else { return nil }
        self = message
    }
}

/// A PEAK line (docs/protocol.md, "PEAK"): the frame that reached the peak threshold.
public struct PeakMessage: DaemonLineMessage {
    public static let className = "PEAK"

    /// The evdev node's name; `nil` for replays.
    public var device: String?
    public var time: EventTime
    public var raw: Int32
    /// The frame's weight, to 0.1 g.
    public var grams: Double
    /// What became of the rumble it cued, by name (`played`, `failed`, `unavailable`, `off`,
    /// or a later daemon's); `nil` where none is tried (replays). Since protocol 1.4.
    public var rumble: String?
    /// With `played`: seconds from the frame's event time to the play accepted, to the
    /// microsecond.
    public var rumbleLatency: Double?
    /// With `failed`: the errno of the play's `write`.
    public var rumbleErrno: Int?

    /// A peak as its line holds it.
    /// - Parameters:
    ///   - device: The evdev node's name; `nil` leaves the field out.
    ///   - time: The event time of the frame.
    ///   - raw: That frame's pressure.
    ///   - grams: That frame's weight, rounded here to 0.1 g.
    ///   - rumble: What became of its rumble; `nil` leaves the rumble fields out.
    public init(device: String? = nil, time: EventTime, raw: Int32, grams: Double, rumble: RumbleOutcome? = nil) {
        self.device = device
        self.time = time
        self.raw = raw
        self.grams = JSONLineWriter.round(grams, decimals: ProtocolDecimals.grams)
        self.rumble = rumble?.name
        rumbleLatency = rumble?.latencySeconds
        rumbleErrno = rumble?.errno.map(Int.init)
    }

    /// The line of a pipeline peak (its force is not sent: a PEAK is the threshold reached).
    /// - Parameters:
    ///   - peak: The peak.
    ///   - device: The evdev node's name; `nil` for replays.
    public init(_ peak: Peak, device: String? = nil) {
        self.init(device: device, time: peak.time, raw: peak.raw, grams: peak.grams, rumble: peak.rumble)
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        self.init(
            device: try fields.optionalString("device"), time: try fields.time("time"), raw: try fields.integer32("raw"),
            grams: try fields.number("grams"))
        rumble = try fields.optionalString("rumble")
        rumbleLatency = try fields.optionalNumber("rumble_latency")
        rumbleErrno = try fields.optionalInteger("rumble_errno")
    }

    /// The rumble's outcome, when the line names one this build knows.
    public var rumbleOutcome: RumbleOutcome? {
        rumble.flatMap { name in
            RumbleOutcome(
                name: name, latencyMicroseconds: rumbleLatency.map { Int64(($0 * 1e6).rounded()) },
                errno: rumbleErrno.map { Int32(truncatingIfNeeded: $0) })
        }
    }

    /// `{"class":"PEAK","device":…,"time":…,"raw":…,"grams":…,"rumble":…,"rumble_latency":…,
    /// "rumble_errno":…}`
    public var json: JSONLineWriter {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("device", string: device)
        json.add("time", time: time)
        json.add("raw", integer: Int(raw))
        json.add("grams", number: grams, decimals: ProtocolDecimals.grams)
        json.add("rumble", string: rumble)
        json.add("rumble_latency", number: rumbleLatency, decimals: ProtocolDecimals.rumbleLatency)
        json.add("rumble_errno", integer: rumbleErrno)
        return json
    }

    public var line: String { json.line }

    public init?(_ line: DaemonLine) {
        guard case .peak(let message) = line else { return nil }
        self = message
    }
}

extension ScaleOutput {
    /// The output's READING or PEAK line, newline included, appended to `bytes` as UTF-8:
    /// for output that is bytes anyway (``OutputChannel``), with no `String` made of it.
    /// - Parameter device: The evdev node's name; left out when `nil` (replays).
    public func appendLine(device: String? = nil, to bytes: inout [UInt8]) {
        json(device: device).appendLine(to: &bytes)
    }

    /// The output's READING or PEAK line, newline included, as UTF-8 in an array of its own:
    /// for a line that goes to clients' sockets (the daemon's), with no `String` made of it.
    /// - Parameter device: The evdev node's name; left out when `nil` (replays).
    public func lineBytes(device: String? = nil) -> [UInt8] {
        json(device: device).lineBytes()
    }

    private func json(device: String?) -> JSONLineWriter {
        switch self {
        case .reading(let value): ReadingMessage(value, device: device).json
        case .peak(let value): PeakMessage(value, device: device).json
        }
    }
}
