import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// m. Frames that queue up while the reader sleeps are all read, in order, and at once: the
/// reader takes the kernel's queue in as few read(2) calls as it can (more than its buffer
/// holds: 150 events, read 128 at a time, a frame split across two reads), and none may be
/// left behind waiting for an event that does not come.
enum QueuedFrames {
    static let frames = 50

    static func run(_ programs: Programs) {
        let s = "m"
        guard let pad = makeDevice(Tables.synapticsPad, scenario: s) else { return }
        defer { pad.destroy() }
        guard let reader = startReader(programs, "read on the pad", ["--json", "--interval-ms", "0", "--no-rumble", "--device", pad.node], scenario: s) else { return }
        defer { reader.stop(SIGKILL) }

        guard touchDownAndStop(reader, on: pad, scenario: s) else { return }
        let linesBefore = reader.outputCount

        // 50 frames of MT and single-touch pressure (3 events each: the position repeats and
        // the kernel filters it), a lift, and a new touch: about 160 events, within the
        // kernel's 256-event buffer for this pad (no SYN_DROPPED) and beyond the reader's 128.
        let pressures = (0..<frames).map { Int32(60 + $0) }
        for value in pressures { pad.press(value) }
        pad.release()
        pad.press(120, down: true)
        reader.signal(SIGCONT)

        // Everything was written before SIGCONT: once the reader is back asleep with its
        // output here, it has handled all of it (Child.hasHandledQueuedInput).
        let caughtUp = waitFor("the reader to handle the queued frames after SIGCONT (back asleep in epoll_wait, its output here)",
                               within: Limits.reaction * 2) {
            ProcessInfoFile.stat(reader.pid)?.state != "T" && reader.hasHandledQueuedInput
        }
        let after = reader.output.dropFirst(linesBefore).compactMap(OutputLine.init).filter(\.isReading)
        let expected = pressures.map { "\($0)/1" } + ["0/0", "120/1"]
        let seen = after.map { "\($0.raw)/\($0.contacts ?? -1)" }
        expect("\(s): every queued frame gives its reading, in order (raw/contacts \(expected.prefix(3).joined(separator: " ")) … \(expected.suffix(3).joined(separator: " ")))",
               after: caughtUp, seen == expected,
               saw: "\(seen.count) readings: \(seen.prefix(4).joined(separator: " ")) … \(seen.suffix(4).joined(separator: " "))\n\(reader.tail(4))")
        check(!reader.errorsContain("SYN_DROPPED"), "\(s): nothing was dropped (the frames fit the kernel's buffer)", reader.tail())
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "\(s): the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }
}
