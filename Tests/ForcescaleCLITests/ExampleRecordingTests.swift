import Foundation
import ScaleCore
import Testing
import ScaleRecording

/// The recordings that the documentation's examples use, kept in docs/examples so that a
/// reader can run the examples too. Each is made by a generator of this tree (synthetic, not
/// real hardware); this suite checks that every file there is what its generator makes, and
/// `scripts/example-recordings` (this suite with `FORCESCALE_UPDATE_EXAMPLES=1`) writes them.
@Suite struct ExampleRecordingTests {
    static let directory = CLI.packageRoot.appendingPathComponent("docs/examples")

    /// The path of a recording of docs/examples.
    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static let names = ["finger.events", "finger-lifted.events", "letter.events", "pad.events", "record-all.yml"]

    /// A keyboard (no pressure) with one key pressed, as `libinput record --all` lists one.
    static let keyboard = Recording(
        device: DeviceDescription(
            name: "AT Translated Set 2 keyboard", identity: DeviceIdentity(bus: 0x11, vendor: 1, product: 1, version: 0xab41),
            properties: BitSet(), supportedCodes: [.synchronization: BitSet([0, 1]), .key: BitSet([1, 2, 30])], axes: [:]),
        events: [
            InputEvent(time: EventTime(seconds: 0, microseconds: 500_000), type: .key, code: EventCode(rawValue: 30), value: 1),
            InputEvent(time: EventTime(seconds: 0, microseconds: 500_000), type: .synchronization, code: .synReport, value: 0),
        ])

    /// A recording's text as its generator makes it, made in `scratch`.
    static func generate(_ name: String, in scratch: URL) throws -> String {
        switch name {
        case "finger.events":
            return try describe(
                AddedWeightTests.recording("finger", adding: 45, in: scratch),
                "a finger resting on a 0-255 pressure touchpad at raw 40 (60.4 g nominal) from 3 s, an object added beside it at 6 s",
                "(45 raw units, 67.9 g nominal) resting for 4 s, then both lifted: docs/weighing.md's 'weigh --tare-first'")
        case "finger-lifted.events":
            return try describe(
                AddedWeightTests.recording("finger-lifted", adding: 45, ending: .liftedEarly, in: scratch),
                "a finger resting on a 0-255 pressure touchpad at raw 40 from 3 s, an object added beside it at 6 s and lifted",
                "with the finger 0.2 s later, before it settles: docs/weighing.md's 'weigh --tare-first' that weighs nothing")
        case "letter.events":
            return try describe(
                letter(in: scratch),
                "a letter resting still on the demo's 0-255 pressure touchpad at raw 13 (19.6 g nominal), a finger's position",
                "moving by a unit; served in a loop it rests without end: docs/cli.md's daemon session")
        case "pad.events":
            let path = scratch.appendingPathComponent(name).path
            let made = try run(CLI.binDirectory.appendingPathComponent("forcescale-calibration-bench").path,
                               ["record", "power-pad-4095", path, "3", "3", "1.5", "8.5", "50", "100", "250"])
            guard made.status == 0 else { throw DaemonTestError(description: "forcescale-calibration-bench record: \(made.stderr)") }
            return try String(contentsOfFile: path, encoding: .utf8)
        case "record-all.yml":
            let letterPath = try letter(in: scratch)
            let letter = try Recording(evemuText: String(contentsOfFile: letterPath, encoding: .utf8), fileName: letterPath)
            return LibinputRecordWriter.text(
                of: [(keyboard, "/dev/input/event3"), (Recording(device: DemoPen.device, events: []), "/dev/input/event9"), (letter, "/dev/input/event5")],
                comments: [
                    "synthetic, not a recording of real hardware: made by scripts/example-recordings",
                    "three devices as 'libinput record --all' lists them: a keyboard, the demo pen out of proximity (no events)",
                    "and the demo pad with a letter resting: docs/weighing.md's 'libinput record with several devices'",
                ])
        default:
            throw DaemonTestError(description: "no generator for docs/examples/\(name)")
        }
    }

    /// The recording at `path` with its comment lines (the demo's, which it was made from)
    /// replaced by what it is and where it is made.
    static func describe(_ path: String, _ lines: String...) throws -> String {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("#") }
        let comments = ["# EVEMU 1.3", "# synthetic, not a recording of real hardware: made by scripts/example-recordings"] + lines.map { "# " + $0 }
        return (comments + kept.map(String.init)).joined(separator: "\n")
    }

    /// A letter resting on the demo pad at raw 13 from the first frame to the last, 2 s at
    /// 100 Hz, each frame moving the contact's x by a unit. Nothing lands or lifts, so
    /// served with `--loop` every pass goes on from where the last one ended, and `weigh`,
    /// `tare` and `status` give the same answers at any moment.
    static func letter(in scratch: URL) throws -> String {
        var text = try DaemonRecordings.demoDevice(in: scratch)
        let start = 1_000_000
        let first = DaemonRecordings.stamp(start)
        text += "E: \(first) 0001 014a 1\nE: \(first) 0001 0145 1\nE: \(first) 0003 0000 800\nE: \(first) 0003 0001 450\n"
        text += "E: \(first) 0003 0018 13\nE: \(first) 0000 0000 0\n"
        for frame in 1..<200 {
            let time = DaemonRecordings.stamp(start + frame * 10_000)
            text += "E: \(time) 0003 0000 \(800 + frame % 2)\nE: \(time) 0000 0000 0\n"
        }
        let path = scratch.appendingPathComponent("letter.events").path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test(arguments: names)
    func isWhatItsGeneratorMakes(_ name: String) throws {
        let scratch = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let made = try Self.generate(name, in: scratch)
        if ProcessInfo.processInfo.environment["FORCESCALE_UPDATE_EXAMPLES"] == "1" {
            try FileManager.default.createDirectory(at: Self.directory, withIntermediateDirectories: true)
            try made.write(toFile: Self.path(name), atomically: true, encoding: .utf8)
        }
        let kept = try String(contentsOfFile: Self.path(name), encoding: .utf8)
        #expect(kept == made, "docs/examples/\(name) is not what its generator makes: scripts/example-recordings makes it again")
    }

    /// Every file of docs/examples has a generator here: none was copied in from elsewhere.
    @Test func everyRecordingThereIsMadeHere() throws {
        let present = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).sorted()
        #expect(present == Self.names.sorted())
    }
}
