import Glibc
import Testing
@testable import ScaleCore

func reading(at milliseconds: Double, raw: Int32 = 100, contacts: Int = 1) -> Reading {
    Reading(time: ms(milliseconds), raw: raw, force: 0, grams: 0, saturated: false, contacts: contacts, stable: false, model: .nominal)
}

@Suite struct ReadingThrottleTests {
    @Test func firstGoesOutAndTheNextInsideTheWindowIsHeld() {
        var throttle = ReadingThrottle(interval: 10_000)
        #expect(throttle.offer(reading(at: 0)) == reading(at: 0))
        #expect(throttle.offer(reading(at: 4, raw: 1)) == nil)
        #expect(throttle.deadline == ms(10))
        // A newer frame replaces the held one.
        #expect(throttle.offer(reading(at: 8, raw: 2)) == nil)
        #expect(throttle.due(at: ms(9.999)) == nil)
        // At the end of the window the newest goes out, stamped with the window's end.
        #expect(throttle.due(at: ms(12)) == reading(at: 10, raw: 2))
        #expect(throttle.deadline == nil)
        // The window restarted at 10 ms: a frame at 15 ms is held until 20 ms.
        #expect(throttle.offer(reading(at: 15, raw: 3)) == nil)
        #expect(throttle.deadline == ms(20))
        #expect(throttle.drain() == reading(at: 20, raw: 3))
        #expect(throttle.drain() == nil)
    }

    @Test func aFrameAtTheWindowEdgeGoesOutAtOnce() {
        var throttle = ReadingThrottle(interval: 10_000)
        _ = throttle.offer(reading(at: 0))
        #expect(throttle.offer(reading(at: 10, raw: 5)) == reading(at: 10, raw: 5))
    }

    @Test func releaseGoesOutAtOnceDropsTheHeldAndRestartsTheWindow() {
        var throttle = ReadingThrottle(interval: 10_000)
        _ = throttle.offer(reading(at: 0))
        _ = throttle.offer(reading(at: 3, raw: 7))
        let zero = reading(at: 5, raw: 0, contacts: 0)
        #expect(throttle.release(zero) == zero)
        #expect(throttle.deadline == nil)
        // The window restarted at the release.
        #expect(throttle.offer(reading(at: 12)) == nil)
        #expect(throttle.offer(reading(at: 15)) == reading(at: 15))
    }

    @Test func zeroIntervalLetsEveryFrameThrough() {
        var throttle = ReadingThrottle(interval: 0)
        #expect(throttle.offer(reading(at: 0)) != nil)
        #expect(throttle.offer(reading(at: 0)) != nil)
    }
}

@Suite struct PeakDetectorTests {
    @Test func firesOncePerCrossingAndRearmsBelowTheHysteresis() {
        var detector = PeakDetector(threshold: 0.8, hysteresis: 0.1)
        let forces: [Double] = [0.5, 0.8, 0.9, 0.75, 0.71, 0.85, 0.69, 0.8]
        // 0.8 fires; 0.75 and 0.71 stay within the hysteresis (>= 0.7): no re-arm, so 0.85
        // does not fire; 0.69 re-arms; 0.8 fires again.
        #expect(forces.map { detector.update(force: $0, touching: true) } == [false, true, false, false, false, false, false, true])
    }

    @Test func liftingRearms() {
        var detector = PeakDetector(threshold: 1, hysteresis: 0.05)
        let fired = [(1.0, true), (1.0, true), (0.0, false), (1.0, true)].map { detector.update(force: $0.0, touching: $0.1) }
        #expect(fired == [true, false, false, true])
    }
}

@Suite struct StabilityDetectorTests {
    @Test func needsTheWholeWindowAndASteadySpread() {
        // 100 Hz: a weight wobbling by a unit either way at 100, then placed on at 120 at
        // 600 ms. Not before 500 ms into the touch; steady while each window holds one level;
        // not while it holds both (500 ms after the step); steady again from 1100 ms.
        var detector = StabilityDetector(window: 500_000, axisSpan: 2047)
        for step in 0...120 {
            let time = step * 10
            let wobble = Int32(step % 3) - 1
            let window = detector.update(time: ms(Double(time)), raw: (time < 600 ? 100 : 120) + wobble)
            let expected: Bool? = time < 500 ? nil : time < 600 || time >= 1100
            #expect(window?.steady == expected, "at \(time) ms")
            if time == 1000 { #expect(window.map { [$0.lowest, $0.highest] } == [99, 121]) }
        }
    }

    /// Steady throughout only once a whole window has passed since the touch was first
    /// steady, and again a window after each unsteady stretch: the frames of a window that
    /// is steady throughout all came after steadiness was reached.
    @Test func steadyThroughoutWaitsAWindowAfterTheFirstSteadyOne() {
        var detector = StabilityDetector(window: 500_000, axisSpan: 2047)
        for step in 0...180 {
            let time = step * 10
            let wobble = Int32(step % 3) - 1
            let window = detector.update(time: ms(Double(time)), raw: (time < 600 ? 100 : 120) + wobble)
            // Steady 500–590 ms and from 1100 ms (the step at 600 ms); throughout from 1600 ms
            // only: at 500–590 ms a window's first frames precede the first steady moment.
            let expected: Bool? = time < 500 ? nil : time >= 1600
            #expect(window?.steadyThroughout == expected, "at \(time) ms")
        }
    }

    /// A touch that sent nothing for longer than the window (its pressure did not change,
    /// so the kernel sent no event) and is then pressed: the first frames of the press are
    /// not steady, measured from the pressure held until then, and two or three steps of a
    /// press are not taken for noise.
    @Test func aPressAfterAQuietTouchIsNotSteady() {
        var detector = StabilityDetector(window: 500_000, axisSpan: 2047)
        _ = detector.update(time: ms(0), raw: 5)
        for frame in 0..<8 {
            let raw = Int32(10 + 7 * frame)
            let window = detector.update(time: ms(3000 + 4 * Double(frame)), raw: raw)
            #expect(window?.steady == false, "raw \(raw), frame \(frame) of the press")
            if frame == 0 { #expect(window.map { [$0.lowest, $0.highest] } == [5, 10]) }
        }
    }

    /// The window's mean and spread are those of its frames: the last 500 ms of the touch.
    @Test func theWindowsPressureIsTheMeanAndSpreadOfItsFrames() throws {
        var detector = StabilityDetector(window: 500_000, axisSpan: 2047)
        var last: StabilityDetector.Window?
        for (time, raw) in [(0, 10), (300, 100), (600, 102), (700, 104), (800, 102)] as [(Double, Int32)] {
            last = detector.update(time: ms(time), raw: raw)
        }
        let pressure = try #require(last?.pressure)
        #expect(pressure.count == 4 && pressure.mean == 102)
        #expect(abs(pressure.standardDeviation - (8.0 / 3).squareRoot()) < 1e-12)
        // A long touch of large values: the running sums stay exact.
        var long = StabilityDetector(window: 500_000, axisSpan: 2047)
        for step in 0..<100_000 { last = long.update(time: ms(Double(step)), raw: 1_000_000 + Int32(step % 3)) }
        let held = try #require(last?.pressure)
        #expect(held.count == 501 && abs(held.mean - 1_000_001) < 0.01 && abs(held.standardDeviation - 0.8173) < 1e-3, "\(held)")
    }

    @Test func resetStartsANewTouch() {
        var detector = StabilityDetector(window: 500_000, axisSpan: 2047)
        var steady = [detector.update(time: ms(0), raw: 50)?.steady, detector.update(time: ms(600), raw: 50)?.steady]
        detector.reset()
        steady += [detector.update(time: ms(700), raw: 50)?.steady, detector.update(time: ms(1200), raw: 50)?.steady]
        #expect(steady == [nil, true, nil, true])
    }

    @Test func theAxisFuzzWidensWhatCountsAsSteady() {
        // Seven units of spread in steps of seven: no noise the window could show, but within
        // twice a fuzz of 4.
        for (fuzz, expected) in [(Int32(0), false), (4, true)] {
            var detector = StabilityDetector(window: 500_000, fuzz: fuzz, axisSpan: 2047)
            var last: StabilityDetector.Window?
            for (index, raw) in [100, 100, 100, 100, 100, 107].enumerated() { last = detector.update(time: ms(Double(index) * 100), raw: Int32(raw)) }
            #expect(last?.steady == expected, "fuzz \(fuzz)")
        }
    }

    /// Noise the window shows is allowed, whatever its size; a drift well beyond it is not.
    @Test func noiseIsSteadyAndADriftIsNot() {
        var random = GaussianNoise(seed: 5)
        var noisy = StabilityDetector(window: 500_000, axisSpan: 2047)
        var drifting = StabilityDetector(window: 500_000, axisSpan: 2047)
        var steadyNoise = 0, steadyDrift = 0, windows = 0
        for frame in 0..<400 {
            let time = ms(Double(frame) * 5)
            let noise = Int32((random.next() * 4).rounded())
            // A weight still sinking by 120 units a second under the same noise: 60 units,
            // 15 σ, a window. (A drift within the noise's own range, a few σ a window, cannot
            // be told from the noise by the spread; it is what the ± of a reading covers.)
            let drift = Int32((Double(frame) * 0.6).rounded())
            if noisy.update(time: time, raw: 1000 + noise)?.steady == true { steadyNoise += 1 }
            if let window = drifting.update(time: time, raw: 1000 + drift + noise) {
                windows += 1
                if window.steady { steadyDrift += 1 }
            }
        }
        #expect(steadyNoise >= windows * 9 / 10, "σ 4 units of noise is steady in \(steadyNoise) of \(windows) windows")
        #expect(steadyDrift == 0, "the drift was steady in \(steadyDrift) windows")
    }

    @Test func theAllowedSpanGrowsWithTheNoiseAndTheCount() {
        #expect(SensorSteadiness.allowedSpan(steps: 1, stepSum: 30, largestStep: 30, fuzz: 0) == 2)
        #expect(SensorSteadiness.allowedSpan(steps: 49, stepSum: 5, largestStep: 1, fuzz: 0) == 2)
        #expect(SensorSteadiness.allowedSpan(steps: 49, stepSum: 0, largestStep: 0, fuzz: 3) == 6)
        // σ 1: a mean step of 2/√π, the largest step left out; a unit more for rounding.
        let step = 2 / Double.pi.squareRoot()
        let fifty = SensorSteadiness.allowedSpan(steps: 49, stepSum: step * 48 + 9, largestStep: 9, fuzz: 0)
        let fiveHundred = SensorSteadiness.allowedSpan(steps: 499, stepSum: step * 498 + 9, largestStep: 9, fuzz: 0)
        #expect(abs(fifty - 8.59) < 0.01 && abs(fiveHundred - 10.05) < 0.01, "\(fifty) \(fiveHundred)")
        // σ 3: still a unit for rounding, no more.
        let three = SensorSteadiness.allowedSpan(steps: 49, stepSum: 3 * step * 48 + 30, largestStep: 30, fuzz: 0)
        #expect(abs(three - (3 * 7.59 + 1)) < 0.03, "\(three)")
        // The jump of 29 is left out of the noise: the ten steps of one (σ 0.89) allow about
        // 6.6 units, the rounding as much as the noise.
        let jumped: [Int32] = [100, 101, 100, 101, 100, 101, 130, 129, 130, 129, 130, 129]
        #expect(abs(SensorSteadiness.allowedSpan(readings: jumped, fuzz: 0) - 6.61) < 0.01)
        // Fewer than ten steps say little about the noise: the floor alone.
        #expect(SensorSteadiness.allowedSpan(readings: [100, 101, 100, 130, 129, 130], fuzz: 0) == 2)
    }
}

/// Standard normal draws (Box–Muller over ScaleCore's SplitMix64): noise a real sensor makes.
struct GaussianNoise {
    private var generator: SplitMix64
    init(seed: UInt64) { generator = SplitMix64(seed: seed) }
    mutating func next() -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &generator)
        let v = Double.random(in: 0..<1, using: &generator)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}
