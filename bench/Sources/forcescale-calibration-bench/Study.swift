import BenchSupport
import ScaleCore

/// The errors of one way of calibrating, over every trial's sweep.
struct ErrorTally {
    var maximum = 0.0
    var sum = 0.0
    var count = 0
    /// Readings whose error the quoted uncertainty covered, and readings that had one.
    var covered = 0
    var quoted = 0
    var uncertainties: [Double] = []

    mutating func add(error: Double, uncertainty: Double?) {
        let size = abs(error)
        maximum = Swift.max(maximum, size)
        sum += size
        count += 1
        if let uncertainty {
            quoted += 1
            if size <= uncertainty { covered += 1 }
        }
    }

    var mean: Double { count == 0 ? 0 : sum / Double(count) }
    var coverage: Double? { quoted == 0 ? nil : Double(covered) / Double(quoted) }
    var medianUncertainty: Double? {
        guard !uncertainties.isEmpty else { return nil }
        return uncertainties.sorted()[uncertainties.count / 2]
    }
}

/// A calibration point as the daemon takes it: the mean of the readings of the stability
/// window (half a second of frames), with their spread.
func takePoint(_ device: SyntheticDevice, grams: Double, random: inout Noise) -> CalibrationPoint {
    let count = device.rate / 2
    var values: [Double] = []
    for _ in 0..<count { values.append(Double(device.reading(grams: grams, random: &random))) }
    let mean = values.reduce(0, +) / Double(count)
    let variance = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(count - 1)
    return CalibrationPoint(raw: mean, grams: grams, spread: variance.squareRoot(), count: count)
}

/// The weights of the sweep: 2 g to 385 g.
let sweepWeights: [Double] = [2, 3, 5, 7.5] + stride(from: 10.0, through: 385, by: 5).map { $0 } + [385]

/// Runs the pure path of the study: points and sweep readings are drawn from the synthetic
/// devices and weighed with ScaleCore's fits directly (no daemon).
/// - Parameters:
///   - trials: Independent noise draws per device and number of points.
///   - seed: The first seed; each trial has its own.
func runStudy(trials: Int, seed: UInt64) {
    let fullScale = GramModel.nominalFullScale
    print("Pure path: \(trials) trials per row; each trial takes its points (mean of half a second of")
    print("noisy readings) and weighs the sweep 2–385 g (\(sweepWeights.count) weights, each the mean of a stability")
    print("window of noisy readings, as a stable READING's settled_grams is).")
    print("Errors are |grams shown − true grams|; % of full scale is of 385 g.\n")
    var goals: [String] = []
    var notes: [String] = []
    for device in SyntheticDevice.all {
        print("\(device.label)  (noise σ \(format(device.noise, 1)) raw units, \(device.rate) Hz)")
        print("  points  weights                            piecewise linear max / mean    fitted max / mean              U median  covered  models chosen")
        for (count, weights) in HouseholdWeights.sets.sorted(by: { $0.key < $1.key }) {
            var piecewise = ErrorTally()
            var fitted = ErrorTally()
            // The curves' own error: each curve at the device's exact, noise-free response to
            // the sweep weight. This is what a calibration decides; the settled weight adds
            // the noise left in a window's mean on top, the same for both curves.
            var piecewiseCurve = ErrorTally()
            var fittedCurve = ErrorTally()
            var families: [String: Int] = [:]
            var falseAlarms = 0
            for trial in 0..<trials {
                var random = Noise(seed: seed &+ UInt64(trial) &* 0x1_0000 &+ UInt64(count) &* 0x100 &+ UInt64(device.axis.maximum))
                let points = weights.map { takePoint(device, grams: $0, random: &random) }
                let old = CalibrationFit(points: points, axis: device.axis, families: [.piecewiseLinear])
                let new = CalibrationFit(points: points, axis: device.axis, likely: .likely(for: device.kind))
                families[new.model.family.rawValue, default: 0] += 1
                // Every weight is right here: any point named as disagreeing is a false alarm.
                if !new.disagreeing.isEmpty { falseAlarms += 1 }
                if let uncertainty = new.uncertainty { fitted.uncertainties.append(uncertainty) }
                for weight in sweepWeights {
                    let raw = takePoint(device, grams: weight, random: &random).raw
                    piecewise.add(error: old.grams(raw: raw) - weight, uncertainty: nil)
                    // The uncertainty a client quotes: the fit's, grown past the heaviest weight.
                    let grams = new.grams(raw: raw)
                    let quoted = new.uncertainty.map { CalibrationFit.uncertainty($0, atGrams: grams, heaviest: weights.max()!) }
                    fitted.add(error: grams - weight, uncertainty: quoted)
                    let exact = device.response(weight)
                    piecewiseCurve.add(error: old.grams(raw: exact) - weight, uncertainty: nil)
                    fittedCurve.add(error: new.grams(raw: exact) - weight, uncertainty: nil)
                }
            }
            var models = families.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            if count >= 4 { models += "; a correct point named as disagreeing in \(falseAlarms) of \(trials)" }
            func cell(_ tally: ErrorTally) -> String {
                "\(pad(format(tally.maximum, 2), 7)) g (\(pad(format(100 * tally.maximum / fullScale, 2), 5)) %) / \(pad(format(tally.mean, 2), 6)) g"
            }
            let uncertainty = fitted.medianUncertainty.map { format($0, 2) + " g" } ?? "—"
            let coverage = fitted.coverage.map { format(100 * $0, 1) + " %" } ?? "—"
            print("  \(pad(String(count), 6))  \(padRight(HouseholdWeights.describe(weights), 33))  \(cell(piecewise))   \(cell(fitted))  \(pad(uncertainty, 8))  \(pad(coverage, 7))  \(models)")
            print("  \(pad("", 6))  \(padRight("the curve alone (no reading noise)", 33))  \(cell(piecewiseCurve))   \(cell(fittedCurve))")
            print("result device=\(device.key) points=\(count) pl_max=\(format(piecewise.maximum, 3)) pl_mean=\(format(piecewise.mean, 3)) fit_max=\(format(fitted.maximum, 3)) fit_mean=\(format(fitted.mean, 3)) pl_curve_max=\(format(piecewiseCurve.maximum, 3)) pl_curve_mean=\(format(piecewiseCurve.mean, 3)) fit_curve_max=\(format(fittedCurve.maximum, 3)) fit_curve_mean=\(format(fittedCurve.mean, 3)) coverage=\(fitted.coverage.map { format($0, 4) } ?? "none")")

            // The issue's goals, checked where they apply.
            let percent = 100 * fitted.maximum / fullScale
            if count == 3 {
                goals.append("\(percent <= 1 ? "met " : "MISSED") 3 weights ≤ 1 % FS on \(device.label): \(format(percent, 2)) %")
            }
            if count == 1, device.key.hasPrefix("linear-") {
                goals.append("\(percent <= 0.5 ? "met " : "MISSED") 1 weight ≤ 0.5 % FS on \(device.label): \(format(percent, 2)) %")
            }
            // "Never worse" is judged on what the calibration decides: the curve's own largest
            // and mean error, and the mean error of readings. The largest error of single
            // readings is the tail of the sensor's noise (about 4 σ over 16,000 readings) plus
            // the curve's error; where only it is larger, that is reported as such, not hidden.
            if fittedCurve.maximum > piecewiseCurve.maximum + 1e-9 || fittedCurve.mean > piecewiseCurve.mean + 1e-9 || fitted.mean > piecewise.mean + 1e-9 {
                goals.append("MISSED never worse than piecewise linear: \(device.label), \(count) points (curve max \(format(fittedCurve.maximum, 3)) against \(format(piecewiseCurve.maximum, 3)) g, curve mean \(format(fittedCurve.mean, 3)) against \(format(piecewiseCurve.mean, 3)) g, reading mean \(format(fitted.mean, 3)) against \(format(piecewise.mean, 3)) g)")
            } else if fitted.maximum > piecewise.maximum + 1e-9 {
                notes.append("\(device.label), \(count) points: the largest single-reading error is \(format(fitted.maximum - piecewise.maximum, 2)) g larger fitted (\(format(fitted.maximum, 2)) against \(format(piecewise.maximum, 2)) g) although the curve is not worse (max \(format(fittedCurve.maximum, 3)) against \(format(piecewiseCurve.maximum, 3)) g): the noise's tail")
            }
            if let coverage = fitted.coverage, coverage < 0.95 {
                goals.append("MISSED uncertainty covers ≥ 95 %: \(device.label), \(count) points: \(format(100 * coverage, 1)) %")
            }
        }
        print("")
    }
    print("Goals:")
    for goal in goals { print("  " + goal) }
    if !goals.contains(where: { $0.hasPrefix("MISSED never") }) { print("  met  never worse than piecewise linear (the curve's max and mean, the readings' mean; every device and point count)") }
    if !goals.contains(where: { $0.hasPrefix("MISSED uncertainty") }) { print("  met  uncertainty covers ≥ 95 % of readings wherever one is quoted") }
    if !notes.isEmpty {
        print("Notes:")
        for note in notes { print("  " + note) }
    }
}

func pad(_ text: String, _ width: Int) -> String {
    String(repeating: " ", count: Swift.max(0, width - text.count)) + text
}

func padRight(_ text: String, _ width: Int) -> String {
    text + String(repeating: " ", count: Swift.max(0, width - text.count))
}
