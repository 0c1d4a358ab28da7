import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScaleEvdev
import ScaleProtocol
import ScalePOSIX

/// `forcescale rumble --test`: the report of ``ForceFeedbackTest`` in words or as JSON, and
/// an exit status that says whether everything the device claims works.
enum RumbleTestCommand {
    /// Rounds when `--count` is not given: enough for a p99 to mean something, a second or
    /// two on a gamepad.
    static let defaultRounds = 100

    /// Runs the test on `device` and prints the report.
    /// - Returns: 0 when everything the device claims works, 1 otherwise.
    /// - Throws: `CommandFailure` (unavailable) for a device without FF_RUMBLE or write
    ///   access, where there is nothing to test.
    static func run(on device: EvdevDevice, rounds: Int, json: Bool, output: OutputChannel) throws -> Int32 {
        let capabilities = ForceFeedbackCapabilities(of: device)
        guard capabilities.canGiveFeedback else {
            throw CommandFailure(
                message: "\(device.path): \(device.description.name) has no FF_RUMBLE or FF_HAPTIC effect, so no pattern can play; 'forcescale devices' shows which devices rumble",
                status: ExitStatus.unavailable)
        }
        guard device.isWritable else {
            throw CommandFailure(
                message: "\(device.path): opened read-only; force feedback needs write access (group 'input', or run it as root)",
                status: ExitStatus.noPermission)
        }
        let report = ForceFeedbackTest.run(on: device, rounds: rounds)
        try output.write(json ? jsonLine(report) : text(report))
        try output.flush()
        return report.problems.isEmpty ? ExitStatus.success : ExitStatus.failure
    }

    /// The report in words: the claims, each tried, the timings, then what works and what not.
    static func text(_ report: ForceFeedbackTest.Report) -> String {
        let capabilities = report.capabilities
        var lines = ["\(report.path): \(untrusted: report.name)"]
        func add(_ label: String, _ value: String) { lines.append("  " + label.padding(17) + value) }
        func verdict(_ trial: ForceFeedbackTest.Trial) -> String { trial.error.map { "FAILED: \($0)" } ?? "ok" }
        add("feedback", feedbackText(report))
        for trial in report.effectTypes { add("effect \(trial.name)", verdict(trial)) }
        add("effects at once", "\(capabilities.effectsCapacity) claimed, "
            + (report.effectsAtOnce.error == nil ? "\(report.effectsUploadedAtOnce) uploaded together"
               : "FAILED after \(report.effectsUploadedAtOnce): \(report.effectsAtOnce.error!)"))
        if let gain = report.gain {
            add("gain", "FF_GAIN " + verdict(gain))
        } else {
            add("gain", "no FF_GAIN: an intensity below 1 is scaled into each effect's magnitudes")
        }
        add("autocenter", capabilities.supportsAutocenter ? "FF_AUTOCENTER claimed (not changed: it would move a wheel)" : "no")
        let segments = HapticPattern.all.reduce(0) { $0 + $1.segments.count }
        lines.append("  \(SessionText.count(report.rounds, "round")) of the \(HapticPattern.all.count) patterns' \(segments) rumbles, each uploaded, played, stopped and erased:")
        lines.append("    " + "step".padding(8) + "count".padding(8) + "failed".padding(8) + "p50".padding(11) + "p99".padding(11) + "max")
        for step in report.steps {
            func latency(_ value: Int64?) -> String { value.map(RumbleText.latency(microseconds:)) ?? "-" }
            lines.append("    " + step.name.padding(8) + String(step.attempts).padding(8) + String(step.failures).padding(8)
                + latency(step.quantile(0.5)).padding(11) + latency(step.quantile(0.99)).padding(11) + latency(step.durations.last))
        }
        let problems = report.problems
        if problems.isEmpty {
            lines.append("Everything the device claims works.")
        } else {
            lines.append("Does not work:")
            lines += problems.map { "  " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// How the patterns were given, in words.
    static func feedbackText(_ report: ForceFeedbackTest.Report) -> String {
        switch report.feedback {
        case .rumble: "rumble (FF_RUMBLE: the motors)"
        case .haptic(let waveform) where report.steps[0].durations.isEmpty:
            "FF_HAPTIC claimed, but no haptic on this pad (no \(waveform == .click ? "CLICK or BUZZ CONTINUOUS" : "BUZZ CONTINUOUS") waveform, or a kernel before 6.18)"
        case .haptic(let waveform): "haptic \(waveform.name) (FF_HAPTIC: the pad's \(waveform == .click ? "CLICK" : "BUZZ CONTINUOUS") waveform; PRESS and RELEASE are never used)"
        case nil: "none could be prepared"
        }
    }

    /// The report as one JSON object: `device`, `name`, `feedback` (`rumble`, `haptic click`,
    /// `haptic buzz`, or `none` for a pad that refused every haptic waveform), `effects` (EVIOCGEFFECTS),
    /// `effects_uploaded` (together), `types` (`[{"type":…,"ok":…,"error":…}]`), `gain`
    /// (`true`/`false` whether it worked, absent without FF_GAIN), `autocenter` (claimed),
    /// `rounds`, `steps` (`[{"step":…,"count":…,"failed":…,"p50":…,"p99":…,"max":…,"error":…}]`,
    /// seconds), `ok`, `problems` (strings).
    static func jsonLine(_ report: ForceFeedbackTest.Report) -> String {
        var json = JSONLineWriter()
        json.add("device", string: report.path)
        json.add("name", string: report.name)
        json.add("feedback", string: feedbackName(report))
        json.add("effects", integer: report.capabilities.effectsCapacity)
        json.add("effects_uploaded", integer: report.effectsUploadedAtOnce)
        json.add("types", objects: report.effectTypes.map { trial in
            var object = JSONLineWriter()
            object.add("type", string: trial.name)
            object.add("ok", bool: trial.error == nil)
            object.add("error", string: trial.error?.description)
            return object
        })
        json.add("gain", bool: report.gain.map { $0.error == nil })
        json.add("autocenter", bool: report.capabilities.supportsAutocenter)
        json.add("rounds", integer: report.rounds)
        json.add("steps", objects: report.steps.map { step in
            var object = JSONLineWriter()
            func seconds(_ value: Int64?) -> Double? { value.map { Double($0) / 1e6 } }
            object.add("step", string: step.name)
            object.add("count", integer: step.attempts)
            object.add("failed", integer: step.failures)
            object.add("p50", number: seconds(step.quantile(0.5)), decimals: ProtocolDecimals.rumbleLatency)
            object.add("p99", number: seconds(step.quantile(0.99)), decimals: ProtocolDecimals.rumbleLatency)
            object.add("max", number: seconds(step.durations.last), decimals: ProtocolDecimals.rumbleLatency)
            object.add("error", string: step.firstError?.description)
            return object
        })
        json.add("ok", bool: report.problems.isEmpty)
        json.add("problems", strings: report.problems)
        return json.line
    }

    /// `feedback`'s value: the kind that played, `none` when no upload went in.
    static func feedbackName(_ report: ForceFeedbackTest.Report) -> String {
        guard let feedback = report.feedback, !report.steps[0].durations.isEmpty else { return "none" }
        return feedback.name
    }
}
