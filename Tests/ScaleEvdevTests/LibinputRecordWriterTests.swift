import Foundation
import Glibc
import ScaleCore
import ScaleTestSupport
import Testing
@testable import ScaleEvdev

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
