/// The whole measuring pipeline of one device: events in; readings, peaks and the time it
/// next needs waking out. It never reads a clock: time is the events' own, so a replay and
/// a live run of the same events give the same output.
public struct ScalePipeline: Sendable {
    public let device: DeviceDescription
    public let settings: ScaleSettings
    public let source: PressureSource
    /// How the pressures of several contacts make the frame's: the settings' mode, else the
    /// device's default.
    public let contactMode: ContactMode
    public private(set) var gramModel: GramModel

    private let scale: ForceScale
    private var tracker: ContactTracker
    private var throttle: ReadingThrottle
    private var peaks: PeakDetector
    private var stability: StabilityDetector
    private var touching = false
    private var resynchronizing = false

    /// - Parameters:
    ///   - device: The device whose events will arrive.
    ///   - settings: Validated settings (`ScaleSettings.validate()`).
    ///   - calibration: The device's calibration and tare, if any.
    /// - Throws: `DeviceSetupError` when the device has no usable pressure axis.
    public init(device: DeviceDescription, settings: ScaleSettings = ScaleSettings(), calibration: Calibration = .none) throws(DeviceSetupError) {
        self.device = device
        self.settings = settings
        source = try PressureSource.select(for: device)
        scale = ForceScale(axis: source.axis)
        gramModel = GramModel(axis: source.axis, calibration: calibration, likely: .likely(for: device.kind))
        contactMode = settings.contactMode ?? .default(for: device)
        tracker = ContactTracker(source: source, mode: contactMode)
        throttle = ReadingThrottle(interval: settings.throttleInterval)
        peaks = PeakDetector(threshold: settings.peakThreshold, hysteresis: settings.peakHysteresis)
        stability = StabilityDetector(
            window: settings.stabilityWindow, fuzz: source.axis.fuzz, axisSpan: Int32(clamping: Int64(source.axis.maximum) - Int64(source.axis.minimum)))
    }

    /// When a held reading falls due; wake the pipeline then with `advance(to:)`.
    public var nextDeadline: EventTime? { throttle.deadline }

    /// Replaces the calibration (after a tare or a new point). Later frames use it, and so
    /// does a reading the throttle holds: it goes out after the change, so a client that
    /// tared must not see it weighed the old way.
    public mutating func setCalibration(_ calibration: Calibration) {
        let model = GramModel(axis: source.axis, calibration: calibration, likely: .likely(for: device.kind))
        gramModel = model
        throttle.reviseHeld { $0.reweigh(by: model) }
    }

    /// The kernel dropped events and libevdev is about to deliver the device's current state
    /// (up to a `SYN_REPORT`). That frame is taken as a fresh state: readings go on from it,
    /// but it cannot fire a PEAK (the crossing was not seen) and stability starts over.
    public mutating func beginResynchronization() {
        tracker.acceptResynchronizedState()
        resynchronizing = true
    }

    /// Takes one event and appends what it causes to `output`.
    public mutating func process(_ event: InputEvent, into output: inout [ScaleOutput]) {
        guard let frame = tracker.consume(event) else { return }
        advance(to: frame.time, into: &output)
        let isFreshState = resynchronizing
        resynchronizing = false
        if isFreshState { stability.reset() }
        if frame.contacts == 0 {
            _ = peaks.update(force: 0, touching: false)
            guard touching else { return }
            touching = false
            stability.reset()
            let zero = Reading(
                time: frame.time, raw: source.axis.minimum, force: 0, grams: 0, saturated: false,
                contacts: 0, stable: false, model: gramModel.kind)
            output.append(.reading(throttle.release(zero)))
            return
        }
        touching = true
        let force = scale.force(raw: frame.raw)
        let grams = gramModel.grams(raw: frame.raw, force: force)
        let window = stability.update(time: frame.time, raw: frame.raw)
        var reading = Reading(
            time: frame.time, raw: frame.raw, force: force, grams: grams,
            saturated: scale.isSaturated(raw: frame.raw), contacts: frame.contacts,
            stable: false, model: gramModel.kind, steady: window?.steady ?? false, steadyThroughout: window?.steadyThroughout ?? false,
            beyondCalibration: gramModel.beyondCalibration(raw: Double(frame.raw)))
        if let window, let drift = window.drift {
            reading.drift = Drift(rawPerSecond: drift, aroundRaw: window.pressure.mean, model: gramModel)
        } else if let window, isStable(window) {
            reading.stable = true
            reading.settled = window.pressure
            reading.settledGrams = gramModel.grams(meanRaw: window.pressure.mean)
            // A settled weight whose window touched the top of the range is a mean of
            // lower bounds: a lower bound itself.
            if scale.isSaturated(raw: window.highest) { reading.saturated = true }
        }
        if let now = throttle.offer(reading) { output.append(.reading(now)) }
        if isFreshState {
            peaks.resume(force: force, touching: true)
        } else if peaks.update(force: force, touching: true) {
            output.append(.peak(Peak(time: frame.time, raw: frame.raw, force: force, grams: grams)))
        }
    }

    /// Whether a window without a drift that has lasted long enough is stable: steady for
    /// the sensor, or spread over no more than `stable-grams` by the gram model in force (the
    /// model rises with raw pressure, so the window's grams span from its lowest raw to its
    /// highest).
    private func isStable(_ window: StabilityDetector.Window) -> Bool {
        if window.steady { return true }
        let low = gramModel.grams(raw: window.lowest, force: scale.force(raw: window.lowest))
        let high = gramModel.grams(raw: window.highest, force: scale.force(raw: window.highest))
        return high - low <= settings.stabilitySpan
    }

    /// Lets out the held reading if its window has ended by `time` (the live timer).
    public mutating func advance(to time: EventTime, into output: inout [ScaleOutput]) {
        if let due = throttle.due(at: time) { output.append(.reading(due)) }
    }

    /// The end of the input: the held reading goes out so the last value is never lost.
    public mutating func finish(into output: inout [ScaleOutput]) {
        if let held = throttle.drain() { output.append(.reading(held)) }
    }
}
