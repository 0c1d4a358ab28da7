import Glibc  // exp, log and expm1 only: ScaleCore does no I/O and reads no clock.

/// Least-squares fits of each ``ResponseFamily`` to calibration samples, in grams.
///
/// Both two-parameter families are linear in their scale (`a` of the power law, `s` of the
/// logarithmic response), so for a given shape (`b` or `k`) the best scale has a closed
/// form, and what is left is a search in one variable (variable projection, Golub and
/// Pereyra 1973). That search is done on a fixed grid, then by golden-section in the best
/// grid cell: no starting guess, no step that can diverge, the same answer on every run and
/// machine, and a bounded number of evaluations whatever the points.
enum ResponseFitting {
    /// Shapes searched for the power law: `b` from 0.05 (a pad that saturates hard) to 20.
    static let powerExponentRange = (low: log(0.05), high: log(20.0))
    /// Shapes searched for the logarithmic response: `|k| ≤ 40` in normalised `x`, a
    /// response whose slope changes by e^40 over the axis, far beyond any real sensor.
    static let logarithmicRateRange = (low: -40.0, high: 40.0)
    /// `|k|` below this is a straight line to every digit a scale shows; `k` is kept at least
    /// this far from 0 so that `a = s/k` stays finite in the protocol.
    static let smallestRate = 1e-6
    static let gridSteps = 40
    static let goldenIterations = 48

    /// Fits one family.
    /// - Parameters:
    ///   - family: The family to fit.
    ///   - samples: The points by rising `x` (above 0) and rising grams.
    /// - Returns: The fitted curve, or `nil` when there are too few points to draw it.
    static func fit(_ family: ResponseFamily, to samples: [FitSample]) -> ResponseModel? {
        guard samples.count >= family.fittablePoints else { return nil }
        switch family {
        case .linear:
            var numerator = 0.0
            var denominator = 0.0
            for sample in samples {
                numerator += sample.grams * sample.x
                denominator += sample.x * sample.x
            }
            return .linear(a: numerator / denominator)
        case .power:
            let logX = samples.map { log($0.x) }
            let best = minimise(over: powerExponentRange) { logB in
                powerScale(samples, logX: logX, b: exp(logB)).cost
            }
            let b = exp(best)
            return .power(a: powerScale(samples, logX: logX, b: b).scale, b: b)
        case .logarithmic:
            var k = minimise(over: logarithmicRateRange) { k in logarithmicSlope(samples, k: k).cost }
            if abs(k) < smallestRate { k = k < 0 ? -smallestRate : smallestRate }
            return .logarithmic(slope: logarithmicSlope(samples, k: k).scale, k: k)
        case .monotoneCubic:
            return .monotoneCubic(MonotoneCubic(points: samples))
        case .piecewiseLinear:
            return .piecewiseLinear(PiecewiseLinear(knots: samples))
        }
    }

    /// The best `a` of `g = a·x^b` for a fixed `b`, and the squared error it leaves.
    private static func powerScale(_ samples: [FitSample], logX: [Double], b: Double) -> (scale: Double, cost: Double) {
        var shapes: [Double] = []
        shapes.reserveCapacity(samples.count)
        for value in logX { shapes.append(exp(b * value)) }
        return bestScale(samples, shapes: shapes)
    }

    /// The best `s` of `g = s·(e^(k·x) − 1)/k` for a fixed `k`, and the squared error it leaves.
    private static func logarithmicSlope(_ samples: [FitSample], k: Double) -> (scale: Double, cost: Double) {
        var shapes: [Double] = []
        shapes.reserveCapacity(samples.count)
        for sample in samples { shapes.append(ResponseModel.growth(k: k, x: sample.x)) }
        return bestScale(samples, shapes: shapes)
    }

    /// For `g ≈ c·f`: `c = Σ g·f / Σ f²` and the squared error `Σ (g − c·f)²`. The shapes are
    /// positive for `x > 0`, and so is every weight, so `c > 0`: the curve rises.
    private static func bestScale(_ samples: [FitSample], shapes: [Double]) -> (scale: Double, cost: Double) {
        var numerator = 0.0
        var denominator = 0.0
        for (sample, shape) in zip(samples, shapes) {
            numerator += sample.grams * shape
            denominator += shape * shape
        }
        guard denominator > 0, denominator.isFinite, numerator.isFinite else { return (0, .infinity) }
        let scale = numerator / denominator
        var cost = 0.0
        for (sample, shape) in zip(samples, shapes) {
            let error = sample.grams - scale * shape
            cost += error * error
        }
        return (scale, cost)
    }

    /// The argument of the smallest `cost` in a range: the best point of a fixed grid, then
    /// golden-section search between its neighbours. Costs that are not finite lose.
    /// - Parameters:
    ///   - range: The interval searched, ends included.
    ///   - cost: The function to minimise.
    /// - Returns: The best argument found.
    static func minimise(over range: (low: Double, high: Double), cost: (Double) -> Double) -> Double {
        let step = (range.high - range.low) / Double(gridSteps)
        var bestIndex = 0
        var bestCost = Double.infinity
        for index in 0...gridSteps {
            let value = cost(range.low + Double(index) * step)
            // Strictly smaller: among equal costs the first grid point wins, deterministically.
            if value < bestCost {
                bestCost = value
                bestIndex = index
            }
        }
        var low = range.low + Double(Swift.max(0, bestIndex - 1)) * step
        var high = range.low + Double(Swift.min(gridSteps, bestIndex + 1)) * step
        let ratio = (5.0.squareRoot() - 1) / 2
        var left = high - ratio * (high - low)
        var right = low + ratio * (high - low)
        var leftCost = cost(left)
        var rightCost = cost(right)
        for _ in 0..<goldenIterations {
            if leftCost <= rightCost {
                high = right
                right = left
                rightCost = leftCost
                left = high - ratio * (high - low)
                leftCost = cost(left)
            } else {
                low = left
                left = right
                leftCost = rightCost
                right = low + ratio * (high - low)
                rightCost = cost(right)
            }
        }
        let middle = (low + high) / 2
        // The grid point itself may beat the bracket's middle when the minimum sits at an end
        // of the range.
        let gridBest = range.low + Double(bestIndex) * step
        return cost(middle) <= bestCost ? middle : gridBest
    }
}
