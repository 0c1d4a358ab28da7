import Testing
@testable import ScaleCore

/// The live loop's throttle timer: armed once per throttle window, not once per frame, and
/// fired without a clock read.
@Suite struct ArmedDeadlineTests {
    /// A touch streaming at 1 kHz through the default 10 ms throttle: the timer is armed as
    /// each window opens (the first held frame), ten times in 100 frames, and never told the
    /// same deadline twice.
    @Test func aStreamingTouchArmsOncePerWindow() throws {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var armed = ArmedDeadline()
        var script = EventScript()
        script.press(at: 0, 10)
        for millisecond in 1..<100 { script.pressure(at: Double(millisecond), Int32(10 + millisecond % 50)) }
        var settings: [ArmedDeadline.Setting] = []
        var output: [ScaleOutput] = []
        for event in script.events {
            pipeline.process(event, into: &output)
            // As LiveScale.deliver() does after each batch (here: each event).
            if let setting = armed.follow(pipeline.nextDeadline) { settings.append(setting) }
        }
        #expect(settings == stride(from: 10, through: 100, by: 10).map { .arm(ms(Double($0))) })
        #expect(armed.deadline == ms(100))
    }

    /// When the timer fires, the deadline it was armed for lets the held reading out stamped
    /// with that deadline, exactly as the clock's later time would have.
    @Test func firingAdvancesToTheArmedDeadlineAsALaterClockWould() throws {
        var script = EventScript()
        script.press(at: 0, 10)
        script.pressure(at: 2, 20)  // held until 10
        var byDeadline = try ScalePipeline(device: TestDevice.singleTouch())
        var byClock = try ScalePipeline(device: TestDevice.singleTouch())
        let first = byDeadline.run(script.events, finish: false)
        #expect(byClock.run(script.events, finish: false) == first)

        var armed = ArmedDeadline()
        let setting = armed.follow(byDeadline.nextDeadline)
        #expect(setting == .arm(ms(10)))
        let fired = armed.fired(expirations: 1)
        let due = try #require(fired)
        var fromDeadline: [ScaleOutput] = []
        byDeadline.advance(to: due, into: &fromDeadline)
        var fromClock: [ScaleOutput] = []
        byClock.advance(to: ms(13.5), into: &fromClock)  // the wake-up came 3.5 ms late
        #expect(fromDeadline == fromClock)
        #expect(fromDeadline.readings.map(\.raw) == [20])
        #expect(fromDeadline.readings.map(\.time) == [ms(10)])
        // One-shot: fired, it is no longer armed, and nothing is held, so nothing to tell it.
        #expect(armed.deadline == nil)
        let after = armed.follow(byDeadline.nextDeadline)
        #expect(after == nil)
    }

    /// An expiry that a re-arm cancelled (0 expirations read) lets nothing out and keeps the
    /// new deadline; a real one fires once.
    @Test func aCancelledExpiryFiresNothing() {
        var armed = ArmedDeadline()
        let neverArmed = armed.fired(expirations: 1)
        let settings = [armed.follow(ms(10)), armed.follow(ms(20))]
        let cancelled = armed.fired(expirations: 0)
        let kept = armed.deadline
        let fired = [armed.fired(expirations: 2), armed.fired(expirations: 1)]
        #expect(neverArmed == nil)
        #expect(settings == [.arm(ms(10)), .arm(ms(20))])
        #expect(cancelled == nil)
        #expect(kept == ms(20))
        #expect(fired == [ms(20), nil])
    }

    /// With the throttle's interval as its slack, the timer of a live loop never rings while
    /// a touch streams faster than the interval (each window's next frame lets the held
    /// reading out first), only once the stream stops; without it, it rings in nearly every
    /// window. What goes out is the same either way, and the same as a replay of the events.
    @Test func withSlackTheTimerRingsOnlyWhenTheStreamStops() throws {
        var script = EventScript()
        script.press(at: 0, 10)
        // 1 kHz with the writer's jitter (0–0.45 ms late), so that frames and deadlines
        // do not fall on the same microsecond.
        for millisecond in 1..<100 {
            script.pressure(at: Double(millisecond) + Double(millisecond * 7 % 10) / 20, Int32(10 + millisecond % 50))
        }
        var replay = try ScalePipeline(device: TestDevice.singleTouch())
        let replayed = replay.run(script.events)

        let interval = ScaleSettings().throttleInterval
        let slack = try live(script.events, slack: interval)
        let none = try live(script.events, slack: 0)
        #expect(slack.rings.count == 1)
        #expect(none.rings.count >= 9)
        #expect(slack.output == replayed)
        #expect(none.output == replayed)
        // The last reading, held when the stream stopped, is stamped with its window's end
        // and goes out one interval after it.
        let last = try #require(replayed.readings.last)
        #expect(slack.rings == [last.time.adding(microseconds: interval)])
    }

    /// A live loop over `events` as LiveScale runs it: the timer, armed as `ArmedDeadline`
    /// says after each frame, rings before the next frame when its time has come by then,
    /// and once more after the last frame (the stream stops, the clock goes on).
    /// - Returns: What went out, and when the timer rang.
    private func live(_ events: [InputEvent], slack: Int64) throws -> (output: [ScaleOutput], rings: [EventTime]) {
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch())
        var armed = ArmedDeadline(slack: slack)
        var ringsAt: EventTime?
        var output: [ScaleOutput] = []
        var rings: [EventTime] = []
        func ring() {
            guard let time = ringsAt, let due = armed.fired(expirations: 1) else { return }
            rings.append(time)
            ringsAt = nil
            pipeline.advance(to: due, into: &output)
        }
        for event in events {
            if let time = ringsAt, time <= event.time { ring() }
            pipeline.process(event, into: &output)
            guard event.type == .synchronization, event.code == .synReport, let setting = armed.follow(pipeline.nextDeadline) else { continue }
            switch setting {
            case .arm(let time): ringsAt = time
            case .disarm: ringsAt = nil
            }
        }
        ring()
        return (output, rings)
    }

    /// A deadline that goes away (a release went out at once) disarms the timer, once.
    @Test func aDeadlineThatGoesAwayDisarmsOnce() {
        var armed = ArmedDeadline()
        let settings = [armed.follow(nil), armed.follow(ms(10)), armed.follow(ms(10)), armed.follow(nil), armed.follow(nil)]
        #expect(settings == [nil, .arm(ms(10)), nil, .disarm, nil])
        _ = armed.follow(ms(30))
        armed.disarmed()
        #expect(armed.deadline == nil)
    }
}
