import Foundation
import Glibc
import ScaleCore
import ScaleTestSupport
import Testing
@testable import ScaleRecording

/// `forcescale record --format libinput`'s YAML: what the writer writes, the reader reads
/// back to the same device and events as the evemu text of the same recording.
@Suite struct LibinputRecordWriterTests {
    static func roundTrip(_ recording: Recording) throws -> LibinputRecordingTests.Played {
        let directory = TemporaryDirectory()
        let path = directory.path + "/written.yml"
        writeFile(path, LibinputRecordWriter.text(of: recording, node: "/dev/input/event7"))
        return try LibinputRecordingTests.play(path)
    }

    @Test func writtenYAMLReadsBackToTheSameRecording() throws {
        let recording = try Recording(evemuText: LibinputRecordingTests.evemu, fileName: "pad.evemu")
        let played = try Self.roundTrip(recording)
        #expect(played.events == recording.events)
        let device = try #require(played.devices.first)
        #expect(played.devices.count == 1)
        #expect(device.name == recording.device.name)
        #expect(device.identity == recording.device.identity)
        #expect(device.axes == recording.device.axes)
        #expect(device.properties == recording.device.properties)
        for (type, codes) in recording.device.supportedCodes where !codes.isEmpty {
            #expect(device.supportedCodes[type]?.members == codes.members, "codes of type \(type.rawValue)")
        }
    }

    @Test func theWrittenTextHasLibinputsLayout() throws {
        let recording = try Recording(evemuText: LibinputRecordingTests.evemu, fileName: "pad.evemu")
        let text = LibinputRecordWriter.text(of: recording, node: "/dev/input/event7")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.contains("version: 1"))
        #expect(lines.contains("ndevices: 1"))
        #expect(lines.contains("- node: \"/dev/input/event7\""))
        #expect(lines.contains("    name: \"YAML test pad\""))
        #expect(lines.contains("    id: [17, 2, 7, 433]"))
        #expect(lines.contains("      24: [0, 255, 0, 0, 0]"))
        #expect(lines.contains("    properties: [0, 2]"))
        // libinput replay fetches each device's 'udev: properties:' and fails without them.
        #expect(lines.contains("  udev:") && lines.contains("    properties:") && lines.contains("    - ID_INPUT=1"))
        #expect(lines.filter { $0 == "  - evdev:" }.count == 3)
        #expect(lines.contains("    - [ 12,  12500,  3,  24,     41]"))
    }

    @Test func namesWithQuotesAndBackslashesSurviveTheRoundTrip() throws {
        var recording = try Recording(evemuText: LibinputRecordingTests.evemu, fileName: "pad.evemu")
        recording.device.name = #"Pad "Pro" \ 2: # not a comment"#
        let played = try Self.roundTrip(recording)
        #expect(played.devices.first?.name == recording.device.name)
        #expect(played.events == recording.events)
    }

    @Test func aFrameCutOffAtTheEndIsLeftOut() throws {
        var recording = try Recording(evemuText: LibinputRecordingTests.evemu, fileName: "pad.evemu")
        let whole = recording.events
        recording.events.append(InputEvent(time: EventTime(seconds: 13, microseconds: 0), type: .absolute, code: .absPressure, value: 9))
        let played = try Self.roundTrip(recording)
        #expect(played.events == whole)
    }

    @Test func timesAcrossSecondsAreSplitIntoSecondsAndMicroseconds() {
        let event = InputEvent(time: EventTime(seconds: 4_000, microseconds: 999_999), type: .synchronization, code: .synReport, value: 0)
        #expect(LibinputRecordWriter.line(for: event, startsFrame: true) == "  - evdev:\n    - [4000, 999999,  0,   0,      0]\n")
        #expect(LibinputRecordWriter.line(for: event, startsFrame: false) == "    - [4000, 999999,  0,   0,      0]\n")
    }
}

/// `--recording-device NAME|INDEX`: which device of several a libinput record plays.
@Suite struct RecordingDeviceSelectionTests {
    static func play(_ path: String, selecting selection: String) throws -> LibinputRecordingTests.Played {
        var played = LibinputRecordingTests.Played()
        var files = RecordingFiles(file: path)
        files.deviceSelection = selection
        try files.read(onDevice: { played.devices.append($0) }, onEvent: { played.events.append($0) })
        return played
    }

    static func twoPads(_ directory: TemporaryDirectory) throws -> String {
        let first = LibinputRecordingTests.padDevice
        let second = LibinputRecordingTests.padDevice
            .replacingOccurrences(of: "\"YAML test pad\"", with: "\"Second Pad\"")
            .replacingOccurrences(of: "  40]", with: "  90]")
        let path = directory.path + "/two.yml"
        writeFile(path, LibinputRecordingTests.record(first, second))
        return path
    }

    @Test(arguments: ["2", "second", "SECOND PAD"])
    func theNamedDeviceIsPlayed(_ selection: String) throws {
        let directory = TemporaryDirectory()
        let played = try Self.play(try Self.twoPads(directory), selecting: selection)
        #expect(played.devices.map(\.name) == ["Second Pad"])
        #expect(played.events.contains { $0.code == .absPressure && $0.value == 90 })
    }

    @Test func withoutASelectionTheFirstPressureDeviceIsPlayed() throws {
        let directory = TemporaryDirectory()
        let played = try LibinputRecordingTests.play(try Self.twoPads(directory))
        #expect(played.devices.map(\.name) == ["YAML test pad"])
        #expect(played.events.contains { $0.code == .absPressure && $0.value == 40 })
    }

    @Test(arguments: ["3", "0", "tablet"])
    func aSelectionTheFileDoesNotHoldListsItsDevices(_ selection: String) throws {
        let directory = TemporaryDirectory()
        let path = try Self.twoPads(directory)
        do {
            _ = try Self.play(path, selecting: selection)
            Issue.record("--recording-device \(selection) was accepted")
        } catch RecordingError.libinput(let error) {
            #expect(error.file == path)
            #expect(error.problem.contains("--recording-device \(selection) names no device"))
            #expect(error.problem.contains("1: 'YAML test pad' (event5), 2: 'Second Pad' (event5)"))
        }
    }

    @Test func aSelectedDeviceWithoutPressureIsHandedOverToBeRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/all.yml"
        writeFile(path, LibinputRecordingTests.record(LibinputRecordingTests.keyboardDevice, LibinputRecordingTests.padDevice))
        var devices: [DeviceDescription] = []
        struct Refused: Error {}
        var files = RecordingFiles(file: path)
        files.deviceSelection = "1"
        #expect(throws: Refused.self) {
            try files.read(onDevice: { devices.append($0); if $0.axes[.absPressure] == nil { throw Refused() } }, onEvent: { _ in })
        }
        #expect(devices.count == 1 && devices.first?.axes[.absPressure] == nil)
    }
}
