import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// n. A touch that is already down when the reader opens the device (an object left on the
/// pad, a pen resting on the tablet, the daemon restarted under a load) is weighed at once,
/// from the device's state, with no new event: the kernel sends none for a key already down.
/// A multitouch slot holds its ABS_MT_PRESSURE after its contact lifts, and the kernel sends
/// none for the next contact at the same pressure: read from the state at open, and kept
/// through libevdev's resynchronisation after SYN_DROPPED, that held value is the new
/// contact's pressure.
enum TouchAtOpen {
    static func run(_ programs: Programs) {
        heldSlotPressure(programs)
        heldSlotPressureThroughADrop(programs)
        for (table, label) in [(Tables.synapticsPad, "multitouch pad"), (Tables.pen2047, "pen")] {
            guard let device = makeDevice(table, scenario: "n") else { return }
            defer { device.destroy() }
            device.press(120, down: true)
            guard let reader = startReader(programs, "read on the \(label)", ["--json", "--no-rumble", "--device", device.node], scenario: "n") else { return }
            expect("n: the \(label)'s touch, down before the reader opened it, reads raw 120 with 1 contact at once",
                   within: Limits.reaction, waitingFor: "a READING raw 120 with 1 contact",
                   { reader.hasReading(raw: 120, contacts: 1) }, saw: reader.tail())
            device.press(121)
            expect("n: the \(label)'s touch goes on: raw 121", within: Limits.reaction, waitingFor: "a READING raw 121 with 1 contact",
                   { reader.hasReading(raw: 121, contacts: 1) }, saw: reader.tail())
            device.release()
            expect("n: the \(label)'s lift reads 0 contacts", within: Limits.reaction, waitingFor: "a READING with 0 contacts",
                   { reader.lastReading?.contacts == 0 }, saw: reader.tail())
            let status = reader.stop(SIGINT)
            check(status == .exited(0), "n: forcescale read on the \(label) exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
        }
    }

    /// A contact made and lifted before the reader opens the pad, then a contact at the same
    /// pressure in the same slot: its frames carry no ABS_MT_PRESSURE (the input core drops a
    /// value the slot already holds), and it reads that pressure at once.
    static func heldSlotPressure(_ programs: Programs) {
        guard let pad = makeDevice(Tables.synapticsPad, scenario: "n") else { return }
        defer { pad.destroy() }
        pad.press(137, down: true)
        pad.release()
        guard let reader = startReader(programs, "read on the pad lifted before", ["--json", "--no-rumble", "--device", pad.node], scenario: "n") else { return }
        pad.press(137, x: 2100, down: true)
        expect("n: a contact at the pressure its slot held from a touch lifted before the reader opened the pad reads raw 137 at once",
               within: Limits.reaction, waitingFor: "a READING raw 137 with 1 contact", { reader.hasReading(raw: 137, contacts: 1) }, saw: reader.tail())
        check(!reader.hasReading(raw: 0, contacts: 1), "n: no READING of raw 0 with a contact (the held pressure was known)", reader.tail())
        pad.release()
        expect("n: its lift reads 0 contacts", within: Limits.reaction, waitingFor: "a READING with 0 contacts",
               { reader.lastReading?.contacts == 0 }, saw: reader.tail())
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "n: the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }

    /// The same held pressure met after SYN_DROPPED: a contact lifted before the reader opened
    /// the pad, the reader stopped, a contact at that pressure made while far more frames come
    /// than the evdev buffer holds. libevdev's resynchronisation sends only what differs from
    /// its view (the new tracking id, not the unchanged pressure); the reader reads the
    /// held pressure with one contact.
    static func heldSlotPressureThroughADrop(_ programs: Programs) {
        guard let pad = makeDevice(Tables.synapticsPad, scenario: "n") else { return }
        defer { pad.destroy() }
        pad.press(173, down: true)
        pad.release()
        guard let reader = startReader(programs, "read on the pad through a drop", ["--json", "--interval-ms", "0", "--no-rumble", "--device", pad.node],
                                       scenario: "n") else { return }
        defer { reader.stop(SIGKILL) }
        reader.signal(SIGSTOP)
        guard expect("n: the reader is stopped (SIGSTOP)", within: Limits.reaction, waitingFor: "state T in /proc and its output taken",
                     { ProcessInfoFile.stat(reader.pid)?.state == "T" && reader.hasTakenAll(.output) },
                     saw: "state \(ProcessInfoFile.stat(reader.pid)?.state ?? "?")") else { return }
        pad.press(173, down: true)
        // Moves that overflow the evdev buffer, the contact resting at the held pressure.
        var batch: [Event] = []
        for index in 0..<3000 {
            let x = Int32(2000 + index % 2 * 10)
            batch += [.abs(ABS_MT_POSITION_X, x), .abs(ABS_X, x), .report]
            if batch.count >= 600 { pad.send(batch); batch.removeAll(keepingCapacity: true) }
        }
        pad.send(batch)
        reader.signal(SIGCONT)
        expect("n: stderr mentions SYN_DROPPED after SIGCONT", within: Limits.reaction * 2, waitingFor: "SYN_DROPPED on stderr",
               { reader.errorsContain("SYN_DROPPED") }, saw: reader.tail())
        let caughtUp = waitFor("the reader to handle the frames after SIGCONT", within: Limits.reaction * 2) {
            ProcessInfoFile.stat(reader.pid)?.state != "T" && reader.hasHandledQueuedInput
        }
        let last = reader.lastReading
        expect("n: after the drop, the contact made at its slot's held pressure reads raw 173 with 1 contact", after: caughtUp,
               last?.raw == 173 && last?.contacts == 1, saw: "\(last.map(\.description) ?? "none")\n\(reader.tail(4))")
        pad.release()
        expect("n: its lift reads 0 contacts", within: Limits.reaction, waitingFor: "a READING with 0 contacts",
               { reader.lastReading?.contacts == 0 }, saw: reader.tail())
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "n: the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }
}
