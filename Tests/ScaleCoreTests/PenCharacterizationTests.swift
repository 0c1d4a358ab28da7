import Glibc
import ScaleCore
import Testing

/// Pen characterization: the touch tracker on frames a pen makes (noise, a landing that
/// overshoots, creep, a value held while the kernel sends nothing), the pairing of weights
/// with touches, the IAF and its bounds, P-values, hysteresis and the exported settings.
@Suite struct PenCharacterizationTests {
    /// A logarithmic pen on 0–2047 with its activation at `activation` grams, full scale at
    /// 400 g and 3 % hysteresis, with a unit and a half of noise.
    static func pen(activation: Double, noise: Double = 1.5) -> SyntheticPen {
        let position: @Sendable (Double) -> Double = { Swift.min(1, ($0 - activation) / (400 - activation)) }
        let pressing: @Sendable (Double) -> Double = { $0 < activation ? 0 : log(1 + 8 * position($0)) / log(9) }
        return SyntheticPen(
            axisMaximum: 2047, pressing: pressing,
            releasing: { force in force < activation ? 0 : Swift.min(1, pressing(force) + 0.12 * position(force) * (1 - position(force))) },
            noise: noise, creep: 0.003, overshoot: 0.25)
    }

    /// The touches a pen makes with these weights placed in turn.
    static func touches(_ pen: SyntheticPen, _ weights: [Double], seed: UInt64 = 7) -> [PenTouch] {
        var random = SplitMix64(seed: seed)
        var tracker = PenTouchTracker(axis: 0...pen.axisMaximum)
        var touches: [PenTouch] = []
        for frame in pen.frames(weights: weights, random: &random) {
            for case .ended(let touch?) in tracker.add(time: frame.time, raw: frame.raw, touching: frame.touching) { touches.append(touch) }
        }
        if case .ended(let touch?) = tracker.finish() { touches.append(touch) }
        return touches
    }

    static func characterize(_ pen: SyntheticPen, _ weights: [Double]) throws -> PenCharacterization {
        try PenCharacterization(measurements: PenCharacterization.pair(weights: weights, touches: touches(pen, weights)), axis: 0...2047)
    }

    /// Where the pen first reads 1: the truth an IAF is judged by.
    static func registration(_ pen: SyntheticPen) -> Double {
        var low = 0.0, high = 400.0
        for _ in 0..<80 {
            let middle = (low + high) / 2
            if pen.pressing(middle) * 2047 < 0.5 { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    static let weights: [Double] = [2.3, 3.92, 5.74, 7.5, 8.5, 10.8, 12.42, 17, 25.5, 42.5, 85, 127.5, 170, 255, 340]

    @Test func theIAFBetweenTwoWeightsIsFoundWithinItsBoundsAndItsUncertaintyCoversIt() throws {
        let pen = Self.pen(activation: 7.0)
        let result = try Self.characterize(pen, Self.weights)
        let truth = Self.registration(pen)
        #expect(result.unregistered == [2.3, 3.92, 5.74])
        #expect(result.activation.heaviestUnregistered == 5.74)
        #expect(result.activation.lightestRegistered == 7.5)
        #expect((result.activation.grams - truth).magnitude <= Swift.max(1, 0.15 * truth), "IAF \(result.activation.grams), truth \(truth)")
        #expect((result.activation.grams - truth).magnitude <= result.activation.uncertainty, "\(result.activation)")
        #expect(result.activation.grams - result.activation.uncertainty >= 5.74 - 1e-9)
        #expect(result.activation.grams + result.activation.uncertainty <= 7.5 + 1e-9)
    }

    @Test func aPenWhoseIAFLiesBelowEveryWeightIsStillEstimatedFromTheFit() throws {
        let pen = Self.pen(activation: 1.2)
        let result = try Self.characterize(pen, Self.weights)
        let truth = Self.registration(pen)
        #expect(result.unregistered.isEmpty)
        #expect(result.activation.heaviestUnregistered == nil)
        #expect(result.activation.grams < 2.3)
        #expect((result.activation.grams - truth).magnitude <= 1, "IAF \(result.activation.grams) ± \(result.activation.uncertainty), truth \(truth)")
        #expect((result.activation.grams - truth).magnitude <= result.activation.uncertainty)
    }

    @Test func aSingleRegisteredWeightGivesTheBoundsAloneAndTheirMiddle() throws {
        // Only the heaviest registers, and nothing below full scale but it.
        let weights: [Double] = [2.3, 3.92, 5.74, 30]
        let pen = Self.pen(activation: 20)
        let result = try Self.characterize(pen, weights)
        #expect(result.points.map(\.grams) == [30])
        #expect(result.activation.grams == (5.74 + 30) / 2)
        #expect(result.activation.uncertainty == (30 - 5.74) / 2)
        #expect(result.pValues[0] == result.activation.grams)
        // P-values stop at what the one weight reached.
        let reached = Int((result.reach * 10).rounded(.down))
        #expect(result.pValues.prefix(reached + 1).allSatisfy { $0 != nil })
        #expect(result.pValues.dropFirst(reached + 1).allSatisfy { $0 == nil })
    }

    @Test func weightsPlacedOutOfOrderArePairedInThatOrder() throws {
        let pen = Self.pen(activation: 7.0)
        let placed: [Double] = [42.5, 3.92, 17, 8.5, 170, 5.74, 85]
        let result = try Self.characterize(pen, placed)
        let ordered = try Self.characterize(pen, placed.sorted())
        #expect(result.unregistered == [3.92, 5.74])
        #expect(result.points.map(\.grams) == [8.5, 17, 42.5, 85, 170])
        for (shuffled, sorted) in zip(result.points, ordered.points) {
            #expect((shuffled.fraction - sorted.fraction).magnitude < 0.01, "\(shuffled.grams) g")
        }
    }

    @Test func weightsGivenInTheWrongOrderAreRefusedNamingTheTwo() throws {
        let pen = Self.pen(activation: 7.0)
        let placed: [Double] = [8.5, 17, 42.5, 85, 170]
        let touches = Self.touches(pen, placed)
        // The person typed the list in another order than they placed the weights.
        let measurements = try PenCharacterization.pair(weights: [8.5, 170, 42.5, 85, 17], touches: touches)
        #expect(throws: PenCharacterizationError.self) { try PenCharacterization(measurements: measurements, axis: 0...2047) }
        do {
            _ = try PenCharacterization(measurements: measurements, axis: 0...2047)
        } catch {
            #expect(error.description.contains("were the weights placed in the order given?"), "\(error)")
        }
    }

    @Test func theMeasuredResponseGivesPValuesHysteresisAndSaturation() throws {
        let pen = Self.pen(activation: 7.0)
        let result = try Self.characterize(pen, Self.weights + [425])
        #expect(result.saturationGrams == 425)
        #expect(result.points.last?.saturated == true)
        for (tenth, value) in result.pValues.enumerated() {
            guard let value else { continue }
            #expect((pen.pressing(value) - Double(tenth) / 10).magnitude <= 0.01, "P\(tenth * 10) \(value) g")
        }
        // Past the heaviest weight below full scale (340 g): none.
        #expect(result.pValues[10] == nil)
        // The truth at the weights measured: the largest releasing-minus-pressing difference.
        let truth = result.points.filter { $0.releasingFraction != nil }
            .map { (pen.releasing($0.grams) - pen.pressing($0.grams)) * 100 }.max()!
        let measured = try #require(result.hysteresisPercent)
        #expect((measured - truth).magnitude <= 1, "hysteresis \(measured) %, truth \(truth) %")
    }

    @Test func theTrackerTakesPressingAfterTheLandingAndReleasingAfterThePush() throws {
        let pen = Self.pen(activation: 5.0)
        var random = SplitMix64(seed: 3)
        var tracker = PenTouchTracker(axis: 0...2047)
        var events: [PenTouchTracker.Event] = []
        for frame in pen.frames(weights: [85], random: &random) {
            events += tracker.add(time: frame.time, raw: frame.raw, touching: frame.touching)
        }
        if let last = tracker.finish() { events.append(last) }
        let truth = pen.pressing(85) * 2047
        guard events.count == 3, case .pressing(let pressing) = events[0], case .releasing(let releasing) = events[1],
              case .ended(let touch?) = events[2] else {
            Issue.record("expected pressing, releasing, ended; got \(events)")
            return
        }
        // Within the creep (0.3 %) and noise of the truth, not the landing's overshoot.
        #expect((pressing.mean - truth).magnitude < 0.004 * truth + 2, "pressing \(pressing.mean), truth \(truth)")
        #expect(releasing.mean > pressing.mean)
        #expect(touch.pressing == pressing && touch.releasing == releasing && !touch.saturated && !touch.pushedBeforeRest)
    }

    @Test func aValueHeldWhileTheKernelSendsNothingIsMeasured() {
        // One reading at the top of the range, then silence for 3 s, then the lift.
        var tracker = PenTouchTracker(axis: 0...1023)
        var events = tracker.add(time: EventTime(microseconds: 1_000_000), raw: 1023, touching: true)
        events += tracker.add(time: EventTime(microseconds: 4_000_000), raw: 0, touching: false)
        if let last = tracker.finish() { events.append(last) }
        guard case .ended(let touch?) = events.last, let pressing = touch.pressing else {
            Issue.record("expected a measured touch; got \(events)")
            return
        }
        #expect(pressing.mean == 1023)
        #expect(touch.saturated)
    }

    @Test func timeAloneEndsATouchAfterTheLiftAndMeasuresAHeldRest() {
        // Live, the daemon sends one reading at the lift and then nothing: time passing
        // (advance) must end the touch, and a rest that sent nothing must still be measured.
        var tracker = PenTouchTracker(axis: 0...2047)
        var events = tracker.add(time: EventTime(microseconds: 1_000_000), raw: 300, touching: true)
        events += tracker.advance(to: EventTime(microseconds: 2_500_000))
        events += tracker.add(time: EventTime(microseconds: 2_600_000), raw: 0, touching: false)
        #expect(events.count == 1, "\(events)")
        #expect(tracker.advance(to: EventTime(microseconds: 2_800_000)).isEmpty)
        events += tracker.advance(to: EventTime(microseconds: 2_900_000))
        guard case .pressing(let pressing) = events.first, case .ended(let touch?) = events.last else {
            Issue.record("expected pressing, then the end; got \(events)")
            return
        }
        #expect(pressing.mean == 300 && touch.pressing == pressing)
        #expect(!tracker.isTouching)
    }

    @Test func aWeightThatRegistersOnlyWhenPushedCountsAsNotRegisteredAndABlipIsNoTouch() throws {
        let pen = Self.pen(activation: 7.0)
        let touches = Self.touches(pen, [3.92])
        #expect(touches.count == 1)
        #expect(touches.first?.pressing == nil && touches.first?.pushedBeforeRest == true)
        // A landing that registers for a moment, then nothing.
        var tracker = PenTouchTracker(axis: 0...2047)
        var events: [PenTouchTracker.Event] = []
        for index in 0..<20 {
            events += tracker.add(time: EventTime(microseconds: 1_000_000 + Int64(index) * 5_000), raw: 3, touching: true)
        }
        events += tracker.add(time: EventTime(microseconds: 1_100_000), raw: 0, touching: false)
        events += tracker.add(time: EventTime(microseconds: 2_000_000), raw: 0, touching: false)
        #expect(events == [.ended(nil)])
    }

    @Test func countsThatCannotBePairedAreRefused() throws {
        let touch = PenTouch(pressing: SettledPressure(mean: 100, standardDeviation: 1, count: 50))
        #expect(throws: PenCharacterizationError.moreTouchesThanWeights(touches: 4, weights: 3)) {
            try PenCharacterization.pair(weights: [1, 2, 3], touches: [touch, touch, touch, touch])
        }
        #expect(throws: PenCharacterizationError.tooFewWeights(2)) {
            try PenCharacterization(measurements: [WeightMeasurement(grams: 5, touch: touch), WeightMeasurement(grams: 9, touch: touch)], axis: 0...1023)
        }
        #expect(throws: PenCharacterizationError.nothingRegistered(heaviest: 3)) {
            try PenCharacterization(measurements: [1, 2, 3].map { WeightMeasurement(grams: $0, touch: nil) }, axis: 0...1023)
        }
        #expect(throws: PenCharacterizationError.brokenAxis(5...5)) {
            try PenCharacterization(measurements: [1, 2, 3].map { WeightMeasurement(grams: $0, touch: touch) }, axis: 5...5)
        }
    }

    @Test func theCurveOfALinearPenIsTheIdentityAndTheCommandsAreReadyToPaste() throws {
        let samples = (0...20).map { (x: Double($0) / 20, y: Double($0) / 20) }
        let (curve, error) = PressureCurve.fitted(to: samples)
        #expect(error < 0.5, "\(curve.values) \(error)")
        for x in stride(from: 0.0, through: 1.0, by: 0.1) {
            #expect((curve.output(at: x)! - x).magnitude < 0.01)
        }
        // A pen that rises fast at first needs a curve that starts slowly, and gets one.
        let pen = Self.pen(activation: 7.0)
        let result = try Self.characterize(pen, Self.weights)
        let settings = PenSettings(result)
        #expect(settings.curveErrorPercent <= 3, "\(settings.curve.values): \(settings.curveErrorPercent) %")
        #expect(settings.curve.output(at: 0.2)! < 0.2)
        #expect(settings.xsetwacomCommand(device: "Tom's \"pen\" $HOME") == "xsetwacom set \"Tom's \\\"pen\\\" \\$HOME stylus\" PressureCurve " + settings.curve.values.map(String.init).joined(separator: " "))
        #expect(settings.gnomeCommand(vendor: 0x056a, product: 0x00b9).hasPrefix(
            "gsettings set org.gnome.desktop.peripherals.tablet.stylus:/org/gnome/desktop/peripherals/stylus/default-056a:00b9/ pressure-curve \"["))
        #expect(settings.libinputRange.hasSuffix(":1"))
        #expect(settings.threshold > 0 && settings.threshold < 0.01)
        #expect(settings.records.count == Self.weights.count)
        #expect(settings.records.prefix(3).allSatisfy { $0.percent == 0 })
    }

    /// A pen whose response is S-shaped and flattens well before its full scale (a logistic of
    /// steepness 9 centred at a third of the span, 1.5 units of noise, creep): the exported
    /// curve makes its true response straight in force within 3 % of the range over the
    /// measured span, giving up a little of the top of the range to do it.
    @Test func theCurveOfAnSShapedPenIsStraightInForce() throws {
        let activation = 5.0, fullScale = 420.0
        let logistic: @Sendable (Double) -> Double = { 1 / (1 + exp(-9 * ($0 - 0.33))) }
        let low = logistic(0), high = logistic(1)
        let pressing: @Sendable (Double) -> Double = { force in
            force < activation ? 0 : (logistic(Swift.min(1, (force - activation) / (fullScale - activation))) - low) / (high - low)
        }
        let pen = SyntheticPen(axisMaximum: 2047, pressing: pressing, releasing: pressing, noise: 1.5, creep: 0.004, overshoot: 0.3)
        let weights = Self.weights + [380]
        let result = try Self.characterize(pen, weights)
        let settings = PenSettings(result)
        let start = Self.registration(pen), heaviest = 380.0
        let forces = (0...100).map { start + (heaviest - start) * Double($0) / 100 }
        let outputs = try forces.map { try #require(settings.curve.output(at: pen.pressing($0))) }
        let (deviation, slope) = PressureCurve.deviation(outputs, from: (0...100).map { Double($0) / 100 }, factors: 0...1)
        #expect(deviation <= 0.03, "curve \(settings.curve.values): \(deviation * 100) % from straight")
        #expect(settings.curveErrorPercent <= 3)
        // What it gives up at the top is at most a tenth of what the pen read there.
        #expect(slope >= 0.9 * pen.pressing(heaviest) - 0.01 && slope <= 1, "the line ends at \(slope)")
    }

    /// The distance from proportional: the best factor, within its bounds, and the largest
    /// difference at that factor.
    @Test func theDeviationFromProportionalUsesTheBestFactor() {
        let wanted = [0, 0.25, 0.5, 0.75, 1.0]
        let values = [0, 0.2, 0.45, 0.7, 0.9]
        let free = PressureCurve.deviation(values, from: wanted, factors: 0...1)
        // Against a scan of every factor in steps of 10⁻⁵.
        var best = (deviation: Double.infinity, factor: 0.0)
        for step in 0...100_000 {
            let factor = Double(step) / 100_000
            let worst = zip(values, wanted).map { ($0 - factor * $1).magnitude }.max()!
            if worst < best.deviation { best = (worst, factor) }
        }
        #expect((free.deviation - best.deviation).magnitude < 1e-4 && (free.factor - best.factor).magnitude < 1e-3, "\(free) against \(best)")
        // Held to factors of 1: the plain largest difference.
        #expect((PressureCurve.deviation(values, from: wanted, factors: 1...1).deviation - 0.1).magnitude < 1e-12)
    }
}
