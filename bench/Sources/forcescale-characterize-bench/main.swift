// forcescale-characterize-bench: how well `forcescale characterize` finds a pen's activation
// force, P-values, hysteresis and pressure curve, on synthetic pens whose truth is known.
// Results: BENCHMARKS.md, "Pen characterization".
//
//   forcescale-characterize-bench [TRIALS] [SEED]
//
// Each trial draws a pen: a response family (power, logarithmic or S-shaped, with a random
// shape), an axis of 0–2047 or 0–8191, an IAF of 2–15 g, a full scale of 300–600 g,
// hysteresis of 0–6 % of the range, 1–2.5 raw units of Gaussian noise, a creep of up to 0.5 %
// of the reading after landing, and a landing that overshoots by 10–40 %. The person's weights are
// placed on its tip one by one as ScaleCore's SyntheticPen places them (the landing, 2 s at
// rest, a push to twice the weight, at least 100 g more, and back, 2 s at rest again, the
// lift). The frames (200 a second) go through PenTouchTracker and PenCharacterization
// exactly as a recording's readings do, and every figure is compared with the pen's truth.
//
// The weights (34): 1 g and the euro coins (1, 2, 5, 20 cent; 1 and 2 €), the 2 € coin with
// each of the others on it (10.8–16 g), stacks of 2 € coins, then weights every 15–40 g up to
// 510 g: about 15 % apart around the IAFs drawn and at most 8 % of full scale apart above, as
// docs/weighing.md advises.
//
// A pen's IAF, the truth its estimate is judged by, is the force at which it registers: where
// its noiseless reading first reaches half a raw unit (it reads 1 from there). A response
// that starts flat registers later than where its curve leaves zero.

import BenchSupport
import Glibc
import ScaleCore

let weights: [Double] = [1, 2.3, 3.06, 3.92, 5.74, 7.5, 8.5, 10.8, 12.42, 14.24, 16, 17, 20.92, 25.5, 34, 42.5, 51, 60, 75, 85, 100, 120, 140, 170, 200, 230, 255, 285, 315, 340, 380, 425, 470, 510]

enum Family: String, CaseIterable {
    case power, logarithmic, sShaped = "s-shaped"
}

/// A drawn pen: its family and parameters, and the ``SyntheticPen`` that makes its frames.
struct DrawnPen {
    var family: Family
    var axisMaximum: Int32
    var iaf: Double
    var fullScale: Double
    /// The pressing response on 0…1 of the span between the IAF and full scale.
    var shape: @Sendable (Double) -> Double
    /// The largest releasing-minus-pressing difference, as a fraction of the range.
    var hysteresis: Double
    var synthetic: SyntheticPen

    init(family: Family, axisMaximum: Int32, random: inout Noise) {
        self.family = family
        self.axisMaximum = axisMaximum
        let iaf = 2 + 13 * random.unit()
        let fullScale = 300 + 300 * random.unit()
        let hysteresis = 0.06 * random.unit()
        let noise = 1 + 1.5 * random.unit()
        let creep = 0.005 * random.unit()
        let overshoot = 0.1 + 0.3 * random.unit()
        let shape: @Sendable (Double) -> Double
        switch family {
        case .power:
            let exponent = 0.6 + 1.0 * random.unit()
            shape = { pow($0, exponent) }
        case .logarithmic:
            let k = 2 + 18 * random.unit()
            shape = { log(1 + k * $0) / log(1 + k) }
        case .sShaped:
            let steepness = 6 + 4 * random.unit()
            let centre = 0.3 + 0.3 * random.unit()
            let logistic: @Sendable (Double) -> Double = { 1 / (1 + exp(-steepness * ($0 - centre))) }
            let low = logistic(0), high = logistic(1)
            shape = { (logistic($0) - low) / (high - low) }
        }
        let position: @Sendable (Double) -> Double = { Swift.min(1, Swift.max(0, ($0 - iaf) / (fullScale - iaf))) }
        let pressing: @Sendable (Double) -> Double = { $0 < iaf ? 0 : shape(position($0)) }
        let releasing: @Sendable (Double) -> Double = { force in
            let x = position(force)
            return force < iaf ? 0 : Swift.min(1, shape(x) + hysteresis * 4 * x * (1 - x))
        }
        self.iaf = iaf
        self.fullScale = fullScale
        self.shape = shape
        self.hysteresis = hysteresis
        synthetic = SyntheticPen(axisMaximum: axisMaximum, pressing: pressing, releasing: releasing, noise: noise, creep: creep, overshoot: overshoot)
    }

    func pressing(_ force: Double) -> Double { synthetic.pressing(force) }
    func releasing(_ force: Double) -> Double { synthetic.releasing(force) }

    /// The force at which the pen registers (see the comment at the top).
    var registration: Double {
        var low = iaf, high = fullScale
        for _ in 0..<80 {
            let middle = (low + high) / 2
            if pressing(middle) * Double(axisMaximum) < 0.5 { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// The frames of every weight placed in turn, through the tracker: the touches.
    func touches(of weights: [Double], seed: UInt64) -> [PenTouch] {
        var tracker = PenTouchTracker(axis: 0...axisMaximum)
        var touches: [PenTouch] = []
        var random = SplitMix64(seed: seed)
        for frame in synthetic.frames(weights: weights, random: &random) {
            for case .ended(let touch?) in tracker.add(time: frame.time, raw: frame.raw, touching: frame.touching) { touches.append(touch) }
        }
        if case .ended(let touch?) = tracker.finish() { touches.append(touch) }
        return touches
    }
}

struct Outcome {
    var iafError = 0.0
    var iafWithinGoal = false
    var covered = false
    var pError = 0.0
    var hysteresisError: Double?
    var curveDeviation = 0.0
    var failure: String?
}

func trial(_ pen: DrawnPen, seed: UInt64) -> Outcome {
    var outcome = Outcome()
    let touches = pen.touches(of: weights, seed: seed)
    let characterization: PenCharacterization
    do {
        characterization = try PenCharacterization(measurements: PenCharacterization.pair(weights: weights, touches: touches), axis: 0...pen.axisMaximum)
    } catch {
        outcome.failure = "\(error)"
        if verbose {
            print("  failed: \(pen.family.rawValue) 0-\(pen.axisMaximum) IAF \(format(pen.registration, 2)): touches " + touches.map { touch in
                touch.pressing.map { format($0.mean, 1) } ?? (touch.pushedBeforeRest ? "pushed" : "unmeasured") }.joined(separator: " "))
        }
        return outcome
    }
    let activation = characterization.activation
    let truth = pen.registration
    outcome.iafError = activation.grams - truth
    outcome.iafWithinGoal = outcome.iafError.magnitude <= Swift.max(1, 0.15 * truth)
    outcome.covered = outcome.iafError.magnitude <= activation.uncertainty + 1e-9
    if verbose, !outcome.iafWithinGoal || !outcome.covered {
        print("  \(pen.family.rawValue) 0-\(pen.axisMaximum): IAF \(format(truth, 2)) g, estimated \(format(activation.grams, 2)) ± \(format(activation.uncertainty, 2)) g;"
              + " lightest points " + characterization.points.prefix(4).map { "\(format($0.grams, 2)) g: \(format($0.raw, 1))" }.joined(separator: ", ")
              + "; unregistered \(characterization.unregistered.map { format($0, 2) })")
    }
    // P-values: the pen's true pressing fraction at each estimated force, against k/10.
    // P00 is the IAF, judged by its own goal above.
    for (tenth, value) in characterization.pValues.enumerated() where tenth > 0 {
        guard let value else { continue }
        outcome.pError = Swift.max(outcome.pError, (pen.pressing(value) - Double(tenth) / 10).magnitude)
    }
    // Hysteresis: against the truth at the weights measured.
    if let measured = characterization.hysteresisPercent {
        let truth = characterization.points.filter { $0.releasingFraction != nil }
            .map { (pen.releasing($0.grams) - pen.pressing($0.grams)) * 100 }.map(\.magnitude).max() ?? 0
        outcome.hysteresisError = (measured - truth).magnitude
    }
    // The exported curve over the measured span: its output against force must be straight.
    let settings = PenSettings(characterization)
    let heaviest = characterization.points.filter { !$0.saturated }.last!.grams
    let start = pen.registration
    guard heaviest > start else { return outcome }
    // The curve's output against force, on the pen's true response, and the straight line
    // through 0 at the registration that fits it best.
    let forces = (0...100).map { start + (heaviest - start) * Double($0) / 100 }
    let outputs = forces.map { settings.curve.output(at: pen.pressing($0)) ?? .nan }
    let steps = (0...100).map { Double($0) / 100 }
    let (deviation, slope) = PressureCurve.deviation(outputs, from: steps, factors: 0...1)
    outcome.curveDeviation = deviation * 100
    if verbose {
        let worst = zip(outputs, steps).map { ($0 - slope * $1).magnitude }.enumerated().max { $0.element < $1.element }!.offset
        print("    curve \(settings.curve.values), its error \(format(settings.curveErrorPercent, 2)) %, deviation \(format(outcome.curveDeviation, 2)) % at \(format(forces[worst], 1)) g"
              + " (span \(format(start, 1))–\(format(heaviest, 1)) g, full scale \(format(pen.fullScale, 0)) g; the line ends at \(format(slope * 100, 1)) %); P-values "
              + characterization.pValues.enumerated().map { tenth, value in value.map { format((pen.pressing($0) - Double(tenth) / 10) * 100, 1) } ?? "-" }.joined(separator: " "))
    }
    return outcome
}

let verbose = getenv("BENCH_VERBOSE") != nil
let arguments = CommandLine.arguments.dropFirst()
let trials = arguments.first.flatMap { Int($0) } ?? 100
let seed = arguments.dropFirst().first.flatMap { UInt64($0) } ?? 1
guard trials > 0 else { fail("TRIALS must be a positive whole number") }

print("weights: \(weights.map { format($0, $0 == $0.rounded() ? 0 : 2) }.joined(separator: ", ")) g")
print(String(repeating: " ", count: 18) + " trials  IAF |err| max  within ±1 g/15 %  covered  P max err  hyst max err  curve max dev  failed")
var allMet = true
for family in Family.allCases {
    for axis: Int32 in [2047, 8191] {
        var outcomes: [Outcome] = []
        for index in 0..<trials {
            let trialSeed = seed &* 1_000_003 &+ UInt64(index) &* 7919 &+ UInt64(axis) &+ UInt64(family.rawValue.count) &* 104_729
            var random = Noise(seed: trialSeed)
            let pen = DrawnPen(family: family, axisMaximum: axis, random: &random)
            outcomes.append(trial(pen, seed: trialSeed &+ 1))
        }
        let done = outcomes.filter { $0.failure == nil }
        let iafMax = done.map(\.iafError.magnitude).max() ?? 0
        let within = Double(done.filter(\.iafWithinGoal).count) / Double(Swift.max(1, done.count)) * 100
        let covered = Double(done.filter(\.covered).count) / Double(Swift.max(1, done.count)) * 100
        let pMax = (done.map(\.pError).max() ?? 0) * 100
        let hysteresisMax = done.compactMap(\.hysteresisError).max() ?? 0
        let curveMax = done.map(\.curveDeviation).max() ?? 0
        let failed = outcomes.count - done.count
        let met = within == 100 && covered >= 95 && pMax <= 1 && hysteresisMax <= 1 && curveMax <= 3 && failed == 0
        allMet = allMet && met
        let label = "\(family.rawValue) 0-\(axis)"
        print(label.rightPadded(18)
              + " \(format(Double(trials), 0).leftPadded(6))  \(format(iafMax, 2).leftPadded(9)) g  \(format(within, 1).leftPadded(14)) %  \(format(covered, 1).leftPadded(5)) %"
              + "  \(format(pMax, 2).leftPadded(7)) %  \(format(hysteresisMax, 2).leftPadded(10)) %  \(format(curveMax, 2).leftPadded(11)) %  \(failed)  \(met ? "met" : "NOT met")")
        if let first = outcomes.first(where: { $0.failure != nil })?.failure { print("    first failure: \(first)") }
    }
}
print("goals: IAF within ±1 g or ±15 % in every trial; covered by its ± in ≥ 95 %; P10 … P100 within 1 % of the range;"
      + " hysteresis within 1 %; the xsetwacom curve straight within 3 %: \(allMet ? "all met" : "NOT all met")")
exit(allMet ? 0 : 1)

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
    func rightPadded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
