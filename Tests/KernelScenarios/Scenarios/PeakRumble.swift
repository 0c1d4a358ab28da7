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
        // The notice comes after the upload's ioctl returned, and the device side records an
        // upload before it answers it: once the notice is here, every upload made at open is
        // in the log (scenario b once looked before that and saw 0 uploads).
        let ready = waitFor("the reader's 'rumble on PEAK through' notice, after its upload at open", within: Limits.reaction) {
            reader.errorsContain("forcescale: rumble on PEAK through") && pad.forceFeedback.uploads.count >= 1
        }
        let opened = pad.forceFeedback
        expect("b: the reader prepares the rumble effect at open (1 upload)", after: ready, opened.uploads.count == 1,
               saw: "\(opened.uploads.count) uploads\n\(reader.tail())")
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
                note("b: press \(press): waited \(Int(Limits.reaction)) s for its play and PEAK; \(pad.forceFeedback.plays) plays, \(reader.count(Marker.peak)) PEAK lines so far")
            }
            pad.release()
            if misses >= 3 || !reader.isRunning { break }
        }
        note(String(format: "b: %d presses took %.1f s", presses, Clock.now() - started))
        check(misses == 0, "b: every press was answered by a play and a PEAK within \(Int(Limits.reaction)) s",
              "first miss at press \(firstMiss ?? 0), \(misses) misses\n\(reader.tail())")

        // SIGTERM, right behind a marker on the device's FF stream: whatever the reader asked
        // of the device before the marker was written, it asked while reading. Once the reader
        // has exited with its output closed, everything it did is in: its PEAK lines and
        // stderr, and its FF requests (each recorded before it was answered, so before the
        // reader's ioctl returned; its plays before them, on the same fd, in order).
        let marker = pad.queueMarker()
        reader.signal(SIGTERM)
        let exited = waitFor("the reader's exit after SIGTERM with its output closed, the FF marker and the erase at the device", within: Limits.exit) {
            reader.hasFinished && (marker.map(pad.hasRecorded(marker:)) ?? false) && !pad.forceFeedback.erases.isEmpty
        }
        if !reader.hasFinished { reader.stop(SIGKILL) }
        let status = reader.ended
        check(status == .exited(0), "b: the reader exits 0 on SIGTERM", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
        let log = pad.forceFeedback
        expect("b: still exactly 1 upload after \(presses) PEAKs", after: exited, log.uploads.count == 1,
               saw: "\(log.uploads.count): \(log.uploads)")
        let effect = Int(log.uploads.first?.effectID ?? -1)
        expect("b: \(presses) plays of effect \(effect)", after: exited, log.plays == presses && log.playsByEffect[effect] == presses,
               saw: "\(log.plays) plays by effect \(log.playsByEffect)")
        expect("b: \(presses) PEAK lines", after: exited, reader.count(Marker.peak) == presses, saw: "\(reader.count(Marker.peak))")
        let complaints = reader.errors.filter { $0.contains("unavailable") || $0.contains("ENOSPC") || $0.localizedCaseInsensitiveContains("no space") }
        expect("b: no 'rumble unavailable' or ENOSPC on stderr", after: exited, complaints.isEmpty, saw: complaints.joined(separator: "\n"))
        let beforeSignal = log.markers.first { $0.number == marker }
        expect("b: no erase while reading", after: exited, beforeSignal?.erases == 0 && log.problems.isEmpty,
               saw: "\(beforeSignal.map { "\($0.erases)" } ?? "?") erases before SIGTERM (all: \(log.erases)), problems \(log.problems)")
        expect("b: SIGTERM erases the effect (one erase, of effect \(effect))", after: exited,
               log.erases == [Int32(effect)] && log.playsBeforeErase == [presses],
               saw: "erases \(log.erases), after \(log.playsBeforeErase) plays")

        // SIGKILL: no chance to erase; closing the fd makes the kernel do it.
        guard let second = startReader(programs, "second read on the FF pad", ["--json", "--device", pad.node], scenario: "b") else { return }
        expect("b: the second reader uploads its effect", within: Limits.reaction, waitingFor: "a second upload",
               { pad.forceFeedback.uploads.count >= 2 }, saw: "\(pad.forceFeedback.uploads.count) uploads\n\(second.tail())")
        // A press, so the effect has been in use when the reader dies.
        pad.press(255, down: true)
        waitFor("the second reader's play", within: Limits.reaction) { pad.forceFeedback.plays > presses }
        pad.release()
        let secondID = Int32(pad.forceFeedback.uploads.last?.effectID ?? -1)
        let killed = second.stop(SIGKILL)
        check(killed == .signaled(SIGKILL), "b: the second reader dies of SIGKILL", "saw \(ending(killed, waited: Limits.exit))")
        // The kernel erases the effects of an evdev file when it is closed, as the process
        // dies; the request reaches the device side like any other.
        expect("b: after SIGKILL the kernel still erases the effect (fd closed)", within: Limits.reaction,
               waitingFor: "a second erase, of effect \(secondID)", { pad.forceFeedback.erases.count >= 2 && pad.forceFeedback.erases.last == secondID },
               saw: "erases \(pad.forceFeedback.erases)")
        let afterKill = pad.forceFeedback
        check(afterKill.problems.isEmpty, "b: every FF request was answered", "\(afterKill.problems)")
    }
}
