// forcescale-calibration-bench: the accuracy study of calibrated curves and the fit's speed.
//
//   forcescale-calibration-bench study [TRIALS] [SEED]
//       The pure path: synthetic devices with a known response (bench/Sources/
//       forcescale-calibration-bench/SyntheticDevice.swift), calibrated with 1, 2, 3 and 5
//       household weights, then a sweep from 2 g to 385 g; piecewise linear (the curve of
//       earlier releases) and the fitted curve side by side. TRIALS defaults to 200.
//   forcescale-calibration-bench timing [REPETITIONS]
//       Ten points fitted 1000 times, REPETITIONS times (default 5): the median per fit.
//   forcescale-calibration-bench record DEVICE FILE SEED HOLD GAP WEIGHT...
//       Writes an evemu recording of DEVICE (log-pen-2047, log-pen-8191, power-pad-4095,
//       linear-pad-100, coarse-pad-255, power-pen-1023, log-pad-1023) with the weights put
//       on and lifted off in turn (2 s lead, HOLD seconds on, GAP seconds between), for
//       forcescaled --replay; a weight written GRAMS@SECONDS rests that long instead.
//   forcescale-calibration-bench piecewise DEVICE POINTS RAW...
//       Grams by piecewise linear through POINTS ("raw:grams,raw:grams"), one per line: the
//       curve of earlier releases through the points the daemon measured.
//
// bench/calibration runs both and the daemon path. Results: BENCHMARKS.md, "Calibration".

import BenchSupport
import Glibc
import ScaleCore
import ScaleRecording

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "study":
    let trials = arguments.count > 1 ? Int(arguments[1]) ?? 200 : 200
    let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1
    runStudy(trials: trials, seed: seed)
case "timing":
    let repetitions = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
    runTiming(repetitions: repetitions)
case "record" where arguments.count >= 7:
    guard let device = SyntheticDevice.named(arguments[1]) else { fail("unknown device '\(arguments[1])'") }
    guard let seed = UInt64(arguments[3]) else { fail("the seed must be a whole number") }
    guard let hold = Double(arguments[4]), let gap = Double(arguments[5]), hold > 0, gap > 0 else { fail("HOLD and GAP are seconds above 0") }
    let weights = arguments.dropFirst(6).map { argument -> (grams: Double, hold: Double?) in
        let parts = argument.split(separator: "@", maxSplits: 1)
        return (Double(parts.first ?? "") ?? -1, parts.count == 2 ? Double(parts[1]) ?? -1 : nil)
    }
    guard weights.allSatisfy({ $0.grams > 0 && ($0.hold ?? 1) > 0 }) else {
        fail("weights must be numbers of grams greater than 0, each with @SECONDS above 0 if given")
    }
    let text = EvemuWriter.text(of: holdsRecording(device, weights: weights, lead: 2, hold: hold, gap: gap, seed: seed))
    guard let file = fopen(arguments[2], "w") else { fail("cannot create \(arguments[2])") }
    fputs(text, file)
    fclose(file)
case "piecewise" where arguments.count >= 3:
    guard let device = SyntheticDevice.named(arguments[1]) else { fail("unknown device '\(arguments[1])'") }
    let points = arguments[2].split(separator: ",").map { pair -> CalibrationPoint in
        let parts = pair.split(separator: ":").map { Double($0) ?? 0 }
        return CalibrationPoint(raw: parts[0], grams: parts[1])
    }
    let fit = CalibrationFit(points: points.sorted { $0.raw < $1.raw }, axis: device.axis, families: [.piecewiseLinear])
    for raw in arguments.dropFirst(3) { print(format(fit.grams(raw: Double(raw) ?? 0), 4)) }
default:
    fail("usage: forcescale-calibration-bench study [TRIALS] [SEED] | timing [REPETITIONS] | record DEVICE FILE SEED HOLD GAP WEIGHT... | piecewise DEVICE POINTS RAW...")
}

/// Ten points on the 0–2047 pen, with noise, fitted 1000 times per repetition.
func runTiming(repetitions: Int) {
    let device = SyntheticDevice.named("log-pen-2047")!
    var random = Noise(seed: 42)
    let weights = [2.0, 5.7, 10, 20, 50, 80, 120, 180, 250, 350]
    let cases = (0..<1000).map { _ in weights.map { takePoint(device, grams: $0, random: &random) } }
    var times: [Double] = []
    var checksum = 0.0
    for _ in 0..<repetitions {
        let start = nanoseconds()
        for points in cases {
            checksum += CalibrationFit(points: points, axis: device.axis, likely: .logarithmic).grams(raw: 1000)
        }
        times.append(Double(nanoseconds() - start) / 1e9)
    }
    times.sort()
    let perFit = times[times.count / 2] / 1000
    print("1000 fits of 10 points, median of \(repetitions): \(format(perFit * 1e3, 3)) ms per fit (goal ≤ 1 ms)  [checksum \(format(checksum, 1))]")
    print("result fit_ms=\(format(perFit * 1e3, 4))")
}
