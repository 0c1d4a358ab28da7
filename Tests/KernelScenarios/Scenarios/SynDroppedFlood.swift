import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// c. The reader is stopped while far more frames arrive than the evdev buffer holds: the
/// kernel drops them and says SYN_DROPPED; the reader rebuilds the state from the device
/// (raw 100, still touching) and fires no PEAK for the crossings it never saw. A real press
/// afterwards fires exactly one.
enum SynDroppedFlood {
    static let rampFrames = 20_000
    static let holdFrames = 1_000

    static func run(_ programs: Programs) {
        flood(programs, holding: 100)
        // The same flood held at the top: the rebuilt frame is at 255, which must not fire
        // (the crossing was not seen), and the next real crossing must.
        flood(programs, holding: 255)
    }

    static func flood(_ programs: Programs, holding hold: Int32) {
        let s = hold == 100 ? "c" : "c (held at \(hold))"
        guard let pad = makeDevice(Tables.synapticsPad, scenario: s) else { return }
        defer { pad.destroy() }
        guard let reader = startReader(programs, "read on the pad", ["--json", "--interval-ms", "0", "--no-rumble", "--device", pad.node], scenario: s) else { return }
        defer { reader.stop(SIGKILL) }

        guard touchDownAndStop(reader, on: pad, scenario: s) else { return }
        let linesBefore = reader.outputCount

        // Pressures ramp through every value 0…255 (7 is prime to 256, so consecutive values
        // differ and the kernel filters none), then hold while the position moves, so that
        // everything left in the buffer after the last drop holds the same pressure.
        let started = Clock.now()
        var batch: [Event] = []
        for index in 0..<rampFrames {
            let value = Int32(index * 7 % 256)
            batch += [.abs(ABS_MT_PRESSURE, value), .abs(ABS_PRESSURE, value), .report]
            if batch.count >= 600 { pad.send(batch); batch.removeAll(keepingCapacity: true) }
        }
        batch += [.abs(ABS_MT_PRESSURE, hold), .abs(ABS_PRESSURE, hold), .report]
        for index in 0..<holdFrames {
            let x = Int32(2000 + index % 2 * 10)
            batch += [.abs(ABS_MT_POSITION_X, x), .abs(ABS_X, x), .report]
            if batch.count >= 600 { pad.send(batch); batch.removeAll(keepingCapacity: true) }
        }
        pad.send(batch)
        note(String(format: "%@: injected %d frames in %.1f s", s, rampFrames + holdFrames + 1, Clock.now() - started))

        // A stopped process writes nothing, so this needs no wait: it is still stopped.
        let stillStopped = ProcessInfoFile.stat(reader.pid)?.state == "T"
        check(stillStopped && reader.outputCount == linesBefore, "\(s): nothing was read while stopped",
              "\(reader.outputCount - linesBefore) new lines, state \(ProcessInfoFile.stat(reader.pid)?.state ?? "?")")
        reader.signal(SIGCONT)
        expect("\(s): stderr mentions SYN_DROPPED after SIGCONT", within: Limits.reaction * 2, waitingFor: "SYN_DROPPED on stderr",
               { reader.errorsContain("SYN_DROPPED") }, saw: reader.tail())
        // Everything was injected before SIGCONT, so once the reader sleeps in its loop again
        // with its output here, it has handled all of it (see Child.hasHandledQueuedInput).
        let caughtUp = waitFor("the reader to handle the whole flood after SIGCONT (back asleep in epoll_wait, its output here)",
                               within: Limits.reaction * 2) {
            ProcessInfoFile.stat(reader.pid)?.state != "T" && reader.hasHandledQueuedInput
        }
        let last = reader.lastReading
        expect("\(s): the last reading after the resume is raw \(hold), 1 contact", after: caughtUp, last?.raw == Int(hold) && last?.contacts == 1,
               saw: "\(last.map(\.description) ?? "none"); \(reader.outputCount - linesBefore) lines after the resume\n\(reader.tail(4))")
        expect("\(s): no PEAK after the resume (the crossings were not seen)", after: caughtUp, reader.count(Marker.peak) == 0,
               saw: "\(reader.count(Marker.peak)): \(reader.outputs.filter(\.isPeak).prefix(3))")
        let afterResume = reader.output.dropFirst(linesBefore).compactMap(OutputLine.init)
        note("\(s): after the resume: \(afterResume.prefix(6).map(\.description).joined(separator: " "))\(afterResume.count > 6 ? " … (\(afterResume.count))" : "")")

        // A real press to 255 after the resync: one PEAK, however long it is held near the top
        // (250 stays above the 0.95 re-arm line). Held at 255, the press must first come down
        // below the line (200) for a crossing to exist.
        let presses: [Int32] = hold >= 255 ? [200, 255, 250, 255] : [255, 250, 255]
        let beforePress = reader.outputCount
        for value in presses { pad.press(value) }
        waitFor("a PEAK and a READING raw 255 after the real press", within: Limits.reaction) {
            reader.count(Marker.peak) >= 1 && reader.hasReading(raw: 255, from: beforePress)
        }
        // The release's reading comes after anything the press's frames gave.
        pad.release()
        let released = waitFor("the release's READING (raw 0, 0 contacts)", within: Limits.reaction) {
            reader.hasReading(raw: 0, contacts: 0, from: beforePress)
        }
        expect("\(s): a real press \(presses.map(String.init).joined(separator: "→")) then fires exactly one PEAK", after: released,
               reader.count(Marker.peak) == 1, saw: "\(reader.count(Marker.peak)) PEAKs\n\(reader.tail(6))")
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "\(s): the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }
}
