import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// p. Rumbles timed and tested. Each PEAK's reported rumble latency is checked against the
/// moment its play reached the device (the time uinput stamped on the `EV_FF` event it
/// handed to the device side, `CLOCK_MONOTONIC`, taken inside the player's `write`): the
/// play came after the frame that reached the threshold, and no later than the frame's
/// time plus the latency reported (taken after the `write` returned); the daemon's STATUS
/// counts the rumbles with their latencies. Then `rumble --test`
/// on a device that answers uploads 20 ms late (the upload's time shows it), one that
/// refuses uploads (it says so and exits 1), and one without FF_GAIN (it says that an
/// intensity is scaled into the effect, and `read --rumble-intensity 0.5` uploads the peak
/// effect at half strength).
enum RumbleTiming {
    static func run(_ programs: Programs) {
        latencies(programs)
        daemonCounts(programs)
        slowUploads(programs)
        refusedUploads(programs)
        withoutGain(programs)
    }

    /// One PEAK line's time and rumble, in microseconds.
    struct TimedPeak {
        var time: Int64
        var rumble: String?
        var latency: Int64?

        init?(_ line: String) {
            guard line.contains(Marker.peak), let object = json(line),
                  let time = (object["time"] as? NSNumber)?.doubleValue else { return nil }
            self.time = Int64((time * 1e6).rounded())
            rumble = object["rumble"] as? String
            latency = ((object["rumble_latency"] as? NSNumber)?.doubleValue).map { Int64(($0 * 1e6).rounded()) }
        }
    }

    static func json(_ text: String) -> [String: Any]? {
        text.data(using: .utf8).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    static func latencies(_ programs: Programs) {
        let presses = 50
        guard let pad = makeDevice(Tables.rumblePad, scenario: "p") else { return }
        defer { pad.destroy() }
        guard let reader = startReader(programs, "read on the FF pad", ["--json", "--device", pad.node], scenario: "p") else { return }
        defer { reader.stop(SIGKILL) }
        waitFor("the reader's rumble notice and its upload", within: Limits.reaction) {
            reader.errorsContain("forcescale: rumble on PEAK through") && pad.forceFeedback.uploads.count >= 1
        }
        for press in 1...presses {
            pad.press(255, x: Int32(100 + press * 7), down: true)
            let answered = waitFor("press \(press)'s play and PEAK", within: Limits.reaction) {
                pad.forceFeedback.plays >= press && reader.count(Marker.peak) >= press
            }
            pad.release()
            if !answered.held { break }
        }
        let peaks = reader.output.compactMap(TimedPeak.init)
        let stamps = pad.forceFeedback.playStampTimes.map { Int64(($0 * 1e6).rounded()) }
        guard check(peaks.count == presses && stamps.count == presses, "p: \(presses) presses give \(presses) PEAK lines and \(presses) plays",
                    "\(peaks.count) PEAK lines, \(stamps.count) plays\n\(reader.tail())") else { return }
        check(peaks.allSatisfy { $0.rumble == "played" && $0.latency != nil }, "p: every PEAK says its rumble played, with its latency",
              reader.output.filter { $0.contains(Marker.peak) }.prefix(3).joined(separator: "\n"))
        var late: [String] = []
        var early: [String] = []
        for (index, (peak, stamp)) in zip(peaks, stamps).enumerated() {
            guard let latency = peak.latency else { continue }
            if stamp <= peak.time { early.append("press \(index + 1): play at \(stamp) µs, frame at \(peak.time) µs") }
            if stamp > peak.time + latency { late.append("press \(index + 1): play at \(stamp) µs, after frame \(peak.time) + reported \(latency) µs") }
        }
        check(early.isEmpty, "p: each play reached the device after the frame that reached the threshold", early.prefix(5).joined(separator: "\n"))
        check(late.isEmpty, "p: each play reached the device within the latency reported", late.prefix(5).joined(separator: "\n"))
        let reported = peaks.compactMap(\.latency).sorted()
        let margins = zip(peaks, stamps).compactMap { peak, stamp in peak.latency.map { peak.time + $0 - stamp } }.sorted()
        if !reported.isEmpty {
            note("p: reported latency p50 \(reported[reported.count / 2]) µs, max \(reported.last!) µs; "
                 + "the write returned p50 \(margins[margins.count / 2]) µs after the play reached the device")
        }
    }

    /// forcescaled on the FF pad: after 5 presses STATUS counts 5 rumbles played, with their
    /// latencies, and `forcescale status` says so.
    static func daemonCounts(_ programs: Programs) {
        let daemonPath = programs.forcescaled
        let folder = makeScenarioFolder("p")
        let socket = folder + "/sock"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let pad = makeDevice(Tables.rumblePad, scenario: "p") else { return }
        defer { pad.destroy() }
        guard let (daemon, _) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath, ["--device", pad.node, "--socket", socket, "--state-dir", folder + "/state"], scenario: "p")
        else { return }
        defer { daemon.stop(SIGKILL) }
        waitFor("the daemon's peak effect", within: Limits.reaction) { pad.forceFeedback.uploads.count >= 1 }
        for press in 1...5 {
            pad.press(255, x: Int32(300 + press * 11), down: true)
            waitFor("press \(press)'s play", within: Limits.reaction) { pad.forceFeedback.plays >= press }
            pad.release()
        }
        let (ended, status) = runToEnd("forcescale status --json", [programs.forcescale, "status", "--json", "--socket", socket], timeout: Limits.command)
        let rumbles = status.flatMap { json($0.outputText) }?["rumbles"] as? [String: Any]
        let p50 = (rumbles?["p50"] as? NSNumber)?.doubleValue ?? 0
        let p99 = (rumbles?["p99"] as? NSNumber)?.doubleValue ?? 0
        let max = (rumbles?["max"] as? NSNumber)?.doubleValue ?? 0
        check(ended == .exited(0) && (rumbles?["played"] as? Int) == 5 && (rumbles?["failed"] as? Int) == 0 && 0 < p50 && p50 <= p99 && p99 <= max,
              "p: STATUS counts 5 rumbles played, none failed, with 0 < p50 <= p99 <= max", "saw \(status?.outputText ?? "")\n\(daemon.tail())")
        let (_, words) = runToEnd("forcescale status", [programs.forcescale, "status", "--socket", socket], timeout: Limits.command)
        check(words?.outputText.contains("  rumbles     5 played, 0 failed; latency p50 ") == true,
              "p: forcescale status says how many rumbles played, and their latency", words?.outputText ?? "")
    }

    /// `forcescale rumble --test --device NODE ARGS`, to its end.
    static func rumbleTest(_ programs: Programs, _ pad: VirtualDevice, _ arguments: [String]) -> (Termination?, Child?) {
        runToEnd("rumble --test on \(pad.table.name)", [programs.forcescale, "rumble", "--test", "--device", pad.node] + arguments,
                 timeout: Limits.command)
    }

    static func step(_ name: String, of report: [String: Any]) -> [String: Any]? {
        (report["steps"] as? [[String: Any]])?.first { $0["step"] as? String == name }
    }

    static func slowUploads(_ programs: Programs) {
        guard let pad = makeDevice(Tables.slowUploadPad, scenario: "p") else { return }
        defer { pad.destroy() }
        let (ended, child) = rumbleTest(programs, pad, ["--count", "2", "--json"])
        let said = child.map { $0.outputText + "\n" + $0.errorText } ?? ""
        check(ended == .exited(0), "p: rumble --test exits 0 on a device that answers uploads late", "saw \(ending(ended, waited: Limits.command))\n\(said)")
        guard let report = child.flatMap({ json($0.outputText) }), let upload = step("upload", of: report),
              let play = step("play", of: report) else {
            check(false, "p: rumble --test --json prints its report", said)
            return
        }
        let uploadP50 = (upload["p50"] as? NSNumber)?.doubleValue ?? 0
        let playP50 = (play["p50"] as? NSNumber)?.doubleValue ?? 1
        // 13 rumbles a round (the patterns' segments), 2 rounds.
        check((upload["count"] as? Int) == 26 && (upload["failed"] as? Int) == 0, "p: 26 uploads timed, none failed", "\(upload)")
        check(uploadP50 >= 0.020, "p: the upload's p50 shows the device's 20 ms", "upload \(upload)")
        check(playP50 < 0.020, "p: a play does not wait for the device", "play \(play)")
        check((report["ok"] as? Bool) == true, "p: the slow device works", "\(report["problems"] ?? "")")
    }

    static func refusedUploads(_ programs: Programs) {
        guard let pad = makeDevice(Tables.refusingPad, scenario: "p") else { return }
        defer { pad.destroy() }
        let (ended, child) = rumbleTest(programs, pad, ["--count", "1"])
        let text = child?.outputText ?? ""
        check(ended == .exited(1), "p: rumble --test exits 1 when the device refuses uploads", "saw \(ending(ended, waited: Limits.command))\n\(text)\n\(child?.errorText ?? "")")
        check(text.contains("Does not work:") && text.contains("upload: 13 of 13 failed") && text.contains("invalid argument"),
              "p: rumble --test says the uploads were refused, and why", text)
        check(pad.forceFeedback.uploads.count >= 13 && pad.forceFeedback.plays == 0, "p: the device saw the uploads and no play",
              "\(pad.forceFeedback.uploads.count) uploads, \(pad.forceFeedback.plays) plays")
    }

    static func withoutGain(_ programs: Programs) {
        guard let pad = makeDevice(Tables.gainlessPad, scenario: "p") else { return }
        defer { pad.destroy() }
        let (ended, child) = rumbleTest(programs, pad, ["--count", "1"])
        let text = child?.outputText ?? ""
        check(ended == .exited(0), "p: rumble --test exits 0 on a device without FF_GAIN", "saw \(ending(ended, waited: Limits.command))\n\(text)\n\(child?.errorText ?? "")")
        check(text.contains("no FF_GAIN: an intensity below 1 is scaled into each effect's magnitudes"),
              "p: rumble --test says an intensity is scaled into the effect", text)
        note("p: rumble --test --count 1 on the gainless pad said:\n" + text)
        let uploadsBefore = pad.forceFeedback.uploads.count
        guard let reader = startReader(programs, "read at half intensity on the gainless pad",
                                       ["--json", "--device", pad.node, "--rumble-intensity", "0.5"], scenario: "p") else { return }
        defer { reader.stop(SIGKILL) }
        expect("p: the reader uploads its peak effect", within: Limits.reaction, waitingFor: "an upload after the test's",
               { pad.forceFeedback.uploads.count > uploadsBefore }, saw: "\(pad.forceFeedback.uploads.count) uploads\n\(reader.tail())")
        // impact-heavy: strong motor 1, weak 0.3; at half intensity 0x8000 and 0x2666.
        let effect = pad.forceFeedback.uploads.last
        check(effect?.strong == 0x8000 && effect?.weak == 0x2666 && !pad.forceFeedback.sequence.contains { $0.hasPrefix("gain") },
              "p: without FF_GAIN the peak effect itself is at half strength, and no gain is written",
              "uploaded \(effect.map { "strong \($0.strong), weak \($0.weak)" } ?? "nothing"), sequence \(pad.forceFeedback.sequence)")
    }
}
