/// A known weight and what the pen made of it.
public struct WeightMeasurement: Hashable, Sendable {
    /// The weight in grams.
    public var grams: Double
    /// The touch it made; `nil` when it registered nothing (below the activation force).
    /// A touch without a pressing pressure registered only when pushed (below the activation
    /// force too) or was lifted before it rested (not measured).
    public var touch: PenTouch?

    public init(grams: Double, touch: PenTouch?) {
        self.grams = grams
        self.touch = touch
    }
}

/// Why a pen cannot be characterized from what was measured.
public enum PenCharacterizationError: Error, Hashable, Sendable, CustomStringConvertible {
    case tooFewWeights(Int)
    case notAWeight(Double)
    case moreTouchesThanWeights(touches: Int, weights: Int)
    case nothingRegistered(heaviest: Double)
    case tooFewRegistered(Int)
    case outOfOrder(heavier: Double, heavierRaw: Double, lighter: Double, lighterRaw: Double)
    case brokenAxis(ClosedRange<Int32>)

    public var description: String {
        switch self {
        case .tooFewWeights(let count):
            return "\(count) weight\(count == 1 ? "" : "s") given: a pen's curve needs at least 3 known weights"
        case .notAWeight(let grams):
            return "\(grams) is not a weight in grams greater than 0"
        case .moreTouchesThanWeights(let touches, let weights):
            return "the recording holds \(touches) touches that held steady for \(weights) weights: give one weight for each touch, in the order they were placed"
        case .nothingRegistered(let heaviest):
            return "none of the weights registered (the heaviest, \(PenNumbers.grams(heaviest)) g, included): the pen needs more force than that to activate; use heavier weights"
        case .tooFewRegistered(let count):
            return "only \(count) weight\(count == 1 ? "" : "s") below the pen's full scale registered: add weights between its activation and its full scale"
        case .outOfOrder(let heavier, let heavierRaw, let lighter, let lighterRaw):
            return "the \(PenNumbers.grams(heavier)) g weight read raw \(PenNumbers.raw(heavierRaw)), less than the \(PenNumbers.grams(lighter)) g weight's \(PenNumbers.raw(lighterRaw)): were the weights placed in the order given?"
        case .brokenAxis(let axis):
            return "the pressure axis \(axis.lowerBound)..\(axis.upperBound) has no range to measure on"
        }
    }
}

/// A pen's response to force, from known weights: its initial activation force (IAF), the
/// force at each tenth of its logical range (P00 … P100, as PenPressureData summarises pens),
/// its hysteresis and saturation, and the settings that make it respond linearly to force.
///
/// What it claims and how:
/// - **IAF**: a least-squares line through the lightest registered weights (up to three),
///   grams against logical pressure, taken to where the pen first reads 1 (half a unit above
///   0, before rounding). Its uncertainty is twice the intercept's standard error, or 2.5
///   times the distance to the parabola through the same three points where that is larger
///   (a curve bending near zero), or 40 % of the distance the line is taken past the lightest
///   weight, or the noise of the lightest window carried to grams, and never less than a
///   tenth of the gap to the next weight. The IAF cannot exceed the lightest weight that registered nor fall
///   below the heaviest that did not: the interval is cut to them, and the IAF given is the
///   middle of what is left.
///   With one registered weight only those bounds are known, and their middle is given.
/// - **P-values**: a monotone cubic through (0, IAF) and each weight below full scale. A
///   P-value is given only within the measured span, up to the logical pressure the
///   heaviest weight below full scale reached, and never extrapolated past it.
/// - **Hysteresis**: the largest difference at one weight between the pressing and the
///   releasing pressure, in % of the logical range; only when releases were measured.
public struct PenCharacterization: Hashable, Sendable {
    /// A weight that registered.
    public struct Point: Hashable, Sendable {
        public var grams: Double
        /// The mean raw pressure while pressing.
        public var raw: Double
        /// `raw` as a fraction of the logical range (0 at the axis minimum, 1 at its maximum).
        public var fraction: Double
        /// The standard deviation of the pressing window, in raw units.
        public var spread: Double
        /// The releasing pressure, when measured.
        public var releasingRaw: Double?
        public var releasingFraction: Double?
        /// Whether the weight reached the top of the range.
        public var saturated: Bool
    }

    /// The IAF with its uncertainty: the truth lies in `grams ± uncertainty` (about 95 in 100).
    public struct Activation: Hashable, Sendable {
        public var grams: Double
        public var uncertainty: Double
        /// The heaviest weight that registered nothing, when one was seen.
        public var heaviestUnregistered: Double?
        /// The lightest weight that registered.
        public var lightestRegistered: Double
    }

    public let axis: ClosedRange<Int32>
    /// The registered weights, lightest first.
    public let points: [Point]
    /// The weights that registered nothing at rest, lightest first.
    public let unregistered: [Double]
    /// The weights lifted before they rested: not measured, lightest first.
    public let unmeasured: [Double]
    public let activation: Activation
    /// The force in grams at 0 %, 10 % … 100 % of the logical range; `nil` past the reach.
    public let pValues: [Double?]
    /// The highest logical fraction a weight below full scale reached: P-values stop there.
    public let reach: Double
    /// The largest pressing/releasing difference at one weight, in % of the logical range.
    public let hysteresisPercent: Double?
    /// The lightest weight that reached the top of the range.
    public let saturationGrams: Double?
    /// The response: the logical fraction at a force above the IAF, interpolated between
    /// the weights in that direction (force → pressure, as the pen works: where the pen
    /// flattens, the fraction changes little between weights and is interpolated well; the
    /// force at a fraction is the inverse). Its `x` is grams above the IAF, its value (the
    /// curve's `grams`) the fraction; up to the heaviest weight below full scale.
    let response: MonotoneCubic
    /// Grams above the IAF of the heaviest weight below full scale (the response's end).
    let reachLift: Double

    /// Pairs the weights, in the order they were placed, with the touches of a recording.
    /// A weight that registered nothing made no touch: when there are fewer touches than
    /// weights, the lightest weights are the ones that did not register. When there are more,
    /// the touches that never rested (a weight at its activation force that registered
    /// during its landing only, then again when pushed) are dropped first, as the pieces of
    /// one placing they most likely are.
    /// - Throws: `PenCharacterizationError` when there are still more touches than weights.
    public static func pair(weights: [Double], touches: [PenTouch]) throws(PenCharacterizationError) -> [WeightMeasurement] {
        var touches = touches
        while touches.count > weights.count, let piece = touches.firstIndex(where: { $0.pressing == nil && !$0.pushedBeforeRest }) {
            touches.remove(at: piece)
        }
        guard touches.count <= weights.count else {
            throw .moreTouchesThanWeights(touches: touches.count, weights: weights.count)
        }
        let missing = weights.count - touches.count
        let unregistered = Set(weights.indices.sorted { (weights[$0], $0) < (weights[$1], $1) }.prefix(missing))
        var remaining = touches[...]
        return weights.indices.map { index in
            if unregistered.contains(index) { return WeightMeasurement(grams: weights[index], touch: nil) }
            return WeightMeasurement(grams: weights[index], touch: remaining.popFirst())
        }
    }

    /// Characterizes a pen.
    /// - Parameters:
    ///   - measurements: Each weight and its touch (or none), in any order.
    ///   - axis: The pressure axis's range.
    /// - Throws: `PenCharacterizationError` for fewer than 3 weights, a weight that is not
    ///   one, nothing registered, fewer than one weight below full scale, or a heavier weight
    ///   reading less than a lighter one by more than both windows' noise.
    public init(measurements: [WeightMeasurement], axis: ClosedRange<Int32>) throws(PenCharacterizationError) {
        guard axis.upperBound > axis.lowerBound else { throw .brokenAxis(axis) }
        guard measurements.count >= 3 else { throw .tooFewWeights(measurements.count) }
        if let bad = measurements.first(where: { !($0.grams > 0 && $0.grams.isFinite) }) { throw .notAWeight(bad.grams) }
        let span = Double(Int64(axis.upperBound) - Int64(axis.lowerBound))
        func fraction(_ raw: Double) -> Double { (raw - Double(axis.lowerBound)) / span }

        let sorted = measurements.sorted { $0.grams < $1.grams }
        let points = sorted.compactMap { measurement -> Point? in
            guard let touch = measurement.touch, let pressing = touch.pressing else { return nil }
            return Point(grams: measurement.grams, raw: pressing.mean, fraction: fraction(pressing.mean),
                         spread: pressing.standardDeviation,
                         releasingRaw: touch.releasing?.mean, releasingFraction: touch.releasing.map { fraction($0.mean) },
                         saturated: touch.saturated)
        }
        guard let lightest = points.first else { throw .nothingRegistered(heaviest: sorted.last!.grams) }
        // A heavier weight must not read less than a lighter one, beyond what both windows'
        // noise and a sensor's creep allow (2 % of the range: pens creep under a resting load).
        for (lighter, heavier) in zip(points, points.dropFirst()) where heavier.grams > lighter.grams {
            let allowed = Swift.max(0.02 * span, 3 * (lighter.spread + heavier.spread))
            if heavier.raw < lighter.raw - allowed {
                throw .outOfOrder(heavier: heavier.grams, heavierRaw: heavier.raw, lighter: lighter.grams, lighterRaw: lighter.raw)
            }
        }
        let unregistered = sorted.filter { $0.touch == nil || $0.touch!.pushedBeforeRest && $0.touch!.pressing == nil }.map(\.grams)
        let unmeasured = sorted.filter { $0.touch.map { $0.pressing == nil && !$0.pushedBeforeRest } ?? false }.map(\.grams)
        // A weight that did not register, heavier than one that did, contradicts the others:
        // it is left out of the bounds (the lighter ones that did register say more).
        let belowActivation = unregistered.filter { $0 < lightest.grams }

        let unsaturated = points.filter { !$0.saturated }
        guard !unsaturated.isEmpty else { throw .tooFewRegistered(0) }
        let activation = Self.activation(unsaturated, lowerBound: belowActivation.last, upperBound: lightest.grams, span: span)

        // The response: (grams above the IAF, fraction) strictly rising in both.
        var knots: [FitSample] = []
        for point in unsaturated {
            let lift = point.grams - activation.grams
            guard lift > (knots.last?.x ?? 0), point.fraction > (knots.last?.grams ?? 0) else { continue }
            knots.append(FitSample(x: lift, grams: point.fraction))
        }
        if knots.isEmpty {
            // Every weight below full scale sits at the IAF's estimate: a straight line to the first.
            knots = [FitSample(x: Swift.max(unsaturated[0].grams - activation.grams, 1e-6), grams: Swift.max(unsaturated[0].fraction, 1 / span))]
        }
        let response = MonotoneCubic(points: knots)
        let reach = knots.last!.grams
        let reachLift = knots.last!.x
        pValues = (0...10).map { tenth -> Double? in
            let x = Double(tenth) / 10
            guard x <= reach + 1e-12 else { return nil }
            return activation.grams + Self.lift(atFraction: x, response, reachLift: reachLift)
        }
        let differences = points.compactMap { point in point.releasingFraction.map { ($0 - point.fraction) * 100 } }
        hysteresisPercent = differences.map(\.magnitude).max()
        saturationGrams = points.first(where: \.saturated)?.grams
        self.axis = axis
        self.points = points
        self.unregistered = unregistered
        self.unmeasured = unmeasured
        self.activation = activation
        self.reach = reach
        self.response = response
        self.reachLift = reachLift
    }

    /// The force in grams at a logical fraction within `0...reach`: the IAF plus the
    /// response's inverse.
    public func grams(atFraction x: Double) -> Double {
        activation.grams + Self.lift(atFraction: x, response, reachLift: reachLift)
    }

    /// The logical fraction at a force, from the IAF (0) to the heaviest weight below full
    /// scale (`reach`); 0 below the IAF, `reach` above that weight.
    public func fraction(atGrams grams: Double) -> Double {
        let lift = grams - activation.grams
        return lift <= 0 ? 0 : response.grams(atX: Swift.min(lift, reachLift))
    }

    /// Grams above the IAF where the response reaches fraction `x` (bisection: it rises).
    static func lift(atFraction x: Double, _ response: MonotoneCubic, reachLift: Double) -> Double {
        guard x > 0 else { return 0 }
        var low = 0.0
        var high = reachLift
        guard response.grams(atX: high) > x else { return high }
        for _ in 0..<60 {
            let middle = (low + high) / 2
            if response.grams(atX: middle) < x { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// The IAF from the lightest registered weights below full scale (see the type's comment).
    static func activation(_ points: [Point], lowerBound: Double?, upperBound: Double, span: Double) -> Activation {
        let floor = lowerBound ?? 0
        func bounded(_ estimate: Double, _ uncertainty: Double) -> Activation {
            // The interval, cut to what the weights prove, and the estimate inside it.
            let low = Swift.max(floor, estimate - uncertainty)
            let high = Swift.min(upperBound, estimate + uncertainty)
            let centre: Double
            let half: Double
            if low <= high {
                // The middle of what is left: the estimate itself when its interval lies
                // within the bounds; nearer the truth than a bound when it was cut.
                centre = (low + high) / 2
                half = (high - low) / 2
            } else {
                // The estimate's interval lies wholly outside the bounds: the bounds alone.
                centre = (floor + upperBound) / 2
                half = (upperBound - floor) / 2
            }
            return Activation(grams: centre, uncertainty: half, heaviestUnregistered: lowerBound, lightestRegistered: upperBound)
        }
        let lightest = Array(points.prefix(3))
        guard lightest.count >= 2 else {
            return bounded((floor + upperBound) / 2, (upperBound - floor) / 2)
        }
        let line = LeastSquaresLine(lightest.map { ($0.fraction, $0.grams) })
        // The pen registers where it first reads 1, half a unit up from 0 once rounded.
        let registers = 0.5 / span
        let estimate = line.intercept + line.slope * registers
        var uncertainty = 2 * line.interceptStandardError
        if lightest.count == 3 {
            // The parabola through the three: how far a bend near zero moves the answer.
            let bent = Self.parabola(lightest.map { ($0.fraction, $0.grams) }, at: registers)
            if bent.isFinite { uncertainty = Swift.max(uncertainty, 2.5 * (bent - estimate).magnitude) }
        }
        // A line taken past the lightest weight errs more the farther it goes.
        uncertainty = Swift.max(uncertainty, 0.4 * (lightest[0].grams - estimate))
        // The noise of the lightest window, carried to grams by the line's slope.
        uncertainty = Swift.max(uncertainty, 2 * line.slope * lightest[0].spread / span)
        uncertainty = Swift.max(uncertainty, 0.1 * (lightest[1].grams - lightest[0].grams))
        guard estimate.isFinite, uncertainty.isFinite else {
            return bounded((floor + upperBound) / 2, (upperBound - floor) / 2)
        }
        return bounded(estimate, uncertainty)
    }

    /// The parabola through three points with distinct x, evaluated at `x`.
    static func parabola(_ points: [(x: Double, y: Double)], at x: Double) -> Double {
        var value = 0.0
        for (i, point) in points.enumerated() {
            var weight = 1.0
            for (j, other) in points.enumerated() where j != i {
                weight *= (x - other.x) / (point.x - other.x)
            }
            value += weight * point.y
        }
        return value
    }
}

/// The least-squares line y = intercept + slope·x.
struct LeastSquaresLine {
    var intercept: Double
    var slope: Double
    /// The intercept's standard error (0 with two points: they fix it).
    var interceptStandardError: Double

    init(_ samples: [(x: Double, y: Double)]) {
        let count = Double(samples.count)
        let meanX = samples.reduce(0) { $0 + $1.x } / count
        let meanY = samples.reduce(0) { $0 + $1.y } / count
        let sxx = samples.reduce(0) { $0 + ($1.x - meanX) * ($1.x - meanX) }
        let sxy = samples.reduce(0) { $0 + ($1.x - meanX) * ($1.y - meanY) }
        let slope = sxx > 0 ? sxy / sxx : 0
        let intercept = meanY - slope * meanX
        self.slope = slope
        self.intercept = intercept
        guard samples.count > 2, sxx > 0 else {
            interceptStandardError = 0
            return
        }
        let residuals = samples.reduce(0) { sum, sample in
            let residual = sample.y - (intercept + slope * sample.x)
            return sum + residual * residual
        }
        let variance = residuals / (count - 2)
        interceptStandardError = (variance * (1 / count + meanX * meanX / sxx)).squareRoot()
    }
}

/// Numbers as the characterization's messages write them.
enum PenNumbers {
    static func grams(_ value: Double) -> String { trimmed(value, decimals: 2) }
    static func raw(_ value: Double) -> String { trimmed(value, decimals: 1) }

    /// `value` with at most `decimals` decimals, trailing zeros dropped.
    static func trimmed(_ value: Double, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded() { return String(Int64(rounded)) }
        var text = String(rounded)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
