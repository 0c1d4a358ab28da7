// forcescale-calibration-bench: the accuracy study of issue 12 and the fit's speed.
//
//   forcescale-calibration-bench study [TRIALS] [SEED]
//       The pure path: synthetic devices with a known response (bench/Sources/
//       forcescale-calibration-bench/SyntheticDevice.swift), calibrated with 1, 2, 3 and 5
//       household weights, then a sweep from 2 g to 385 g; piecewise linear (the curve of
//       earlier releases) and the fitted curve side by side. TRIALS defaults to 200.
//   forcescale-calibration-bench timing [REPETITIONS]
//       Ten points fitted 1000 times, REPETITIONS times (default 5): the median per fit.
//
// bench/calibration runs both and the daemon path. Results: BENCHMARKS.md, "Calibration".

import BenchSupport
import ScaleCore

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "study":
    let trials = arguments.count > 1 ? Int(arguments[1]) ?? 200 : 200
    let seed = arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1
    runStudy(trials: trials, seed: seed)
case "timing":
    let repetitions = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
    runTiming(repetitions: repetitions)
default:
    fail("usage: forcescale-calibration-bench study [TRIALS] [SEED] | timing [REPETITIONS]")
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
