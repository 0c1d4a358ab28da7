import Glibc  // log and sqrt only: ScaleCore does no I/O and reads no clock.

/// How far raw pressure may spread within a window and still be steady as the sensor can
/// show it: the one rule behind READING's `stable`, `weigh`, the log's stable weights and
/// calibration points.
///
/// A resting weight on a real sensor is never still to the unit. The spread a steady window
/// may have is the largest of:
/// - two raw units: one unit either way is the least a quantised sensor can show of a
///   weight resting between two of its steps;
/// - twice the axis `fuzz`, where the driver declares its noise that way;
/// - the noise the window itself shows: its standard deviation estimated from ten or more
///   successive differences (a slow drift barely moves those, noise does; the largest is left out, so
///   that one jump, a weight placed or pressed, is not taken for noise), times the range a
///   window of that many normally distributed readings spans about 99 times in 100, plus
///   as much as a unit for the rounding of the range's two ends to whole units: the noise
///   itself, up to one unit. Below a unit of noise the estimate already holds the rounding
///   (its steps are mostly the flips between two levels), and a full unit more would let
///   the sinking tail of a landing into a steady window; from a unit up, the rounding adds
///   little to the estimate but up to a unit to the range, and without it a resting weight
///   with a unit of noise is unsteady in about 1 window of 300 (1 in 2,000 with it).
public enum SensorSteadiness {
    /// The least spread, in raw units, that a resting weight can show on a quantised sensor.
    public static let quantisationSpan = 2.0
    /// The fewest successive differences the noise is estimated from: fewer say little about
    /// it (two steps of a press look like noise of their size), so a window with fewer is
    /// held to the floor alone.
    public static let stepsForNoise = 10

    /// The largest spread in raw units that counts as steady.
    /// - Parameters:
    ///   - steps: How many successive differences the window holds (its readings less one).
    ///   - stepSum: The sum of their absolute values.
    ///   - largestStep: The largest of them.
    ///   - fuzz: The axis fuzz (0 when the driver declares none).
    /// - Returns: The allowed spread (maximum minus minimum), in raw units.
    public static func allowedSpan(steps: Int, stepSum: Double, largestStep: Double, fuzz: Int32) -> Double {
        let floor = Swift.max(quantisationSpan, 2 * Double(fuzz))
        guard let noise = noise(steps: steps, stepSum: stepSum, largestStep: largestStep) else { return floor }
        return Swift.max(floor, noise * rangeFactor(samples: steps + 1) + Swift.min(1, noise))
    }

    /// The standard deviation of a window's noise, in raw units, from its successive
    /// differences (the largest left out, so that one jump is not taken for noise).
    /// - Parameters:
    ///   - steps: How many successive differences the window holds.
    ///   - stepSum: The sum of their absolute values.
    ///   - largestStep: The largest of them.
    /// - Returns: The estimate; `nil` with fewer than ``stepsForNoise`` differences.
    public static func noise(steps: Int, stepSum: Double, largestStep: Double) -> Double? {
        guard steps >= stepsForNoise else { return nil }
        let meanStep = (stepSum - largestStep) / Double(steps - 1)
        // E|a − b| = 2σ/√π for two independent normal readings.
        return meanStep * Double.pi.squareRoot() / 2
    }

    /// The same for a window given as its raw readings, oldest first.
    public static func allowedSpan(readings raws: [Int32], fuzz: Int32) -> Double {
        var sum = 0.0
        var largest = 0.0
        for (earlier, later) in zip(raws, raws.dropFirst()) {
            let step = Double((Int64(later) - Int64(earlier)).magnitude)
            sum += step
            largest = Swift.max(largest, step)
        }
        return allowedSpan(steps: Swift.max(0, raws.count - 1), stepSum: sum, largestStep: largest, fuzz: fuzz)
    }

    /// About the 99th percentile of the range of `samples` standard normal readings, in
    /// standard deviations: `2·√(2·ln n) + 2` (6.5 for 25 readings, 7.6 for 50, 8.1 for 100,
    /// 9.1 for 500), so that a resting weight's window is steady about 99 times in 100.
    static func rangeFactor(samples: Int) -> Double {
        2 * (2 * log(Double(samples))).squareRoot() + 2
    }
}

/// Follows the touch's raw pressure over the stability window, frame by frame: its lowest,
/// highest and mean value and whether it is steady for the sensor: its spread within the
/// noise (``SensorSteadiness``) and no trend over the horizon (``SensorTrend``).
/// The pressure held at the window's start counts in its spread: the kernel sends nothing
/// while a value stays, so the first frames after a quiet touch moved from that value.
///
/// Keeps the running minimum and maximum in two monotonic queues, and the readings, the
/// successive differences and the horizon's frames with their running sums, so each frame
/// costs O(1) amortised however fast the device reports.
public struct StabilityDetector: Sendable {
    /// The window in microseconds of event time: a touch must last this long, and this much
    /// of it is looked back over.
    public let window: Int64
    /// The axis fuzz, the noise the driver declares.
    public let fuzz: Int32
    /// The axis's maximum less its minimum, for the slowest trend that counts.
    public let axisSpan: Int32
    private var touchStart: Int64?
    private var previousRaw: Int32 = 0
    private var minimums = SampleQueue()
    private var maximums = SampleQueue()
    private var steps = SampleQueue()
    private var largestSteps = SampleQueue()
    private var stepSum: Int64 = 0
    private var readings = SampleQueue()
    /// The window's readings less the touch's first, summed and squared, for their mean and
    /// spread: relative to the first so that the squares stay small (and exact in a Double
    /// for any pressure a sensor reports).
    private var origin: Int32 = 0
    private var deviationSum = 0.0
    private var deviationSquares = 0.0
    /// When the current run of steady windows began: the end of its first window. `nil`
    /// while the window is not steady.
    private var steadySince: Int64?
    /// The start of the current rest: of its first window that was steady in spread with a
    /// flat line of its own. The trend's horizon never reaches before it, so that a landing,
    /// its sinking tail or a step is not taken for a slope. `nil` until then, and again
    /// whenever the spread goes beyond the noise other than along a line.
    private var restSince: Int64?
    /// The frames of the trend's horizon, and of its last ``SensorTrend/shortHorizonWindows``
    /// windows: the long one tells a slow creep from the noise, the short one sees a fall
    /// that starts after a rest before the rest's frames dilute it.
    private var trend = TrendFrames()
    private var recentTrend = TrendFrames()
    /// The last reading older than the window: the pressure held at the window's start when
    /// the window's first frame came later. The kernel sends nothing while a value does not
    /// change, so a touch quiet for longer than the window still pressed that much.
    private var heldBeforeWindow: Int32?

    /// What the window holds once the touch has lasted it.
    public struct Window: Hashable, Sendable {
        /// The lowest raw pressure of the window.
        public var lowest: Int32
        /// The highest raw pressure of the window.
        public var highest: Int32
        /// The mean and spread of the window's frames: a resting weight's pressure with
        /// the noise of single frames averaged out.
        public var pressure: SettledPressure
        /// Whether the window is steady for the sensor: its spread within what the sensor
        /// cannot avoid, and no trend over the horizon.
        public var steady: Bool
        /// The trend in raw units per second when the pressure is moving steadily
        /// (``SensorTrend``); `nil` when it is not. A window with a drift is never steady.
        public var drift: Double?
        /// Whether every frame of the window came after the touch was first steady: a
        /// window that holds none of a landing's sinking tail, which the first steady
        /// window may (its spread allows the noise, and a tail can sink within that).
        public var steadyThroughout: Bool
    }

    /// The trend's horizon in microseconds: ``SensorTrend/horizonWindows`` windows.
    public var horizon: Int64 { window * SensorTrend.horizonWindows }
    /// The short horizon in microseconds: ``SensorTrend/shortHorizonWindows`` windows.
    public var shortHorizon: Int64 { window * SensorTrend.shortHorizonWindows }

    /// A detector.
    /// - Parameters:
    ///   - window: The stability window in microseconds.
    ///   - fuzz: The pressure axis's fuzz.
    ///   - axisSpan: The pressure axis's maximum less its minimum.
    public init(window: Int64, fuzz: Int32 = 0, axisSpan: Int32) {
        self.window = window
        self.fuzz = fuzz
        self.axisSpan = axisSpan
    }

    /// Forgets the touch; the next `update` starts a new one.
    public mutating func reset() {
        touchStart = nil
        minimums.removeAll()
        maximums.removeAll()
        steps.removeAll()
        largestSteps.removeAll()
        stepSum = 0
        readings.removeAll()
        deviationSum = 0
        deviationSquares = 0
        steadySince = nil
        restSince = nil
        trend.removeAll()
        recentTrend.removeAll()
        heldBeforeWindow = nil
    }

    /// Adds a frame of the current touch.
    /// - Returns: The window ending at `time`; `nil` while the touch is younger than the window.
    public mutating func update(time: EventTime, raw: Int32) -> Window? {
        let now = time.microseconds
        if touchStart == nil {
            touchStart = now
            origin = raw
        } else {
            let step = Int32(clamping: (Int64(raw) - Int64(previousRaw)).magnitude)
            steps.append(time: now, value: step)
            largestSteps.pushKeepingMonotonic(time: now, value: step) { $0 <= step }
            stepSum += Int64(step)
        }
        previousRaw = raw
        readings.append(time: now, value: raw)
        let deviation = Double(raw) - Double(origin)
        deviationSum += deviation
        deviationSquares += deviation * deviation
        let windowStart = now - window
        minimums.pushKeepingMonotonic(time: now, value: raw) { $0 >= raw }
        maximums.pushKeepingMonotonic(time: now, value: raw) { $0 <= raw }
        minimums.dropOlder(than: windowStart)
        maximums.dropOlder(than: windowStart)
        steps.dropOlder(than: windowStart) { stepSum -= Int64($0) }
        largestSteps.dropOlder(than: windowStart)
        readings.dropOlder(than: windowStart) { [origin] dropped in
            heldBeforeWindow = dropped
            let deviation = Double(dropped) - Double(origin)
            deviationSum -= deviation
            deviationSquares -= deviation * deviation
        }
        trend.append(time: now, raw: raw)
        trend.dropOlder(than: Swift.max(now - horizon, restSince ?? windowStart))
        recentTrend.append(time: now, raw: raw)
        recentTrend.dropOlder(than: Swift.max(now - shortHorizon, restSince ?? windowStart))
        guard let start = touchStart, now - start >= window,
              var lowest = minimums.first, var highest = maximums.first
        else { return nil }
        if let held = heldBeforeWindow, let firstTime = readings.firstTime, firstTime > windowStart {
            lowest = Swift.min(lowest, held)
            highest = Swift.max(highest, held)
        }
        let span = Double(Int64(highest) - Int64(lowest))
        var spreadSteady = span <= SensorSteadiness.quantisationSpan
        if !spreadSteady, let largest = largestSteps.first {
            spreadSteady = span <= SensorSteadiness.allowedSpan(
                steps: steps.count, stepSum: Double(stepSum), largestStep: Double(largest), fuzz: fuzz)
        }
        let noise = largestSteps.first.flatMap {
            SensorSteadiness.noise(steps: steps.count, stepSum: Double(stepSum), largestStep: Double($0))
        }
        let judge = { [fuzz, axisSpan] (line: FittedLine) in
            SensorTrend.drift(of: line, noise: noise, fuzz: fuzz, axisSpan: axisSpan, spreadSteady: spreadSteady)
        }
        var drift: Double?
        if spreadSteady {
            if restSince == nil {
                // Not yet at rest: the horizon is the window. A rest begins with a window
                // whose own line is flat, so that a landing's sinking tail, which the spread
                // may allow, is motion and never part of the rest's horizon.
                drift = trend.line.flatMap(judge)
                if drift == nil { restSince = windowStart }
            } else {
                // Either line may show the motion; the last second's says how fast it is
                // now (the long one is diluted by the rest before a fall).
                drift = recentTrend.line.flatMap(judge) ?? trend.line.flatMap(judge)
            }
        } else {
            // Beyond the noise: a fall that the noise carried past the spread once in a
            // while, if the horizon's frames still lie along a line, keeps its horizon (a
            // noisy sensor's fall would otherwise start over from a window, too short to
            // see it); a jump does not, and the window alone is judged.
            drift = restSince == nil ? nil : trend.line.flatMap(judge)
            if drift == nil {
                restSince = nil
                trend.dropOlder(than: windowStart)
                recentTrend.dropOlder(than: windowStart)
                drift = trend.line.flatMap(judge)
            }
        }
        let steady = spreadSteady && drift == nil
        if !steady {
            steadySince = nil
        } else if steadySince == nil {
            steadySince = now
        }
        let steadyThroughout = steadySince.map { windowStart >= $0 } ?? false
        return Window(lowest: lowest, highest: highest, pressure: pressure, steady: steady, drift: drift, steadyThroughout: steadyThroughout)
    }

    /// The mean and sample standard deviation of the window's readings.
    private var pressure: SettledPressure {
        let count = readings.count
        let meanDeviation = deviationSum / Double(count)
        let squares = Swift.max(0, deviationSquares - Double(count) * meanDeviation * meanDeviation)
        return SettledPressure(
            mean: Double(origin) + meanDeviation,
            standardDeviation: count > 1 ? (squares / Double(count - 1)).squareRoot() : 0,
            count: count)
    }
}

/// A queue of (time, value) that only grows at the back and shrinks at either end, stored
/// in an array with a moving head so that pushes and pops do not shift elements. One array
/// of pairs rather than one per field: each change to an array checks that it is the only
/// owner, and this runs for every frame.
struct SampleQueue: Sendable {
    private struct Sample: Sendable {
        var time: Int64
        var value: Int32
    }

    private var samples: [Sample] = []
    private var head = 0

    var first: Int32? { head < samples.count ? samples[head].value : nil }
    var firstTime: Int64? { head < samples.count ? samples[head].time : nil }
    var count: Int { samples.count - head }

    mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
        head = 0
    }

    mutating func append(time: Int64, value: Int32) {
        samples.append(Sample(time: time, value: value))
    }

    /// Calls `body` with the time and value of each sample, oldest first.
    func forEach(_ body: (Int64, Int32) -> Void) {
        for index in head..<samples.count { body(samples[index].time, samples[index].value) }
    }

    /// Drops from the back every sample that `dominated` says the new one makes irrelevant,
    /// then appends the new one.
    mutating func pushKeepingMonotonic(time: Int64, value: Int32, dominated: (Int32) -> Bool) {
        while samples.count > head, dominated(samples[samples.count - 1].value) {
            samples.removeLast()
        }
        samples.append(Sample(time: time, value: value))
    }

    /// Drops the samples older than `start`, telling `dropped` each value it drops.
    mutating func dropOlder(than start: Int64, dropped: (Int32) -> Void = { _ in }) {
        dropOlder(than: start) { _, value in dropped(value) }
    }

    /// Drops the samples older than `start`, telling `dropped` the time and value of each.
    mutating func dropOlder(than start: Int64, dropped: (Int64, Int32) -> Void) {
        while head < samples.count, samples[head].time < start {
            dropped(samples[head].time, samples[head].value)
            head += 1
        }
        // Reclaim the consumed prefix once it dominates the storage.
        if head > 64, head * 2 > samples.count {
            samples.removeFirst(head)
            head = 0
        }
    }
}
