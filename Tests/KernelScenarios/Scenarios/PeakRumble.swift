import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// b. Every PEAK rumbles through the one effect uploaded at open: 1000 presses give 1000
/// plays and 1000 PEAK lines with a single upload (the id reused, never ENOSPC on a
/// 16-slot device); SIGTERM erases the effect; SIGKILL leaves it to the kernel, which erases
/// it when the fd closes.
enum PeakRumble {
    static func run(_ programs: Programs) {
        let presses = Int(ProcessInfo.processInfo.environment["FORCESCALE_KT_PRESSES"] ?? "") ?? 1000
        guard let pad = makeDevice(Tables.rumblePad, scenario: "b") else { return }
        defer { pad.destroy() }

        guard let reader = startReader(programs, "read on the FF pad", ["--json", "--device", pad.node], scenario: "b") else { return }
        let ready = reader.waitForError("forcescale: rumble on PEAK through", timeout: Limits.reaction)
        let opened = pad.forceFeedback
        check(ready && opened.uploads.count == 1, "b: the reader prepares the rumble effect at open (1 upload)",
              "saw \(opened.uploads.count) uploads\n\(reader.tail())")
        check(opened.uploads.allSatisfy { $0.length > 0 && $0.type == UInt16(FF_RUMBLE) }, "b: the effect is FF_RUMBLE with replay.length > 0",
              "saw \(opened.uploads)")

        // Each press waits for its play and its PEAK line before the release, so the reader
        // is never flooded; a reader that stops responding ends the loop early.
        var misses = 0
        var firstMiss: Int?
        let started = Clock.now()
        for press in 1...presses {
            pad.press(255, x: Int32(100 + press % 800), down: true)
            let answered = waitUntil(Limits.reaction) { pad.forceFeedback.plays >= press && reader.count(Marker.peak) >= press }
            if !answered {
                misses += 1
                if firstMiss == nil { firstMiss = press }
                note("b: press \(press): \(pad.forceFeedback.plays) plays, \(reader.count(Marker.peak)) PEAK lines so far")
            }
            pad.release()
            if misses >= 3 || !reader.isRunning { break }
        }
        note(String(format: "b: %d presses took %.1f s", presses, Clock.now() - started))
        waitUntil(Limits.reaction) { pad.forceFeedback.plays >= presses && reader.count(Marker.peak) >= presses }
        // A little more time for anything extra to show up.
        Clock.sleep(0.5)
        let log = pad.forceFeedback
        check(misses == 0, "b: every press was answered by a play and a PEAK within \(Int(Limits.reaction)) s",
              "first miss at press \(firstMiss ?? 0), \(misses) misses\n\(reader.tail())")
        check(log.uploads.count == 1, "b: still exactly 1 upload after \(presses) PEAKs", "saw \(log.uploads.count): \(log.uploads)")
        let effect = Int(log.uploads.first?.effectID ?? -1)
        check(log.plays == presses && log.playsByEffect[effect] == presses, "b: \(presses) plays of effect \(effect)",
              "saw \(log.plays) plays by effect \(log.playsByEffect)")
        check(reader.count(Marker.peak) == presses, "b: \(presses) PEAK lines", "saw \(reader.count(Marker.peak))")
        let complaints = reader.errors.filter { $0.contains("unavailable") || $0.contains("ENOSPC") || $0.localizedCaseInsensitiveContains("no space") }
        check(complaints.isEmpty, "b: no 'rumble unavailable' or ENOSPC on stderr", complaints.joined(separator: "\n"))
        check(log.erases.isEmpty && log.problems.isEmpty, "b: no erase while reading", "saw erases \(log.erases), problems \(log.problems)")

        let status = reader.stop(SIGTERM)
        check(status == .exited(0), "b: the reader exits 0 on SIGTERM", "saw \(status.map(\.description) ?? "no exit")\n\(reader.tail())")
        waitUntil(Limits.reaction) { pad.forceFeedback.erases.count >= 1 }
        let afterTerm = pad.forceFeedback
        check(afterTerm.erases == [Int32(effect)], "b: SIGTERM erases the effect (one erase, of effect \(effect))", "saw erases \(afterTerm.erases)")

        // SIGKILL: no chance to erase; closing the fd makes the kernel do it.
        guard let second = startReader(programs, "second read on the FF pad", ["--json", "--device", pad.node], scenario: "b") else { return }
        let prepared = waitUntil(Limits.reaction) { pad.forceFeedback.uploads.count >= 2 }
        check(prepared, "b: the second reader uploads its effect", "saw \(pad.forceFeedback.uploads.count) uploads\n\(second.tail())")
        pad.press(255, down: true)
        waitUntil(Limits.reaction) { pad.forceFeedback.plays > presses }
        pad.release()
        let secondID = Int32(pad.forceFeedback.uploads.last?.effectID ?? -1)
        let killed = second.stop(SIGKILL)
        check(killed == .signaled(SIGKILL), "b: the second reader dies of SIGKILL", "saw \(killed.map(\.description) ?? "no exit")")
        let erased = waitUntil(Limits.reaction) { pad.forceFeedback.erases.count >= 2 }
        let afterKill = pad.forceFeedback
        check(erased && afterKill.erases.last == secondID, "b: after SIGKILL the kernel still erases the effect (fd closed)",
              "saw erases \(afterKill.erases), expected a second erase of \(secondID)")
        check(afterKill.problems.isEmpty, "b: every FF request was answered", "\(afterKill.problems)")
    }
}
