import Glibc  // exp and pow: the known responses of the devices below.
import ScaleProtocol
import Testing
@testable import ScaleCore

/// The stability rule on the data real sensors make: a resting weight with a raw unit or
/// more of noise, on the axes of common devices, at their report rates.
@Suite struct SteadinessTests {
    /// A touch that lands at `start` ms and rests at `raw` with Gaussian noise of `sigma`
    /// units, a frame every `period` ms, until `end` ms.
    static func restingTouch(
        raw: Double, sigma: Double, period: Double, start: Double = 0, end: Double = 2000, seed: UInt64,
        maximum: Int32
    ) -> [InputEvent] {
        var noise = GaussianNoise(seed: seed)
        var script = EventScript()
        var time = start
        var first = true
        while time < end {
            let value = Int32(Swift.min(Double(maximum), Swift.max(1, (raw + sigma * noise.next()).rounded())))
            if first { script.press(at: time, value) } else { script.pressure(at: time, value) }
            first = false
            time += period
        }
        script.lift(at: end)
        return script.events
    }

    /// A resting weight is stable within the window plus 100 ms of landing, on a 0–255 pad
    /// at 80 Hz with one unit of noise (3 g of spread in the nominal model, more than the
    /// 2 g of `stable-grams`), a 0–1023 pen at 133 Hz with two and a 0–8191 pen at 200 Hz
    /// with three, for twenty noise draws each; its grams are the weight's.
    @Test(arguments: [(Int32(255), 1.0, 12.5, 120.0), (1023, 2.0, 7.5, 500.0), (8191, 3.0, 5.0, 3000.0)])
    func aRestingWeightSettlesOnNoisyDevices(maximum: Int32, sigma: Double, period: Double, raw: Double) throws {
        for seed in UInt64(1)...20 {
            var settings = ScaleSettings()
            settings.throttleInterval = 0
            var pipeline = try ScalePipeline(device: TestDevice.singleTouch(max: maximum), settings: settings)
            let readings = pipeline.run(Self.restingTouch(raw: raw, sigma: sigma, period: period, seed: seed, maximum: maximum)).readings
            let first = try #require(readings.first { $0.stable }, "seed \(seed): never stable")
            #expect(first.time.microseconds <= 600_000, "seed \(seed): first stable at \(first.time.microseconds) µs")
            #expect(first.steady, "seed \(seed): stable by the sensor's own noise")
            let nominal = raw / Double(maximum) * GramModel.nominalFullScale
            let perUnit = GramModel.nominalFullScale / Double(maximum)
            #expect(abs(first.grams - nominal) <= 4 * sigma * perUnit + perUnit, "seed \(seed): \(first.grams) g for \(nominal) g")
            let stableShare = Double(readings.filter { $0.stable }.count) / Double(readings.filter { $0.time.microseconds >= 600_000 && $0.contacts > 0 }.count)
            #expect(stableShare >= 0.9, "seed \(seed): stable in \(stableShare) of the resting readings")
            // The settled weight is the window's mean: within 4 standard errors of the truth
            // (a tenth of a unit more for the rounding), where single frames stray by 4σ.
            #expect(readings.allSatisfy { ($0.settledGrams != nil) == $0.stable }, "seed \(seed): settled grams exactly on stable readings")
            let frames = 500 / period
            let settledError = readings.compactMap { $0.settledGrams.map { abs($0 - nominal) } }.max() ?? .infinity
            #expect(settledError <= (4 * sigma / frames.squareRoot() + 0.1) * perUnit, "seed \(seed): settled \(settledError) g off")
        }
    }

    /// The settled weight of a stable window is the weight of its mean pressure, through
    /// the calibrated curve: the same mean a calibration point takes, so that a calibration
    /// weight weighs what it was said to weigh.
    @Test func theSettledWeightIsTheWindowsMeanThroughTheCurve() throws {
        let calibration = try Calibration(points: [
            CalibrationPoint(raw: 40, grams: 50, spread: 0.5, count: 50), CalibrationPoint(raw: 100, grams: 130, spread: 0.5, count: 50),
        ])
        var settings = ScaleSettings()
        settings.throttleInterval = 0
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(), settings: settings, calibration: calibration)
        var script = EventScript()
        // 99, 100, 101, 100, … every 10 ms: a mean of 100 over any whole number of cycles.
        script.press(at: 0, 99)
        for step in 1..<80 { script.pressure(at: Double(step) * 10, [99, 100, 101, 100][step % 4]) }
        let readings = pipeline.run(script.events).readings
        let stable = readings.filter(\.stable)
        #expect(stable.count > 20)
        for reading in stable {
            let mean = try #require(reading.settled?.mean)
            #expect(abs(mean - 100) <= 0.05, "at \(reading.time.microseconds) µs: mean \(mean)")
            #expect(reading.settledGrams == pipeline.gramModel.grams(meanRaw: mean))
        }
        // The weight of 100 is the calibration weight's, 130 g, whatever the frame showed.
        #expect(stable.allSatisfy { abs($0.settledGrams! - 130) < 0.1 })
        #expect(Set(stable.map { ($0.grams * 10).rounded() }).count == 3)
        #expect(ReadingMessage(stable[0]).line.contains(#","settled_grams":130.0}"#))
        #expect(!ReadingMessage(readings[0]).line.contains("settled"))
    }

    /// A weight creeping on a fine pen by less than `stable-grams` a window (1.2 g) is still
    /// a creep of 2.3 g a second: not steady, not stable, and said as its drift.
    @Test func aCreepWithinStableGramsIsADrift() throws {
        var settings = ScaleSettings()
        settings.throttleInterval = 0
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(max: 8191), settings: settings)
        var script = EventScript()
        script.press(at: 0, 3000)
        // One unit every 20 ms: 25 units a window, 1.2 g in the nominal model.
        for step in 1..<100 { script.pressure(at: Double(step) * 20, 3000 + Int32(step)) }
        let resting = pipeline.run(script.events).readings.filter { $0.time.microseconds >= 500_000 && $0.contacts > 0 }
        #expect(!resting.isEmpty && resting.allSatisfy { !$0.stable && !$0.steady })
        let drifts = resting.compactMap { $0.drift?.gramsPerSecond }
        #expect(drifts.count >= resting.count * 9 / 10, "a drift on \(drifts.count) of \(resting.count)")
        // 50 units a second of 385/8191 g: 2.35 g/s.
        #expect(drifts.allSatisfy { abs($0 - 2.35) < 0.25 }, "\(drifts.min() ?? 0)…\(drifts.max() ?? 0) g/s")
    }

    @Test func readingsPastTheHeaviestWeightSaySo() throws {
        let calibration = try Calibration(points: [
            CalibrationPoint(raw: 40, grams: 50, spread: 0.5, count: 50), CalibrationPoint(raw: 100, grams: 130, spread: 0.5, count: 50),
        ])
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(), calibration: calibration)
        var script = EventScript()
        script.press(at: 0, 90)
        script.pressure(at: 20, 101)
        script.pressure(at: 40, 102)
        script.pressure(at: 60, 200)
        script.lift(at: 80)
        let readings = pipeline.run(script.events).readings
        #expect(readings.map(\.beyondCalibration) == [nil, nil, 130, 130, nil])
        #expect(ReadingMessage(readings[3]).line.hasSuffix(#","model":"calibrated","beyond_calibration":130.0}"# + "\n"))
        #expect(ReadingMessage(readings[3]).beyondCalibrationText == "beyond the heaviest calibration weight, 130 g")
        #expect(!ReadingMessage(readings[1]).line.contains("beyond"))
    }
}

@Suite struct ExtrapolationTests {
    /// Two light weights close together on a pen (x 0.1 and 0.2, 10 g and 40 g): the
    /// logarithmic family through them is an exponential that would read hundreds of
    /// kilograms at full pressure. The bound holds it to the power law one steeper than the
    /// curve at the heaviest point.
    @Test func anExponentialIsBoundedPastTheHeaviestWeight() {
        let axis = AxisRange(minimum: 0, maximum: 2047)
        let points = [CalibrationPoint(raw: 204.7, grams: 10), CalibrationPoint(raw: 409.4, grams: 40)]
        let fit = CalibrationFit(points: points, axis: axis, likely: .logarithmic)
        #expect(fit.model.family == .logarithmic)
        let unbounded = fit.model.grams(atX: 1)
        let bounded = fit.grams(raw: 2047)
        #expect(unbounded > 100_000 && bounded < 20_000, "bounded \(bounded) g, the curve's own \(unbounded) g")
        // The bound: the power law through the heaviest point with the curve's own log–log
        // slope there, plus one.
        let step = 1e-6
        let slope = (log(fit.model.grams(atX: 0.2 * (1 + step))) - log(fit.model.grams(atX: 0.2 * (1 - step)))) / (log(1 + step) - log(1 - step))
        #expect(abs(bounded - 40 * pow(5, slope + 1)) < 0.01 * bounded, "\(bounded) against \(40 * pow(5, slope + 1))")
        // Up to the heaviest point the curve is unchanged.
        #expect(fit.grams(raw: 300) == fit.model.grams(atX: 300 / 2047))
    }

    /// A power law extrapolates as itself: the bound is one steeper than it everywhere.
    @Test func aPowerLawIsNotBounded() {
        let axis = AxisRange(minimum: 0, maximum: 4095)
        func raw(_ grams: Double) -> Double { pow(grams / 420, 1 / 1.6) * 4095 }
        let fit = CalibrationFit(points: [CalibrationPoint(raw: raw(20), grams: 20), CalibrationPoint(raw: raw(180), grams: 180)], axis: axis, likely: .power)
        #expect(abs(fit.grams(raw: raw(385)) - 385) < 1e-6)
    }

    @Test func theUncertaintyGrowsPastTheHeaviestWeight() {
        #expect(CalibrationFit.uncertainty(2, atGrams: 100, heaviest: 180) == 2)
        #expect(CalibrationFit.uncertainty(2, atGrams: 180, heaviest: 180) == 2)
        #expect(CalibrationFit.uncertainty(2, atGrams: 360, heaviest: 180) == 8)
    }
}

@Suite struct AddedWeightRuleTests {
    /// Readings every 10 ms: a contact at 20 g with 0.5 g of noise, then 50 g added.
    static func feed(
        _ measurement: inout AddedWeight, from start: Int, count: Int, grams: Double, stable: (Int) -> Bool, contacts: Int = 1,
        saturated: (Int) -> Bool = { _ in false }
    ) {
        for index in start..<(start + count) {
            let noise = [0.0, 0.5, -0.5, 0][index % 4]
            measurement.add(time: Int64(index) * 10_000, grams: grams + noise, contacts: contacts, stable: stable(index), saturated: saturated(index))
        }
    }

    /// An object that takes the pad to its top: what was added is a lower bound, and it is
    /// taken as soon as its window is stable, since saturated readings move no further; a
    /// contact that saturates the pad alone makes a saturated zero, which `weigh` refuses.
    @Test func aSaturatedTotalIsALowerBoundAndASaturatedZeroIsSaid() {
        var measurement = AddedWeight()
        Self.feed(&measurement, from: 0, count: 110, grams: 300, stable: { $0 >= 50 })
        guard case .waitingForObject(let zero) = measurement.step, !zero.saturated else { Issue.record("\(measurement.step)"); return }
        // The object lands past the top: the readings stop at 385 g, saturated.
        Self.feed(&measurement, from: 110, count: 20, grams: 385, stable: { _ in false }, saturated: { _ in true })
        Self.feed(&measurement, from: 130, count: 150, grams: 385, stable: { $0 >= 180 }, saturated: { _ in true })
        guard case .weighed(let result) = measurement.step else { Issue.record("\(measurement.step)"); return }
        #expect(result.saturated && abs(result.added - 85) < 0.5, "\(result)")

        var pressedHard = AddedWeight()
        Self.feed(&pressedHard, from: 0, count: 110, grams: 385, stable: { $0 >= 50 }, saturated: { _ in true })
        guard case .waitingForObject(let saturatedZero) = pressedHard.step else { Issue.record("\(pressedHard.step)"); return }
        #expect(saturatedZero.saturated)
    }

    @Test func theZeroIsTheContactAndTheResultIsWhatWasAdded() throws {
        var measurement = AddedWeight()
        Self.feed(&measurement, from: 0, count: 110, grams: 20, stable: { $0 >= 50 })
        guard case .waitingForObject(let zero) = measurement.step else { Issue.record("\(measurement.step)"); return }
        #expect(abs(zero.mean - 20) < 0.1 && zero.count == 51, "a window of stable readings only: 50…100")
        // The object lands (not stable), then rests.
        Self.feed(&measurement, from: 110, count: 20, grams: 60, stable: { _ in false })
        Self.feed(&measurement, from: 130, count: 150, grams: 70, stable: { $0 >= 180 })
        guard case .weighed(let result) = measurement.step else { Issue.record("\(measurement.step)"); return }
        #expect(abs(result.added - 50) < 0.1, "\(result)")
        // Two windows of 51 readings with a sample deviation of about 0.41 g.
        #expect(result.uncertainty > 0.1 && result.uncertainty < 0.3, "\(result.uncertainty)")
    }

    /// A resting contact that creeps says so (readings with a drift): that is not an object
    /// landing, and a window where the creep took it is not a weight added; the object
    /// that lands after it (readings neither stable nor drifting) is weighed.
    @Test func aDriftIsNotAnObjectLanding() {
        var measurement = AddedWeight()
        Self.feed(&measurement, from: 0, count: 110, grams: 20, stable: { $0 >= 50 })
        for index in 110..<130 {
            measurement.add(time: Int64(index) * 10_000, grams: 20.5 + Double(index - 110) * 0.1, contacts: 1, stable: false, drifting: true)
        }
        Self.feed(&measurement, from: 130, count: 100, grams: 22.5, stable: { _ in true })
        if case .waitingForObject = measurement.step {} else { Issue.record("a drift was taken for an object: \(measurement.step)") }
        Self.feed(&measurement, from: 230, count: 20, grams: 60, stable: { _ in false })
        Self.feed(&measurement, from: 250, count: 150, grams: 70, stable: { $0 >= 300 })
        guard case .weighed(let result) = measurement.step else { Issue.record("\(measurement.step)"); return }
        #expect(abs(result.added - 50) < 0.1, "\(result)")
    }

    @Test func aContactThatOnlyFlickersDoesNotEndIt() {
        var measurement = AddedWeight()
        Self.feed(&measurement, from: 0, count: 110, grams: 20, stable: { $0 >= 50 })
        // A reading that is not stable, then the same weight again: nothing was added.
        Self.feed(&measurement, from: 110, count: 200, grams: 20, stable: { $0 != 130 })
        if case .waitingForObject = measurement.step {} else { Issue.record("\(measurement.step)") }
    }

    @Test func liftingAfterTheZeroEndsIt() {
        var measurement = AddedWeight(calibrationUncertainty: 1)
        Self.feed(&measurement, from: 0, count: 110, grams: 20, stable: { $0 >= 50 })
        #expect(measurement.add(time: 1_200_000, grams: 0, contacts: 0, stable: false) == .lifted)
        // A lift before the zero only starts over.
        var early = AddedWeight()
        Self.feed(&early, from: 0, count: 30, grams: 20, stable: { _ in false })
        #expect(early.add(time: 400_000, grams: 0, contacts: 0, stable: false) == .waitingForContact)
    }
}
