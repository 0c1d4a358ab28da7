import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// w. Real devices from the kernel's own HID selftests (Support/KernelHIDDescriptors.swift),
/// made through uhid from their report descriptors and handled by the kernel's drivers
/// (hid-multitouch, hid-generic, wacom), and the PineNote's Wacom W9013, whose Tip Pressure
/// states newtons. For each: `forcescale devices` lists its node with the kernel's
/// pressure axis (the descriptor's logical range); a touch made and lifted before the reader
/// opens the node, then a touch at the same logical pressure, reads that raw value and its
/// grams at once (a multitouch slot's held pressure, which the kernel does not send again);
/// the lift reads a release.
enum KernelHIDDevices {
    static func run(_ programs: Programs) {
        for module in ["uhid", "hid-multitouch", "wacom"] {
            _ = runToEnd("modprobe \(module)", ["/sbin/modprobe", module], timeout: Limits.command)
        }
        brokenTestData()
        for device in KernelHIDDevice.all { exercise(device, programs) }
        buttonTypeThroughHidraw()
    }

    /// A mistake in the descriptors' test data is that device's failed check, not a crash of
    /// the run: a byte that is not hex and a descriptor cut short mid-item each leave the
    /// device with a problem and no layout, which `exercise` reports and moves on from.
    static func brokenTestData() {
        let cases = [("not hex", ["05 0d 09 04 a1 01 zz"]), ("cut short", ["05 0d 09 04 a1 01 85"]), ("no Tip Pressure", ["05 01 09 02 a1 01 09 30 15 00 25 7f 75 08 95 01 81 02 c0"])]
        for (what, descriptor) in cases {
            let device = KernelHIDDevice(name: "broken", selftestClass: "broken", bus: 0x3, vendor: 1, product: 2, descriptor: descriptor)
            check(device.problem != nil && device.parsed == nil,
                  "w: a test descriptor \(what) is a problem of its device (\(device.problem ?? "none")), not a crash", "parsed: \(device.parsed != nil)")
        }
    }

    /// Whether a Precision Touchpad's Button Type (1: a pressure pad) can be read without the
    /// kernel's INPUT_PROP_PRESSUREPAD: as a feature report through hidraw (HIDIOCGFEATURE),
    /// from scenario r's uhid pressure pad. Root can; the node's mode says who else can
    /// (docs/weighing.md, "A Precision Touchpad's pressure-pad nature on 6.12").
    static func buttonTypeThroughHidraw() {
        let pad: UHIDDevice
        do { pad = try UHIDDevice(HIDDevices.pressurePad) } catch {
            check(false, "w: create the uhid pressure pad", "\(error)")
            return
        }
        defer { pad.destroy() }
        guard pad.nodes(atLeast: 1) != nil else {
            check(false, "w: the pressure pad gets its event node", "waited 60 s")
            return
        }
        let wanted = String(format: "HID_ID=%04X:%08X:%08X", HIDDevices.pressurePad.bus, HIDDevices.pressurePad.vendor, HIDDevices.pressurePad.product)
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/hidraw")) ?? []).sorted()
        guard let name = names.first(where: { (UHIDDevice.readText("/sys/class/hidraw/\($0)/device/uevent") ?? "").contains(wanted) }) else {
            check(false, "w: the pressure pad has a hidraw node", "looked for \(wanted) among \(names)")
            return
        }
        let fd = open("/dev/" + name, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            check(false, "w: /dev/\(name) opens as root", String(cString: strerror(errno)))
            return
        }
        defer { close(fd) }
        var report: [UInt8] = [2, 0]
        let got = report.withUnsafeMutableBufferPointer { CEvdev_hidraw_get_feature(fd, $0.baseAddress, Int32($0.count)) }
        check(got == 2 && report[1] >> 4 == 1,
              "w: as root, HIDIOCGFEATURE on /dev/\(name) reads the pad's Button Type 1 (a pressure pad) on \(RunningKernel.release), whatever INPUT_PROP_PRESSUREPAD says",
              "ioctl returned \(got) (\(String(cString: strerror(errno)))), report \(report)")
    }

    static func exercise(_ device: KernelHIDDevice, _ programs: Programs) {
        let label = "w: \(device.selftestClass)"
        if let problem = device.problem {
            check(false, "\(label): its report descriptor (test data) lays out, with a Tip Pressure", problem)
            return
        }
        let uhid: UHIDDevice
        do { uhid = try UHIDDevice(device.uhid) } catch {
            check(false, "\(label): create the uhid device", "\(error)")
            return
        }
        defer { uhid.destroy() }
        guard let nodes = uhid.nodes(atLeast: 1) else {
            check(false, "\(label): the driver makes an event node", "waited 60 s; GET_REPORT \(uhid.driverRequests.getReports)")
            return
        }
        if device.selftestClass == KernelHIDDevice.all.first?.selftestClass { note("w: \(hidrawModes())") }
        // The node that weighs: the one `forcescale devices` lists with the descriptor's
        // pressure range (a device that is a touchscreen and a pen has a node for each), or
        // failing that any with a pressure axis, for the check below to show.
        // A finger's pressure is on a node with ABS_MT_PRESSURE, a pen's on one without (a
        // device with several collections of the same range, SmartTech's, has both).
        let range = device.pressureRange
        func matches(_ found: [String: Any]) -> Bool {
            let axes = found["pressure"] as? [[String: Any]] ?? []
            return axes.contains { $0["axis"] as? String == "ABS_MT_PRESSURE" } != device.isPen && axes.contains {
                ($0["min"] as? NSNumber)?.int64Value == range.lowerBound && ($0["max"] as? NSNumber)?.int64Value == range.upperBound
            }
        }
        var entry: [String: Any] = [:]
        var node = ""
        waitFor("\(label): a node of the device listed with its pressure axis", within: Limits.reaction) {
            let listed = DeviceList.read(programs, scenario: "w")
            let candidates = UHIDDevice.eventNodes(vendor: device.vendor, product: device.product).compactMap { candidate in
                listed[candidate.path].map { (candidate.path, $0) }
            }.filter { !($0.1["pressure"] as? [[String: Any]] ?? []).isEmpty }
            guard let chosen = candidates.first(where: { matches($0.1) }) ?? candidates.first else { return false }
            (node, entry) = chosen
            return matches(entry)
        }
        let axes = entry["pressure"] as? [[String: Any]] ?? []
        let axis = axes.first { ($0["min"] as? NSNumber)?.int64Value == range.lowerBound && ($0["max"] as? NSNumber)?.int64Value == range.upperBound }
        guard check(axis != nil, "\(label): forcescale devices lists \(node.isEmpty ? "its node" : node) with the kernel's pressure axis \(range.lowerBound)..\(range.upperBound)",
                    "nodes \(nodes.map(\.description)); entry \(RealDrivers.jsonText(entry))") else { return }
        let weighs = entry["weighs"] as? [String: Any] ?? [:]
        let resolution = (axis?["resolution"] as? NSNumber)?.doubleValue ?? 0
        let physical = weighs["model"] as? String == "physical"
        // A logical pressure at 60 % of the range (never the minimum, nor the held default).
        let value = range.lowerBound + max(1, (range.upperBound - range.lowerBound) * 3 / 5)
        let raw = value - range.lowerBound
        let grams = physical ? Double(raw) / resolution : Double(raw) / Double(range.upperBound - range.lowerBound) * 385
        note("\(label): \(node) \(entry["name"] ?? "?"); pressure \(range.lowerBound)..\(range.upperBound) res \(Int(resolution)); presses at \(value): \(String(format: "%.2f", grams)) g \(physical ? "physical" : "nominal")")

        var scan: Int64 = 0
        func touch(_ touching: Bool, inRange: Bool? = nil) {
            scan += 100
            uhid.send(device.report(pressure: value, touching: touching, inRange: inRange ?? touching, scanTime: scan))
        }
        func lift() {
            if device.isPen {
                touch(false, inRange: true)
                touch(false, inRange: false)
            } else {
                touch(false)
            }
        }
        // The touch the kernel remembers, made and lifted before the reader opens the node.
        touch(true)
        let touched = kernelState(node)
        lift()
        note("\(label): the kernel's state with the touch down: \(touched); after the lift: \(kernelState(node))")
        guard let reader = startReader(programs, "read on \(device.selftestClass)", ["--json", "--no-rumble", "--device", node], scenario: "w") else { return }
        defer { reader.stop(SIGKILL) }
        touch(true)
        expect("\(label): a touch at logical pressure \(value), after one at the same pressure lifted before the reader opened the node, reads raw \(value) with 1 contact",
               within: Limits.reaction, waitingFor: "a READING raw \(value) with 1 contact", { reader.hasReading(raw: Int(value), contacts: 1) }, saw: reader.tail())
        let first = reader.outputs.first { $0.isReading && $0.contacts == 1 }
        check(first?.raw == Int(value) && abs((first?.grams ?? .nan) - grams) <= 0.15,
              "\(label): its first reading is raw \(value), \(String(format: "%.1f", grams)) g (\(physical ? "physical" : "nominal"))",
              "saw \(first.map(\.description) ?? "none")\n\(reader.tail())")
        lift()
        expect("\(label): the lift reads a release (0 contacts)", within: Limits.reaction, waitingFor: "a READING with 0 contacts",
               { reader.lastReading?.contacts == 0 }, saw: reader.tail())
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "\(label): the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }

    /// BTN_TOUCH and each slot's tracking id and pressure as the kernel holds them (libevdev
    /// at open), or the pressure of a single-touch device: what a failure's detail needs.
    static func kernelState(_ node: String) -> String {
        let fd = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return "cannot open \(node)" }
        defer { close(fd) }
        var handle: OpaquePointer?
        guard libevdev_new_from_fd(fd, &handle) == 0, let handle else { return "libevdev refused \(node)" }
        defer { libevdev_free(handle) }
        var parts = ["BTN_TOUCH \(libevdev_get_event_value(handle, UInt32(EV_KEY), UInt32(BTN_TOUCH)))",
                     "ABS_PRESSURE \(libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(ABS_PRESSURE)))"]
        for slot in 0..<max(0, min(4, libevdev_get_num_slots(handle))) {
            parts.append("slot \(slot): id \(libevdev_get_slot_value(handle, UInt32(slot), UInt32(ABS_MT_TRACKING_ID))) "
                         + "pressure \(libevdev_get_slot_value(handle, UInt32(slot), UInt32(ABS_MT_PRESSURE)))")
        }
        return parts.joined(separator: ", ")
    }

    /// The owner, group and mode of each /dev/hidraw node: who could read a feature report
    /// (HIDIOCGFEATURE) such as a Precision Touchpad's Button Type. docs/weighing.md cites it.
    static func hidrawModes() -> String {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("hidraw") }.sorted()
        guard !names.isEmpty else { return "no /dev/hidraw node" }
        return names.map { name in
            var info = stat()
            guard stat("/dev/" + name, &info) == 0 else { return "/dev/\(name): \(String(cString: strerror(errno)))" }
            return String(format: "/dev/%@ uid %d gid %d mode %o", name, info.st_uid, info.st_gid, info.st_mode & 0o7777)
        }.joined(separator: ", ")
    }
}
