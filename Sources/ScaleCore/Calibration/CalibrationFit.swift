import Glibc  // erfc, exp, log and pow only: ScaleCore does no I/O and reads no clock.

/// The curve chosen for a device's calibration points, and how good it is.
///
/// Every family that has enough points is fitted (``ResponseFitting``), and each is judged
/// by leave-one-out: each point is left out in turn, the family is fitted to the others and
/// asked for the weight of the one left out. The family whose predictions miss least (root
/// mean square) is chosen. Judging by the residuals alone would always choose the most
/// flexible family, which passes through every point, noise included.
///
/// Before that, when the points carry their spread, the straight line through the origin
/// is tested against the noise of their means (a chi-square test), and a curve must earn
/// its bend:
/// - the line fits within the noise: the straight line, since no bend is supported;
/// - the points are off the line, but not clearly (``clearBend``): straight segments
///   through them (piecewise linear, the curve of earlier releases), which assume no shape
///   beyond the points. A bend fitted to a doubtful miss is extrapolated past the heaviest
///   point with the leverage of the lightest points' noise, and few points cannot check it:
///   with two, leave-one-out cannot judge a two-parameter family at all (one point left
///   cannot fit two parameters), and with three it compares three predictions, each from a
///   curve drawn exactly through two noisy points;
/// - the bend is clear: leave-one-out, or with two points (every two-parameter family
///   passes through both) the device's likely family (``ResponseFamily/likely(for:)``).
///
/// So the curve is never a guess where the curve of earlier releases would be safer. With
/// one point, only the straight line through the origin is possible.
///
/// The fit is deterministic and costs about `families × points²` evaluations of the curves:
/// well under a millisecond for ten points (`forcescale-calibration-bench timing`).
public struct CalibrationFit: Hashable, Sendable {
    /// How one point sits on the chosen curve.
    public struct PointFit: Hashable, Sendable {
        /// The point as calibrated.
        public var point: CalibrationPoint
        /// Its known weight minus what the curve gives at its raw pressure.
        public var residual: Double
        /// Its known weight minus what the chosen family gives when fitted to the other
        /// points; `nil` when leave-one-out cannot judge it (fewer than three points).
        public var leaveOneOut: Double?
        /// What the other points say it should weigh, when it disagrees with them (see
        /// ``CalibrationFit/disagreeing``); `nil` when it agrees.
        public var expected: Double?
    }

    /// How a family did in leave-one-out.
    public struct Candidate: Hashable, Sendable {
        /// The family.
        public var family: ResponseFamily
        /// Root mean square of its leave-one-out errors in grams; `nil` when it cannot be
        /// judged that way (too few points).
        public var leaveOneOutError: Double?
    }

    /// The chosen curve, in normalised pressure.
    public let model: ResponseModel
    /// The axis minimum, which weighs nothing.
    public let axisMinimum: Double
    /// The axis span (`max − min`) that normalises raw pressure.
    public let axisSpan: Double
    /// The points by rising raw pressure, each with its residual.
    public let points: [PointFit]
    /// The families tried, in the order they are preferred on a tie.
    public let candidates: [Candidate]
    /// A bound in grams that the error of a reading should stay under 19 times in 20:
    /// twice the root sum of squares of the leave-one-out error, the noise of a single
    /// reading (from the points' spread) and, with two points on a curve, the disagreement
    /// between the families that fit both up to the heaviest point. `nil` with a single
    /// point, which cannot show how the curve bends. bench/calibration measures how often it
    /// holds over 2–385 g (95–100 % on its synthetic devices).
    public let uncertainty: Double?

    /// Where the curve's extrapolation starts and how fast it may grow past it: the
    /// heaviest point's normalised pressure, the curve's grams there, and the exponent of the
    /// power law that bounds it beyond (see ``grams(raw:)``).
    private let heaviestX: Double
    private let heaviestGrams: Double
    private let extrapolationExponent: Double

    /// The points of the curve that the others contradict: a weight misplaced or mistyped.
    public var disagreeing: [PointFit] { points.filter { $0.expected != nil } }

    /// Fits a calibration's points.
    /// - Parameters:
    ///   - points: At least one point, by strictly rising raw pressure and grams, above the
    ///     axis minimum (as ``Calibration`` keeps them).
    ///   - axis: The device's pressure axis.
    ///   - likely: The family to choose when the points cannot tell (two points).
    ///   - families: The families to consider by leave-one-out; all but piecewise linear
    ///     by default, which is chosen only for points off a straight line but not clearly
    ///     (and only when `linear` is among the families). The
    ///     accuracy study passes `[.piecewiseLinear]` to get the curve of earlier releases.
    public init(
        points: [CalibrationPoint], axis: AxisRange, likely: ResponseFamily = .power,
        families: [ResponseFamily] = [.linear, .power, .logarithmic, .monotoneCubic]
    ) {
        precondition(!points.isEmpty, "a fit needs a point")
        let minimum = Double(axis.minimum)
        // A degenerate axis is refused when the device is opened; 1 keeps this total anyway.
        let span = axis.maximum > axis.minimum ? Double(axis.maximum) - minimum : 1
        axisMinimum = minimum
        axisSpan = span
        let samples = points.map { FitSample(x: ($0.raw - minimum) / span, grams: $0.grams) }
        let usable = families.filter { samples.count >= $0.minimumPoints }

        // Leave-one-out for every family that can be judged that way.
        var outcomes: [ResponseFamily: LeaveOneOut] = [:]
        for family in usable where samples.count > family.fittablePoints {
            outcomes[family] = LeaveOneOut(family: family, samples: samples)
        }
        candidates = usable.map { Candidate(family: $0, leaveOneOutError: outcomes[$0]?.rootMeanSquare) }

        let chosen: ResponseFamily
        let meanErrors = Self.meanErrors(points: points, samples: samples, span: span)
        let offLine = Self.straightLineChiSquare(samples: samples, meanErrors: meanErrors)
        if usable.contains(.linear), samples.count >= 2, let offLine, offLine.chiSquare <= offLine.withinNoise {
            // The points lie on a straight line as closely as the noise of their means lets
            // anyone tell: a bend fitted to them would be fitted to noise, and leave-one-out
            // cannot show it, since predicting a heavy point from light ones multiplies their
            // noise for every family alike.
            chosen = .linear
        } else if usable.contains(.linear), let offLine, !Self.clearBend(offLine) {
            // Off the line, but not clearly: how it bends is known only to within a large part
            // of itself, or not at all, and a curve would carry that doubt past the heaviest
            // point (see `clearBend`). Straight segments through the points assume no shape,
            // and past the heaviest point keep the slope measured between the two heaviest.
            chosen = .piecewiseLinear
        } else if samples.count == 2, usable.contains(likely) {
            // They bend clearly (or their spread is unknown, and nothing says how small a bend
            // is), and two points cannot say how: the device's likely family bends the way
            // devices of its kind do.
            chosen = likely
        } else {
            chosen = Self.best(of: candidates) ?? usable.first ?? .linear
        }
        let model = ResponseFitting.fit(chosen, to: samples) ?? ResponseFitting.fit(.linear, to: samples)!
        self.model = model
        (heaviestX, heaviestGrams, extrapolationExponent) = Self.extrapolationBound(model: model, heaviestX: samples.last!.x)

        let noise = Self.readingNoise(points: points, samples: samples, model: model, span: span)
        let outlier = Self.outlier(samples: samples, outcomes: outcomes, noise: noise)
        // Piecewise linear is not among the candidates; when chosen, it is judged the same way.
        let chosenOutcome = outcomes[chosen]
            ?? (samples.count > chosen.fittablePoints ? LeaveOneOut(family: chosen, samples: samples) : nil)
        self.points = points.indices.map { index in
            PointFit(
                point: points[index], residual: samples[index].grams - model.grams(atX: samples[index].x),
                leaveOneOut: chosenOutcome?.errors[index],
                expected: outlier?.index == index ? outlier?.expected : nil)
        }

        var spread = noise.map { $0 * $0 } ?? 0
        if let chosenOutcome {
            spread += chosenOutcome.rootMeanSquare * chosenOutcome.rootMeanSquare
        } else if samples.count == 2 {
            let disagreement = Self.disagreement(samples: samples, families: [.power, .logarithmic].filter(families.contains))
            spread += disagreement * disagreement
        } else {
            uncertainty = nil
            return
        }
        uncertainty = 2 * spread.squareRoot()
    }

    /// Grams for a raw pressure by the chosen curve, before tare.
    ///
    /// Up to the heaviest point this is the curve. Past it the curve is an extrapolation, and
    /// it is bounded: it may grow no faster than the power law through the heaviest point
    /// whose exponent is one more than the curve's own there (its log–log slope). A power law
    /// or a straight continuation never reaches the bound; an exponential (the logarithmic
    /// family with a positive `k`, fitted to points close together or on a device that does
    /// not respond that way) is held to polynomial growth instead of running away.
    /// - Parameter raw: Raw pressure; at or below the axis minimum it weighs nothing.
    /// - Returns: Grams, never negative.
    public func grams(raw: Double) -> Double {
        let x = (raw - axisMinimum) / axisSpan
        let grams = model.grams(atX: x)
        guard x > heaviestX else { return grams }
        return Swift.min(grams, heaviestGrams * pow(x / heaviestX, extrapolationExponent))
    }

    /// The uncertainty of a reading, in grams, from the fit's in-range ``uncertainty``: the
    /// same up to the heaviest calibration weight, and past it growing with the square of how
    /// far past (an extrapolation's error grows with the curve's unknown bend over the
    /// distance), so that 2× the heaviest weight quotes 4× the in-range value.
    /// - Parameters:
    ///   - uncertainty: The fit's in-range uncertainty.
    ///   - grams: The reading's grams before tare.
    ///   - heaviest: The heaviest calibration weight.
    /// - Returns: The uncertainty to quote beside the reading.
    public static func uncertainty(_ uncertainty: Double, atGrams grams: Double, heaviest: Double) -> Double {
        guard heaviest > 0, grams > heaviest else { return uncertainty }
        let ratio = grams / heaviest
        return uncertainty * ratio * ratio
    }

    /// The start of the extrapolation and the exponent that bounds it: one more than the
    /// curve's log–log slope at the heaviest point, measured across a part in ten thousand.
    private static func extrapolationBound(model: ResponseModel, heaviestX: Double) -> (Double, Double, Double) {
        let grams = model.grams(atX: heaviestX)
        let step = 1e-4
        let below = model.grams(atX: heaviestX * (1 - step))
        let above = model.grams(atX: heaviestX * (1 + step))
        guard grams > 0, below > 0, above > below else { return (heaviestX, grams, 2) }
        let slope = (log(above) - log(below)) / (log(1 + step) - log(1 - step))
        return (heaviestX, grams, Swift.max(1, slope) + 1)
    }

    /// The candidate with the smallest leave-one-out error; on a tie (within a part in a
    /// billion) the first, which is the simpler family.
    private static func best(of candidates: [Candidate]) -> ResponseFamily? {
        var best: Candidate?
        for candidate in candidates {
            guard let error = candidate.leaveOneOutError, error.isFinite else { continue }
            if let current = best?.leaveOneOutError, error >= current - 1e-9 * (1 + current) { continue }
            best = candidate
        }
        return best?.family
    }

    /// What averaging cannot remove from a point, as a part of its weight: the tail of the
    /// weight settling inside the stable window, the sensor creeping, a placement a little
    /// off the spot. 0.2 %: the bias a 10 % landing overshoot leaves in a window that the
    /// daemon judges stable (bench/calibration, daemon path).
    static let repeatability = 0.002

    /// Each point's standard error in grams: the standard error of its mean raw value (its
    /// spread over the square root of its count, at least half a unit's rounding over it),
    /// times grams per unit of the straight line from the origin to it, with
    /// ``repeatability`` added in quadrature. `nil` for a point whose spread is unknown
    /// (files of earlier releases).
    private static func meanErrors(points: [CalibrationPoint], samples: [FitSample], span: Double) -> [Double?] {
        zip(points, samples).map { point, sample in
            guard let deviation = point.spread, let count = point.count, count > 0 else { return nil }
            // A mean of quantised readings that never moved still has the rounding in it.
            let rawError = Swift.max(deviation, 0.5) / Double(count).squareRoot()
            let noise = sample.grams / sample.x * rawError / span
            let settling = repeatability * sample.grams
            return (noise * noise + settling * settling).squareRoot()
        }
    }

    /// How far the straight line through the origin fitted to the points is off them, in
    /// the noise of their means: chi-square `Σ (residual / standard error)²` with `n − 1`
    /// degrees of freedom, and the most that noise explains, the degrees of freedom plus three
    /// standard deviations (`n − 1 + 3·√(2(n − 1))`, about the 98th percentile for one to four
    /// degrees of freedom: about 2 % of straight devices are taken for bent, and get
    /// straight segments rather than a curve unless the bend is clear). `nil` when a point's
    /// spread is unknown (files of earlier releases): then nothing says how small is small,
    /// and leave-one-out decides.
    private static func straightLineChiSquare(samples: [FitSample], meanErrors: [Double?]) -> OffLine? {
        let known = meanErrors.compactMap { $0 }
        guard known.count == samples.count, samples.count >= 2, let line = ResponseFitting.fit(.linear, to: samples) else { return nil }
        var chiSquare = 0.0
        for (sample, error) in zip(samples, known) {
            guard error > 0 else { return nil }
            let residual = (sample.grams - line.grams(atX: sample.x)) / error
            chiSquare += residual * residual
        }
        let freedom = samples.count - 1
        return OffLine(chiSquare: chiSquare, freedom: freedom, withinNoise: Double(freedom) + 3 * (2 * Double(freedom)).squareRoot())
    }

    /// The straight line's miss, by ``straightLineChiSquare(samples:meanErrors:)``.
    struct OffLine {
        var chiSquare: Double
        var freedom: Int
        var withinNoise: Double
    }

    /// How rarely noise alone may put the points as far off the straight line before a
    /// curve is fitted to the miss: as rarely as a normal deviation of five standard errors
    /// (`P(|z| ≥ 5)`, about once in 1.7 million calibrations of a straight device).
    static let clearBendChance = 5.733e-7

    /// Whether the points are off the straight line clearly enough to extrapolate a bend:
    /// noise alone leaves a chi-square this large less often than ``clearBendChance``.
    ///
    /// With two points and the origin the line has one degree of freedom left, so the
    /// chi-square is `z²`, `z` being how many standard errors the points sit off it, and
    /// this asks for `z ≥ 5`. A two-parameter curve through both points takes that miss as
    /// its bend, and a bend seen at `z` standard errors is known to about `1/z` of itself.
    /// Inside the points that doubt costs little; past the heaviest point it grows with the
    /// distance: a power law's exponent from two points is `ln(g₂/g₁) / ln(x₂/x₁)`, so the
    /// lighter point's relative error, over the log of the points' ratio, becomes a bend of
    /// the whole curve. Just past the ordinary test (`z` ≈ 2.3–2.8) the bend is known only
    /// to ±40 % and may be noise: on a straight pad calibrated with 20 g and 180 g, a power
    /// law through such a draw is 1.1–1.5 g off by 385 g where straight segments are within
    /// 0.5 g (bench/calibration, about 1 draw in 200). With three points leave-one-out is
    /// fooled the same way about 1 draw in 3000 (1.3 g against 0.3–0.4 g), which is why the
    /// rule holds for any number of points; with more points the same chance allows a larger
    /// chi-square, and the gap between noise and a bend keeps its meaning. At five standard
    /// errors the bend is known to a fifth of itself. Curved devices clear it by far (the
    /// study's pens and pads: a chi-square of 20,000 or more with two points).
    static func clearBend(_ offLine: OffLine) -> Bool {
        chiSquareTail(offLine.chiSquare, freedom: offLine.freedom) < clearBendChance
    }

    /// `P(χ² ≥ value)` with a whole number of degrees of freedom, in closed form: for `2m`
    /// degrees `e^(−v/2)·Σ_{k<m} (v/2)^k / k!`; for `2m + 1`, `erfc(√(v/2))` plus
    /// `e^(−v/2)·Σ_{k=1…m} (v/2)^(k−½) / Γ(k + ½)`. Each term is summed from its logarithm,
    /// so that neither the power nor the exponential overflows for a large chi-square.
    static func chiSquareTail(_ value: Double, freedom: Int) -> Double {
        guard value > 0 else { return 1 }
        let half = value / 2
        let logHalf = log(half)
        var tail: Double
        var logTerm: Double
        var steps: Int
        var next: Double
        if freedom % 2 == 0 {
            tail = 0
            logTerm = -half         // k = 0: e^(−v/2)
            steps = freedom / 2
            next = 1                // the k of the term after this one
        } else {
            tail = erfc(half.squareRoot())
            logTerm = -half + 0.5 * logHalf - log(Double.pi.squareRoot() / 2)  // k = 1: Γ(3/2) = √π/2
            steps = (freedom - 1) / 2
            next = 1.5              // Γ(k + ½) grows by k + ½
        }
        while steps > 0 {
            tail += exp(logTerm)
            logTerm += logHalf - log(next)
            next += 1
            steps -= 1
        }
        return Swift.min(1, tail)
    }

    /// The standard deviation in grams of one reading, at the noisiest point: each point's
    /// raw spread times the curve's slope there. `nil` when no point carries a spread.
    private static func readingNoise(points: [CalibrationPoint], samples: [FitSample], model: ResponseModel, span: Double) -> Double? {
        var noisiest: Double?
        for (point, sample) in zip(points, samples) {
            guard let deviation = point.spread else { continue }
            // A central difference over a small part of the axis; the curve is smooth there
            // or, for the interpolating families, piecewise smooth, where either side will do.
            let step = Swift.min(1e-4, sample.x / 2)
            let slope = (model.grams(atX: sample.x + step) - model.grams(atX: sample.x - step)) / (2 * step)
            let grams = slope * deviation / span
            noisiest = Swift.max(noisiest ?? 0, grams)
        }
        return noisiest
    }

    /// The largest difference, up to the heaviest point, between the two-parameter families
    /// fitted to two points: both pass through them, so the difference is what the points
    /// cannot decide.
    private static func disagreement(samples: [FitSample], families: [ResponseFamily]) -> Double {
        let curves = families.compactMap { ResponseFitting.fit($0, to: samples) }
        guard curves.count >= 2, let last = samples.last else { return 0 }
        var largest = 0.0
        let steps = 64
        for step in 1...steps {
            let x = last.x * Double(step) / Double(steps)
            let values = curves.map { $0.grams(atX: x) }
            largest = Swift.max(largest, values.max()! - values.min()!)
        }
        return largest
    }

    /// The one point whose removal leaves the others in agreement while it is far from what
    /// they predict, if there is one. It needs four points or more: three points left out of
    /// four still over-determine a two-parameter curve, so "the others agree" means
    /// something. A point is named when its leave-one-out miss exceeds four times what the
    /// others miss plus the reading noise, and 2 % of its weight (a scale's usual tolerance).
    private static func outlier(
        samples: [FitSample], outcomes: [ResponseFamily: LeaveOneOut], noise: Double?
    ) -> (index: Int, expected: Double)? {
        guard samples.count >= 4 else { return nil }
        var best: (index: Int, error: Double, rest: Double)?
        for family in [ResponseFamily.power, .logarithmic] {
            guard let outcome = outcomes[family] else { continue }
            for index in samples.indices {
                let rest = outcome.restErrors[index]
                if best == nil || rest < best!.rest {
                    best = (index, outcome.errors[index], rest)
                }
            }
        }
        guard let best else { return nil }
        let threshold = Swift.max(4 * (best.rest + (noise ?? 0)), 0.02 * samples[best.index].grams)
        guard abs(best.error) > threshold else { return nil }
        return (best.index, samples[best.index].grams - best.error)
    }
}

/// Leave-one-out of one family: for each point, the family fitted to the others.
struct LeaveOneOut: Hashable, Sendable {
    /// For each point, its grams minus the prediction of the fit without it.
    var errors: [Double]
    /// For each point, the root mean square residual of the other points on the fit that
    /// left it out: small when the others agree among themselves.
    var restErrors: [Double]

    /// Root mean square of ``errors``.
    var rootMeanSquare: Double {
        (errors.reduce(0) { $0 + $1 * $1 } / Double(errors.count)).squareRoot()
    }

    /// Runs it.
    /// - Parameters:
    ///   - family: The family.
    ///   - samples: More points than the family needs.
    init(family: ResponseFamily, samples: [FitSample]) {
        var errors: [Double] = []
        var restErrors: [Double] = []
        for index in samples.indices {
            var others = samples
            others.remove(at: index)
            guard let model = ResponseFitting.fit(family, to: others) else {
                errors.append(.infinity)
                restErrors.append(.infinity)
                continue
            }
            errors.append(samples[index].grams - model.grams(atX: samples[index].x))
            let squares = others.reduce(0.0) { sum, sample in
                let miss = sample.grams - model.grams(atX: sample.x)
                return sum + miss * miss
            }
            restErrors.append((squares / Double(others.count)).squareRoot())
        }
        self.errors = errors
        self.restErrors = restErrors
    }
}
