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
    @Test func needsTheWholeWindowAndASmallSpread() {
        var detector = StabilityDetector(window: 500_000, maximumSpan: 2)
        let frames: [(Double, Double)] = [(0, 100), (250, 101), (499, 102), (500, 101), (600, 103), (700, 104), (1300, 104)]
        let stable = frames.map { detector.update(time: ms($0.0), grams: $0.1) }
        // Not before 500 ms into the touch. At 500 the window [0, 500] spans 100…102 = 2 g:
        // stable. At 600, [100, 600] spans 101…103 = 2 g: stable. At 700, [200, 700] spans
        // 101…104 = 3 g: not. At 1300 only 104 is left in [800, 1300]: stable.
        #expect(stable == [false, false, false, true, true, false, true])
    }

    @Test func resetStartsANewTouch() {
        var detector = StabilityDetector(window: 500_000, maximumSpan: 2)
        var stable = [detector.update(time: ms(0), grams: 50), detector.update(time: ms(600), grams: 50)]
        detector.reset()
        stable += [detector.update(time: ms(700), grams: 50), detector.update(time: ms(1200), grams: 50)]
        #expect(stable == [false, true, false, true])
    }
}

@Suite struct ProtocolMessageTests {
    @Test func readingIsByteExact() {
        let value = Reading(time: EventTime(seconds: 1382570965, microseconds: 747302), raw: 51, force: 0.2, grams: 77.0, saturated: false, contacts: 1, stable: false, model: .nominal)
        #expect(ProtocolMessage.reading(value, device: "event5") ==
            #"{"class":"READING","device":"event5","time":1382570965.747302,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"# + "\n")
        // No device: the field is left out, never null.
        #expect(!ProtocolMessage.reading(value).contains("device"))
    }

    @Test func roundsGramsToATenthAndForceToFourDecimals() {
        let value = Reading(time: EventTime(microseconds: 5), raw: 1, force: 1.0 / 3.0, grams: 12.3456, saturated: true, contacts: 2, stable: true, model: .calibrated)
        #expect(ProtocolMessage.reading(value) ==
            #"{"class":"READING","time":0.000005,"raw":1,"force":0.3333,"grams":12.3,"saturated":true,"contacts":2,"stable":true,"model":"calibrated"}"# + "\n")
        let negativeZero = Reading(time: EventTime(microseconds: 0), raw: 0, force: 0, grams: -0.04, saturated: false, contacts: 0, stable: false, model: .physical)
        #expect(ProtocolMessage.reading(negativeZero).contains(#""grams":0.0,"#))
    }

    @Test func peakIsByteExact() {
        let peak = Peak(time: EventTime(seconds: 12, microseconds: 34), raw: 255, force: 1, grams: 385)
        #expect(ProtocolMessage.peak(peak) == #"{"class":"PEAK","time":12.000034,"raw":255,"grams":385.0}"# + "\n")
    }

    @Test func escapesStrings() {
        var json = JSONLineWriter()
        json.add("name", string: "Pad \"Pro\"\\\n\u{01}")
        #expect(json.line == #"{"name":"Pad \"Pro\"\\\n\u0001"}"# + "\n")
    }
}
