import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// n. A touch that is already down when the reader opens the device (an object left on the
/// pad, a pen resting on the tablet, the daemon restarted under a load) is weighed at once,
/// from the device's state, with no new event: the kernel sends none for a key already down.
enum TouchAtOpen {
    static func run(_ programs: Programs) {
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
}
