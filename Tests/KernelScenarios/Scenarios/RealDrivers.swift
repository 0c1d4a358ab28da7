import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// r. Devices made by the kernel's own HID drivers from report descriptors, through uhid:
/// a Precision Touchpad that is a pressure pad (hid-multitouch: Tip Pressure in grams, Button
/// Type 1) and a pen through the wacom driver. forcescale classifies each as the driver
/// makes it, and the daemon reads, weighs, peaks and tares on it. What the drivers do that
/// the uinput tables do not is checked where forcescale depends on it: hid-multitouch's
/// pressure resolution in units per gram (6.18) and INPUT_PROP_PRESSUREPAD from Button Type
/// (6.19), a lifted finger's slot released with its pressure, the pen's pressure only while
/// its tip touches. Before those kernels the same pad is an ordinary touchpad in nominal
/// grams: that is checked there, and the checks of grams and the property say "needs 6.18".
enum RealDrivers {
    static func run(_ programs: Programs) {
        guard let daemonPath = programs.runnableForcescaled(scenario: "r") else { return }
        for module in ["uhid", "hid-multitouch", "wacom", "hid-magicmouse"] {
            _ = runToEnd("modprobe \(module)", ["/sbin/modprobe", module], timeout: Limits.command)
        }
        pressurePad(programs, daemonPath: daemonPath)
        pen(programs, daemonPath: daemonPath)
        magicTrackpad(programs, daemonPath: daemonPath)
        listAll(programs)
    }

    /// `forcescale devices` with the three devices present, as a person would run it (the output
    /// docs/weighing.md shows), checked for the lines that say how each weighs.
    static func listAll(_ programs: Programs) {
        guard let (pad, padNode) = make(HIDDevices.pressurePad, node: "Touchpad") else { return }
        defer { pad.destroy() }
        guard let (pen, penNode) = make(HIDDevices.wacomPen, node: "Pen") else { return }
        defer { pen.destroy() }
        guard let (trackpad, trackpadNode) = make(HIDDevices.magicTrackpad2, node: "Trackpad") else { return }
        defer { trackpad.destroy() }
        let (ended, devices) = runToEnd("devices", [programs.forcescale, "devices"], timeout: Limits.command)
        let text = (devices?.output ?? []).joined(separator: "\n")
        note("r: forcescale devices:\n" + text)
        let grams = RunningKernel.isAtLeast(6, 18)
        let padWeighs = grams ? "weighs      ABS_MT_PRESSURE, the sum of the contacts" : "weighs      ABS_MT_PRESSURE, the first contact"
        check(ended == .exited(0) && text.contains(padNode.path) && text.contains(penNode.path) && text.contains(trackpadNode.path) && text.contains(padWeighs)
                && text.contains("weighs      ABS_PRESSURE; grams on the nominal 385 g full scale until calibrated"),
              "r: forcescale devices lists all three and says how each weighs", "saw \(ending(ended, waited: Limits.command))\n\(text)")
    }

    /// Makes a uhid device and waits for the driver's node whose name ends with `suffix`.
    static func make(_ description: UHIDDevice.Description, node suffix: String) -> (UHIDDevice, UHIDDevice.Node)? {
        let device: UHIDDevice
        do { device = try UHIDDevice(description) } catch {
            check(false, "r: create the uhid device '\(description.name)'", "\(error)")
            return nil
        }
        let nodes = device.nodes(atLeast: 1) ?? []
        guard let node = nodes.first(where: { $0.name.hasSuffix(suffix) }) ?? nodes.first else {
            check(false, "r: the driver makes an event node for '\(description.name)'",
                  "waited 60 s; saw nodes \(UHIDDevice.eventNodes(vendor: description.vendor, product: description.product)); "
                      + "requests \(device.driverRequests.getReports) GET_REPORT, \(device.driverRequests.setReports.map(\.number)) SET_REPORT")
            device.destroy()
            return nil
        }
        note("r: '\(description.name)': the driver made \(nodes.map(\.description).joined(separator: ", "))")
        return (device, node)
    }

    // MARK: - The pressure pad

    static func pressurePad(_ programs: Programs, daemonPath: String) {
        let grams = RunningKernel.isAtLeast(6, 18)
        let property = RunningKernel.isAtLeast(6, 19)
        guard let (pad, node) = make(HIDDevices.pressurePad, node: "Touchpad") else { return }
        defer { pad.destroy() }
        check(node.name.hasSuffix("Touchpad"), "r: hid-multitouch makes the PTP's touchpad node", "saw \(node)")
        let requests = pad.driverRequests
        check(requests.getReports.contains(2), "r: hid-multitouch reads the Button Type feature (GET_REPORT 2)", "saw \(requests.getReports)")

        let devices = DeviceList.read(programs, scenario: "r")
        let entry = devices[node.path] ?? [:]
        note("r: devices --json for the pressure pad: \(jsonText(entry))")
        let axes = entry["pressure"] as? [[String: Any]] ?? []
        let mtPressure = axes.first { $0["axis"] as? String == "ABS_MT_PRESSURE" } ?? [:]
        let resolution = (mtPressure["resolution"] as? NSNumber)?.intValue
        let properties = entry["properties"] as? [String] ?? []
        let weighs = entry["weighs"] as? [String: Any] ?? [:]
        check((mtPressure["max"] as? NSNumber)?.intValue == HIDDevices.pressurePadMaximum,
              "r: ABS_MT_PRESSURE is 0..\(HIDDevices.pressurePadMaximum), the descriptor's Tip Pressure", "saw \(axes)")
        if grams {
            check(resolution == HIDDevices.pressurePadUnitsPerGram && weighs["model"] as? String == "physical",
                  "r: from 6.18 the pressure has \(HIDDevices.pressurePadUnitsPerGram) units per gram and forcescale weighs in physical grams",
                  "saw resolution \(resolution.map(String.init) ?? "none"), weighs \(weighs)")
        } else {
            check(resolution == 0 && weighs["model"] as? String == "nominal",
                  "r: before 6.18 the pressure has no resolution and forcescale weighs in nominal grams",
                  "saw resolution \(resolution.map(String.init) ?? "none"), weighs \(weighs)")
            Report.shared.skip("r: the pressure pad in physical grams", reason: "needs 6.18")
        }
        if property {
            check(properties.contains("pressure pad") && entry["kind"] as? String == "pressure pad" && weighs["contacts"] as? String == "sum",
                  "r: from 6.19 Button Type 1 gives INPUT_PROP_PRESSUREPAD: a pressure pad, its contacts summed",
                  "saw kind \(entry["kind"] ?? "none"), properties \(properties), weighs \(weighs)")
        } else {
            check(!properties.contains("pressure pad") && entry["kind"] as? String == "touchpad",
                  "r: before 6.19 the same pad is a touchpad (no INPUT_PROP_PRESSUREPAD)", "saw kind \(entry["kind"] ?? "none"), properties \(properties)")
            Report.shared.skip("r: INPUT_PROP_PRESSUREPAD from Button Type", reason: "needs 6.19")
        }

        // The daemon on it: a finger resting at 200 g (raw 800, a unit or two of noise), an
        // object of 100 g added beside it, a press to the top, a tare.
        DaemonOnDevice.watching(programs, daemonPath: daemonPath, node: node.path, scenario: "r") { _, client, _ in
            weighOnPressurePad(pad, client: client, grams: grams, property: property, forcescale: programs.forcescale)
        }
        let problems = pad.driverRequests.problems
        check(problems.isEmpty, "r: every request of hid-multitouch was answered", "\(problems)")
    }

    static func weighOnPressurePad(_ pad: UHIDDevice, client: SocketClient, grams: Bool, property: Bool, forcescale: String) {
        var scan: UInt16 = 0
        func hold(_ fingers: [HIDDevices.Finger], seconds: Double) {
            let until = Clock.now() + seconds
            var wobble: UInt16 = 0
            while Clock.now() < until {
                scan &+= 100
                wobble = (wobble + 1) % 3
                pad.send(HIDDevices.pressurePadReport(fingers.map { finger in
                    var noisy = finger
                    if finger.touching, finger.pressure > 0 { noisy.pressure = finger.pressure + wobble }
                    return noisy
                }, scanTime: scan))
                // The pace of a pad's reports (100 Hz), not a wait for a result.
                Clock.sleep(0.010)
            }
        }
        let model = grams ? "physical" : "nominal"
        func expectedGrams(_ raw: Int) -> Double {
            grams ? Double(raw) / Double(HIDDevices.pressurePadUnitsPerGram) : Double(raw) / Double(HIDDevices.pressurePadMaximum) * 385
        }

        // One finger resting.
        var from = client.lines.count
        let finger = HIDDevices.Finger(id: 0, touching: true, pressure: 800)
        hold([finger], seconds: 1.2)
        var stable: [String: Any]?
        expect("r: a finger resting at raw 800 settles: a stable READING with 1 contact", within: Limits.reaction,
               waitingFor: "a stable READING", { stable = client.lastStableReading(after: from, contacts: 1); return stable != nil }, saw: client.tail())
        let settled = (stable?["settled_grams"] as? NSNumber)?.doubleValue ?? .nan
        check(stable?["model"] as? String == model && abs(settled - expectedGrams(801)) <= 1.5,
              "r: it weighs \(String(format: "%.1f", expectedGrams(801))) g ± 1.5 in the \(model) model",
              "saw \(stable.map(jsonText) ?? "nothing")")

        // An object beside the finger: two contacts, summed on a pressure pad.
        from = client.lines.count
        let object = HIDDevices.Finger(id: 1, touching: true, x: 3000, y: 1500, pressure: 400)
        hold([finger, object], seconds: 1.2)
        var both: [String: Any]?
        expect("r: with an object beside the finger, a stable READING with 2 contacts", within: Limits.reaction,
               waitingFor: "a stable READING of 2 contacts", { both = client.lastStableReading(after: from, contacts: 2); return both != nil }, saw: client.tail())
        let raw = (both?["raw"] as? NSNumber)?.intValue ?? -1
        if property {
            // Each contact wobbles by 0–2 units (hold): their sum, by 0–4.
            check((1199...1205).contains(raw), "r: the pressure pad weighs both contacts together (raw ≈ 800 + 400)", "saw \(both.map(jsonText) ?? "nothing")")
        } else {
            check((799...803).contains(raw), "r: a touchpad weighs its first contact (raw ≈ 800)", "saw \(both.map(jsonText) ?? "nothing")")
        }

        // The object lifted: hid-multitouch releases its slot (its tip switch off once), and
        // its pressure no longer counts.
        from = client.lines.count
        pad.send(HIDDevices.pressurePadReport([finger, HIDDevices.Finger(id: 1, touching: false, pressure: 0)], scanTime: scan &+ 100))
        scan &+= 100
        hold([finger], seconds: 1.2)
        var alone: [String: Any]?
        expect("r: the object lifted, a stable READING of the finger alone again", within: Limits.reaction,
               waitingFor: "a stable READING of 1 contact", { alone = client.lastStableReading(after: from, contacts: 1); return alone != nil }, saw: client.tail())
        check(((alone?["raw"] as? NSNumber)?.intValue).map { (799...803).contains($0) } == true,
              "r: the lifted contact's pressure is gone (raw ≈ 800)", "saw \(alone.map(jsonText) ?? "nothing")")

        // Before 6.19 the pad is a touchpad that weighs its first contact: `weigh --tare-first`
        // names an object that comes as a second contact instead of waiting for it to settle.
        // On a terminal (script(1)), so that its prompts say when the zero is taken.
        if !property {
            let command = "\(forcescale) weigh --tare-first --timeout 600 --socket \(client.path)"
            if let weigh = try? Child("weigh --tare-first", ["/usr/bin/script", "-q", "-e", "-c", command, "/dev/null"]) {
                let zero = waitFor("weigh --tare-first to take the resting finger as its zero", within: Limits.reaction) {
                    hold([finger], seconds: 0.2)
                    return weigh.outputText.contains("Zero taken at") || !weigh.isRunning
                }
                if zero.held {
                    expect("r: on a kernel that does not mark the pressure pad, weigh --tare-first names the object that came as a second contact",
                           within: Limits.reaction, waitingFor: "the second-contact warning", {
                        hold([finger, object], seconds: 0.2)
                        return weigh.outputText.contains("warning: the pad reports the object as a second contact")
                    }, saw: weigh.tail())
                } else {
                    check(false, "r: weigh --tare-first takes the resting finger as its zero", "\(zero.account)\n\(weigh.tail())")
                }
                weigh.stop(SIGKILL)
                pad.send(HIDDevices.pressurePadReport([finger, HIDDevices.Finger(id: 1, touching: false, pressure: 0)], scanTime: scan &+ 100))
                scan &+= 100
                hold([finger], seconds: 0.5)
            } else {
                check(false, "r: start forcescale weigh --tare-first under script(1)")
            }
        }

        // Tare under the finger, then a press to the top: a PEAK.
        client.send(#"{"class":"TARE"}"#)
        let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        let tared = tare.flatMap(HapticClicks.jsonObject).flatMap { ($0["grams"] as? NSNumber)?.doubleValue } ?? .nan
        check(abs(tared - expectedGrams(801)) <= 1.5, "r: TARE under the resting finger takes its \(String(format: "%.1f", expectedGrams(801))) g",
              "saw \(tare ?? "nothing")")
        from = client.lines.count
        hold([HIDDevices.Finger(id: 0, touching: true, pressure: UInt16(HIDDevices.pressurePadMaximum) - 2)], seconds: 0.3)
        expect("r: a press to the top of the range gives a PEAK", within: Limits.reaction, waitingFor: "a PEAK",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.peak) } }, saw: client.tail())
        pad.send(HIDDevices.pressurePadReport([HIDDevices.Finger(id: 0, touching: false, pressure: 0)], scanTime: scan &+ 100))
        expect("r: the lift reads 0 contacts", within: Limits.reaction, waitingFor: "a READING of 0 contacts",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.reading) && $0.contains("\"contacts\":0") } }, saw: client.tail())
    }

    // MARK: - The pen

    static func pen(_ programs: Programs, daemonPath: String) {
        guard let (pen, node) = make(HIDDevices.wacomPen, node: "Pen") else { return }
        defer { pen.destroy() }
        let devices = DeviceList.read(programs, scenario: "r")
        let entry = devices[node.path] ?? [:]
        note("r: devices --json for the pen: \(jsonText(entry))")
        let axes = entry["pressure"] as? [[String: Any]] ?? []
        check(entry["kind"] as? String == "tablet" && axes.contains { $0["axis"] as? String == "ABS_PRESSURE" && ($0["max"] as? NSNumber)?.intValue == HIDDevices.penPressureMaximum },
              "r: the wacom driver's pen is a tablet with ABS_PRESSURE 0..\(HIDDevices.penPressureMaximum)",
              "saw \(node): kind \(entry["kind"] ?? "none"), pressure \(axes)")

        DaemonOnDevice.watching(programs, daemonPath: daemonPath, node: node.path, scenario: "r") { _, client, _ in
            pressWithPen(pen, client: client)
        }
    }

    static func pressWithPen(_ pen: UHIDDevice, client: SocketClient) {
        // Hovering: in range, no pressure; then the tip down at 1000 with a unit of noise,
        // then to the top, then up.
        pen.send(HIDDevices.penReport(inRange: true, touching: false, pressure: 0))
        var from = client.lines.count
        let until = Clock.now() + 1.2
        var wobble: UInt16 = 0
        while Clock.now() < until {
            wobble = (wobble + 1) % 2
            pen.send(HIDDevices.penReport(inRange: true, touching: true, pressure: 1000 + wobble))
            Clock.sleep(0.010)
        }
        var stable: [String: Any]?
        expect("r: the pen pressing at raw 1000 settles: a stable READING", within: Limits.reaction, waitingFor: "a stable READING",
               { stable = client.lastStableReading(after: from); return stable != nil }, saw: client.tail())
        let raw = (stable?["raw"] as? NSNumber)?.intValue ?? -1
        check((999...1002).contains(raw) && stable?["model"] as? String == "nominal", "r: the pen reads raw ≈ 1000 in nominal grams",
              "saw \(stable.map(jsonText) ?? "nothing")")
        from = client.lines.count
        for _ in 0..<5 {
            pen.send(HIDDevices.penReport(inRange: true, touching: true, pressure: UInt16(HIDDevices.penPressureMaximum)))
            Clock.sleep(0.010)
        }
        expect("r: the pen pressed to the top gives a PEAK", within: Limits.reaction, waitingFor: "a PEAK",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.peak) } }, saw: client.tail())
        // The tip lifted while in range: the driver reports no pressure any more.
        pen.send(HIDDevices.penReport(inRange: true, touching: false, pressure: 0))
        expect("r: the tip lifted reads raw 0 with 0 contacts", within: Limits.reaction, waitingFor: "a READING of raw 0, 0 contacts",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.reading) && $0.contains("\"raw\":0,") && $0.contains("\"contacts\":0") } },
               saw: client.tail())
        pen.send(HIDDevices.penReport(inRange: false, touching: false, pressure: 0))
    }

    // MARK: - The Magic Trackpad 2

    /// hid-magicmouse's Magic Trackpad 2: ABS_MT_PRESSURE 0–253 without a resolution, the
    /// first contact weighed in nominal grams, pressure only while a touch is down, a touch
    /// the pad stops reporting released (INPUT_MT_DROP_UNUSED).
    static func magicTrackpad(_ programs: Programs, daemonPath: String) {
        guard let (trackpad, node) = make(HIDDevices.magicTrackpad2, node: "Trackpad") else { return }
        defer { trackpad.destroy() }
        let enabled = waitFor("hid-magicmouse's SET_REPORT 0xF1 (multitouch on)", within: Limits.reaction) {
            trackpad.driverRequests.setReports.contains { $0.number == 0xF1 }
        }
        expect("r: hid-magicmouse switches the Magic Trackpad 2 to multitouch (SET_REPORT 0xF1 02 01)", after: enabled,
               trackpad.driverRequests.setReports.contains { $0.number == 0xF1 && $0.data == [0xF1, 0x02, 0x01] },
               saw: "\(trackpad.driverRequests.setReports.map { ($0.number, $0.data) })")
        let devices = DeviceList.read(programs, scenario: "r")
        let entry = devices[node.path] ?? [:]
        note("r: devices --json for the Magic Trackpad 2: \(jsonText(entry))")
        let axes = entry["pressure"] as? [[String: Any]] ?? []
        let weighs = entry["weighs"] as? [String: Any] ?? [:]
        // The driver names it itself ("Apple Inc. Magic Trackpad", with " 2" in some kernels).
        check(node.name.hasPrefix("Apple Inc. Magic Trackpad") && entry["kind"] as? String == "touchpad"
                && axes.contains { $0["axis"] as? String == "ABS_MT_PRESSURE" && ($0["max"] as? NSNumber)?.intValue == HIDDevices.magicTrackpad2PressureMaximum }
                && weighs["model"] as? String == "nominal" && weighs["contacts"] as? String == "primary",
              "r: hid-magicmouse's Magic Trackpad 2 is a touchpad with ABS_MT_PRESSURE 0..253, its first contact weighed in nominal grams",
              "saw \(node): \(jsonText(entry))")

        DaemonOnDevice.watching(programs, daemonPath: daemonPath, node: node.path, scenario: "r") { _, client, _ in
            touchMagicTrackpad(trackpad, client: client)
        }
    }

    static func touchMagicTrackpad(_ trackpad: UHIDDevice, client: SocketClient) {
        var from = client.lines.count
        let until = Clock.now() + 1.2
        var wobble: UInt8 = 0
        while Clock.now() < until {
            wobble = (wobble + 1) % 2
            trackpad.send(HIDDevices.magicTrackpad2Report([(id: 1, x: 200, pressure: 120 + wobble)]))
            Clock.sleep(0.010)
        }
        var stable: [String: Any]?
        expect("r: a finger on the Magic Trackpad 2 at 120 settles: a stable READING", within: Limits.reaction, waitingFor: "a stable READING",
               { stable = client.lastStableReading(after: from); return stable != nil }, saw: client.tail())
        check(((stable?["raw"] as? NSNumber)?.intValue).map { (120...121).contains($0) } == true && stable?["model"] as? String == "nominal",
              "r: it reads raw ≈ 120 in nominal grams", "saw \(stable.map(jsonText) ?? "nothing")")
        from = client.lines.count
        for _ in 0..<5 {
            trackpad.send(HIDDevices.magicTrackpad2Report([(id: 1, x: 200, pressure: UInt8(HIDDevices.magicTrackpad2PressureMaximum))]))
            Clock.sleep(0.010)
        }
        expect("r: a press to 253 gives a PEAK", within: Limits.reaction, waitingFor: "a PEAK",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.peak) } }, saw: client.tail())
        // The finger gone from the report: the driver drops its slot.
        trackpad.send(HIDDevices.magicTrackpad2Report([]))
        expect("r: a report without the touch reads 0 contacts", within: Limits.reaction, waitingFor: "a READING of 0 contacts",
               { client.lines.dropFirst(from).contains { $0.contains(Marker.reading) && $0.contains("\"contacts\":0") } }, saw: client.tail())
    }

    static func jsonText(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return "\(object)" }
        return String(decoding: data, as: UTF8.self)
    }
}
