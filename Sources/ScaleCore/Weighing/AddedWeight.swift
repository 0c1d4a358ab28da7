/// Weighing what is added to a resting contact, within one touch: the way people weigh on a
/// capacitive pad, which senses pressure only while something conductive touches it (a
/// finger, a coin, a metal lid). The contact's steady weight is taken as zero (the daemon's
/// tare is not touched), then the object is added, and the difference of the two steady
/// windows is the weight added. Each window is a whole stability window of readings that
/// were all stable, so that the tail of a landing is never averaged in.
///
/// Fed with the READING lines a client receives; it reads no clock (times are the
/// readings'), so a replay tests it exactly.
public struct AddedWeight: Sendable {
    /// Where the measurement is.
    public enum Step: Hashable, Sendable {
        /// Waiting for a contact to rest steadily on the pad.
        case waitingForContact
        /// The contact's weight is the zero; waiting for the object to be added and settle.
        case waitingForObject(zero: Window)
        /// Done: what was added.
        case weighed(Result)
        /// The contact was lifted after the zero was taken: nothing can be weighed.
        case lifted
    }

    /// The readings of a stable window: their mean grams, standard deviation and count.
    public struct Window: Hashable, Sendable {
        public var mean: Double
        public var standardDeviation: Double
        public var count: Int
        /// Whether a reading of the window was saturated: its mean is then a lower bound.
        public var saturated: Bool = false
        /// The standard error of the mean, at least half a tenth of a gram (the readings'
        /// rounding) over the square root of the count.
        public var standardError: Double {
            Swift.max(standardDeviation, 0.05) / Double(Swift.max(count, 1)).squareRoot()
        }
    }

    /// The weight added, with its uncertainty.
    public struct Result: Hashable, Sendable {
        /// The contact alone.
        public var zero: Window
        /// The contact with the object.
        public var total: Window
        /// `total.mean − zero.mean`.
        public var added: Double { total.mean - zero.mean }
        /// Whether the contact with the object saturated the pad: `added` is then a lower
        /// bound, the object weighs at least that.
        public var saturated: Bool { total.saturated }
        /// Twice the standard error of the difference of the two windows' means, with the
        /// calibration's uncertainty (if any) added in quadrature: about 19 times in 20 the
        /// truth is within it.
        public var uncertainty: Double
    }

    /// The stability window in microseconds (the daemon's `stable-ms`).
    public let window: Int64
    /// The calibration's uncertainty in grams, when the grams are calibrated.
    public let calibrationUncertainty: Double?
    public private(set) var step: Step = .waitingForContact
    private var samples: [(time: Int64, grams: Double, saturated: Bool)] = []
    /// Whether a reading that was not stable came after the zero, other than a steady
    /// drift: the object landing (a jump), not a resting contact creeping.
    private var movedSinceZero = false
    private var zeroTime: Int64 = 0
    /// The time of the first reading of the current run of stable readings. A window is
    /// taken once it holds stable readings only, so that no tail of a landing is in it.
    private var stableSince: Int64?

    /// A measurement that has seen nothing yet.
    /// - Parameters:
    ///   - window: The stability window in microseconds.
    ///   - calibrationUncertainty: The calibration's uncertainty, for calibrated grams.
    public init(window: Int64 = ScaleSettings().stabilityWindow, calibrationUncertainty: Double? = nil) {
        self.window = window
        self.calibrationUncertainty = calibrationUncertainty
    }

    /// Takes one reading.
    /// - Parameters:
    ///   - time: Its event time in microseconds.
    ///   - grams: Its grams.
    ///   - contacts: Its contacts; 0 is a release.
    ///   - stable: Whether the daemon called it stable.
    ///   - saturated: Whether it was saturated (its grams a lower bound).
    ///   - drifting: Whether it carried a drift: the contact moving steadily, which is not
    ///     an object landing.
    /// - Returns: The step after it.
    @discardableResult
    public mutating func add(time: Int64, grams: Double, contacts: Int, stable: Bool, saturated: Bool = false, drifting: Bool = false) -> Step {
        switch step {
        case .weighed, .lifted:
            return step
        case .waitingForContact:
            guard contacts > 0 else {
                samples.removeAll()
                stableSince = nil
                return step
            }
            remember(time: time, grams: grams, stable: stable, saturated: saturated)
            if settledForAWindow(at: time), let zero = statistics() {
                step = .waitingForObject(zero: zero)
                zeroTime = time
            }
        case .waitingForObject(let zero):
            guard contacts > 0 else {
                step = .lifted
                return step
            }
            remember(time: time, grams: grams, stable: stable, saturated: saturated)
            if !stable, !drifting { movedSinceZero = true }
            // The window lies wholly after the zero, so that no reading counts twice.
            guard settledForAWindow(at: time), time - window >= zeroTime, let total = statistics() else { return step }
            let standardError = (zero.standardError * zero.standardError + total.standardError * total.standardError).squareRoot()
            // Something was added: the readings moved (an object landing is never stable) and
            // settled clearly away from the zero, not where a resting contact drifts to.
            // A saturated total is taken as it is: the readings can move no further.
            guard movedSinceZero, abs(total.mean - zero.mean) > 3 * standardError || total.saturated else { return step }
            let difference = 2 * standardError
            let calibration = calibrationUncertainty ?? 0
            step = .weighed(Result(zero: zero, total: total, uncertainty: (difference * difference + calibration * calibration).squareRoot()))
        }
        return step
    }

    private mutating func remember(time: Int64, grams: Double, stable: Bool, saturated: Bool) {
        if !stable {
            stableSince = nil
        } else if stableSince == nil {
            stableSince = time
        }
        samples.append((time, grams, saturated))
        if let first = samples.firstIndex(where: { $0.time >= time - window }), first > 0 { samples.removeFirst(first) }
    }

    /// Whether every reading of the window ending at `time` was stable.
    private func settledForAWindow(at time: Int64) -> Bool {
        guard let stableSince else { return false }
        return time - stableSince >= window
    }

    private func statistics() -> Window? {
        guard !samples.isEmpty else { return nil }
        let mean = samples.reduce(0) { $0 + $1.grams } / Double(samples.count)
        let squares = samples.reduce(0) { $0 + ($1.grams - mean) * ($1.grams - mean) }
        let deviation = samples.count > 1 ? (squares / Double(samples.count - 1)).squareRoot() : 0
        return Window(mean: mean, standardDeviation: deviation, count: samples.count, saturated: samples.contains { $0.saturated })
    }
}
