import Testing
@testable import ScaleCore
import ScaleRecording

@Suite struct ScalePipelineTests {
    /// A whole touch on a 0–255 pad, every expectation worked out by hand.
    @Test func aPressThatSaturates() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 51)         // out at once: 20%, 77 g
        script.pressure(at: 4, 102)     // held (4 ms after the last)
        script.pressure(at: 8, 255)     // replaces the held one; saturated: PEAK at once
        script.pressure(at: 30, 250)    // window ended at 10: the held 255 goes out stamped 10, then 250 at once
        script.pressure(at: 32, 255)    // held; within hysteresis (250 >= 0.95 * 255): no new PEAK
        script.lift(at: 35)             // the release drops the held frame and goes out at once
        let output = pipeline.run(script.events)
        #expect(output == [
            .reading(Reading(time: ms(0), raw: 51, force: 0.2, grams: 77, saturated: false, contacts: 1, stable: false, model: .nominal)),
            .peak(Peak(time: ms(8), raw: 255, force: 1, grams: 385)),
            .reading(Reading(time: ms(10), raw: 255, force: 1, grams: 385, saturated: true, contacts: 1, stable: false, model: .nominal)),
            .reading(Reading(time: ms(30), raw: 250, force: 250.0 / 255.0, grams: 250.0 / 255.0 * 385, saturated: false, contacts: 1, stable: false, model: .nominal)),
            .reading(Reading(time: ms(35), raw: 0, force: 0, grams: 0, saturated: false, contacts: 0, stable: false, model: .nominal)),
        ])
    }

    @Test func peakRearmsAtRelease() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 255)
        script.lift(at: 20)
        script.press(at: 40, 255)
        #expect(pipeline.run(script.events).peaks.map(\.time) == [ms(0), ms(40)])
    }

    @Test func heldReadingGoesOutAtTheEndOfInput() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 10)
        script.pressure(at: 3, 20)
        let readings = pipeline.run(script.events).readings
        #expect(readings.map(\.raw) == [10, 20])
        #expect(readings.last?.time == ms(10))
        #expect(pipeline.nextDeadline == nil)
    }

    @Test func advanceLetsTheHeldReadingOutOnTime() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 10)
        script.pressure(at: 3, 20)
        var output = pipeline.run(script.events, finish: false)
        #expect(pipeline.nextDeadline == ms(10))
        output.removeAll()
        pipeline.advance(to: ms(9), into: &output)
        #expect(output.isEmpty)
        pipeline.advance(to: ms(10), into: &output)
        #expect(output.readings.map(\.raw) == [20])
    }

    @Test func releaseIsReportedOnceAndIdleFramesAreSilent() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absX, 5)])    // nothing touching yet
        script.press(at: 20, 30)
        script.lift(at: 40)
        script.frame(at: 60, [(.absolute, .absX, 6)])   // still nothing
        #expect(pipeline.run(script.events).readings.map(\.contacts) == [1, 0])
    }

    @Test func stableAfterHalfASecondOfSteadyWeight() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 100)
        for step in 1...60 { script.pressure(at: Double(step) * 10, step.isMultiple(of: 2) ? 100 : 101) }   // 1.5 g of noise
        let readings = pipeline.run(script.events).readings
        #expect(readings.filter { $0.time < ms(500) }.allSatisfy { !$0.stable })
        #expect(readings.filter { $0.time >= ms(500) }.allSatisfy { $0.stable })
    }

    @Test func physicalModelIsNamedInReadings() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(resolution: 40))
        var script = EventScript()
        script.press(at: 0, 100)
        let reading = try #require(pipeline.run(script.events).readings.first)
        #expect(reading.model == .physical)
        #expect(reading.grams == 2.5)
    }

    @Test func calibrationCanChangeWhileRunning() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 100)
        _ = pipeline.run(script.events, finish: false)
        pipeline.setCalibration(try Calibration(points: [CalibrationPoint(raw: 100, grams: 50)], tareGrams: 5))
        var next = EventScript()
        next.pressure(at: 20, 100)
        let reading = try #require(pipeline.run(next.events).readings.first)
        #expect(reading.model == .calibrated)
        #expect(abs(reading.grams - 45) < 1e-9)  // a fitted line: equal to rounding
    }

    @Test func aReadingHeldAcrossACalibrationChangeIsWeighedWithTheNewOne() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 100)
        script.pressure(at: 4, 120)
        // The first frame goes out; the second (4 ms later) is held until the window ends.
        let first = pipeline.run(script.events, finish: false).readings
        #expect(first.map(\.raw) == [100])
        pipeline.setCalibration(try Calibration(points: [CalibrationPoint(raw: 120, grams: 60)], tareGrams: 10))
        var output: [ScaleOutput] = []
        pipeline.advance(to: EventTime(microseconds: 10_000), into: &output)
        guard case .reading(let held)? = output.first else {
            Issue.record("the held reading did not come out at the window's end: \(output)")
            return
        }
        #expect(held.raw == 120)
        #expect(held.model == .calibrated)
        #expect(abs(held.grams - 50) < 1e-9)
    }

    /// A weight resting at the top of the range with a raw unit of noise: every stable
    /// reading is a lower bound, the frames at 254 too, since their settled weight is a mean
    /// over frames the sensor could not tell apart from heavier ones. One resting just below
    /// the top with the same noise is a weight.
    @Test func aSettledWeightWhoseWindowTouchedTheTopIsALowerBound() throws {
        func rest(_ low: Int32, _ high: Int32) throws -> [Reading] {
            var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
            var script = EventScript()
            script.press(at: 0, low)
            for frame in 1...120 { script.pressure(at: Double(frame) * 12, frame % 2 == 0 ? low : high) }
            return pipeline.run(script.events).readings
        }
        let top = try rest(254, 255).filter(\.stable)
        #expect(!top.isEmpty && top.allSatisfy(\.saturated), "\(top.map { ($0.raw, $0.saturated) })")
        #expect(top.contains { $0.raw == 254 })
        let below = try rest(250, 251).filter(\.stable)
        #expect(!below.isEmpty && !below.contains(where: \.saturated))
    }

    /// Pressure past the axis maximum weighs what the maximum does: the model's top, in the
    /// calibrated model as in the nominal one, after the tare.
    @Test func aSaturatedReadingWeighsTheTopOfTheModel() throws {
        let calibration = try Calibration(points: [CalibrationPoint(raw: 100, grams: 50), CalibrationPoint(raw: 200, grams: 150)], tareGrams: 5)
        let model = GramModel(axis: TestDevice.singleTouch().axes[.absPressure]!, calibration: calibration)
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(), calibration: calibration)
        var script = EventScript()
        script.press(at: 0, 255)
        script.pressure(at: 20, 300)
        let readings = pipeline.run(script.events).readings.filter { $0.contacts > 0 }
        #expect(readings.count == 2 && readings.allSatisfy(\.saturated))
        #expect(readings.allSatisfy { $0.grams == model.grams(raw: 255, force: 1) }, "\(readings.map(\.grams))")
        #expect(model.grams(raw: 255, force: 1) > model.grams(raw: 254, force: 254.0 / 255))
        // STATUS's full scale is that top, after the tare.
        #expect(model.fullScale == readings[0].grams && GramModel(axis: model.axis).fullScale == 385)
        var nominal = try ScalePipeline(device: TestDevice.singleTouch())
        #expect(nominal.run(script.events).readings.filter { $0.contacts > 0 }.map(\.grams) == [385, 385])
    }

    @Test func settingsAreValidated() {
        var settings = ScaleSettings()
        settings.peakThreshold = 0
        #expect(throws: SettingsError.self) { try settings.validate() }
        settings.peakThreshold = 0.5
        settings.peakHysteresis = 0.6
        #expect(throws: SettingsError.self) { try settings.validate() }
        settings.peakHysteresis = 0.1
        settings.throttleInterval = -1
        #expect(throws: SettingsError.self) { try settings.validate() }
        settings.throttleInterval = 0
        #expect(throws: Never.self) { try settings.validate() }
    }
}

@Suite struct DemoSessionTests {
    @Test func isDeterministicLabelledAndShowsThreeWeighingsAndOnePeak() throws {
        let recording = DemoSession.recording()
        #expect(recording == DemoSession.recording())
        #expect(recording.device.name.contains("synthetic"))
        #expect(recording.comments.first?.contains("synthetic") == true)
        var pipeline = try ScalePipeline(device: recording.device)
        let output = pipeline.run(recording.events)
        #expect(output.readings.filter { $0.contacts == 0 }.count == 3)
        #expect(output.peaks.count == 1)
        // Each object settles to a stable weight near its true one (1.5 g per count).
        for object in DemoSession.objects {
            #expect(output.readings.contains { $0.stable && abs($0.grams - object.grams) <= 2 }, "\(object.name)")
        }
    }

    @Test func roundTripsThroughTheEvemuFormat() throws {
        let recording = DemoSession.recording()
        let again = try Recording(evemuText: EvemuWriter.text(of: recording), fileName: "demo.events")
        #expect(again.device == recording.device)
        #expect(again.events == recording.events)
    }
}

@Suite struct ResynchronizationTests {
    @Test func theRebuiltFrameCannotFireAPeakButLaterCrossingsDo() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(), settings: { var s = ScaleSettings(); s.throttleInterval = 0; return s }())
        var script = EventScript()
        script.press(at: 0, 100)
        var output = pipeline.run(script.events, finish: false)
        // Events were dropped; libevdev's rebuilt state says the press is now at the maximum.
        pipeline.beginResynchronization()
        var rebuilt = EventScript()
        rebuilt.pressure(at: 50, 255)
        rebuilt.pressure(at: 60, 255)
        output += pipeline.run(rebuilt.events, finish: false)
        #expect(output.peaks.isEmpty)
        #expect(output.readings.map(\.raw) == [100, 255, 255])
        // Falling below the band and rising again is a real crossing.
        var later = EventScript()
        later.pressure(at: 70, 100)
        later.pressure(at: 80, 255)
        #expect(pipeline.run(later.events).peaks.map(\.time) == [ms(80)])
    }

    @Test func aPressBelowTheThresholdAfterResyncIsArmed() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        pipeline.beginResynchronization()
        var script = EventScript()
        script.press(at: 0, 200)
        script.pressure(at: 20, 255)
        #expect(pipeline.run(script.events).peaks.map(\.time) == [ms(20)])
    }

    @Test func aReleaseDuringTheDropIsSeenInTheRebuiltState() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var script = EventScript()
        script.press(at: 0, 100)
        _ = pipeline.run(script.events, finish: false)
        pipeline.beginResynchronization()
        var rebuilt = EventScript()
        rebuilt.lift(at: 50)
        #expect(pipeline.run(rebuilt.events).readings.map(\.contacts) == [0])
    }
}
