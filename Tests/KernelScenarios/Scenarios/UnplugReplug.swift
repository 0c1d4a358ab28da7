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
        let first = waitUntil(Limits.reaction) { reader.hasReading(raw: 10, contacts: 1) }
        pad.release()
        guard check(first, "d: the pad reads before any unplug", reader.tail()) else { pad.destroy(); return }
        waitUntil(Limits.reaction) { reader.hasReading(raw: 0, contacts: 0) }
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
            if !removed { unnoticed.append(round) }

            // Absent for a second: the reader must sleep in epoll, not spin.
            Clock.sleep(0.2)
            let before = ProcessInfoFile.stat(reader.pid)?.ticks ?? 0
            Clock.sleep(absence)
            let after = ProcessInfoFile.stat(reader.pid)?.ticks ?? 0
            cpuTicks.append(after - before)
            // More than a fifth of the second on the CPU is a busy loop, even emulated.
            if after - before > hz / 5 { busy.append("round \(round): \(after - before) ticks of \(hz)/s") }

            guard let again = makeDevice(Tables.synapticsPad, scenario: "d") else { break }
            pad = again
            let raw = 10 + round
            let reopened = reader.waitForError("forcescale: reading ", times: round + 1, timeout: Limits.readerStart)
            pad.press(Int32(raw), down: true)
            let read = reopened && waitUntil(Limits.reaction) { reader.hasReading(raw: raw, contacts: 1) }
            pad.release()
            waitUntil(Limits.reaction) { reader.count(Marker.reading) >= 2 * (round + 1) }
            if !read {
                unread.append(round)
                note("d: round \(round): the replugged pad was not read\n\(reader.tail(4))")
            }
            let descriptors = ProcessInfoFile.descriptors(reader.pid)
            if descriptors.count != baseline.count {
                leaks.append("round \(round): \(descriptors.count) fds (\(Set(descriptors).subtracting(baseline).sorted()))")
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
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "d: the reader exits 0 on SIGINT while its device is away", "saw \(status.map(\.description) ?? "no exit")\n\(reader.tail())")
    }
}
