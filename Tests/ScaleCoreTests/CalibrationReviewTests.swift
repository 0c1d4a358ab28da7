import Testing
@testable import ScaleCore

@Suite struct CalibrationReviewTests {
    @Test func aTypoThatBreaksTheOrderIsNamedByItsWeight() throws {
        // 200 typed for the 20 g weight.
        let points = [
            CalibrationPoint(raw: 42, grams: 200), CalibrationPoint(raw: 77, grams: 50),
            CalibrationPoint(raw: 123, grams: 100), CalibrationPoint(raw: 195, grams: 200),
        ]
        let finding = try #require(CalibrationReview.outOfOrder(points))
        #expect(finding.index == 0)
        #expect(finding.message == "The 200 g point (raw 42) pressed less than 50 g, 100 g and 200 g: was the weight really 200 g, and alone on the pad? Take it again or leave it out.")
        var rest = points
        rest.remove(at: finding.index)
        #expect(CalibrationReview.outOfOrder(rest) == nil)
        // A weight that pressed harder than heavier ones (put on the wrong spot).
        let misplaced = [CalibrationPoint(raw: 42, grams: 20), CalibrationPoint(raw: 160, grams: 50), CalibrationPoint(raw: 123, grams: 100), CalibrationPoint(raw: 195, grams: 200)]
        #expect(CalibrationReview.outOfOrder(misplaced)?.message.hasPrefix("The 50 g point (raw 160) pressed harder than 100 g:") == true)
    }

    @Test func aPointOffTheOthersCurveIsNamed() {
        let finding = CalibrationReview.offCurve(point: CalibrationPoint(raw: 41.9, grams: 25), expected: 19.93, index: 0)
        #expect(finding.message.hasPrefix("The 25 g point disagrees with the others: they put it at 19.9 g."))
    }

    @Test func theSettlingMonitorSaysWhyItWaits() {
        var monitor = SettlingMonitor(window: 500_000)
        func spread(_ state: SettlingMonitor.State) -> Double? {
            if case .moving(let spread) = state { return spread }
            return nil
        }
        func progress(_ state: SettlingMonitor.State) -> Double? {
            if case .settling(let progress) = state { return progress }
            return nil
        }
        #expect(monitor.add(time: 0, raw: 0, grams: 0, contacts: 0) == .empty)
        #expect(progress(monitor.add(time: 0, raw: 100, grams: 10, contacts: 1)) == 0)
        // Readings every 10 ms wobbling by a unit, then the weight pressed on by 31 units.
        for step in 1..<10 { _ = monitor.add(time: Int64(step) * 10_000, raw: 100 + Int32(step % 2), grams: 10, contacts: 1) }
        #expect(abs((spread(monitor.add(time: 100_000, raw: 131, grams: 13.1, contacts: 1)) ?? 0) - 3.1) < 1e-9)
        // The jump is in the window until 500 ms after it: moving at 590 ms, steady at 600 ms,
        // calm for the whole window since the jump.
        for step in 11..<59 { _ = monitor.add(time: Int64(step) * 10_000, raw: 131 + Int32(step % 2), grams: 13.1, contacts: 1) }
        #expect(spread(monitor.add(time: 590_000, raw: 131, grams: 13.1, contacts: 1)) != nil)
        #expect(monitor.add(time: 600_000, raw: 131, grams: 13.1, contacts: 1) == .steady)
        // A new touch: half a window held.
        #expect(monitor.add(time: 650_000, raw: 0, grams: 0, contacts: 0) == .empty)
        #expect(progress(monitor.add(time: 1_000_000, raw: 50, grams: 5, contacts: 1)) == 0)
        #expect(progress(monitor.add(time: 1_250_000, raw: 51, grams: 5.1, contacts: 1)) == 0.5)
    }
}
