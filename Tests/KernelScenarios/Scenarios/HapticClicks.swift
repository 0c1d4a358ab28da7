import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// s. Pressure pads with kernel 6.18's FF_HAPTIC (through uinput: ff-core passes FF_HAPTIC
/// uploads on to the device side whatever the driver, and Debian's kernels build no
/// hid-haptic). From 6.18: `devices` finds the waveform; `forcescaled` uploads one CLICK at
/// full intensity at open, plays it with one write per PEAK and erases it on SIGTERM; the
/// `success` pattern plays as CLICKs at its segments' strengths; `rumble --test` passes; a pad
/// without CLICK gets BUZZ CONTINUOUS, stopped after each play; a pad that refuses every
/// waveform is "no haptic on this pad" in `devices`, STATUS and `rumble --test`, and the
/// daemon serves it all the same. No upload of PRESS (0x1006) or RELEASE (0x1007) ever
/// reaches a device. Before 6.18 the kernel itself refuses FF_HAPTIC: the same "no haptic"
/// answers, and nothing reaches the device.
enum HapticClicks {
    static let click: UInt16 = 0x1003
    static let buzz: UInt16 = 0x1004
    static let hostControlled: Set<UInt16> = [0x1006, 0x1007]

    static func run(_ programs: Programs) {
        guard let daemonPath = programs.runnableForcescaled(scenario: "s") else { return }
        var pads: [VirtualDevice] = []
        for table in [Tables.hapticPad, Tables.clicklessHapticPad, Tables.silentHapticPad] {
            guard let pad = makeDevice(table, scenario: "s") else {
                pads.forEach { $0.destroy() }
                return
            }
            pads.append(pad)
        }
        defer { pads.forEach { $0.destroy() } }
        let (hapticPad, clicklessPad, silentPad) = (pads[0], pads[1], pads[2])
        let modern = RunningKernel.isAtLeast(6, 18)
        note("s: kernel \(RunningKernel.release): FF_HAPTIC \(modern ? "passed on to the device" : "refused by the kernel (before 6.18)")")

        checkDevicesList(programs, hapticPad: hapticPad, clicklessPad: clicklessPad, silentPad: silentPad, modern: modern)
        if modern {
            checkRumbleTest(programs, on: hapticPad)
            checkDaemonClicks(programs, daemonPath: daemonPath, on: hapticPad)
            checkBuzz(programs, on: clicklessPad)
        } else {
            for name in ["s: rumble --test plays CLICKs on the haptic pad", "s: forcescaled clicks once per PEAK",
                         "s: a pad without CLICK buzzes instead"] {
                Report.shared.skip(name, reason: "needs 6.18")
            }
        }
        checkNoHaptic(programs, daemonPath: daemonPath, on: modern ? silentPad : hapticPad, modern: modern)

        let everything = pads.flatMap { $0.forceFeedback.uploads }
        let forbidden = everything.filter { hostControlled.contains($0.hapticUsage) }
        check(forbidden.isEmpty, "s: no upload of PRESS or RELEASE ever reached a pad (\(everything.count) uploads seen)",
              "saw \(forbidden)")
        let problems = pads.flatMap { $0.forceFeedback.problems }
        check(problems.isEmpty, "s: every FF request was answered", "\(problems)")
    }

    /// `devices --json`: each pad's waveform, or why it has none; the probe's upload is erased.
    static func checkDevicesList(_ programs: Programs, hapticPad: VirtualDevice, clicklessPad: VirtualDevice, silentPad: VirtualDevice, modern: Bool) {
        let list = DeviceList.read(programs, scenario: "s")
        func ff(_ pad: VirtualDevice) -> [String: Any] { list[pad.node]?["ff"] as? [String: Any] ?? [:] }
        if modern {
            check(ff(hapticPad)["haptic"] as? String == "click", "s: devices --json gives the haptic pad the CLICK waveform", "saw \(ff(hapticPad))")
            check(ff(clicklessPad)["haptic"] as? String == "buzz", "s: devices --json gives the pad without CLICK the BUZZ waveform", "saw \(ff(clicklessPad))")
            let probe = hapticPad.forceFeedback
            check(probe.uploads.count == 1 && probe.uploads.first?.hapticUsage == click && probe.erases.count == 1,
                  "s: the devices probe uploads one CLICK and erases it", "saw \(probe.sequence) \(probe.uploads)")
        }
        let refused = modern ? silentPad : hapticPad
        let error = ff(refused)["haptic_error"] as? String ?? ""
        check(error.contains("no haptic on this pad"), "s: devices --json says there is no haptic on the \(modern ? "silent" : "haptic (before 6.18)") pad",
              "saw \(ff(refused))")
        if !modern {
            check(pads(hapticPad, clicklessPad, silentPad).allSatisfy { $0.forceFeedback.uploads.isEmpty },
                  "s: before 6.18 the kernel refuses FF_HAPTIC itself: no upload reaches a device", "")
        }
    }

    static func pads(_ pads: VirtualDevice...) -> [VirtualDevice] { pads }

    /// `rumble --test --json`: every step works on a CLICK pad, and every upload is a CLICK.
    static func checkRumbleTest(_ programs: Programs, on pad: VirtualDevice) {
        let before = pad.forceFeedback.uploads.count
        let (ended, test) = runToEnd("rumble --test", [programs.forcescale, "rumble", "--test", "--json", "--count", "2", "--device", pad.node],
                                     timeout: Limits.command)
        let report = (test?.output.first).flatMap(jsonObject) ?? [:]
        check(ended == .exited(0) && report["feedback"] as? String == "haptic click",
              "s: rumble --test on the haptic pad exits 0 with feedback 'haptic click'",
              "saw \(ending(ended, waited: Limits.command)), \(report)\n\(test?.tail() ?? "")")
        let uploads = pad.forceFeedback.uploads.dropFirst(before)
        check(!uploads.isEmpty && uploads.allSatisfy { $0.type == UInt16(CEVDEV_FF_HAPTIC) && $0.hapticUsage == click && $0.accepted },
              "s: rumble --test uploads only FF_HAPTIC CLICKs (\(uploads.count))",
              "saw \(uploads.map { String(format: "0x%04x", $0.hapticUsage) })")
    }

    /// forcescaled: one CLICK at open, one play per PEAK, `success` as two CLICKs at 50 % and
    /// 80 % then the peak's CLICK back, one erase on SIGTERM.
    static func checkDaemonClicks(_ programs: Programs, daemonPath: String, on pad: VirtualDevice) {
        let start = pad.forceFeedback
        DaemonOnDevice.watching(programs, daemonPath: daemonPath, node: pad.node, scenario: "s") { daemon, client, statusLine in
            clickOnPeaks(pad, start: start, daemon: daemon, client: client, statusLine: statusLine)
        }
    }

    static func clickOnPeaks(_ pad: VirtualDevice, start: ForceFeedbackLog, daemon: Child, client: SocketClient, statusLine: String) {
        let device = ((jsonObject(statusLine)?["devices"] as? [[String: Any]]) ?? []).first ?? [:]
        check(device["feedback"] as? String == "haptic click" && device["rumble"] as? String == pad.node && device["rumble_error"] == nil,
              "s: STATUS says the haptic pad's PEAKs play a haptic click", "saw \(statusLine)")
        check(device["pressure"] as? String == "ABS_PRESSURE", "s: STATUS names the pressure axis", "saw \(device)")

        let prepared = waitFor("the peak click's upload at open", within: Limits.reaction) { pad.forceFeedback.uploads.count > start.uploads.count }
        let opened = Array(pad.forceFeedback.uploads.dropFirst(start.uploads.count))
        expect("s: one CLICK at 100 % uploaded at open", after: prepared,
               opened.count == 1 && opened[0].hapticUsage == click && opened[0].intensity == 100 && opened[0].accepted,
               saw: "\(opened)")
        let id = opened.first?.effectID ?? -1

        // Three touches that wobble by a raw unit or two on the way up, at the top and down.
        let presses = 3
        for press in 1...presses {
            let peaks = client.lines.filter { $0.contains(Marker.peak) }.count
            pad.press(40, down: true)
            for pressure: Int32 in [90, 89, 160, 161, 254, 255, 254, 255, 253, 180, 120, 60] { pad.press(pressure) }
            pad.release()
            expect("s: press \(press) gives a PEAK with a rumble and a play of effect \(id)", within: Limits.reaction,
                   waitingFor: "PEAK \(press) at the client and play \(press) at the pad",
                   { client.lines.filter { $0.contains(Marker.peak) }.count > peaks && pad.forceFeedback.plays - start.plays >= press },
                   saw: "\(pad.forceFeedback.plays - start.plays) plays\n\(client.tail())")
        }
        let peakLines = client.lines.filter { $0.contains(Marker.peak) }
        check(peakLines.count == presses && peakLines.allSatisfy { $0.contains("\"rumble\":\"played\"") },
              "s: \(presses) PEAKs, each with rumble played", peakLines.joined(separator: "\n"))

        client.send(#"{"class":"RUMBLE","pattern":"success"}"#)
        let reply = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"RUMBLE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        check(reply == #"{"class":"RUMBLE","pattern":"success"}"#, "s: RUMBLE success is answered in kind", "saw \(reply ?? "nothing")")
        // The pattern's two CLICKs, then the peak's CLICK uploaded back.
        let restored = waitFor("the pattern's 2 uploads and the peak click back", within: Limits.reaction) {
            pad.forceFeedback.uploads.count >= start.uploads.count + 4
        }

        daemon.signal(SIGTERM)
        let stopped = waitFor("forcescaled's exit and its erase", within: Limits.exit) {
            daemon.hasFinished && pad.forceFeedback.erases.count > start.erases.count
        }
        check(daemon.ended == .exited(0), "s: forcescaled exits 0 on SIGTERM", "saw \(ending(daemon.ended, waited: Limits.exit))\n\(daemon.tail())")
        let final = pad.forceFeedback
        let uploads = Array(final.uploads.dropFirst(start.uploads.count))
        let shapes = uploads.map { "\(String(format: "0x%04x", $0.hapticUsage))@\($0.intensity)%" }
        expect("s: the uploads are the peak CLICK, success's CLICKs at 50 % and 80 %, the peak CLICK back, all in one slot", after: restored,
               shapes == ["0x1003@100%", "0x1003@50%", "0x1003@80%", "0x1003@100%"] && uploads.allSatisfy { $0.effectID == id },
               saw: "\(shapes) in slots \(uploads.map(\.effectID))")
        // ff-core stops an effect as it erases it: the one stop allowed is the erase's.
        expect("s: \(presses) PEAK plays and 2 pattern plays, never stopped but by the erase (a click ends by itself)", after: stopped,
               final.plays - start.plays == presses + 2 && final.stops - start.stops == final.erases.count - start.erases.count,
               saw: "\(final.plays - start.plays) plays, \(final.stops - start.stops) stops")
        expect("s: SIGTERM erases effect \(id), once", after: stopped, Array(final.erases.dropFirst(start.erases.count)) == [Int32(id)],
               saw: "erases \(final.erases.dropFirst(start.erases.count))")
    }

    /// A pad without CLICK: CLICK refused, BUZZ CONTINUOUS kept, each play stopped again.
    static func checkBuzz(_ programs: Programs, on pad: VirtualDevice) {
        let start = pad.forceFeedback
        guard let reader = startReader(programs, "read on the pad without CLICK", ["--json", "--device", pad.node], scenario: "s") else { return }
        pad.press(60, down: true)
        for pressure: Int32 in [150, 240, 255, 254, 255, 150, 70] { pad.press(pressure) }
        pad.release()
        let buzzed = waitFor("a PEAK, a play and its stop at the pad", within: Limits.reaction) {
            reader.count(Marker.peak) >= 1 && pad.forceFeedback.plays > start.plays && pad.forceFeedback.stops > start.stops
        }
        reader.stop(SIGTERM)
        let uploads = Array(pad.forceFeedback.uploads.dropFirst(start.uploads.count))
        expect("s: the pad without CLICK: CLICK refused once, then BUZZ CONTINUOUS, played and stopped", after: buzzed,
               uploads.first.map { $0.hapticUsage == click && !$0.accepted } == true
                   && uploads.dropFirst().allSatisfy { $0.hapticUsage == buzz && $0.accepted } && uploads.count >= 2,
               saw: "\(uploads.map { "\(String(format: "0x%04x", $0.hapticUsage)) \($0.accepted ? "accepted" : "refused")" }), "
                   + "\(pad.forceFeedback.plays - start.plays) plays, \(pad.forceFeedback.stops - start.stops) stops\n\(reader.tail())")
    }

    /// A pad whose every haptic upload is refused: said by `rumble --test` (exit 1) and by
    /// STATUS, and the daemon weighs on it all the same.
    static func checkNoHaptic(_ programs: Programs, daemonPath: String, on pad: VirtualDevice, modern: Bool) {
        let which = modern ? "the silent pad" : "the haptic pad before 6.18"
        let (ended, test) = runToEnd("rumble --test", [programs.forcescale, "rumble", "--test", "--count", "1", "--device", pad.node],
                                     timeout: Limits.command)
        let output = (test?.output ?? []).joined(separator: "\n")
        check(ended == .exited(1) && output.contains("no haptic on this pad"),
              "s: rumble --test on \(which) exits 1 saying there is no haptic on this pad",
              "saw \(ending(ended, waited: Limits.command))\n\(test?.tail() ?? "")")

        DaemonOnDevice.watching(programs, daemonPath: daemonPath, node: pad.node, scenario: "s") { daemon, client, statusLine in
            let device = ((jsonObject(statusLine)?["devices"] as? [[String: Any]]) ?? []).first ?? [:]
            check((device["rumble_error"] as? String ?? "").contains("no haptic on this pad") && device["rumble"] == nil,
                  "s: STATUS says there is no haptic on \(which), and no rumble node", "saw \(statusLine)")
            peakWithoutRumble(on: pad, daemon: daemon, client: client, which: which)
        }
    }

    static func peakWithoutRumble(on pad: VirtualDevice, daemon: Child, client: SocketClient, which: String) {
        pad.press(50, down: true)
        for pressure: Int32 in [120, 200, 255, 254, 255, 120, 40] { pad.press(pressure) }
        pad.release()
        expect("s: the daemon still serves \(which): a PEAK without a rumble", within: Limits.reaction, waitingFor: "a PEAK at the client",
               { client.lines.contains { $0.contains(Marker.peak) } }, saw: client.tail())
        let peak = client.lines.first { $0.contains(Marker.peak) } ?? ""
        check(!peak.contains("\"rumble\":\"played\"") && daemon.isRunning, "s: its PEAK played no rumble, and the daemon runs on", "saw \(peak)")
    }

    static func jsonObject(_ line: String) -> [String: Any]? {
        guard let data = line.data(using: .utf8) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}
