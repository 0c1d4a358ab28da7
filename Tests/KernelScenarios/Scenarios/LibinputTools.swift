import Foundation
import KernelTestSupport
import Glibc

/// t. libinput's recording format against Debian's own tools (libinput-tools):
/// - `libinput record` of a device made from a shared recording while evemu-play plays it
///   (a multitouch pad with ABS_MT_PRESSURE, a pen tablet): `forcescale replay` of libinput's
///   YAML gives the readings and PEAKs that replay of the evemu recording gives.
/// - `forcescale record --format libinput` of a uinput device (a pad, a pen): `libinput
///   replay` of that file makes the device again and plays it, and `forcescale read` on the
///   device it made gives the readings and PEAKs that `forcescale replay` of the file gives.
/// Readings are compared on (raw, grams, contacts), as in scenario a: times are the kernel's
/// on the live side.
enum LibinputTools {
    static let recordings = ["CyPS2 Cypress Trackpad.three_finger_press.events", "Wacom Cintiq 12WX.events"]

    static func run(_ programs: Programs) {
        guard let libinput = findProgram("libinput") else {
            check(false, "t: libinput is installed (scripts/setup installs libinput-tools)")
            return
        }
        // libinput replay is a Python script run by `/usr/bin/env python3`: Debian's python3,
        // which has the python3-libevdev and python3-yaml modules, must be the one found.
        setenv("PATH", "/usr/bin:/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? ""), 1)
        // Its prompt and the node it prints reach the pipe at once, not when Python exits.
        setenv("PYTHONUNBUFFERED", "1", 1)
        let scratch = LiveEqualsReplay.makeScratchFolder()
        let root = ProcessInfo.processInfo.environment["FORCESCALE_RECORDINGS"] ?? "/work/shared/recordings"
        let found = LiveEqualsReplay.discover(root, scenario: "t")
        for (index, name) in recordings.enumerated() {
            guard let recording = found.first(where: { $0.name == name }) else {
                check(false, "t: the shared recording \(name) is under \(root)")
                continue
            }
            recordedByLibinput(recording, index: index, libinput: libinput, programs: programs, scratch: scratch)
        }
        for table in [Tables.synapticsPad, Tables.pen2047] {
            replayedByLibinput(table, libinput: libinput, programs: programs, scratch: scratch)
        }
    }

    /// (raw, grams, contacts) of each READING, and the raw of each PEAK.
    static func readings(_ lines: [OutputLine]) -> (readings: [String], peaks: [Int]) {
        (lines.filter(\.isReading).map { "\($0.raw) \($0.grams) \($0.contacts ?? -1)" }, lines.filter(\.isPeak).map(\.raw))
    }

    static func difference(_ first: [String], _ second: [String], names: (String, String)) -> String {
        guard let index = zip(first, second).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
                ?? (first.count == second.count ? nil : min(first.count, second.count)) else { return "" }
        return "\(names.0) \(first.count) readings, \(names.1) \(second.count); first difference at #\(index)\n"
            + "\(names.0): \(summarize(first, around: index))\n\(names.1): \(summarize(second, around: index))"
    }

    static func replay(_ programs: Programs, _ files: [String], label: String) -> [OutputLine]? {
        let (ended, replay) = runToEnd("replay \(label)", [programs.forcescale, "replay", "--json", "--interval-ms", "0"] + files, timeout: Limits.command)
        guard check(ended == .exited(0), "t: forcescale replay of \(label) exits 0", "\(ending(ended, waited: Limits.command))\n\(replay?.tail() ?? "")"),
              let replay else { return nil }
        return replay.outputs
    }

    // MARK: - libinput record → forcescale replay

    static func recordedByLibinput(_ recording: LiveEqualsReplay.Recording, index: Int, libinput: String, programs: Programs, scratch: String) {
        let label = "t: libinput record of \(recording.name)"
        guard let evemuDevice = programs.evemuDevice, let evemuPlay = programs.evemuPlay else {
            check(false, "\(label): evemu-device and evemu-play are installed (scripts/setup installs evemu-tools)")
            return
        }
        guard let prepared = LiveEqualsReplay.prepare(recording, base: scratch + "/\(index)", cap: 15, label: label),
              let expected = replay(programs, prepared.replayFiles, label: "the evemu recording \(recording.name)") else { return }
        let expectedReadings = readings(expected)
        guard let (maker, node) = LiveEqualsReplay.startEvemuDevice(evemuDevice, prepared.liveDescription, label: label) else { return }
        defer { maker.stop(SIGTERM, timeout: 10) }

        let yaml = scratch + "/\(index).libinput.yml"
        guard let recorder = try? Child("libinput record", [libinput, "record", "--output-file", yaml, node]) else {
            check(false, "\(label): start libinput record")
            return
        }
        defer { recorder.stop(SIGKILL) }
        // It records what it reads from its event loop on: play only once it has opened the
        // node and gone to sleep in that loop, its header written. An open node alone is not
        // enough: what comes before the loop starts need not be recorded (a recording under
        // load once held none of the touches evemu-play made).
        let opened = waitFor("libinput record to open \(node)", within: Limits.readerStart) {
            ProcessInfoFile.descriptors(recorder.pid).contains { $0.hasSuffix("->" + node) } || !recorder.isRunning
        }
        guard expect("\(label): libinput record opens the device", after: opened, recorder.isRunning, saw: recorder.tail()) else { return }
        let listening = waitFor("libinput record to sleep in its event loop", within: Limits.readerStart) {
            ProcessInfoFile.sleepsInEventLoop(recorder.pid) || !recorder.isRunning
        }
        guard expect("\(label): libinput record waits in its event loop before the events start", after: listening, recorder.isRunning,
                     saw: recorder.tail()) else { return }

        let playLimit = prepared.playSeconds * 3 + 60
        let (played, player) = runToEnd("evemu-play", [evemuPlay, node], timeout: playLimit, input: prepared.eventsOnly)
        guard check(played == .exited(0), "\(label): evemu-play exits 0", "\(ending(played, waited: playLimit))\n\(player?.tail() ?? "")") else { return }
        // evemu-play has written every event; libinput record has them all once it sleeps in its loop again.
        let caughtUp = waitFor("libinput record to read every event (asleep in epoll_wait)", within: Limits.reaction * 2) {
            recorder.hasHandledQueuedInput
        }
        let stopped = recorder.stop(SIGINT)
        check(stopped == .exited(0), "\(label): libinput record exits 0 on SIGINT", "\(ending(stopped, waited: Limits.exit))\n\(recorder.tail())")
        let text = (try? String(contentsOfFile: yaml, encoding: .utf8)) ?? ""
        guard expect("\(label): libinput wrote a version 1 YAML recording with events", after: caughtUp,
                     text.contains("version: 1") && text.contains("- evdev:"), saw: String(text.prefix(300))) else { return }

        guard let replayed = replay(programs, [yaml], label: "libinput's YAML of \(recording.name)") else { return }
        let got = readings(replayed)
        check(!expectedReadings.readings.isEmpty && got.readings == expectedReadings.readings,
              "\(label): replay of libinput's YAML gives the evemu recording's readings (\(expectedReadings.readings.count))",
              difference(got.readings, expectedReadings.readings, names: ("yaml", "evemu")))
        check(got.peaks == expectedReadings.peaks, "\(label): and its PEAKs (\(expectedReadings.peaks.count))",
              "yaml \(got.peaks), evemu \(expectedReadings.peaks)")
    }

    // MARK: - forcescale record --format libinput → libinput replay → forcescale read

    static func replayedByLibinput(_ table: DeviceTable, libinput: String, programs: Programs, scratch: String) {
        let label = "t: libinput replay of forcescale's recording of \(table.name)"
        let file = scratch + "/\(table.product).forcescale.yml"
        guard let device = makeDevice(table, scenario: "t") else { return }
        guard let recorder = try? Child("record --format libinput", [programs.forcescale, "record", "--format", "libinput", "--device", device.node, "--output", file]),
              recorder.waitForError("forcescale: recording ", timeout: Limits.readerStart) else {
            check(false, "\(label): forcescale record --format libinput starts")
            device.destroy()
            return
        }
        // Two presses to the top (a PEAK each) and one that stops short, paced by the recorder.
        let top = table.pressure?.maximum ?? 255
        var frames = 0
        for peak in [top, top / 2, top] {
            for (step, value) in stride(from: top / 20, through: peak, by: Int(max(1, top / 8))).enumerated() {
                device.press(value, x: 1500 + value % 1000, down: step == 0)
                frames += 1
            }
            device.press(peak, x: 1507 + peak % 1000)
            device.release()
            frames += 2
            waitFor("the recorder to handle \(frames) frames", within: Limits.reaction) { recorder.hasHandledQueuedInput }
        }
        let recorded = recorder.stop(SIGINT)
        device.destroy()
        guard check(recorded == .exited(0), "\(label): forcescale record exits 0", recorder.tail()),
              let expected = replay(programs, [file], label: "forcescale's YAML of \(table.name)") else { return }
        let expectedReadings = readings(expected)

        // libinput replay makes the device, then waits for Enter: its standard input is a
        // FIFO this side holds open for writing.
        let fifo = scratch + "/\(table.product).enter"
        unlink(fifo)
        guard mkfifo(fifo, 0o600) == 0 else {
            check(false, "\(label): mkfifo \(fifo)", String(cString: strerror(errno)))
            return
        }
        let enter = open(fifo, O_RDWR | O_CLOEXEC)
        defer { close(enter) }
        guard let player = try? Child("libinput replay", [libinput, "replay", file], input: fifo) else {
            check(false, "\(label): start libinput replay")
            return
        }
        defer { player.stop(SIGKILL) }
        var node: String?
        let made = waitFor("libinput replay to print the node it made", within: Limits.readerStart) {
            node = player.output.lazy.compactMap { line -> String? in
                guard line.hasPrefix("/dev/input/event"), line.hasSuffix(": " + table.name) else { return nil }
                return String(line.prefix { $0 != ":" })
            }.first
            return node.map(fileExists) ?? !player.isRunning
        }
        guard let node, expect("\(label): libinput replay makes the device \"\(table.name)\"", after: made, fileExists(node),
                               saw: "\(player.ended.map(\.description) ?? "running")\n\(player.tail())\n\(player.errors.suffix(8).joined(separator: "\n"))") else { return }
        guard let reader = startReader(programs, "read the replayed device", ["--json", "--interval-ms", "0", "--no-rumble", "--device", node], scenario: "t") else { return }
        defer { reader.stop(SIGKILL) }
        _ = write(enter, "\n", 1)
        let readingsCount = expectedReadings.readings.count
        let played = waitFor("\(readingsCount) readings from the replayed device, the reader then asleep", within: Limits.reaction * 4) {
            reader.outputs.filter(\.isReading).count >= readingsCount && reader.hasHandledQueuedInput
        }
        let status = reader.stop(SIGINT)
        check(status == .exited(0), "\(label): read exits 0 on SIGINT", reader.tail())
        let got = readings(reader.outputs)
        expect("\(label): forcescale read gives the readings replay of the file gives (\(readingsCount))", after: played,
               readingsCount >= frames && got.readings == expectedReadings.readings,
               saw: difference(got.readings, expectedReadings.readings, names: ("live", "replay")))
        check(got.peaks == expectedReadings.peaks && expectedReadings.peaks.count == 2, "\(label): and its two PEAKs",
              "live \(got.peaks), replay \(expectedReadings.peaks)")
        player.stop(SIGINT)
        let gone = waitFor("the replayed device to go with libinput replay", within: Limits.readerStart) { !fileExists(node) }
        expect("\(label): libinput replay removes its device when stopped", after: gone, !fileExists(node), saw: player.tail())
    }
}
