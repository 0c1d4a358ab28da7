import BenchSupport
import ScaleCore

/// A recording of a synthetic device with known weights put on and lifted off in turn, for
/// forcescaled to serve (`forcescaled --replay FILE`): the daemon path of the study, and the
/// end-to-end test of guided calibration.
///
/// The recording starts with `lead` seconds of nothing, then for each weight: a press that
/// ramps up over 150 ms with a 10 % overshoot (as a weight put down by hand), `hold` seconds
/// of noisy readings at the device's rate (or the weight's own hold), a release, and `gap`
/// seconds of nothing.
/// - Parameters:
///   - device: The synthetic device.
///   - weights: The weights, in order, each with the seconds it rests when not `hold`.
///   - lead: Seconds before the first weight.
///   - hold: Seconds each weight rests on the pad.
///   - gap: Seconds between weights.
///   - seed: The noise's seed.
/// - Returns: The recording; its comments say what it is.
func holdsRecording(_ device: SyntheticDevice, weights: [(grams: Double, hold: Double?)], lead: Double, hold: Double, gap: Double, seed: UInt64) -> Recording {
    var random = Noise(seed: seed)
    var events: [InputEvent] = []
    var time: Int64 = 1_000_000
    let period = Int64(1_000_000 / device.rate)
    let isPen = device.kind == .tablet
    func frame(_ changes: [(EventType, EventCode, Int32)]) {
        let stamp = EventTime(microseconds: time)
        for (type, code, value) in changes { events.append(InputEvent(time: stamp, type: type, code: code, value: value)) }
        events.append(InputEvent(time: stamp, type: .synchronization, code: .synReport, value: 0))
    }
    // The replay starts at the first event: an empty frame first, so that the lead is kept.
    frame([])
    time += Int64(lead * 1e6)
    for (grams, ownHold) in weights {
        let frames = Int((ownHold ?? hold) * Double(device.rate))
        let ramp = Swift.max(1, device.rate * 15 / 100)
        for index in 0..<frames {
            // Up to 110 % over the ramp, back to 100 % over the next ramp, then steady.
            let load: Double
            if index < ramp {
                load = 1.1 * Double(index + 1) / Double(ramp)
            } else if index < 2 * ramp {
                load = 1.1 - 0.1 * Double(index - ramp + 1) / Double(ramp)
            } else {
                load = 1
            }
            let raw = device.reading(grams: grams * load, random: &random)
            if index == 0 {
                var changes: [(EventType, EventCode, Int32)] = []
                if isPen { changes.append((.key, .btnToolPen, 1)) }
                changes.append((.key, .btnTouch, 1))
                changes.append((.absolute, .absPressure, raw))
                frame(changes)
            } else {
                frame([(.absolute, .absPressure, raw)])
            }
            time += period
        }
        var release: [(EventType, EventCode, Int32)] = [(.key, .btnTouch, 0), (.absolute, .absPressure, device.axis.minimum)]
        if isPen { release.append((.key, .btnToolPen, 0)) }
        frame(release)
        time += Int64(gap * 1e6)
    }
    // One last empty frame, `gap` after the last release, so that the device stays open
    // that long after the last weight (a replay without --loop ends with its last event).
    frame([])
    let comments = [
        "Synthetic recording made by forcescale-calibration-bench (bench/calibration), not real hardware:",
        "\(device.label), noise σ \(device.noise) raw units at \(device.rate) Hz; weights in order (g): "
            + weights.map { $0.grams.description + ($0.hold.map { "@\($0)s" } ?? "") }.joined(separator: " "),
    ]
    return Recording(device: device.description, events: events, comments: comments)
}
