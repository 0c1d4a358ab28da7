import Foundation
import Glibc
import ScaleCore
import Testing
import ScaleRecording

/// `forcescale replay` of a `libinput record` file, through the built binary: the same output
/// as the evemu file of the same recording, and the evemu path's statuses for bad files.
@Suite struct LibinputReplayCLITests {
    /// The demo's recording as evemu (from `forcescale demo --write`) and as the YAML
    /// `record --format libinput` writes, side by side in a fresh directory.
    func withDemoInBothFormats(_ body: (_ evemu: String, _ yaml: String, _ directory: URL) throws -> Void) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let evemu = directory.appendingPathComponent("demo.events").path
        let written = try CLI.run(["demo", "--write", evemu])
        try #require(written.status == 0, "forcescale demo --write failed: \(written.stderr)")
        let text = try String(contentsOfFile: evemu, encoding: .utf8)
        let recording = try Recording(evemuText: text, fileName: evemu)
        let yaml = directory.appendingPathComponent("demo.yml").path
        try LibinputRecordWriter.text(of: recording, node: "/dev/input/event9").write(toFile: yaml, atomically: true, encoding: .utf8)
        try body(evemu, yaml, directory)
    }

    @Test func replayOfTheYAMLPrintsWhatReplayOfTheEvemuFilePrints() throws {
        try withDemoInBothFormats { evemu, yaml, _ in
            for options in [[], ["--json"]] {
                let fromEvemu = try CLI.run(["replay"] + options + [evemu])
                let fromYAML = try CLI.run(["replay"] + options + [yaml])
                #expect(fromEvemu.status == 0)
                #expect(fromYAML.status == 0, "\(fromYAML.stderr)")
                #expect(!fromEvemu.stdout.isEmpty)
                #expect(fromYAML.stdout == fromEvemu.stdout, "options \(options)")
            }
        }
    }

    @Test func recordingDeviceChoosesByPlaceOrNameAndRefusesWhatTheFileDoesNotHold() throws {
        try withDemoInBothFormats { evemu, yaml, _ in
            let expected = try CLI.run(["replay", evemu]).stdout
            for selection in ["1", "demo pad"] {
                let chosen = try CLI.run(["replay", "--recording-device", selection, yaml])
                #expect(chosen.status == 0, "\(chosen.stderr)")
                #expect(chosen.stdout == expected)
            }
            let missing = try CLI.run(["replay", "--recording-device", "2", yaml])
            #expect(missing.status == 65)
            #expect(missing.stderr.hasPrefix("error: \(yaml):"), "\(missing.stderr)")
            #expect(missing.stderr.contains("--recording-device 2 names no device of the record"), "\(missing.stderr)")
        }
    }

    @Test func aFrameWithoutSynReportNamesFileAndLineAndExits65() throws {
        try withDemoInBothFormats { _, yaml, directory in
            var lines = try String(contentsOfFile: yaml, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            // Drop the SYN_REPORT of the first frame: its events run into the next '- evdev:'.
            let first = try #require(lines.firstIndex { $0 == "  - evdev:" })
            let report = try #require(lines[first...].firstIndex { $0.hasSuffix(",  0,   0,      0]") })
            lines.remove(at: report)
            let bad = directory.appendingPathComponent("bad.yml").path
            try lines.joined(separator: "\n").write(toFile: bad, atomically: true, encoding: .utf8)
            let result = try CLI.run(["replay", bad])
            #expect(result.status == 65)
            // Named by file and line, as a malformed evemu file is (the device's line may
            // already be on standard output: replay streams, as it does for evemu files).
            #expect(result.stderr.hasPrefix("error: \(bad):"), "\(result.stderr)")
            #expect(result.stderr.contains("SYN_REPORT"), "\(result.stderr)")
        }
    }

    @Test func aYAMLFileWithoutAPressureDeviceGetsTheEvemuRefusal() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("mouse.yml").path
        let yaml = """
            version: 1
            ndevices: 1
            devices:
            - node: /dev/input/event3
              evdev:
                name: "A Mouse"
                id: [3, 1, 2, 1]
                codes:
                  0: [0]
                  3: [0]
                absinfo:
                  0: [0, 100, 0, 0, 0]
                properties: []
              events:
              - evdev:
                - [  1,      0,  0,   0,      0]

            """
        try yaml.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["replay", path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("'A Mouse' has no pressure axis"), "\(result.stderr)")
    }
}
