/// Whether raw pressure is still moving for the sensor: the trend half of the rule behind
/// READING's `stable` (``SensorSteadiness`` is the spread half).
///
/// A weight that slides steadily (a pad's firmware letting go of a contact it does not take
/// for a finger, a finger's force wandering, a load cell creeping) can stay within the noise
/// of every half-second window all the way down. A weighing instrument gives a result only
/// in stable equilibrium (OIML R 76-1, motion detection), so the trend is judged over a
/// horizon long enough to tell a slope from the noise: the least-squares line through the
/// raw pressure of the frames of the last ``horizonWindows`` stability windows (3 s by
/// default), none from before the current rest: the first window steady in spread whose own
/// line is flat by these same tests (so a landing, its sinking tail or a step never counts,
/// and the first stable reading comes as soon as the weight holds still for a window). A
/// fall that starts after a rest is diluted by the rest's frames in so long a horizon, so
/// the line through the last ``shortHorizonWindows`` windows (1 s) is judged too, by the
/// same tests. The weight is moving when either line's slope is
/// - more than ``significance`` standard errors from zero, the standard error being the
///   noise (the larger of what the successive differences and the line's own residuals
///   show, at least ``leastNoise``) over the square root of the spread of the frames' times;
/// - more than ``floorPerSecond`` of the axis's span a second (0.64 raw units a second on a
///   0–255 pad, 5.1 on a 0–2047 pen; 1 g/s in the nominal model on any axis): slower than
///   that is a creep no weighing notices within a reading, near OIML's bound on automatic
///   zero tracking (half a scale interval a second, the interval being a pad's raw unit);
/// - and more than ``leastRise`` raw units (or the axis `fuzz`, if larger) across the
///   frames' span: one step of a quantised sensor is not a trend.
///
/// While the spread of the window is beyond the noise, the weight is moving steadily (a
/// drift, rather than a landing, a step or a press) only when the frames lie along the
/// line: their residual within ``lineNoise`` units or ``lineNoiseFactor`` times the noise.
/// If the horizon's frames do, the horizon is kept (a noisy sensor's fall passes beyond the
/// spread now and then, and a horizon started over would be too short to see it);
/// otherwise the horizon starts over from the window, which is judged alone.
public enum SensorTrend {
    /// How many standard errors from zero a slope must be to be a trend (two-sided, about
    /// 3 in 1,000 for a resting weight's noise).
    public static let significance = 3.0
    /// The horizon, in stability windows.
    public static let horizonWindows: Int64 = 6
    /// The short horizon, in stability windows.
    public static let shortHorizonWindows: Int64 = 2
    /// The slowest trend that counts, as a fraction of the axis's span a second.
    public static let floorPerSecond = 0.0025
    /// The least rise, in raw units, across the horizon's frames that counts as movement.
    public static let leastRise = 1.0
    /// The least noise assumed, in raw units: a sensor quantises, so a line through levels
    /// it cannot show is known no better than about half a step.
    public static let leastNoise = 0.5
    /// The residual, in raw units, frames beyond the noise's spread may keep from their
    /// line (or ``lineNoiseFactor`` times the noise, if larger) to be a drift and not a jump.
    public static let lineNoise = 1.0
    /// How many times the noise the residual of such frames may be: a line through a drift
    /// leaves about the noise itself, one through a step a good part of the step more.
    public static let lineNoiseFactor = 1.5
    /// The fewest frames a trend is judged from.
    public static let fewestFrames = 5

    /// The slope of a fitted line if it is a trend.
    /// - Parameters:
    ///   - line: The least-squares line through the horizon's frames.
    ///   - noise: The window's noise from its successive differences (``SensorSteadiness/noise(steps:stepSum:largestStep:)``), if known.
    ///   - fuzz: The axis fuzz.
    ///   - axisSpan: The axis's maximum less its minimum.
    ///   - spreadSteady: Whether the window is steady in spread; when not, the frames must
    ///     also lie along the line.
    /// - Returns: The slope in raw units per second when the pressure is moving; `nil` when
    ///   it is not, as far as the sensor can tell.
    public static func drift(of line: FittedLine, noise: Double?, fuzz: Int32, axisSpan: Int32, spreadSteady: Bool) -> Double? {
        guard line.count >= fewestFrames, line.duration > 0, line.timeSpread > 0 else { return nil }
        let sigma = Swift.max(noise ?? 0, line.residual, leastNoise)
        let standardError = sigma / line.timeSpread.squareRoot()
        let slope = line.slope
        guard slope.magnitude > significance * standardError,
              slope.magnitude > floorPerSecond * Double(axisSpan),
              slope.magnitude * line.duration > Swift.max(leastRise, Double(fuzz))
        else { return nil }
        if !spreadSteady, line.residual > Swift.max(lineNoise, lineNoiseFactor * (noise ?? 0)) { return nil }
        return slope
    }
}

/// A least-squares line through raw pressure against time, in raw units and seconds.
public struct FittedLine: Hashable, Sendable {
    /// How many frames it was fitted to.
    public var count: Int
    /// Raw units per second.
    public var slope: Double
    /// The residual standard deviation, in raw units (0 for fewer than three frames).
    public var residual: Double
    /// Seconds from the first frame to the last.
    public var duration: Double
    /// The sum of squared deviations of the frames' times from their mean, in seconds²: the
    /// slope's standard error is the noise over its square root.
    public var timeSpread: Double
}

/// The frames of a horizon with the running sums of a least-squares line through them,
/// so that each frame costs O(1) amortised. Times are kept relative to an origin that
/// moves up with the horizon, so that the sums stay small and the fit exact to far below
/// a raw unit.
struct TrendFrames: Sendable {
    private var frames = SampleQueue()
    private var originTime: Int64 = 0
    private var originRaw: Int32 = 0
    private var sums = Sums()
    private var lastTime: Int64 = 0
    /// How far behind the first frame the origin may fall before the sums are made again
    /// from the frames.
    private static let rebase: Int64 = 2_000_000

    /// Sums over frames of their times (seconds after the origin) and raw pressures (units
    /// above the origin's), their squares and products.
    private struct Sums: Sendable {
        var count = 0.0
        var time = 0.0
        var timeSquares = 0.0
        var raw = 0.0
        var rawSquares = 0.0
        var products = 0.0

        mutating func add(time frameTime: Int64, raw frameRaw: Int32, originTime: Int64, originRaw: Int32, sign: Double) {
            let t = Double(frameTime - originTime) / 1_000_000
            let y = Double(frameRaw) - Double(originRaw)
            count += sign
            time += sign * t
            timeSquares += sign * t * t
            raw += sign * y
            rawSquares += sign * y * y
            products += sign * t * y
        }

        mutating func subtract(_ other: Sums) {
            count -= other.count
            time -= other.time
            timeSquares -= other.timeSquares
            raw -= other.raw
            rawSquares -= other.rawSquares
            products -= other.products
        }
    }

    mutating func removeAll() {
        frames.removeAll()
        sums = Sums()
    }

    mutating func append(time: Int64, raw: Int32) {
        if frames.count == 0 {
            originTime = time
            originRaw = raw
        }
        frames.append(time: time, value: raw)
        sums.add(time: time, raw: raw, originTime: originTime, originRaw: originRaw, sign: 1)
        lastTime = time
    }

    /// Drops the frames older than `start`.
    mutating func dropOlder(than start: Int64) {
        var removed = Sums()
        frames.dropOlder(than: start) { [originTime, originRaw] time, raw in
            removed.add(time: time, raw: raw, originTime: originTime, originRaw: originRaw, sign: 1)
        }
        sums.subtract(removed)
        guard let first = frames.firstTime else {
            sums = Sums()
            return
        }
        if first - originTime > Self.rebase {
            originTime = first
            originRaw = frames.first ?? originRaw
            var rebuilt = Sums()
            frames.forEach { [originTime, originRaw] time, raw in
                rebuilt.add(time: time, raw: raw, originTime: originTime, originRaw: originRaw, sign: 1)
            }
            sums = rebuilt
        }
    }

    /// The line through the frames; `nil` with fewer than two.
    var line: FittedLine? {
        let n = Double(frames.count)
        guard frames.count >= 2, let first = frames.firstTime else { return nil }
        let timeSpread = Swift.max(0, sums.timeSquares - sums.time * sums.time / n)
        let covariance = sums.products - sums.time * sums.raw / n
        let rawSpread = Swift.max(0, sums.rawSquares - sums.raw * sums.raw / n)
        let slope = timeSpread > 0 ? covariance / timeSpread : 0
        let residualSquares = Swift.max(0, rawSpread - slope * covariance)
        return FittedLine(
            count: frames.count, slope: slope,
            residual: frames.count > 2 ? (residualSquares / (n - 2)).squareRoot() : 0,
            duration: Double(lastTime - first) / 1_000_000, timeSpread: timeSpread)
    }
}
