import Testing
@testable import ScaleCore
import Glibc  // exp, log, pow: the known responses the fits must recover.

/// A known response on an axis: raw for grams, so that points can be made as a person would
/// make them (put a weight on, read the raw value).
private struct KnownResponse: Sendable {
    var axis: AxisRange
    /// Grams at normalised pressure x.
    var grams: @Sendable (Double) -> Double

    /// The raw value that weighs `grams`, by bisection on the rising response.
    func raw(forGrams target: Double) -> Double {
        var low = 0.0
        var high = 1.0
        for _ in 0..<80 {
            let middle = (low + high) / 2
            if grams(middle) < target { low = middle } else { high = middle }
        }
        return Double(axis.minimum) + (low + high) / 2 * Double(axis.maximum - axis.minimum)
    }

    func points(_ weights: [Double]) -> [CalibrationPoint] {
        weights.map { CalibrationPoint(raw: raw(forGrams: $0), grams: $0) }
    }
}

private let pen = KnownResponse(axis: AxisRange(minimum: 0, maximum: 2047)) { x in 30 * (exp(2.9 * x) - 1) }
private let pad = KnownResponse(axis: AxisRange(minimum: 0, maximum: 4095)) { x in 500 * pow(x, 1.7) }

@Suite struct CalibrationFitTests {
    @Test func eachFamilyRecoversItsOwnParametersFromExactPoints() throws {
        let weights = [5.7, 20, 50, 180, 300]
        let powerFit = try #require(ResponseFitting.fit(.power, to: samples(pad, weights)))
        guard case .power(let a, let b) = powerFit else { Issue.record("not a power law: \(powerFit)"); return }
        #expect(abs(a - 500) < 1e-3 && abs(b - 1.7) < 1e-6)

        let logFit = try #require(ResponseFitting.fit(.logarithmic, to: samples(pen, weights)))
        let parameters = Dictionary(uniqueKeysWithValues: logFit.parameters.map { ($0.name, $0.value) })
        #expect(abs(parameters["a"]! - 30) < 1e-3 && abs(parameters["k"]! - 2.9) < 1e-6)

        let line = KnownResponse(axis: AxisRange(minimum: 0, maximum: 255)) { 400 * $0 }
        let lineFit = try #require(ResponseFitting.fit(.linear, to: samples(line, weights)))
        #expect(abs(lineFit.parameters[0].value - 400) < 1e-9)
    }

    @Test func leaveOneOutChoosesTheFamilyThatPredictsTheDevice() {
        let weights = [5.7, 20, 50, 180, 300]
        #expect(CalibrationFit(points: pad.points(weights), axis: pad.axis).model.family == .power)
        #expect(CalibrationFit(points: pen.points(weights), axis: pen.axis).model.family == .logarithmic)
        let line = KnownResponse(axis: AxisRange(minimum: 100, maximum: 1100)) { 385 * $0 }
        // Every family can draw a straight line; on a tie the simplest wins.
        let fit = CalibrationFit(points: line.points([20, 180]), axis: line.axis)
        #expect(abs(fit.grams(raw: line.raw(forGrams: 385)) - 385) < 1e-6)
    }

    @Test func twoPointsTakeTheDevicesLikelyFamilyThroughBoth() {
        let points = pen.points([20, 180])
        let fit = CalibrationFit(points: points, axis: pen.axis, likely: .logarithmic)
        #expect(fit.model.family == .logarithmic)
        for point in fit.points { #expect(abs(point.residual) < 1e-6) }
        // The pen's own family: exact everywhere, also past the heaviest point.
        #expect(abs(fit.grams(raw: pen.raw(forGrams: 385)) - 385) < 1e-3)
        #expect(CalibrationFit(points: points, axis: pen.axis, likely: .power).model.family == .power)
        #expect(ResponseFamily.likely(for: .tablet) == .logarithmic)
        #expect(ResponseFamily.likely(for: .pressurePad) == .power)
    }

    /// Draws of the accuracy study (`forcescale-calibration-bench study 200 SEED`) on the
    /// straight pad 100–1123 (`raw = 100 + 1023·g/400`, σ 1 raw unit, means of 50
    /// readings) whose noise put the points just off the straight line: the earlier
    /// selection fitted a power law to the miss, 1.2–1.3 g off by 385 g where straight
    /// segments through the same points stay within 0.4 g.
    @Test(arguments: [
        // Seed 1, trial 184: a letter and an apple; the line's chi-square 5.4 (z 2.3).
        [CalibrationPoint(raw: 150.72, grams: 20, spread: 1.088717650471866, count: 50),
         CalibrationPoint(raw: 560.4, grams: 180, spread: 0.9476070829586859, count: 50)],
        // Seed 10, trial 169: a coin too; chi-square 9.8 with two degrees of freedom, and
        // leave-one-out was fooled (power 0.48 g against the line's 0.99 g).
        [CalibrationPoint(raw: 114.82, grams: 5.7, spread: 1.0038700623291923, count: 50),
         CalibrationPoint(raw: 151.6, grams: 20, spread: 0.9897433186107867, count: 50),
         CalibrationPoint(raw: 560.28, grams: 180, spread: 1.088717650471866, count: 50)],
    ])
    func aDoubtfulBendOnAStraightPadIsNoWorseThanStraightSegments(points: [CalibrationPoint]) {
        let axis = AxisRange(minimum: 100, maximum: 1123)
        let fit = CalibrationFit(points: points, axis: axis, likely: .power)
        let segments = CalibrationFit(points: points, axis: axis, families: [.piecewiseLinear])
        var fitted = 0.0
        var straight = 0.0
        for grams in stride(from: 2.0, through: 385, by: 1) {
            let raw = 100 + 1023 * grams / 400
            fitted = max(fitted, abs(fit.grams(raw: raw) - grams))
            straight = max(straight, abs(segments.grams(raw: raw) - grams))
        }
        #expect(fitted <= straight + 1e-9, "\(fit.model.family) is \(fitted) g off, straight segments \(straight) g")
        #expect(straight < 0.4)
        #expect(fit.model.family == .piecewiseLinear)
        // It still says how good it is.
        #expect((fit.uncertainty ?? 0) > 0)
    }

    @Test func aClearBendStillGetsItsCurveAndAStraightPadItsLine() {
        // Points measured as the daemon measures them (mean of 50 readings, spread 1 unit):
        // on the curved devices the line misses by far more than five standard errors.
        func measured(_ points: [CalibrationPoint]) -> [CalibrationPoint] {
            points.map { CalibrationPoint(raw: $0.raw, grams: $0.grams, spread: 1, count: 50) }
        }
        #expect(CalibrationFit(points: measured(pad.points([20, 180])), axis: pad.axis, likely: .power).model.family == .power)
        #expect(CalibrationFit(points: measured(pen.points([20, 180])), axis: pen.axis, likely: .logarithmic).model.family == .logarithmic)
        #expect(CalibrationFit(points: measured(pad.points([5.7, 20, 180])), axis: pad.axis).model.family == .power)
        #expect(CalibrationFit(points: measured(pen.points([5.7, 20, 50, 180, 300])), axis: pen.axis).model.family == .logarithmic)
        let line = KnownResponse(axis: AxisRange(minimum: 100, maximum: 1123)) { 400 * $0 }
        for weights in [[20.0, 180], [5.7, 20, 180], [5.7, 20, 57, 180, 300]] {
            #expect(CalibrationFit(points: measured(line.points(weights)), axis: line.axis).model.family == .linear)
        }
    }

    @Test func theChiSquareTailIsTheKnownOne() {
        // P(χ²₁ ≥ 25) = P(|z| ≥ 5); the 95th percentiles of 1 to 4 degrees of freedom; with
        // two degrees the tail is e^(−v/2) exactly.
        #expect(abs(CalibrationFit.chiSquareTail(25, freedom: 1) / 5.733e-7 - 1) < 1e-3)
        for (value, freedom) in [(3.841, 1), (5.991, 2), (7.815, 3), (9.488, 4), (16.919, 9)] {
            #expect(abs(CalibrationFit.chiSquareTail(value, freedom: freedom) - 0.05) < 1e-4, "\(freedom) degrees")
        }
        #expect(abs(CalibrationFit.chiSquareTail(30, freedom: 2) - exp(-15)) < 1e-15)
        // Curved devices leave chi-squares in the hundreds of thousands: 0, not NaN.
        #expect(CalibrationFit.chiSquareTail(480_000, freedom: 1) == 0)
        #expect(CalibrationFit.chiSquareTail(480_000, freedom: 9) == 0)
        #expect(CalibrationFit.chiSquareTail(0, freedom: 3) == 1)
    }

    @Test func onePointIsAStraightLineThroughTheOriginWithNoUncertainty() {
        let fit = CalibrationFit(points: [CalibrationPoint(raw: 110, grams: 20)], axis: AxisRange(minimum: 10, maximum: 255))
        #expect(fit.model.family == .linear)
        #expect(abs(fit.grams(raw: 210) - 40) < 1e-9)
        #expect(fit.grams(raw: 5) == 0)
        #expect(fit.uncertainty == nil)
        #expect(fit.points.map(\.leaveOneOut) == [nil])
    }

    @Test func noCurveFallsOrTurnsBackOverTheAxis() {
        // Rising points of every kind, jagged ones included: each candidate family and the
        // chosen curve must rise from the origin to the end of the axis and beyond.
        var random = SplitMix64(seed: 12)
        for _ in 0..<200 {
            let count = 1 + Int(random.nextUnit() * 9)
            var raw = 0.0
            var grams = 0.0
            var points: [CalibrationPoint] = []
            for _ in 0..<count {
                raw += 1 + random.nextUnit() * 400
                grams += 0.5 + pow(random.nextUnit(), 3) * 150
                points.append(CalibrationPoint(raw: raw, grams: grams))
            }
            let axis = AxisRange(minimum: 0, maximum: Int32(raw * (1 + random.nextUnit())) + 1)
            let samples = points.map { FitSample(x: $0.raw / Double(axis.maximum), grams: $0.grams) }
            var models = ResponseFamily.allCases.compactMap { ResponseFitting.fit($0, to: samples) }
            models.append(CalibrationFit(points: points, axis: axis).model)
            for model in models {
                var previous = 0.0
                for step in 1...400 {
                    let value = model.grams(atX: Double(step) / 300)
                    #expect(value >= previous, "\(model.family) falls at x = \(Double(step) / 300) for \(points)")
                    #expect(value.isFinite)
                    previous = value
                }
            }
        }
    }

    @Test func theMonotoneCubicPassesThroughItsPointsWithoutOvershoot() {
        // A step in the data: a plain cubic spline would dip before it and bulge after it.
        let points = [FitSample(x: 0.1, grams: 10), FitSample(x: 0.2, grams: 11), FitSample(x: 0.3, grams: 100), FitSample(x: 0.4, grams: 101)]
        let cubic = MonotoneCubic(points: points)
        for point in points { #expect(abs(cubic.grams(atX: point.x) - point.grams) < 1e-9) }
        for step in 0..<100 {
            let x = 0.2 + Double(step) * 0.001
            #expect(cubic.grams(atX: x) >= 11 - 1e-9 && cubic.grams(atX: x) <= 100 + 1e-9)
        }
        // Past the last point: a straight line with the last tangent.
        let slope = cubic.tangents.last!
        #expect(abs(cubic.grams(atX: 0.6) - (101 + 0.2 * slope)) < 1e-9)
    }

    @Test func piecewiseLinearIsTheCurveOfEarlierReleases() {
        // Points (raw 50, 100 g) and (raw 150, 250 g) on an axis starting at 0.
        let points = [CalibrationPoint(raw: 50, grams: 100), CalibrationPoint(raw: 150, grams: 250)]
        let fit = CalibrationFit(points: points, axis: AxisRange(minimum: 0, maximum: 255), families: [.piecewiseLinear])
        #expect(fit.model.family == .piecewiseLinear)
        #expect(abs(fit.grams(raw: 25) - 50) < 1e-9)    // halfway to the first point
        #expect(abs(fit.grams(raw: 100) - 175) < 1e-9)  // halfway between the points
        #expect(abs(fit.grams(raw: 250) - 400) < 1e-9)  // beyond: the last slope, 1.5 g per unit
        #expect(fit.grams(raw: 0) == 0)
    }

    @Test func aPointThatDisagreesWithTheOthersIsNamed() {
        // 25 typed for 20: the curve still rises, so only the others can tell.
        var points = pad.points([20, 50, 100, 200, 300])
        points[0].grams = 25
        let fit = CalibrationFit(points: points, axis: pad.axis)
        #expect(fit.disagreeing.map(\.point.grams) == [25])
        let expected = fit.disagreeing.first?.expected ?? 0
        #expect(abs(expected - 20) < 1)
        // The same points, correct: nobody is named.
        #expect(CalibrationFit(points: pad.points([20, 50, 100, 200, 300]), axis: pad.axis).disagreeing.isEmpty)
    }

    @Test func uncertaintyGrowsWithTheSpreadOfThePoints() throws {
        let points = pad.points([5.7, 20, 180])
        let quiet = try #require(CalibrationFit(points: points, axis: pad.axis).uncertainty)
        let noisy = try #require(CalibrationFit(points: points.map { point in
            var point = point
            point.spread = 20
            point.count = 50
            return point
        }, axis: pad.axis).uncertainty)
        #expect(quiet < 0.01)
        #expect(noisy > quiet)
        // Two points: what the families that fit both disagree on.
        let two = try #require(CalibrationFit(points: pen.points([20, 180]), axis: pen.axis, likely: .logarithmic).uncertainty)
        #expect(two > 0)
    }

    @Test func theFitIsDeterministic() {
        var random = SplitMix64(seed: 7)
        let points = pad.points([5.7, 20, 50, 100, 180]).map { point in
            var point = point
            point.raw += (random.nextUnit() - 0.5) * 8
            return point
        }
        #expect(CalibrationFit(points: points, axis: pad.axis) == CalibrationFit(points: points, axis: pad.axis))
    }

    @Test func gramModelWeighsWithTheFittedCurve() throws {
        let calibration = try Calibration(points: pad.points([20, 180, 300]), tareGrams: 5)
        let model = GramModel(axis: pad.axis, calibration: calibration)
        #expect(model.kind == .calibrated)
        #expect(model.fit?.model.family == .power)
        #expect(abs(model.grams(raw: Int32(pad.raw(forGrams: 100).rounded()), force: 0) - 95) < 0.2)
    }

    /// Ten points fitted 1000 times. The time is printed for a person to read; the bench
    /// (`forcescale-calibration-bench timing`) is where the ≤ 1 ms goal is checked, since a
    /// test machine's load says nothing about the code.
    @Test func tenPointsFitManyTimes() {
        var random = SplitMix64(seed: 3)
        let weights = [2.0, 5.7, 10, 20, 50, 80, 120, 180, 250, 350]
        let exact = pen.points(weights)
        let cases = (0..<1000).map { _ in
            exact.map { point in
                var point = point
                point.raw += (random.nextUnit() - 0.5) * 2
                return point
            }
        }
        var families: [ResponseFamily: Int] = [:]
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for points in cases {
                families[CalibrationFit(points: points, axis: pen.axis).model.family, default: 0] += 1
            }
        }
        print("1000 fits of 10 points: \(elapsed) (\(elapsed / 1000) each), families chosen \(families)")
        #expect(families.values.reduce(0, +) == 1000)
    }

    private func samples(_ response: KnownResponse, _ weights: [Double]) -> [FitSample] {
        response.points(weights).map { FitSample(x: ($0.raw - Double(response.axis.minimum)) / Double(response.axis.maximum - response.axis.minimum), grams: $0.grams) }
    }
}
