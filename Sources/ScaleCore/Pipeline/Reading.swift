/// One measurement as clients see it.
public struct Reading: Hashable, Sendable {
    public var time: EventTime
    /// The frame's raw pressure.
    public var raw: Int32
    /// The frame's force, normalised to 0…1.
    public var force: Double
    /// The weight of the frame's pressure, after tare.
    public var grams: Double
    /// Raw pressure at or beyond the axis maximum ("100%+"); for a stable reading, in any
    /// frame of its stability window. Its grams are then a lower bound: the object weighs at
    /// least that, maybe far more.
    public var saturated: Bool
    public var contacts: Int
    /// The weight has settled: no trend over the horizon, and the window's raw pressure is
    /// steady for the sensor or its grams spread no more than `stable-grams`
    /// (``ScaleSettings/stabilitySpan``).
    public var stable: Bool
    public var model: GramModelKind
    /// The window's raw pressure is steady for the sensor alone (``SensorSteadiness``),
    /// whatever grams any curve gives. Not sent; implies `stable`.
    public var steady: Bool
    /// Steady, and every frame of the window came after the touch was first steady, so the
    /// window holds none of the landing: what a calibration point waits for. Not sent;
    /// implies `steady`.
    public var steadyThroughout: Bool
    /// The heaviest calibration weight, when this reading presses past it: its grams are
    /// then an extrapolation of the curve (``CalibrationFit/grams(raw:)``). `nil` inside the
    /// calibrated range and without a calibration.
    public var beyondCalibration: Double?
    /// The raw pressure of the stability window while the reading is stable: a resting
    /// weight's pressure with the noise of single frames averaged out, what a calibration
    /// point is. `nil` while not stable. Not sent.
    public var settled: SettledPressure?
    /// The weight of the settled pressure's mean, after tare: what a scale shows for a
    /// resting weight. `nil` while not stable.
    public var settledGrams: Double?
    /// The trend while the weight moves steadily (``SensorTrend``); `nil` otherwise. A
    /// reading with a drift is never stable.
    public var drift: Drift?

    public init(
        time: EventTime, raw: Int32, force: Double, grams: Double, saturated: Bool,
        contacts: Int, stable: Bool, model: GramModelKind, steady: Bool = false, steadyThroughout: Bool = false, beyondCalibration: Double? = nil,
        settled: SettledPressure? = nil, settledGrams: Double? = nil
    ) {
        self.time = time
        self.raw = raw
        self.force = force
        self.grams = grams
        self.saturated = saturated
        self.contacts = contacts
        self.stable = stable
        self.model = model
        self.steady = steady
        self.steadyThroughout = steadyThroughout
        self.beyondCalibration = beyondCalibration
        self.settled = settled
        self.settledGrams = settledGrams
    }

    /// Weighs the reading again by another gram model (a tare or a calibration changed
    /// since it was made), so that nothing derived from it (a held reading, a POLL, the
    /// next TARE) carries the weights of the model it replaced. A reading with nothing on
    /// the pad weighs nothing under any model.
    public mutating func reweigh(by model: GramModel) {
        guard contacts > 0 else { return }
        grams = model.grams(raw: raw, force: force)
        settledGrams = settled.map { model.grams(meanRaw: $0.mean) }
        drift = drift.map { Drift(rawPerSecond: $0.rawPerSecond, aroundRaw: $0.aroundRaw, model: model) }
        self.model = model.kind
        beyondCalibration = model.beyondCalibration(raw: Double(raw))
    }
}

/// How fast a weight that has not stopped moves: its trend in raw units and in grams.
public struct Drift: Hashable, Sendable {
    /// Raw units per second, negative when falling.
    public var rawPerSecond: Double
    /// The raw pressure it moves through: the mean of the stability window.
    public var aroundRaw: Double
    /// Grams per second by the gram model, negative when falling.
    public var gramsPerSecond: Double

    /// A drift weighed by a gram model: the grams of a second's movement centred on the
    /// window's mean pressure.
    /// - Parameters:
    ///   - rawPerSecond: The trend in raw units per second.
    ///   - aroundRaw: The window's mean raw pressure.
    ///   - model: The gram model in force.
    public init(rawPerSecond: Double, aroundRaw: Double, model: GramModel) {
        self.rawPerSecond = rawPerSecond
        self.aroundRaw = aroundRaw
        gramsPerSecond = model.grams(meanRaw: aroundRaw + rawPerSecond / 2) - model.grams(meanRaw: aroundRaw - rawPerSecond / 2)
    }
}

/// The raw pressure of a stable window, every frame of it: what a resting weight presses.
public struct SettledPressure: Hashable, Sendable {
    /// The mean raw pressure.
    public var mean: Double
    /// The frames' sample standard deviation (0 with a single frame).
    public var standardDeviation: Double
    /// How many frames the window holds.
    public var count: Int

    public init(mean: Double, standardDeviation: Double, count: Int) {
        self.mean = mean
        self.standardDeviation = standardDeviation
        self.count = count
    }
}

/// The moment a press reached the peak threshold: the cue to rumble.
public struct Peak: Hashable, Sendable {
    public var time: EventTime
    public var raw: Int32
    public var force: Double
    public var grams: Double
    /// What became of the rumble this PEAK cued; `nil` where none is tried (replays).
    /// The pipeline leaves it `nil`; the live scale fills it in as it plays the rumble.
    public var rumble: RumbleOutcome?

    public init(time: EventTime, raw: Int32, force: Double, grams: Double, rumble: RumbleOutcome? = nil) {
        self.time = time
        self.raw = raw
        self.force = force
        self.grams = grams
        self.rumble = rumble
    }
}

/// What the pipeline emits, in order.
public enum ScaleOutput: Hashable, Sendable {
    case reading(Reading)
    case peak(Peak)
}
