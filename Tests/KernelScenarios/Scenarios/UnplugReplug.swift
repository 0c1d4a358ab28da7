import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// d. The reader follows its device (named, not by path) through 50 unplugs and replugs:
/// it notices each removal, waits without spinning (no CPU while the device is away), takes
/// the device up again, reads from it, and keeps the same number of open fds throughout.
enum UnplugReplug {
    static let query = "forcescale test pad"

    static func run(_ programs: Programs) {
        let rounds = Int(ProcessInfo.processInfo.environment["FORCESCALE_KT_ROUNDS"] ?? "") ?? 50
        let absence = 1.0
        guard var pad = makeDevice(Tables.synapticsPad, scenario: "d") else { return }
        guard let reader = startReader(programs, "read --device '\(query)'", ["--json", "--interval-ms", "0", "--device", query], scenario: "d") else {
            pad.destroy()
            return
        }
        defer { reader.stop(SIGKILL) }

        pad.press(10, down: true)
        let first = expect("d: the pad reads before any unplug", within: Limits.reaction, waitingFor: "a READING raw 10 with 1 contact",
                           { reader.hasReading(raw: 10, contacts: 1) }, saw: reader.tail())
        pad.release()
        guard first else { pad.destroy(); return }
        // The baseline of open fds once the release is read and the reader is back asleep in
        // its loop: nothing is half done then (a scan of /dev/input, say).
        waitFor("the release's READING and the reader asleep in its loop", within: Limits.reaction) {
            reader.hasReading(raw: 0, contacts: 0) && reader.hasHandledQueuedInput
        }
        let baseline = ProcessInfoFile.descriptors(reader.pid)

        var unnoticed: [Int] = []
        var busy: [String] = []
        var unread: [Int] = []
        var leaks: [String] = []
        var cpuTicks: [Int] = []
        var completed = 0
        let hz = ProcessInfoFile.ticksPerSecond
        let started = Clock.now()
        for round in 1...rounds {
            pad.destroy()
            let removed = reader.waitForError("device removed", times: round, timeout: Limits.reaction)
                && reader.waitForError("waiting for", times: round, timeout: Limits.reaction)
            if !removed {
                unnoticed.append(round)
                note("d: round \(round): waited up to \(Int(Limits.reaction)) s for 'device removed' and 'waiting for' (the \(round). time each)\n\(reader.tail(4))")
            }

            // Absent for a second: the reader must sleep in epoll, not spin. Measured from
            // when it is back asleep in its loop after the removal (its own handling of the
            // removal is not the absence).
            waitFor("the reader asleep in its loop after the removal", within: Limits.reaction) { reader.hasHandledQueuedInput }
            let before = ProcessInfoFile.stat(reader.pid)?.ticks ?? 0
            // The test's subject: a second of absence, timed.
            Clock.sleep(absence)
            let after = ProcessInfoFile.stat(reader.pid)?.ticks ?? 0
            cpuTicks.append(after - before)
            // More than a fifth of the second on the CPU is a busy loop, even emulated.
            if after - before > hz / 5 { busy.append("round \(round): \(after - before) ticks of \(hz)/s") }

            guard let again = makeDevice(Tables.synapticsPad, scenario: "d") else { break }
            pad = again
            let raw = 10 + round
            let readsFrom = reader.outputCount
            let reopened = reader.waitForError("forcescale: reading ", times: round + 1, timeout: Limits.readerStart)
            pad.press(Int32(raw), down: true)
            let read = reopened && waitUntil(Limits.reaction) { reader.hasReading(raw: raw, contacts: 1, from: readsFrom) }
            pad.release()
            let settled = waitFor("round \(round): the release's READING and the reader asleep in its loop", within: Limits.reaction) {
                reader.hasReading(raw: 0, contacts: 0, from: readsFrom) && reader.hasHandledQueuedInput
            }
            if !read {
                unread.append(round)
                note("d: round \(round): waited up to \(Int(Limits.readerStart)) s for the reading notice and \(Int(Limits.reaction)) s for READING raw \(raw); the replugged pad was not read\n\(reader.tail(4))")
            }
            // Compared once the reader has handled everything and sleeps: an fd open only
            // while it works (a scan) is no leak.
            let descriptors = ProcessInfoFile.descriptors(reader.pid)
            if descriptors.count != baseline.count {
                leaks.append("round \(round): \(descriptors.count) fds (\(Set(descriptors).subtracting(baseline).sorted()))\(settled.held ? "" : " (\(settled.account))")")
            }
            completed = round
            if !reader.isRunning || unread.count >= 3 { break }
        }
        pad.destroy()
        note(String(format: "d: %d rounds took %.1f s; CPU ticks while absent: max %d, total %d (%d ticks/s)",
                    completed, Clock.now() - started, cpuTicks.max() ?? 0, cpuTicks.reduce(0, +), hz))

        check(completed == rounds, "d: \(rounds) unplug/replug rounds ran", "stopped after \(completed)\n\(reader.tail())")
        check(unnoticed.isEmpty, "d: every removal is noticed ('device removed', 'waiting for')", "not in rounds \(unnoticed)")
        check(busy.isEmpty, "d: no busy loop while the device is away (CPU over \(absence) s of absence)", busy.joined(separator: "\n"))
        check(unread.isEmpty, "d: every replugged pad is taken up and read", "not in rounds \(unread)")
        check(leaks.isEmpty, "d: the open fd count stays at \(baseline.count) through every round",
              (leaks.prefix(5) + ["baseline: \(baseline)"]).joined(separator: "\n"))
        // "While its device is away": after it has said so for the last unplug.
        waitFor("the reader's notice of the last unplug", within: Limits.reaction) { reader.errorCount("device removed") >= completed + 1 }
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "d: the reader exits 0 on SIGINT while its device is away", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }
}
