/// The curve chosen for a device's calibration points, and how good it is.
///
/// Every family that has enough points is fitted (``ResponseFitting``), and each is judged
/// by leave-one-out: each point is left out in turn, the family is fitted to the others and
/// asked for the weight of the one left out. The family whose predictions miss least (root
/// mean square) is chosen. Judging by the residuals alone would always choose the most
/// flexible family, which passes through every point, noise included. Before that, when the
/// points carry their spread, a straight line is kept if it fits them within the noise of
/// their means (a chi-square test): no bend is then supported by the points.
///
/// With two points leave-one-out cannot judge a two-parameter family (one point left cannot
/// fit two parameters), and every such family passes through both points: unless the
/// straight line holds, the device's likely family is chosen
/// (``ResponseFamily/likely(for:)``). With one
/// point, only the straight line through the origin is possible.
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
    /// reading (from the points' spread) and, with two points, the disagreement between the
    /// families that fit both up to the heaviest point. `nil` with a single point, which
    /// cannot show how the curve bends. bench/calibration measures how often it holds over
    /// 2–385 g (95–100 % on its synthetic devices).
    public let uncertainty: Double?

    /// The points of the curve that the others contradict: a weight misplaced or mistyped.
    public var disagreeing: [PointFit] { points.filter { $0.expected != nil } }

    /// Fits a calibration's points.
    /// - Parameters:
    ///   - points: At least one point, by strictly rising raw pressure and grams, above the
    ///     axis minimum (as ``Calibration`` keeps them).
    ///   - axis: The device's pressure axis.
    ///   - likely: The family to choose when the points cannot tell (two points).
    ///   - families: The families to consider; all but piecewise linear by default. The
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
        if usable.contains(.linear), samples.count >= 2, Self.straightWithinNoise(samples: samples, meanErrors: meanErrors) {
            // The points lie on a straight line as closely as the noise of their means lets
            // anyone tell: a bend fitted to them would be fitted to noise, and leave-one-out
            // cannot show it, since predicting a heavy point from light ones multiplies their
            // noise for every family alike.
            chosen = .linear
        } else if samples.count == 2, usable.contains(likely) {
            // They bend, and two points cannot say how: the device's likely family bends the
            // way devices of its kind do.
            chosen = likely
        } else {
            chosen = Self.best(of: candidates) ?? usable.first ?? .linear
        }
        let model = ResponseFitting.fit(chosen, to: samples) ?? ResponseFitting.fit(.linear, to: samples)!
        self.model = model

        let noise = Self.readingNoise(points: points, samples: samples, model: model, span: span)
        let outlier = Self.outlier(samples: samples, outcomes: outcomes, noise: noise)
        let chosenOutcome = outcomes[chosen]
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
    /// - Parameter raw: Raw pressure; at or below the axis minimum it weighs nothing.
    /// - Returns: Grams, never negative.
    public func grams(raw: Double) -> Double {
        model.grams(atX: (raw - axisMinimum) / axisSpan)
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

    /// Whether the straight line through the origin fitted to the points leaves residuals
    /// the noise of their means explains: chi-square `Σ (residual / standard error)²` no more
    /// than its degrees of freedom plus three standard deviations (`n − 1 + 3·√(2(n − 1))`,
    /// about the 99th percentile for few points). A point of unknown spread makes the answer
    /// no: then nothing says how small is small, and leave-one-out decides.
    private static func straightWithinNoise(samples: [FitSample], meanErrors: [Double?]) -> Bool {
        let known = meanErrors.compactMap { $0 }
        guard known.count == samples.count, samples.count >= 2, let line = ResponseFitting.fit(.linear, to: samples) else { return false }
        var chiSquare = 0.0
        for (sample, error) in zip(samples, known) {
            guard error > 0 else { return false }
            let residual = (sample.grams - line.grams(atX: sample.x)) / error
            chiSquare += residual * residual
        }
        let freedom = Double(samples.count - 1)
        return chiSquare <= freedom + 3 * (2 * freedom).squareRoot()
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
