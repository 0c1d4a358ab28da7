/// A pressure curve as xf86-input-wacom (`xsetwacom set … PressureCurve x1 y1 x2 y2`) and
/// GNOME (`pressure-curve`) take it: a cubic Bézier from (0, 0) through the control points
/// (x1, y1) and (x2, y2) to (100, 100), mapping the pen's logical pressure (x, in % of its
/// range) to the pressure applications get (y). The control points are whole numbers from 0
/// to 100.
public struct PressureCurve: Hashable, Sendable {
    public var x1: Int
    public var y1: Int
    public var x2: Int
    public var y2: Int

    public init(x1: Int, y1: Int, x2: Int, y2: Int) {
        self.x1 = x1
        self.y1 = y1
        self.x2 = x2
        self.y2 = y2
    }

    /// The identity (the drivers' default).
    public static let linear = PressureCurve(x1: 0, y1: 0, x2: 100, y2: 100)

    /// The four numbers in the drivers' order.
    public var values: [Int] { [x1, y1, x2, y2] }

    /// The output at logical pressure `x` (both as fractions 0–1); `nil` where the curve
    /// turns back on itself in x (no driver table can follow it).
    public func output(at x: Double) -> Double? {
        Self.output(at: x, Double(x1) / 100, Double(y1) / 100, Double(x2) / 100, Double(y2) / 100)
    }

    /// The curve's output at `x` for control points given as fractions.
    static func output(at x: Double, _ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double) -> Double? {
        func coordinate(_ t: Double, _ p1: Double, _ p2: Double) -> Double {
            let u = 1 - t
            return 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t
        }
        // x(t) must rise for the curve to be a function of x: x'(t) ≥ 0 on [0, 1] holds for
        // control points in [0, 1] unless x1 > x2 by much; checked where it is solved.
        let x = Swift.min(Swift.max(x, 0), 1)
        var low = 0.0
        var high = 1.0
        for _ in 0..<48 {
            let middle = (low + high) / 2
            if coordinate(middle, x1, x2) < x { low = middle } else { high = middle }
        }
        let t = (low + high) / 2
        guard (coordinate(t, x1, x2) - x).magnitude < 1e-6 else { return nil }
        return coordinate(t, y1, y2)
    }

    /// Whether x(t) rises over the whole curve (so the output is a function of x).
    static func rises(_ x1: Double, _ x2: Double) -> Bool {
        // x'(t)/3 = (1−t)²·x1 + 2(1−t)t·(x2 − x1) + t²·(1 − x2): a quadratic in t, sampled.
        (0...32).allSatisfy { step in
            let t = Double(step) / 32
            let u = 1 - t
            return u * u * x1 + 2 * u * t * (x2 - x1) + t * t * (1 - x2) >= -1e-9
        }
    }

    /// The curve whose output is most nearly proportional to `samples`' wanted outputs
    /// (logical fraction x → wanted output y, rising from y = 0 to the last sample's y), among
    /// whole-number control points. Proportional, not equal: the output may be the wanted one
    /// times any factor from 1 − `shortfall` to 1, when that makes it straighter (what it gives
    /// up at the last sample it reaches between there and (100, 100)). The error is the
    /// largest difference from the wanted outputs times the best such factor.
    /// - Returns: The curve and its largest error, in % of the range.
    public static func fitted(to samples: [(x: Double, y: Double)], shortfall: Double = 0.1) -> (curve: PressureCurve, maximumErrorPercent: Double) {
        var outputs = [Double](repeating: 0, count: samples.count)
        func error(_ p: [Double]) -> Double {
            guard p.allSatisfy({ $0 >= 0 && $0 <= 1 }), rises(p[0], p[2]) else { return .infinity }
            for (index, sample) in samples.enumerated() {
                guard let y = output(at: sample.x, p[0], p[1], p[2], p[3]) else { return .infinity }
                outputs[index] = y
            }
            return deviation(outputs, from: samples.map(\.y), factors: (1 - shortfall)...1).deviation
        }
        // A coarse grid over the four numbers; a pattern search from each of its best few
        // (the error has several valleys); then the whole numbers around the best.
        var starts: [(error: Double, point: [Double])] = []
        let grid = stride(from: 0.0, through: 1.0, by: 0.1).map { $0 }
        for x1 in grid { for y1 in grid { for x2 in grid { for y2 in grid {
            let candidate = [x1, y1, x2, y2]
            let candidateError = error(candidate)
            guard candidateError.isFinite else { continue }
            starts.append((candidateError, candidate))
        } } } }
        starts.sort { $0.error < $1.error }
        var best = [0.0, 0.0, 1.0, 1.0]
        var bestError = error(best)
        for start in starts.prefix(16) {
            var point = start.point
            var pointError = start.error
            var step = 0.0625
            while step >= 0.004 {
                var improved = false
                for index in 0..<4 {
                    for direction in [-1.0, 1.0] {
                        var candidate = point
                        candidate[index] += direction * step
                        let candidateError = error(candidate)
                        if candidateError < pointError { point = candidate; pointError = candidateError; improved = true }
                    }
                }
                if !improved { step /= 2 }
            }
            if pointError < bestError { best = point; bestError = pointError }
        }
        var whole = best.map { Int(($0 * 100).rounded()) }
        var wholeError = error(whole.map { Double($0) / 100 })
        var changed = true
        while changed {
            changed = false
            for index in 0..<4 {
                for direction in [-1, 1] {
                    var candidate = whole
                    candidate[index] = Swift.min(100, Swift.max(0, candidate[index] + direction))
                    let candidateError = error(candidate.map { Double($0) / 100 })
                    if candidateError < wholeError { whole = candidate; wholeError = candidateError; changed = true }
                }
            }
        }
        return (PressureCurve(x1: whole[0], y1: whole[1], x2: whole[2], y2: whole[3]), wholeError * 100)
    }

    /// How far `values` are from being proportional to `wanted`: the largest difference from
    /// `wanted` times the factor within `factors` that makes it least (the largest difference
    /// is convex in the factor, so a ternary search finds it).
    public static func deviation(_ values: [Double], from wanted: [Double], factors: ClosedRange<Double>) -> (deviation: Double, factor: Double) {
        func worst(_ factor: Double) -> Double {
            var largest = 0.0
            for (value, target) in zip(values, wanted) { largest = Swift.max(largest, (value - factor * target).magnitude) }
            return largest
        }
        var low = factors.lowerBound
        var high = factors.upperBound
        // The bracket shrinks to (2/3)^24 ≈ 6·10⁻⁵ of itself: far below a whole-number step.
        for _ in 0..<24 {
            let third = (high - low) / 3
            if worst(low + third) <= worst(high - third) { high -= third } else { low += third }
        }
        let factor = (low + high) / 2
        return (worst(factor), factor)
    }
}
