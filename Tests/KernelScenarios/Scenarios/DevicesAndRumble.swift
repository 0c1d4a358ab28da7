import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// g. With every table device present: `devices --json` gives each its kind and picks the
/// pressure pad; `rumble --probe` and `rumble success` reach the FF pad's device side; a pad
/// without FF is refused with 69.
enum DevicesAndRumble {
    static func run(_ programs: Programs) {
        var devices: [VirtualDevice] = []
        for table in Tables.all {
            guard let device = makeDevice(table, scenario: "g") else {
                devices.forEach { $0.destroy() }
                return
            }
            devices.append(device)
        }
        defer { devices.forEach { $0.destroy() } }
        let rumblePad = devices.first { $0.table.name == Tables.rumblePad.name }!
        let plainPad = devices.first { $0.table.name == Tables.synapticsPad.name }!

        let list = DeviceList.read(programs, scenario: "g")
        var wrongKinds: [String] = []
        var wrongBest: [String] = []
        for device in devices {
            let entry = list[device.node]
            let kind = entry?["kind"] as? String
            if kind != device.table.expectedKind {
                wrongKinds.append("\(device.table.name) at \(device.node): \(kind ?? "no entry"), expected \(device.table.expectedKind)")
            }
            let best = entry?["best"] as? Bool
            if best != (device.table.name == Tables.pressurePad.name) {
                wrongBest.append("\(device.table.name): best \(best.map(String.init) ?? "missing")")
            }
        }
        check(wrongKinds.isEmpty, "g: 'devices --json' gives each of the \(devices.count) table devices its kind", wrongKinds.joined(separator: "\n"))
        let bestPaths = list.filter { $0.value["best"] as? Bool == true }.map(\.key)
        check(wrongBest.isEmpty && bestPaths.count == 1, "g: the pressure pad, and only it, is marked best",
              (wrongBest + ["best: \(bestPaths)"]).joined(separator: "\n"))
        // How each weighs by default: a pressure pad in physical grams from its resolution
        // (its contacts summed when it has slots), a touchpad's first contact in nominal grams.
        func weighs(_ table: DeviceTable) -> [String: String] {
            let node = devices.first { $0.table.name == table.name }!.node
            return (list[node]?["weighs"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        }
        let expectedWeighing: [(DeviceTable, [String: String])] = [
            (Tables.pressurePad, ["pressure": "ABS_PRESSURE", "contacts": "sum", "model": "physical"]),
            (Tables.synapticsPad, ["pressure": "ABS_MT_PRESSURE, the first contact", "contacts": "primary", "model": "nominal"]),
        ]
        let wrongWeighing = expectedWeighing.filter { weighs($0.0) != $0.1 }.map { "\($0.0.name): \(weighs($0.0)), expected \($0.1)" }
        check(wrongWeighing.isEmpty, "g: devices --json says how the pressure pad and the touchpad weigh (axis, contacts, model)",
              wrongWeighing.joined(separator: "\n"))
        let ff = list[rumblePad.node]?["ff"] as? [String: Any]
        check(ff?["rumble"] as? Bool == true && (ff?["effects"] as? NSNumber)?.intValue == 16,
              "g: the FF pad is listed with rumble and 16 effects", "saw ff \(ff.map { "\($0)" } ?? "none")")

        // --probe: uploads and erases one effect of each type it declares (rumble here).
        let (probeEnded, probe) = runToEnd("rumble --probe", [programs.forcescale, "rumble", "--probe", "--device", rumblePad.node], timeout: Limits.command)
        let probeLine = probe?.output.first { $0.contains("try rumble") } ?? ""
        check(probeEnded == .exited(0) && probeLine.hasSuffix("ok"), "g: 'rumble --probe' reports rumble ok",
              "saw \(ending(probeEnded, waited: Limits.command)), line '\(probeLine)'\n\(probe?.tail() ?? "")")
        // Its requests were each answered before its ioctl returned, and recorded before that:
        // once it has exited, the log holds all it asked (the wait is for safety only).
        let probeDone = waitFor("the probe's erase at the device", within: Limits.reaction) { rumblePad.forceFeedback.erases.count >= 1 }
        let afterProbe = rumblePad.forceFeedback
        expect("g: the probe's upload and erase reach the device", after: probeDone,
               afterProbe.uploads.count == 1 && afterProbe.erases.count == 1 && afterProbe.problems.isEmpty,
               saw: "\(afterProbe.sequence) \(afterProbe.problems)")

        // success: two segments through one slot, so two uploads (one in place), two plays, an erase.
        let (playEnded, player) = runToEnd("rumble success", [programs.forcescale, "rumble", "success", "--device", rumblePad.node], timeout: Limits.command)
        check(playEnded == .exited(0), "g: 'rumble success' exits 0", "saw \(ending(playEnded, waited: Limits.command))\n\(player?.tail() ?? "")")
        // Its plays went onto the uinput fd before its erase request, which was answered (and
        // recorded) before it exited: the log is complete for it now.
        let played = waitFor("the erase of 'rumble success' at the device", within: Limits.reaction) { rumblePad.forceFeedback.erases.count >= 2 }
        let log = rumblePad.forceFeedback
        let uploads = Array(log.uploads.dropFirst(afterProbe.uploads.count))
        let plays = log.plays - afterProbe.plays
        let sequence = Array(log.sequence.dropFirst(afterProbe.sequence.count)).filter { !$0.hasPrefix("stop") }
        let id = uploads.first?.effectID ?? -1
        let expected = ["upload \(id)", "play \(id)", "upload \(id)", "play \(id)", "erase \(id)"]
        expect("g: 'rumble success' gives the device 2 uploads, 2 plays, then an erase", after: played,
               uploads.count == 2 && plays == 2 && sequence == expected,
               saw: "\(sequence) (\(uploads.count) uploads, \(plays) plays), expected \(expected)")
        check(uploads.allSatisfy { $0.length > 0 && $0.type == UInt16(FF_RUMBLE) } && uploads.last?.replacedID == id,
              "g: the uploads are FF_RUMBLE with a length, the second one updates the first in place",
              "saw \(uploads)")

        // vendor:product names both the rumble pad and its FF-less twin (made first, so it
        // sorts first): rumbling must go to the one that can.
        let pair = String(format: "%04x:%04x", Tables.rumblePad.vendor, Tables.rumblePad.product)
        let twin = devices.first { $0.table.name == Tables.rumbleTwin.name }!
        let (pairEnded, pairProbe) = runToEnd("rumble --probe --device \(pair)", [programs.forcescale, "rumble", "--probe", "--device", pair], timeout: Limits.command)
        let probed = pairProbe?.output.first { $0.hasPrefix("/dev/input/") } ?? ""
        check(pairEnded == .exited(0) && probed.hasPrefix(rumblePad.node + ":"),
              "g: 'rumble --probe --device \(pair)' picks the matching device that has FF (\(rumblePad.node)), not its twin (\(twin.node))",
              "saw \(ending(pairEnded, waited: Limits.command)), probed '\(probed)'\n\(pairProbe?.tail(3) ?? "")")
        if let reader = startReader(programs, "read --rumble-device \(pair)",
                                    ["--json", "--device", devices.first { $0.table.name == Tables.pressurePad.name }!.node, "--rumble-device", pair], scenario: "g") {
            let said = waitFor("the reader's notice about rumble", within: Limits.reaction) {
                reader.errorsContain("rumble on PEAK through") || reader.errorsContain("rumble unavailable")
            }
            let notice = reader.errors.first { $0.contains("rumble") } ?? ""
            expect("g: 'read --rumble-device \(pair)' rumbles through the matching device that has FF (\(rumblePad.node))", after: said,
                   notice.contains("rumble on PEAK through \(rumblePad.node)"), saw: "'\(notice)'")
            reader.stop(SIGINT)
        }

        // A pad without FF: exit 69 and a message that says why.
        let (refusedEnded, refused) = runToEnd("rumble on a pad without FF", [programs.forcescale, "rumble", "--device", plainPad.node], timeout: Limits.command)
        let message = refused?.errorText ?? ""
        check(refusedEnded == .exited(69) && (message.contains("FF_RUMBLE") || message.contains("force feedback")) && message.contains(plainPad.node),
              "g: 'rumble --device \(plainPad.node)' (no FF) exits 69 with a clear message",
              "saw \(ending(refusedEnded, waited: Limits.command)), stderr: \(message)")

        // Last, since it unplugs the FF pad: a separate rumble device that goes away and comes
        // back is taken up again while the pressure device stays.
        rumblerReplug(programs, pressurePad: devices.first { $0.table.name == Tables.pressurePad.name }!, rumblePad: rumblePad)
    }

    static func rumblerReplug(_ programs: Programs, pressurePad: VirtualDevice, rumblePad: VirtualDevice) {
        guard let reader = startReader(programs, "read --rumble-device (replugged)",
                                       ["--json", "--interval-ms", "0", "--device", pressurePad.node, "--rumble-device", Tables.rumblePad.name], scenario: "g") else { return }
        defer { reader.stop(SIGKILL) }
        let ready = "rumble on PEAK through \(rumblePad.node)"
        guard expect("g: read --rumble-device '\(Tables.rumblePad.name)' rumbles through \(rumblePad.node)", within: Limits.reaction,
                     waitingFor: "'\(ready)' on its stderr", { reader.errorsContain(ready) }, saw: reader.tail()) else { return }
        rumblePad.destroy()
        // Reading goes on without the rumble device: a press (below the PEAK line) is read.
        let removal = "was removed; rumble resumes when it is back"
        let readsFrom = reader.outputCount
        pressurePad.press(100, down: true)
        expect("g: unplugging the rumble device is said once, and reading goes on", within: Limits.reaction,
               waitingFor: "'\(removal)' on its stderr and a READING raw 100 of the pressure pad",
               { reader.errorsContain(removal) && reader.hasReading(raw: 100, contacts: 1, from: readsFrom) }, saw: reader.tail())
        pressurePad.release()
        waitFor("the release's READING", within: Limits.reaction) { reader.hasReading(raw: 0, contacts: 0, from: readsFrom) }
        guard let replugged = makeDevice(Tables.rumblePad, scenario: "g") else { return }
        defer { replugged.destroy() }
        let back = "rumble on PEAK through \(replugged.node)"
        expect("g: the rumble device plugged back in (\(replugged.node)) is taken up again", within: Limits.reaction,
               waitingFor: "'\(back)' on its stderr", { reader.errorsContain(back) }, saw: reader.tail())
        // The notice follows the upload, which the device side records before answering it.
        waitFor("the peak effect's upload to the replugged device", within: Limits.reaction) { replugged.forceFeedback.uploads.count >= 1 }
        let peaksFrom = reader.count(Marker.peak)
        pressurePad.press(255, down: true)
        waitFor("a PEAK and its play on the replugged device", within: Limits.reaction) {
            reader.count(Marker.peak) > peaksFrom && replugged.forceFeedback.plays >= 1
        }
        pressurePad.release()
        // SIGINT: the reader erases its effect on the rumble device as it stops (or the kernel
        // does as its fd closes). Its plays came before that erase on the device's uinput fd,
        // and its stderr is closed at its exit: the play count and the notices are final then.
        reader.signal(SIGINT)
        let finished = waitFor("the reader's exit after SIGINT with its output closed, and its erase at the replugged device", within: Limits.exit) {
            reader.hasFinished && !replugged.forceFeedback.erases.isEmpty
        }
        expect("g: a PEAK after the replug plays on the rumble device once", after: finished,
               reader.count(Marker.peak) == peaksFrom + 1 && replugged.forceFeedback.plays == 1,
               saw: "\(reader.count(Marker.peak) - peaksFrom) PEAKs, \(replugged.forceFeedback.plays) plays\n\(reader.tail())")
        expect("g: the removal was said once", after: finished, reader.errorCount(removal) == 1,
               saw: "said \(reader.errorCount(removal)) times\n\(reader.tail())")
    }
}
