import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// f. Without --grab the device stays shared: evtest, reading the same node alongside
/// `forcescale read`, sees every injected frame.
enum NoGrab {
    static let frames = 200
    /// An event line of evtest for ABS_PRESSURE (the header's "Event code 24 (ABS_PRESSURE)"
    /// does not match).
    static let pressureLine = "code 24 (ABS_PRESSURE), value "
    /// evtest's line for the release's BTN_TOUCH.
    static let releaseLine = "code 330 (BTN_TOUCH), value 0"

    static func run(_ programs: Programs) {
        guard let evtest = programs.evtest else {
            Report.shared.skip("f: evtest sees every frame while forcescale reads", reason: "evtest is not installed")
            return
        }
        guard let pad = makeDevice(Tables.pressurePad, scenario: "f") else { return }
        defer { pad.destroy() }

        // evtest's stdout is a pipe here: line-buffer it, or its lines come only at exit.
        let arguments = programs.stdbuf.map { [$0, "-oL", evtest, pad.node] } ?? [evtest, pad.node]
        let watcher: Child
        do {
            watcher = try Child("evtest", arguments, counting: [pressureLine])
        } catch {
            check(false, "f: start evtest", "\(error)")
            return
        }
        let testing = waitFor("evtest's 'Testing ...' line (or its end)", within: Limits.readerStart) {
            watcher.output.contains { $0.contains("Testing ...") } || !watcher.isRunning
        }
        guard expect("f: evtest opens \(pad.node)", after: testing,
                     watcher.output.contains { $0.contains("Testing ...") } && watcher.isRunning,
                     saw: "\(watcher.ended.map { "it ended with \($0)" } ?? "it runs")\n\(watcher.tail())") else { return }
        guard let reader = startReader(programs, "read on the pressure pad", ["--json", "--interval-ms", "0", "--no-rumble", "--device", pad.node], scenario: "f") else {
            watcher.stop(SIGKILL)
            return
        }

        // Paced by what both readers have taken, so that neither's evdev buffer (64 events on
        // a small device) overflows under emulation; pacing does not hide a grab, which would
        // keep every event from evtest.
        var stalled = false
        for value in 1...frames {
            pad.press(Int32(value), down: value == 1)
            if value % 4 == 0 || value == frames {
                let kept = waitUntil(Limits.reaction) { watcher.count(pressureLine) >= value && reader.count(Marker.reading) >= value }
                if !kept {
                    stalled = true
                    note("f: after frame \(value), waited \(Int(Limits.reaction)) s: evtest has \(watcher.count(pressureLine)) ABS_PRESSURE lines, forcescale \(reader.count(Marker.reading)) readings; giving up")
                    break
                }
            }
        }
        // The release changes the keys only, so evtest's ABS_PRESSURE lines stay at 200. Both
        // print events in order, so once each has shown the release, it has shown every frame
        // before it: the counts below are final.
        pad.frame([.key(BTN_TOUCH, 0), .key(BTN_TOOL_FINGER, 0)])
        let evtestReleased = waitFor("evtest's line of the release (BTN_TOUCH 0)", within: Limits.reaction) {
            watcher.output.contains { $0.contains(Self.releaseLine) }
        }
        let readerReleased = waitFor("forcescale's READING of the release (0 contacts)", within: Limits.reaction) {
            reader.hasReading(raw: 0, contacts: 0)
        }

        let seen = watcher.output.filter { $0.contains(pressureLine) }.compactMap { Int($0.components(separatedBy: pressureLine).last ?? "") }
        expect("f: evtest sees all \(frames) ABS_PRESSURE frames while forcescale reads (no grab)", after: evtestReleased,
               !stalled && seen == Array(1...frames),
               saw: "\(seen.count) ABS_PRESSURE lines (first \(seen.prefix(5)), last \(seen.suffix(5)))\n\(watcher.tail(4))")
        expect("f: evtest saw no SYN_DROPPED", after: evtestReleased, !watcher.outputText.contains("SYN_DROPPED"), saw: watcher.tail(4))
        let raws = reader.readings.filter { $0.contacts == 1 }.map(\.raw)
        expect("f: forcescale read sees the same \(frames) frames", after: readerReleased, raws == Array(1...frames),
               saw: "\(raws.count) readings with a contact (first \(raws.prefix(5)), last \(raws.suffix(5)))\n\(reader.tail(4))")
        let readerStatus = reader.stop(SIGINT)
        check(readerStatus == .exited(0), "f: forcescale read exits 0 on SIGINT", "saw \(ending(readerStatus, waited: Limits.exit))\n\(reader.tail())")
        watcher.stop(SIGINT)
    }
}
