import ScaleCore
import ScalePOSIX

/// `forcescale rumble --test`: force feedback checked end to end on one device. What the
/// device claims (effect types, effects at once, FF_GAIN) is tried, and every pattern's
/// rumble (on a pressure pad with FF_HAPTIC, its haptic waveform: CLICK, else BUZZ
/// CONTINUOUS, never PRESS or RELEASE) is uploaded, played, stopped and erased over a number
/// of rounds, each request
/// timed (on `CLOCK_MONOTONIC`, from before the system call to its return) and its failures
/// counted.
///
/// A play is stopped as soon as it was accepted: the test times what the kernel and the
/// driver take, it does not wait for the motors. The kernel does not pass a device's own
/// `EV_FF_STATUS` on to evdev readers, so whether a motor really turned cannot be read.
package enum ForceFeedbackTest {
    /// One kind of request, timed over every time it was made.
    package struct Step: Sendable {
        /// `upload`, `play`, `stop` or `erase`.
        package var name: String
        /// The durations of the requests that succeeded, in microseconds, sorted.
        package var durations: [Int64]
        package var failures: Int
        /// The first failure, in words.
        package var firstError: ForceFeedbackError?

        package var attempts: Int { durations.count + failures }
        package func quantile(_ fraction: Double) -> Int64? { Quantile.of(fraction, sorted: durations) }
    }

    /// A claim of the device tried once: an effect type, the effects at once, FF_GAIN.
    package struct Trial: Sendable {
        /// What was tried, as the report names it (`rumble`, `effects at once`, `gain`).
        package var name: String
        /// Why it failed; `nil` when it worked.
        package var error: ForceFeedbackError?
    }

    package struct Report: Sendable {
        package var path: String
        package var name: String
        package var capabilities: ForceFeedbackCapabilities
        /// How the device gave the patterns: a rumble, or the haptic waveform its pad took.
        package var feedback: FeedbackKind?
        /// Each effect type the device lists, uploaded once.
        package var effectTypes: [Trial]
        /// As many rumble effects uploaded together as EVIOCGEFFECTS says the device holds
        /// (64 at most), and how many went in.
        package var effectsAtOnce: Trial
        package var effectsUploadedAtOnce: Int
        /// FF_GAIN set to full strength; `nil` when the device has no FF_GAIN (intensity is
        /// then scaled into each effect's magnitudes).
        package var gain: Trial?
        package var rounds: Int
        /// `upload`, `play`, `stop`, `erase`, in that order.
        package var steps: [Step]

        /// Everything the device claims that did not work, in words; empty when all did.
        package var problems: [String] {
            var problems = effectTypes.compactMap { trial in trial.error.map { "the \(trial.name) effect type: \($0)" } }
            if let error = effectsAtOnce.error {
                problems.append("\(capabilities.effectsCapacity) effects at once: only \(effectsUploadedAtOnce) went in (\(error))")
            }
            if let error = gain?.error { problems.append("FF_GAIN: \(error)") }
            for step in steps where step.failures > 0 {
                problems.append("\(step.name): \(step.failures) of \(step.attempts) failed" + (step.firstError.map { ", first: \($0)" } ?? ""))
            }
            return problems
        }
    }

    /// The most effects uploaded together: enough to fill a gamepad's 16 slots or a wheel's
    /// few dozen, without making a test take long on a device that claims thousands.
    package static let maximumEffectsAtOnce = 64

    /// Runs the test.
    /// - Parameters:
    ///   - device: A device opened for writing, with `FF_RUMBLE`.
    ///   - rounds: How many times every pattern's rumbles are uploaded, played, stopped and erased.
    package static func run(on device: EvdevDevice, rounds: Int) -> Report {
        let capabilities = ForceFeedbackCapabilities(of: device)
        let effectTypes = capabilities.effectTypes.map { type in
            do throws(ForceFeedbackError) {
                try ForceFeedbackProbe.tryEffect(type, on: device)
                return Trial(name: type.name, error: nil)
            } catch {
                return Trial(name: type.name, error: error)
            }
        }
        let (uploadedAtOnce, atOnceError) = fillSlots(of: device, count: min(capabilities.effectsCapacity, maximumEffectsAtOnce))
        var gain: Trial?
        if capabilities.supportsGain {
            gain = Trial(name: "gain", error: nil)
            do throws(ForceFeedbackError) {
                // Full strength, the kernel's default: the gain is the device's, shared with
                // every program, so the test leaves it where a fresh device has it.
                try RumbleEffect(device: device).setGain(1)
            } catch {
                gain?.error = error
            }
        }
        var steps = ["upload", "play", "stop", "erase"].map { Step(name: $0, durations: [], failures: 0) }
        let effect = try? RumbleEffect(device: device)
        if let effect {
            for _ in 0..<rounds {
                for segment in HapticPattern.all.flatMap(\.segments) {
                    guard time(&steps[0], { () throws(ForceFeedbackError) in try effect.upload(segment) }) else { continue }
                    if time(&steps[1], effect.play) { time(&steps[2], effect.stop) }
                    time(&steps[3], effect.remove)
                }
            }
        }
        for index in steps.indices { steps[index].durations.sort() }
        return Report(
            path: device.path, name: device.description.name, capabilities: capabilities, feedback: effect?.kind, effectTypes: effectTypes,
            effectsAtOnce: Trial(name: "effects at once", error: atOnceError), effectsUploadedAtOnce: uploadedAtOnce, gain: gain,
            rounds: rounds, steps: steps)
    }

    /// Times one request into its step.
    /// - Returns: Whether it succeeded.
    @discardableResult
    private static func time(_ step: inout Step, _ request: () throws(ForceFeedbackError) -> Void) -> Bool {
        let start = MonotonicClock.now()
        do throws(ForceFeedbackError) {
            try request()
        } catch {
            step.failures += 1
            if step.firstError == nil { step.firstError = error }
            return false
        }
        step.durations.append(MonotonicClock.now() - start)
        return true
    }

    /// Uploads `count` effects side by side (rumbles, or a haptic pad's waveform), then
    /// erases them.
    /// - Returns: How many went in, and why the next did not.
    private static func fillSlots(of device: EvdevDevice, count: Int) -> (Int, ForceFeedbackError?) {
        var effects: [RumbleEffect] = []
        defer { for effect in effects { effect.erase() } }
        do throws(ForceFeedbackError) {
            for _ in 0..<count {
                let effect = try RumbleEffect(device: device)
                try effect.upload(HapticSegment(strong: 0.25, weak: 0.25, durationMilliseconds: 50))
                effects.append(effect)
            }
        } catch {
            return (effects.count, error)
        }
        return (effects.count, nil)
    }
}
