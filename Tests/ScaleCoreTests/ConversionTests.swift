import Testing
@testable import ScaleCore

@Suite struct ForceScaleTests {
    @Test func normalisesClampsAndSaturates() {
        let scale = ForceScale(axis: AxisRange(minimum: 0, maximum: 255))
        #expect(scale.force(raw: 51) == 0.2)
        #expect(scale.force(raw: 255) == 1.0)
        #expect(scale.force(raw: 300) == 1.0)
        #expect(scale.force(raw: -4) == 0.0)
        #expect(scale.isSaturated(raw: 255) && scale.isSaturated(raw: 256) && !scale.isSaturated(raw: 254))
    }

    @Test func minimumAboveZeroShiftsTheScale() {
        // 100..300: raw 150 is a quarter of the way.
        let scale = ForceScale(axis: AxisRange(minimum: 100, maximum: 300))
        #expect(scale.force(raw: 150) == 0.25)
        #expect(scale.force(raw: 100) == 0)
        #expect(scale.force(raw: 50) == 0)
        #expect(scale.excess(raw: 150) == 50)
    }
}

@Suite struct GramModelTests {
    @Test func nominalIs385GramsAtFullScale() {
        let model = GramModel(axis: AxisRange(minimum: 0, maximum: 255))
        #expect(model.kind == .nominal)
        #expect(model.grams(raw: 51, force: 0.2) == 77.0)
        #expect(model.grams(raw: 255, force: 1.0) == 385.0)
    }

    @Test func physicalUsesTheResolutionAsUnitsPerGram() {
        // Resolution 40 units per gram, minimum 20: raw 120 is 100 units above it, 2.5 g.
        let model = GramModel(axis: AxisRange(minimum: 20, maximum: 255, resolution: 40))
        #expect(model.kind == .physical)
        #expect(model.grams(raw: 120, force: 0) == 2.5)
        #expect(model.grams(raw: 10, force: 0) == 0)
    }

    @Test func calibrationCurvePassesThroughItsPointsFromTheOrigin() throws {
        // Points (raw 50, 100 g) and (raw 150, 250 g) on an axis starting at 0: two points,
        // so a two-parameter curve through both (CalibrationFitTests has the details).
        let calibration = try Calibration(points: [CalibrationPoint(raw: 150, grams: 250), CalibrationPoint(raw: 50, grams: 100)])
        let model = GramModel(axis: AxisRange(minimum: 0, maximum: 255, resolution: 40), calibration: calibration)
        #expect(model.kind == .calibrated)   // overrides physical
        #expect(abs(model.grams(raw: 50, force: 0) - 100) < 1e-6)
        #expect(abs(model.grams(raw: 150, force: 0) - 250) < 1e-6)
        #expect(model.grams(raw: 250, force: 0) > 250)
        #expect(model.grams(raw: 0, force: 0) == 0)
    }

    @Test func calibrationCountsFromTheAxisMinimum() throws {
        let calibration = try Calibration(points: [CalibrationPoint(raw: 110, grams: 20)], axisMinimum: 10)
        let model = GramModel(axis: AxisRange(minimum: 10, maximum: 255), calibration: calibration)
        #expect(abs(model.grams(raw: 60, force: 0) - 10) < 1e-9)
        #expect(abs(model.grams(raw: 210, force: 0) - 40) < 1e-9)
    }

    @Test func tareIsSubtractedInEveryModel() throws {
        var calibration = Calibration()
        calibration.tareGrams = 7
        #expect(GramModel(axis: AxisRange(minimum: 0, maximum: 255), calibration: calibration).grams(raw: 51, force: 0.2) == 70)
        #expect(GramModel(axis: AxisRange(minimum: 0, maximum: 255, resolution: 10), calibration: calibration).grams(raw: 100, force: 0) == 3)
    }

    @Test func calibrationRejectsPointsThatDoNotRise() throws {
        var calibration = try Calibration(points: [CalibrationPoint(raw: 50, grams: 100)])
        #expect(throws: CalibrationError.self) { try calibration.add(CalibrationPoint(raw: 80, grams: 90), axisMinimum: 0) }
        #expect(throws: CalibrationError.notPositive(grams: 0)) { try calibration.add(CalibrationPoint(raw: 80, grams: 0), axisMinimum: 0) }
        #expect(throws: CalibrationError.noPressure(raw: 5, minimum: 5)) { try calibration.add(CalibrationPoint(raw: 5, grams: 10), axisMinimum: 5) }
        // A raw that would be kept (to 0.01) as the minimum is at the minimum (issue 41:
        // 5e-324 was accepted and echoed as raw 0.0).
        #expect(throws: CalibrationError.noPressure(raw: .leastNonzeroMagnitude, minimum: 0)) { try calibration.add(CalibrationPoint(raw: .leastNonzeroMagnitude, grams: 10), axisMinimum: 0) }
        #expect(throws: CalibrationError.noPressure(raw: 0.004, minimum: 0)) { try calibration.add(CalibrationPoint(raw: 0.004, grams: 10), axisMinimum: 0) }
        #expect(throws: CalibrationError.tooHeavy(grams: 1e308)) { try calibration.add(CalibrationPoint(raw: 90, grams: 1e308), axisMinimum: 0) }
        #expect(throws: CalibrationError.rawOutOfRange(raw: 1e12)) { try calibration.add(CalibrationPoint(raw: 1e12, grams: 1000), axisMinimum: 0) }
        // A point at the same raw replaces the old one.
        try calibration.add(CalibrationPoint(raw: 50, grams: 120), axisMinimum: 0)
        #expect(calibration.points == [CalibrationPoint(raw: 50, grams: 120)])
    }
}

@Suite struct MassUnitTests {
    @Test func convertsFromGrams() {
        #expect(MassUnit.grams.fromGrams(385) == 385)
        #expect(MassUnit.kilograms.fromGrams(385) == 0.385)
        #expect(MassUnit.carats.fromGrams(1) == 5)
        #expect(abs(MassUnit.ounces.fromGrams(28.349523125) - 1) < 1e-12)
        #expect(abs(MassUnit.pounds.fromGrams(453.59237) - 1) < 1e-12)
        // 1 kg weighs 9.80665 N under standard gravity.
        #expect(abs(MassUnit.newtons.fromGrams(1000) - 9.80665) < 1e-12)
        #expect(Set(MassUnit.allCases.map(\.rawValue)) == ["g", "kg", "oz", "lb", "ct", "N"])
    }
}
