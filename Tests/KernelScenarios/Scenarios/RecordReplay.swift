import Foundation
import KernelTestSupport
import Glibc

/// k. `forcescale record` on a live device, then `replay` of the file, gives the readings the
/// live run gave: the same JSON lines, times included (the recording keeps the kernel's
/// monotonic timestamps, which `read` stamps its readings with). The file is also accepted by
/// evemu-device, the peer that turns recordings into devices. A recording ends cleanly on
/// --duration and on the device's removal, and an uncreatable output fails with 73.
enum RecordReplay {
    static func run(_ programs: Programs) {
        let scratch = LiveEqualsReplay.makeScratchFolder()
        roundTrip(programs, scratch: scratch)
        endsOnRemoval(programs, scratch: scratch)
        endsAfterDuration(programs, scratch: scratch)
        uncreatableOutput(programs)
    }

    static func startRecorder(_ programs: Programs, _ arguments: [String], label: String) -> Child? {
        do {
            let child = try Child(label, [programs.forcescale, "record"] + arguments)
            if child.waitForError("forcescale: recording ", timeout: Limits.readerStart) { return child }
            check(false, "k: \(label) says it is recording", child.tail())
            child.stop(SIGKILL)
        } catch {
            check(false, "k: start \(label)", "\(error)")
        }
        return nil
    }

    /// The READING and PEAK lines of a JSON stream, verbatim.
    static func protocolLines(_ lines: [String]) -> [String] {
        lines.filter { $0.hasPrefix("{\"class\":\"READING\"") || $0.hasPrefix("{\"class\":\"PEAK\"") }
    }

    static func roundTrip(_ programs: Programs, scratch: String) {
        guard let pad = makeDevice(Tables.synapticsPad, scenario: "k") else { return }
        defer { pad.destroy() }
        let file = scratch + "/synaptics.events"
        guard let recorder = startRecorder(programs, ["--device", pad.node, "--output", file], label: "record of the pad") else { return }
        guard let reader = startReader(programs, "read beside record", ["--json", "--interval-ms", "0", "--no-rumble", "--device", pad.node], scenario: "k") else {
            recorder.stop(SIGKILL)
            return
        }
        // Three presses: two that reach the maximum (a PEAK each) and one that does not.
        var frames = 0
        for top in [255, 120, 255] as [Int32] {
            for (step, value) in stride(from: Int32(10), through: top, by: 35).enumerated() {
                pad.press(value, x: 1500 + value, down: step == 0)
                frames += 1
            }
            pad.press(top, x: 1507 + top)
            pad.release()
            frames += 2
            // Paced by the reader, so the small evdev buffers never overflow under emulation.
            waitFor("\(frames) readings", within: Limits.reaction) { reader.count(Marker.reading) >= frames }
        }
        // A signal does not wait for queued events: both are stopped only once each has
        // handled every frame (asleep in its loop with its output here, see
        // Child.hasHandledQueuedInput), or the file or the live run would miss the last ones.
        let handled = waitFor("read and record to handle every frame (both asleep in epoll_wait)", within: Limits.reaction) {
            reader.hasHandledQueuedInput && recorder.hasHandledQueuedInput
        }
        let readerStatus = reader.stop(SIGINT)
        let recorderStatus = recorder.stop(SIGINT)
        check(readerStatus == .exited(0), "k: read exits 0", reader.tail())
        guard check(recorderStatus == .exited(0), "k: record exits 0 on SIGINT", recorder.tail()) else { return }
        check(recorder.errorsContain("forcescale: recorded ") && recorder.errorsContain("to \(file)"),
              "k: record sums up what it wrote", recorder.tail())

        // A live PEAK says what became of its rumble (off here: --no-rumble); a replay tries
        // none and says nothing, so that field is compared apart.
        let rumbleOff = ",\"rumble\":\"off\""
        let livePeaks = reader.output.filter { $0.hasPrefix("{\"class\":\"PEAK\"") }
        check(livePeaks.allSatisfy { $0.hasSuffix(rumbleOff + "}") }, "k: each live PEAK says its rumble was off (--no-rumble)",
              livePeaks.prefix(2).joined(separator: "\n"))
        let live = protocolLines(reader.output).map { $0.replacingOccurrences(of: rumbleOff, with: "") }
        let (replayStatus, replay) = runToEnd("replay of the recording", [programs.forcescale, "replay", file, "--json", "--interval-ms", "0"], timeout: Limits.command)
        guard check(replayStatus == .exited(0), "k: replay reads the recording", replay?.tail() ?? "") , let replay else { return }
        let replayed = protocolLines(replay.output)
        let peaks = live.filter { $0.contains("\"class\":\"PEAK\"") }.count
        check(live.count >= frames && peaks == 2, "k: the live run gave every frame's reading and two PEAKs",
              "\(live.count) lines for \(frames) frames, \(peaks) PEAKs\n\(reader.tail())")
        let firstDifference = zip(live, replayed).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(live.count, replayed.count)
        expect("k: replay of the recording gives the live run's READING and PEAK lines, times included (\(live.count) lines)", after: handled,
               live == replayed,
               saw: "live \(live.count) lines, replay \(replayed.count); first difference at \(firstDifference):\nlive:   \(live.dropFirst(firstDifference).first ?? "(end)")\nreplay: \(replayed.dropFirst(firstDifference).first ?? "(end)")")

        // The peer: evemu-device makes a device from the file (it parses every line).
        guard let evemuDevice = programs.evemuDevice else {
            check(false, "k: evemu-device is installed (scripts/setup installs evemu-tools)")
            return
        }
        guard let copy = try? Child("evemu-device on the recording", [evemuDevice, file]) else {
            check(false, "k: start evemu-device")
            return
        }
        let made = waitFor("evemu-device to print its /dev/input/event node (or end)", within: Limits.readerStart) {
            copy.output.contains { $0.contains("/dev/input/event") } || !copy.isRunning
        }
        expect("k: evemu-device makes a device from the recording", after: made,
               copy.output.contains { $0.contains("/dev/input/event") } && copy.isRunning,
               saw: "\(copy.ended.map { "it ended with \($0)" } ?? "it runs")\n\(copy.tail())")
        copy.stop(SIGTERM)
    }

    static func endsOnRemoval(_ programs: Programs, scratch: String) {
        guard let pad = makeDevice(Tables.pressurePad, scenario: "k") else { return }
        let file = scratch + "/removed.events"
        guard let recorder = startRecorder(programs, ["--device", pad.node, "-o", file], label: "record until removal") else {
            pad.destroy()
            return
        }
        pad.press(80, down: true)
        pad.release()
        // Unplugging drops what the recorder has not read yet: it goes once the recorder has
        // handled both frames (asleep in its loop again).
        waitFor("record to handle the press and the release", within: Limits.reaction) { recorder.hasHandledQueuedInput }
        pad.destroy()
        let ended = recorder.wait(Limits.command)
        check(ended == .exited(0) && recorder.errorsContain("was removed, so recording stopped"),
              "k: record ends with 0 when the device is unplugged", "\(ended.map(\.description) ?? "still running")\n\(recorder.tail())")
        let (status, replay) = runToEnd("replay of the cut recording", [programs.forcescale, "replay", file, "--json", "--interval-ms", "0"], timeout: Limits.command)
        let raws = replay.map { protocolLines($0.output).compactMap(OutputLine.init).filter(\.isReading).map(\.raw) } ?? []
        check(status == .exited(0) && raws == [80, 0], "k: what was recorded before the unplug replays (a press of 80, its release)",
              "\(ending(status, waited: Limits.command)): raws \(raws)\n\(replay?.tail() ?? "")")
    }

    static func endsAfterDuration(_ programs: Programs, scratch: String) {
        guard let pad = makeDevice(Tables.pressurePad, scenario: "k") else { return }
        defer { pad.destroy() }
        let file = scratch + "/timed.events"
        let started = Clock.now()
        let (status, recorder) = runToEnd("record --duration 3", [programs.forcescale, "record", "--device", pad.node, "--duration", "3", "--output", file], timeout: Limits.command + 3)
        let took = Clock.now() - started
        check(status == .exited(0) && took >= 3, "k: record --duration 3 stops by itself with 0 (after \(String(format: "%.1f", took)) s)",
              "\(status.map(\.description) ?? "killed")\n\(recorder?.tail() ?? "")")
        let header = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        check(header.hasPrefix("# EVEMU 1.3\n") && header.contains("\nN: \(Tables.pressurePad.name)\n") && header.contains("\nA: 18 0 255 "),
              "k: an idle recording still holds the device's description", String(header.prefix(400)))
    }

    static func uncreatableOutput(_ programs: Programs) {
        guard let pad = makeDevice(Tables.pressurePad, scenario: "k") else { return }
        defer { pad.destroy() }
        let (status, recorder) = runToEnd("record into a missing folder", [programs.forcescale, "record", "--device", pad.node, "--output", "/nonexistent/folder/pad.events"], timeout: Limits.command)
        check(status == .exited(73) && (recorder?.errorsContain("/nonexistent/folder/pad.events") ?? false),
              "k: record into a folder that does not exist fails with 73, naming the file", recorder?.tail() ?? "")
    }
}
