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

    /// One coordinate of the curve at parameter `t`, from the control points' `p1` and `p2`
    /// (the ends are 0 and 1).
    static func coordinate(_ t: Double, _ p1: Double, _ p2: Double) -> Double {
        let u = 1 - t
        return 3 * u * u * t * p1 + 3 * u * t * t * p2 + t * t * t
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
        // The search evaluates the error a few thousand times: each evaluation walks the curve
        // at 256 even steps of its parameter and reads the samples off it by linear
        // interpolation (the samples rise in x), rather than solving for each sample's
        // parameter; the linear pieces are within 10⁻⁵ of the cubic.
        let sorted = samples.sorted { $0.x < $1.x }
        let wanted = sorted.map(\.y)
        var outputs = [Double](repeating: 0, count: sorted.count)
        let steps = 256
        func error(_ p: [Double]) -> Double {
            guard p.allSatisfy({ $0 >= 0 && $0 <= 1 }) else { return .infinity }
            var previous = (x: 0.0, y: 0.0)
            var step = 1
            var next = (x: coordinate(1 / Double(steps), p[0], p[2]), y: coordinate(1 / Double(steps), p[1], p[3]))
            for (index, sample) in sorted.enumerated() {
                while next.x < sample.x, step < steps {
                    step += 1
                    let t = Double(step) / Double(steps)
                    previous = next
                    next = (coordinate(t, p[0], p[2]), coordinate(t, p[1], p[3]))
                    // x must rise for the output to be a function of x.
                    if next.x < previous.x { return .infinity }
                }
                let width = next.x - previous.x
                outputs[index] = width > 0 ? previous.y + (next.y - previous.y) * (sample.x - previous.x) / width : next.y
            }
            guard rises(p[0], p[2]) else { return .infinity }
            return deviation(outputs, from: wanted, factors: (1 - shortfall)...1).deviation
        }
        // A coarse grid over the four numbers; a pattern search from each of its best few
        // (the error has several valleys); then the whole numbers around the best.
        var starts: [(error: Double, point: [Double])] = []
        let grid = stride(from: 0.0, through: 1.0, by: 0.2).map { $0 }
        for x1 in grid { for y1 in grid { for x2 in grid { for y2 in grid {
            let candidate = [x1, y1, x2, y2]
            let candidateError = error(candidate)
            guard candidateError.isFinite else { continue }
            starts.append((candidateError, candidate))
        } } } }
        starts.sort { $0.error < $1.error }
        var best = [0.0, 0.0, 1.0, 1.0]
        var bestError = error(best)
        for start in starts.prefix(24) {
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

    /// How far `values` are from being proportional to `wanted` (wanted ≥ 0): the largest
    /// difference from `wanted` times the factor within `factors` that makes it least. The
    /// largest difference is convex in the factor; at each try the difference that is largest
    /// says which way the best factor lies (it grows with the factor where the value is
    /// below the line), so halving the bracket finds it.
    public static func deviation(_ values: [Double], from wanted: [Double], factors: ClosedRange<Double>) -> (deviation: Double, factor: Double) {
        /// The largest difference at `factor`, and whether it grows with the factor.
        func worst(_ factor: Double) -> (difference: Double, growing: Bool) {
            var largest = -1.0
            var growing = false
            for (value, target) in zip(values, wanted) {
                let difference = value - factor * target
                if difference.magnitude > largest {
                    largest = difference.magnitude
                    growing = difference < 0 && target > 0
                }
            }
            return (Swift.max(largest, 0), growing)
        }
        var low = factors.lowerBound
        var high = factors.upperBound
        // 2⁻²⁰ of the bracket: far below what a whole-number control point changes.
        for _ in 0..<20 where high > low {
            let middle = (low + high) / 2
            if worst(middle).growing { high = middle } else { low = middle }
        }
        let factor = (low + high) / 2
        return (worst(factor).difference, factor)
    }
}
