import Glibc  // pow and expm1 only: ScaleCore does no I/O and reads no clock.

/// The families of curves a calibration can be fitted with. The raw value is the name the
/// protocol and the CLI use (`"model":"power"` in a CALIBRATION reply).
public enum ResponseFamily: String, Hashable, Sendable, CaseIterable {
    /// `g = a·x`: a sensor whose raw value grows in proportion to force.
    case linear
    /// `g = a·x^b`: many pads; `b > 1` when the pad stiffens, `b < 1` when it softens.
    case power
    /// `g = a·(e^(k·x) − 1)`: the inverse of a logarithmic sensor (pen tablets respond
    /// steeply at light force and flatten towards the top). `k` may be negative, which gives
    /// the opposite bend with the same two parameters.
    case logarithmic
    /// A monotone piecewise cubic through the origin and every point (Fritsch–Carlson).
    case monotoneCubic = "monotone-cubic"
    /// Straight segments through the origin and every point: the calibration of releases
    /// before fitted curves, kept for comparison.
    case piecewiseLinear = "piecewise-linear"

    /// How many points the family needs before it can be fitted.
    public var minimumPoints: Int {
        switch self {
        case .linear: 1
        case .power, .logarithmic: 2
        case .piecewiseLinear: 1
        case .monotoneCubic: 4
        }
    }

    /// How many points a curve of the family can be drawn through. The monotone cubic is
    /// only offered from four points (``minimumPoints``), but leave-one-out still draws it
    /// through three.
    var fittablePoints: Int {
        switch self {
        case .power, .logarithmic: 2
        case .linear, .monotoneCubic, .piecewiseLinear: 1
        }
    }

    /// The family a device of this kind most likely follows, for when the points cannot
    /// tell (two points fit every two-parameter family exactly): pen tablets respond
    /// logarithmically, pads by a power law.
    /// - Parameter kind: The device's kind, `nil` when unknown.
    /// - Returns: `.logarithmic` for tablets, `.power` for everything else.
    public static func likely(for kind: DeviceKind?) -> ResponseFamily {
        kind == .tablet ? .logarithmic : .power
    }
}

/// A rising curve from normalised pressure to grams, through the origin.
///
/// `x` is the raw pressure above the axis minimum divided by the axis span
/// (`(raw − min) / (max − min)`), so that the parameters of a 0–255 pad and a 0–8191 pen
/// are of the same size and the fit is well conditioned. Every case rises over the whole
/// axis: the fit never produces a curve that falls or turns back.
///
/// Past the heaviest point: the parametric families (linear, power, logarithmic) continue
/// as themselves, since they were fitted to the whole range and rise everywhere; the
/// interpolating ones (monotone cubic, piecewise linear) continue in a straight line with
/// their slope at the heaviest point, since a cubic's own continuation is not grounded in
/// any point.
public enum ResponseModel: Hashable, Sendable {
    /// `g = a·x`, `a > 0`.
    case linear(a: Double)
    /// `g = a·x^b`, `a > 0`, `b > 0`.
    case power(a: Double, b: Double)
    /// `g = s·(e^(k·x) − 1)/k`: the logarithmic response written with its slope at the
    /// origin `s > 0` instead of `a = s/k`, so that it stays defined (and linear) as `k`
    /// goes to 0 and rises for either sign of `k`.
    case logarithmic(slope: Double, k: Double)
    /// Interpolation through knots that start at the origin.
    case monotoneCubic(MonotoneCubic)
    /// Straight segments through knots that start at the origin.
    case piecewiseLinear(PiecewiseLinear)

    /// The family of this curve.
    public var family: ResponseFamily {
        switch self {
        case .linear: .linear
        case .power: .power
        case .logarithmic: .logarithmic
        case .monotoneCubic: .monotoneCubic
        case .piecewiseLinear: .piecewiseLinear
        }
    }

    /// Grams at a normalised pressure.
    /// - Parameter x: Raw pressure above the axis minimum over the axis span; 0 or less
    ///   weighs nothing.
    /// - Returns: The curve's grams, never negative.
    public func grams(atX x: Double) -> Double {
        guard x > 0 else { return 0 }
        switch self {
        case .linear(let a):
            return a * x
        case .power(let a, let b):
            return a * pow(x, b)
        case .logarithmic(let slope, let k):
            return slope * Self.growth(k: k, x: x)
        case .monotoneCubic(let cubic):
            return cubic.grams(atX: x)
        case .piecewiseLinear(let segments):
            return segments.grams(atX: x)
        }
    }

    /// The named parameters of the curve, in normalised `x`, as the protocol lists them:
    /// `a` for linear; `a`, `b` for power; `a`, `k` for logarithmic. The interpolating
    /// families have none: the points are their parameters.
    public var parameters: [(name: String, value: Double)] {
        switch self {
        case .linear(let a):
            return [("a", a)]
        case .power(let a, let b):
            return [("a", a), ("b", b)]
        case .logarithmic(let slope, let k):
            // `a = s/k`; the fit keeps `k` away from 0 (see `ResponseFitting`), so this is finite.
            return [("a", slope / k), ("k", k)]
        case .monotoneCubic, .piecewiseLinear:
            return []
        }
    }

    /// `(e^(k·x) − 1)/k`, which is `x` in the limit `k → 0`; `expm1` keeps it exact for
    /// small `k·x`, where `exp(k·x) − 1` would lose every digit.
    static func growth(k: Double, x: Double) -> Double {
        k == 0 ? x : expm1(k * x) / k
    }
}

/// Straight segments through the origin and a rising list of knots; past the last knot the
/// last segment's slope continues (the behaviour of calibrations before fitted curves).
public struct PiecewiseLinear: Hashable, Sendable {
    /// Knots `(x, grams)` by rising `x`, the origin excluded.
    public let knots: [FitSample]

    /// The segments.
    /// - Parameter knots: At least one knot, by strictly rising `x` and rising grams.
    public init(knots: [FitSample]) {
        precondition(!knots.isEmpty, "a piecewise linear curve needs a knot")
        self.knots = knots
    }

    /// Grams at a normalised pressure.
    /// - Parameter x: Normalised pressure above 0.
    /// - Returns: The interpolated grams; the last segment continues past the last knot.
    public func grams(atX x: Double) -> Double {
        var lower = FitSample(x: 0, grams: 0)
        for knot in knots {
            if x <= knot.x || knot == knots.last! {
                return lower.grams + (x - lower.x) * (knot.grams - lower.grams) / (knot.x - lower.x)
            }
            lower = knot
        }
        return lower.grams
    }
}

/// One calibration point as the fit sees it: normalised pressure and grams.
public struct FitSample: Hashable, Sendable {
    /// Raw pressure above the axis minimum over the axis span.
    public var x: Double
    /// The known weight.
    public var grams: Double

    /// The sample.
    /// - Parameters:
    ///   - x: Normalised pressure, above 0.
    ///   - grams: The known weight, above 0.
    public init(x: Double, grams: Double) {
        self.x = x
        self.grams = grams
    }
}
