import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing
import ScaleRecording

/// `libinput record --all` files through the built programs: `replay` says which device it
/// plays of several and how to choose, `characterize` takes the pen (and refuses what is not
/// one), forcescaled serves a device per `--replay FILE:DEVICE`; and the pen settings that
/// `characterize` prints are the ones that apply.
@Suite struct RecordWithSeveralDevicesCLITests {
    static let keyboard = ExampleRecordingTests.keyboard

    /// The demo pad's recording (`demo --write`), read back.
    static func demoPad(in directory: URL) throws -> Recording {
        let path = try DaemonRecordings.demo(in: directory)
        return try Recording(evemuText: String(contentsOfFile: path, encoding: .utf8), fileName: path)
    }

    /// A record of `devices` written as `name` in `directory`.
    static func record(_ devices: [(recording: Recording, node: String)], _ name: String, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try LibinputRecordWriter.text(of: devices).write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    static let weights = CharacterizeCLITests.weights

    // MARK: - replay

    @Test func replaySkipsAPenWithoutEventsAndSaysWhichOfSeveralItPlays() throws {
        try Self.withDirectory { directory in
            let pad = try Self.demoPad(in: directory)
            let penWithoutEvents = Recording(device: DemoPen.device, events: [])
            let expected = try CLI.run(["replay", "--json", directory.appendingPathComponent("demo.events").path])
            // The issue's file: a pen without events listed before the pad.
            let penFirst = try Self.record([(Self.keyboard, "/dev/input/event3"), (penWithoutEvents, "/dev/input/event9"), (pad, "/dev/input/event5")], "pen-first.yml", in: directory)
            let played = try CLI.run(["replay", "--json", penFirst])
            #expect(played.status == 0, "\(played.stderr)")
            #expect(played.stdout == expected.stdout)
            #expect(played.stderr.isEmpty, "\(played.stderr)")

            // Two pressure devices with events: the first is played, and stderr says how to choose.
            let both = try Self.record([(pad, "/dev/input/event5"), (DemoPen.recording(), "/dev/input/event9")], "both.yml", in: directory)
            let first = try CLI.run(["replay", "--json", both])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.stdout == expected.stdout)
            #expect(first.stderr.contains("\(both):3: note: 2 devices of the record have pressure and events: 1: 'forcescale demo pad (synthetic)' (event5), 2: 'forcescale demo pen (synthetic)' (event9)"), "\(first.stderr)")
            #expect(first.stderr.contains("--recording-device event9"), "\(first.stderr)")
            for selection in ["event9", "/dev/input/event9", "2", "demo pen"] {
                let pen = try CLI.run(["replay", "--json", "--recording-device", selection, both])
                #expect(pen.status == 0 && pen.stderr.isEmpty, "\(selection): \(pen.stderr)")
                #expect(pen.stdout.contains(#""raw":"#) && pen.stdout != expected.stdout)
            }
            let none = try CLI.run(["replay", "--recording-device", "event4", both])
            #expect(none.status == 65)
            #expect(none.stderr.hasPrefix("error: \(both):3: --recording-device event4 names no device of the record"), "\(none.stderr)")
        }
    }

    @Test func aRecordWhosePressureDeviceHasNoEventsGetsLibinputAdvice() throws {
        try Self.withDirectory { directory in
            let path = try Self.record([(Self.keyboard, "/dev/input/event3"), (Recording(device: DemoPen.device, events: []), "/dev/input/event9")], "quiet.yml", in: directory)
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("device 2: 'forcescale demo pen (synthetic)' (event9) has no events in the record"), "\(result.stderr)")
            #expect(!result.stderr.contains("EVENTS-FILE"), "\(result.stderr)")
        }
    }

    @Test func recordingDeviceOnAnEvemuFileIsRefused() throws {
        try Self.withDirectory { directory in
            let evemu = try DaemonRecordings.demo(in: directory)
            let result = try CLI.run(["replay", "--recording-device", "1", evemu])
            #expect(result.status == 64, "\(result.stderr)")
            #expect(result.stderr.contains("this is an evemu recording, which holds one device: leave the option out"), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func aMisspeltFrameKeyIsWarnedOfAndNoLongerExitsZero() throws {
        try Self.withDirectory { directory in
            let pad = try Self.demoPad(in: directory)
            let path = directory.appendingPathComponent("evdv.yml").path
            let text = LibinputRecordWriter.text(of: pad).replacingOccurrences(of: "  - evdev:\n", with: "  - evdv:\n")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65, "\(result.stderr)")
            let line = try #require(text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0 == "  - evdv:" }).advanced(by: 1)
            #expect(result.stderr.contains("\(path):\(line): warning: 'evdv:' is not a key of an entry of 'events:'"), "\(result.stderr)")
            #expect(result.stderr.contains("did you mean 'evdev:'?"))
            #expect(result.stderr.contains("has no events in the record"), "\(result.stderr)")
        }
    }

    // MARK: - characterize

    @Test func characterizeRefusesADeviceThatIsNotAPen() throws {
        try Self.withDirectory { directory in
            let pad = try DaemonRecordings.demo(in: directory)
            let result = try CLI.run(["characterize", "--replay", pad, "--weights", "10,20,30"])
            #expect(result.status == 65, "\(result.stderr)")
            #expect(result.stderr.contains("'forcescale demo pad (synthetic)' is not a pen (it has no BTN_TOOL_PEN), so it is not characterized"), "\(result.stderr)")
            #expect(!result.stdout.contains("xsetwacom"))
        }
    }

    @Test func characterizeTakesThePenOfARecordWithSeveralDevices() throws {
        try Self.withDirectory { directory in
            let pad = try Self.demoPad(in: directory)
            let penOnly = try Self.record([(DemoPen.recording(), "/dev/input/event9")], "pen.yml", in: directory)
            let expected = try CLI.run(["characterize", "--replay", penOnly, "--weights", Self.weights, "--json"])
            #expect(expected.status == 0, "\(expected.stderr)")
            let all = try Self.record(
                [(Self.keyboard, "/dev/input/event3"), (pad, "/dev/input/event5"), (DemoPen.recording(), "/dev/input/event9")], "all.yml", in: directory)
            let result = try CLI.run(["characterize", "--replay", all, "--weights", Self.weights, "--json"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout == expected.stdout)

            // Two pens: the user chooses, from a list.
            var other = DemoPen.recording(seed: 7)
            other.device.name = "Second demo pen"
            let twoPens = try Self.record([(DemoPen.recording(), "/dev/input/event9"), (pad, "/dev/input/event5"), (other, "/dev/input/event12")], "pens.yml", in: directory)
            let ambiguous = try CLI.run(["characterize", "--replay", twoPens, "--weights", Self.weights])
            #expect(ambiguous.status == 65)
            #expect(ambiguous.stderr.contains("the record holds 2 pens with events: 1: 'forcescale demo pen (synthetic)' (event9), 3: 'Second demo pen' (event12)"), "\(ambiguous.stderr)")
            #expect(ambiguous.stderr.contains("--recording-device"))
            let chosen = try CLI.run(["characterize", "--replay", twoPens, "--recording-device", "event12", "--weights", Self.weights, "--json"])
            #expect(chosen.status == 0, "\(chosen.stderr)")
            #expect(chosen.stdout.contains(#""device":"Second demo pen""#))
        }
    }

    @Test(arguments: [("-1,2,3", "-1 is not a weight"), ("5,ten,20", "ten is not a weight"), ("5,,20", "An empty item is not a weight"), ("0,2,3", "0 is not a weight")])
    func aValueThatIsNotAWeightIsNamed(_ weights: String, _ message: String) throws {
        let result = try CLI.run(["characterize", "--replay", "pen.events", "--weights", weights])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("Error: \(message): --weights lists weights in grams greater than 0"), "\(result.stderr)")
    }

    @Test func withOneRegisteredWeightNoCurveIsExported() throws {
        try Self.withDirectory { directory in
            // 2.3 g and 3.92 g are below the demo pen's activation force: only 50 g registers.
            let path = try Self.record([(DemoPen.recording(weights: [2.3, 3.92, 50]), "/dev/input/event9")], "one.yml", in: directory)
            let table = try CLI.run(["characterize", "--replay", path, "--weights", "2.3,3.92,50"])
            #expect(table.status == 0, "\(table.stderr)")
            #expect(!table.stdout.contains("PressureCurve") && !table.stdout.contains("pressure-curve"), "\(table.stdout)")
            #expect(table.stdout.contains("xsetwacom, GNOME no curve: 1 weight registered, and a curve needs at least 3"), "\(table.stdout)")
            #expect(!table.stdout.contains("linear in force within"))
            let json = try JSONValue.parse(try CLI.run(["characterize", "--replay", path, "--weights", "2.3,3.92,50", "--json"]).stdout.trimmingCharacters(in: .newlines))
            let exports = try #require(json["exports"]?.objectValue)
            #expect(exports["xsetwacom"]?["curve"] == nil && exports["xsetwacom"]?["command"] == nil)
            #expect(exports["xsetwacom"]?["withheld"]?.stringValue?.contains("a curve needs at least 3") == true)
            #expect(exports["gnome"]?["command"] == nil)
        }
    }

    @Test func theSettingsNameTheXDeviceAndWhatAppliesTheLibinputRange() throws {
        try Self.withDirectory { directory in
            let path = directory.appendingPathComponent("pen.events").path
            #expect(try CLI.run(["demo", "--pen", "--write", path]).status == 0)
            let table = try CLI.run(["characterize", "--replay", path, "--weights", Self.weights])
            #expect(table.status == 0, "\(table.stderr)")
            // xf86-input-wacom's X device of the pen tool: the kernel name and " stylus".
            #expect(table.stdout.contains(#"xsetwacom set "forcescale demo pen (synthetic) stylus" PressureCurve "#), "\(table.stdout)")
            #expect(table.stdout.contains("which names the pen's X device NAME stylus: 'xsetwacom --list devices'"))
            #expect(table.stdout.contains(", set by a compositor's tablet settings where they offer one (libinput 1.26 and later"), "\(table.stdout)")
            #expect(table.stdout.contains("libinput keeps no setting of its own"), "\(table.stdout)")
            #expect(table.stdout.contains("to try it for one session: libinput debug-events --set-pressure-range="))
            #expect(!table.stdout.contains("the command that applies it"))
            let help = try CLI.run(["characterize", "--help"])
            #expect(!help.stdout.contains("each with the command that applies it"), "\(help.stdout)")
        }
    }

    // MARK: - forcescaled

    @Test func forcescaledServesADevicePerReplay() throws {
        let directory = try CLI.temporaryDirectory()
        let pad = try Self.demoPad(in: directory)
        let all = try Self.record([(pad, "/dev/input/event5"), (DemoPen.recording(), "/dev/input/event9")], "all.yml", in: directory)
        let daemon = try DaemonUnderTest(recordings: [all + ":event5", all + ":event9"], directory: directory)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        let devices = try #require(status["devices"]?.arrayValue, "\(status)")
        #expect(devices.compactMap { $0["name"]?.stringValue } == ["forcescale demo pad (synthetic)", "forcescale demo pen (synthetic)"])
    }

    @Test func forcescaledLogsWhichDeviceOfSeveralItServes() throws {
        let directory = try CLI.temporaryDirectory()
        let pad = try Self.demoPad(in: directory)
        let both = try Self.record([(pad, "/dev/input/event5"), (DemoPen.recording(), "/dev/input/event9")], "both.yml", in: directory)
        let daemon = try DaemonUnderTest(recordings: [both], directory: directory)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        #expect(status["devices"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["forcescale demo pad (synthetic)"], "\(status)")
        #expect(daemon.stderr.contains("\(both):3: note: 2 devices of the record have pressure and events"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("--recording-device event9"), "\(daemon.stderr)")
    }

    @Test func forcescaledRefusesADeviceForAnEvemuRecording() throws {
        try Self.withDirectory { directory in
            let evemu = try DaemonRecordings.demo(in: directory)
            let result = try run(CLI.binDirectory.appendingPathComponent("forcescaled").path, [
                "--replay", evemu, "--recording-device", "1", "--socket", directory.appendingPathComponent("sock").path,
                "--state-dir", directory.appendingPathComponent("state").path,
            ])
            #expect(result.status != 0)
            #expect(result.stderr.contains("this is an evemu recording, which holds one device: leave the option out"), "\(result.stderr)")
        }
    }

    /// Live, through forcescaled: a device whose kind is not a tablet is refused before any
    /// weight is asked for.
    @Test func liveCharacterizeRefusesADeviceThatIsNotAPen() throws {
        let directory = try CLI.temporaryDirectory()
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let result = try CLI.run(["characterize", "--weights", "10,20,30", "--socket", daemon.socketPath, "--timeout", "5"])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("'forcescale demo pad (synthetic)' is not a pen (forcescaled lists it as a touchpad, not a tablet: it declares no pen tool)"), "\(result.stderr)")
        #expect(result.stderr.contains("--device"), "\(result.stderr)")
        #expect(!result.stderr.contains("Put the"), "\(result.stderr)")
    }

    @Test func forcescaledRefusesRecordingDeviceWithoutReplay() throws {
        let result = try run(CLI.binDirectory.appendingPathComponent("forcescaled").path, ["--recording-device", "event9", "--socket", "/nonexistent/sock"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--recording-device goes with --replay"), "\(result.stderr)")
    }
}
