import Foundation
import Glibc
import ScaleCore
import ScaleTestSupport
import Testing
@testable import ScaleRecording

/// `libinput record --all` files: which device is played of several (one with events before
/// one without, the pen for characterize), what is said on the way (the choice, keys the
/// format does not have), how `--recording-device` names a device (place, node, name) and
/// where its errors point; and YAML as people write it (`---`, tabs, misspelt keys).
@Suite struct RecordWithSeveralDevicesTests {
    /// A pen tablet's pen, ABS_PRESSURE 0–2047 with BTN_TOOL_PEN, at `node`, with `events`
    /// frames (none: a pen that was out of proximity while recording).
    static func pen(name: String = "Wacom Intuos S Pen", node: String = "/dev/input/event9", pressures: [Int]) -> String {
        var text = """
            - node: \(node)
              evdev:
                name: "\(name)"
                id: [3, 1386, 884, 272]
                codes:
                  0: [0, 1, 3]
                  1: [320, 321, 330, 331, 332]
                  3: [0, 1, 24, 25]
                absinfo:
                  0: [0, 15200, 4, 0, 100]
                  1: [0, 9500, 4, 0, 100]
                  24: [0, 4095, 0, 0, 0]
                  25: [0, 63, 0, 0, 0]
                properties: [1]
              events:

            """
        for (index, pressure) in pressures.enumerated() {
            let usec = String(index * 5000)
            text += "  - evdev:\n"
            if index == 0 { text += "    - [ 20, \(usec), 1, 320, 1]\n    - [ 20, \(usec), 1, 330, 1]\n" }
            text += "    - [ 20, \(usec), 3, 24, \(pressure)]\n    - [ 20, \(usec), 0, 0, 0]\n"
        }
        return text
    }

    struct Read {
        var devices: [String] = []
        var events: [InputEvent] = []
        var notices: [String] = []
    }

    static func read(_ path: String, selecting selection: String? = nil, preference: RecordingDevicePreference = .pressure) throws -> Read {
        var read = Read()
        var files = RecordingFiles(file: path)
        files.deviceSelection = selection
        files.preference = preference
        try files.read(onDevice: { read.devices.append($0.name) }, onEvent: { read.events.append($0) }, onNotice: { read.notices.append($0) })
        return read
    }

    /// The line (from 1) of the first line of `text` that contains `part`.
    static func line(of part: String, in text: String) -> Int? {
        text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(part) }.map { $0 + 1 }
    }

    /// The line of the record's `devices:` key.
    static func devicesLine(_ text: String) -> Int? {
        text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0 == "devices:" }.map { $0 + 1 }
    }

    static func write(_ text: String, _ directory: TemporaryDirectory, _ name: String = "all.yml") -> String {
        let path = directory.path + "/" + name
        writeFile(path, text)
        return path
    }

    // MARK: - Which device

    @Test func aPenWithoutEventsListedFirstIsSkippedForThePadWithEvents() throws {
        let directory = TemporaryDirectory()
        let path = Self.write(LibinputRecordingTests.record(LibinputRecordingTests.keyboardDevice, Self.pen(pressures: []), LibinputRecordingTests.padDevice), directory)
        let read = try Self.read(path)
        #expect(read.devices == ["YAML test pad"])
        #expect(read.events.count == 10)
        // One device qualifies: nothing to say.
        #expect(read.notices.isEmpty, "\(read.notices)")
    }

    @Test func ofSeveralPressureDevicesWithEventsTheFirstIsPlayedAndTheChoiceIsSaid() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice, Self.pen(pressures: [100, 200, 0]))
        let path = Self.write(text, directory)
        let read = try Self.read(path)
        #expect(read.devices == ["YAML test pad"])
        let notice = try #require(read.notices.first)
        #expect(read.notices.count == 1)
        #expect(notice.hasPrefix("\(path):\(Self.devicesLine(text)!): note: 2 devices of the record have pressure and events"), "\(notice)")
        #expect(notice.contains("1: 'YAML test pad' (event5), 2: 'Wacom Intuos S Pen' (event9)"), "\(notice)")
        #expect(notice.contains("--recording-device event9"), "\(notice)")
    }

    @Test(arguments: ["event9", "/dev/input/event9", "2", "intuos"])
    func recordingDeviceTakesTheNodePlaceOrName(_ selection: String) throws {
        let directory = TemporaryDirectory()
        let path = Self.write(LibinputRecordingTests.record(LibinputRecordingTests.padDevice, Self.pen(pressures: [100, 200, 0])), directory)
        let read = try Self.read(path, selecting: selection)
        #expect(read.devices == ["Wacom Intuos S Pen"])
        #expect(read.events.contains { $0.code == .absPressure && $0.value == 200 })
        #expect(read.notices.isEmpty)
    }

    @Test func aSelectionThatNamesNoDevicePointsAtTheDeviceList() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice, Self.pen(pressures: [100, 0]))
        let path = Self.write(text, directory)
        #expect {
            _ = try Self.read(path, selecting: "event4")
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.line == Self.devicesLine(text) && failure.problem.contains("--recording-device event4 names no device")
                && failure.problem.contains("1: 'YAML test pad' (event5), 2: 'Wacom Intuos S Pen' (event9)")
        }
    }

    @Test func aRecordingDeviceOnAnEvemuFileIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = Self.write(LibinputRecordingTests.evemu, directory, "pad.events")
        #expect {
            _ = try Self.read(path, selecting: "1")
        } throws: { error in
            guard case .deviceSelectionWithoutRecord(let file, let selection)? = error as? RecordingError else { return false }
            return file == path && selection == "1" && "\(error)".contains("leave the option out")
        }
    }

    @Test func aDeviceWithoutEventsGetsNoEvemuAdvice() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.keyboardDevice, Self.pen(pressures: []))
        let path = Self.write(text, directory)
        do {
            _ = try Self.read(path)
            Issue.record("a pen without events was played")
        } catch let error as RecordingError {
            let message = "\(error)"
            guard case .noEventsInRecord(_, let line, _, _) = error else { Issue.record("\(message)"); return }
            // The pen's 'events:', the second of the record.
            let eventsLines = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().filter { $0.element == "  events:" }.map { $0.offset + 1 }
            #expect(eventsLines.count == 2 && line == eventsLines.last)
            #expect(message.hasPrefix("\(path):\(line): device 2: 'Wacom Intuos S Pen' (event9) has no events in the record"), "\(message)")
            #expect(!message.contains("EVENTS-FILE") && !message.contains("events file"), "\(message)")
            #expect(message.contains("libinput record"), "\(message)")
        }
    }

    // MARK: - The pen, for characterize

    @Test func thePenIsPreferredOverAPadThatComesFirst() throws {
        let directory = TemporaryDirectory()
        let path = Self.write(LibinputRecordingTests.record(LibinputRecordingTests.keyboardDevice, LibinputRecordingTests.padDevice, Self.pen(pressures: [300, 0])), directory)
        let read = try Self.read(path, preference: .pen)
        #expect(read.devices == ["Wacom Intuos S Pen"])
        #expect(read.notices.isEmpty)
    }

    @Test func severalPensWithEventsAreListedForTheUserToChoose() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(
            Self.pen(pressures: [300, 0]), LibinputRecordingTests.padDevice, Self.pen(name: "HUION Pen", node: "/dev/input/event12", pressures: [50, 0]))
        let path = Self.write(text, directory)
        #expect {
            _ = try Self.read(path, preference: .pen)
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.line == Self.devicesLine(text)
                && failure.problem.contains("2 pens with events: 1: 'Wacom Intuos S Pen' (event9), 3: 'HUION Pen' (event12)")
                && failure.problem.contains("--recording-device")
        }
        #expect(try Self.read(path, selecting: "event12", preference: .pen).devices == ["HUION Pen"])
    }

    @Test func aRecordWithoutAPenGivesItsPressureDeviceToCharacterizeToRefuse() throws {
        let directory = TemporaryDirectory()
        let path = Self.write(LibinputRecordingTests.record(LibinputRecordingTests.keyboardDevice, LibinputRecordingTests.padDevice), directory)
        let read = try Self.read(path, preference: .pen)
        #expect(read.devices == ["YAML test pad"])
        #expect(read.events.count == 10)
    }

    /// The record is read once, as it streams: a pipe, which cannot be read twice, plays.
    @Test func aRecordIsReadInOnePass() throws {
        let text = LibinputRecordingTests.record(Self.pen(pressures: []), LibinputRecordingTests.keyboardDevice, LibinputRecordingTests.padDevice, Self.pen(pressures: [100, 0]))
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let bytes = Array(text.utf8)
        #expect(bytes.count < 60_000, "the pipe holds it all")
        #expect(bytes.withUnsafeBytes { Glibc.write(ends[1], $0.baseAddress, $0.count) } == bytes.count)
        close(ends[1])
        let file = try #require(fdopen(ends[0], "r"))
        defer { fclose(file) }
        var read = Read()
        try LibinputRecordReader(path: "pipe.yml").read(
            from: file, onDevice: { read.devices.append($0.name) }, onEvent: { read.events.append($0) }, onNotice: { read.notices.append($0) })
        #expect(read.devices == ["YAML test pad"])
        #expect(read.events.count == 10)
        #expect(read.notices.count == 1 && read.notices[0].contains("2 devices of the record have pressure and events"), "\(read.notices)")
    }

    // MARK: - YAML as people write it

    @Test func aMisspeltKeyIsWarnedOfWithItsLineOnce() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice).replacingOccurrences(of: "  - evdev:\n    - [ 12,  12500", with: "  - evdv:\n    - [ 12,  12500")
        let path = Self.write(text, directory)
        let read = try Self.read(path)
        #expect(read.notices == ["\(path):\(Self.line(of: "- evdv:", in: text)!): warning: 'evdv:' is not a key of an entry of 'events:' in a libinput record (it has evdev, hid, libinput), so it is skipped; did you mean 'evdev:'?"])
        // The misspelt frame is not played.
        #expect(read.events.count == 8)
    }

    @Test func everyFrameMisspeltIsOneWarningAndNoEventsToPlay() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice).replacingOccurrences(of: "- evdev:\n    - [", with: "- evdv:\n    - [")
        let path = Self.write(text, directory)
        var notices: [String] = []
        #expect(throws: RecordingError.self) {
            try RecordingFiles(file: path).read(onDevice: { _ in }, onEvent: { _ in }, onNotice: { notices.append($0) })
        }
        #expect(notices.count == 1 && notices[0].contains("did you mean 'evdev:'?"), "\(notices)")
    }

    @Test func aMisspeltAbsinfoIsWarnedOfAndTheRefusalNamesTheLine() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice).replacingOccurrences(of: "    absinfo:", with: "    absinf:")
        let path = Self.write(text, directory)
        var notices: [String] = []
        do {
            try RecordingFiles(file: path).read(
                onDevice: { _ = try PressureSource.select(for: $0) }, onEvent: { _ in }, onNotice: { notices.append($0) })
            Issue.record("a pad without absinfo was played")
        } catch RecordingError.libinput(let failure) {
            #expect(failure.line == Self.line(of: "  evdev:", in: text))
            #expect(failure.problem.contains("'YAML test pad' has no pressure axis"), "\(failure)")
        }
        #expect(notices.contains { $0.hasPrefix("\(path):\(Self.line(of: "absinf:", in: text)!): warning: 'absinf:' is not a key of 'evdev:'") && $0.contains("did you mean 'absinfo:'?") }, "\(notices)")
    }

    @Test func anUnknownTopLevelKeyIsWarnedOfWithoutAGuess() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice).replacingFirst("devices:\n", with: "comment: made by hand\ndevices:\n")
        let path = Self.write(text, directory)
        let read = try Self.read(path)
        #expect(read.notices == ["\(path):\(Self.line(of: "comment:", in: text)!): warning: 'comment:' is not a key of the record in a libinput record (it has version, ndevices, libinput, system, devices), so it is skipped"])
        #expect(read.events.count == 10)
    }

    @Test(arguments: ["---\n", "--- # libinput record\n", "# made by hand\n---\n"])
    func aLeadingDocumentMarkerIsAccepted(_ marker: String) throws {
        let directory = TemporaryDirectory()
        let path = Self.write(marker + LibinputRecordingTests.record(LibinputRecordingTests.padDevice), directory)
        let read = try Self.read(path)
        #expect(read.devices == ["YAML test pad"])
        #expect(read.events.count == 10)
    }

    /// A file named .yml or .yaml is read as YAML whatever key comes first, and an empty one
    /// is refused by the YAML reader, with no evemu advice.
    @Test func aYAMLFileIsReadAsYAMLWhateverItsFirstKey() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice)
        let reordered = "system:\n  os: \"debian:12\"\n" + text.replacingFirst("# libinput record\n", with: "")
        for name in ["first.yml", "first.YAML"] {
            let read = try Self.read(Self.write(reordered, directory, name))
            #expect(read.devices == ["YAML test pad"] && read.events.count == 10, "\(name)")
        }
        let empty = Self.write("", directory, "empty.yml")
        #expect {
            _ = try Self.read(empty)
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.line == 1 && failure.problem.contains("libinput record") && !"\(error)".contains("evemu")
        }
    }

    @Test func aTabGetsAHintWithItsLine() throws {
        let directory = TemporaryDirectory()
        let text = LibinputRecordingTests.record(LibinputRecordingTests.padDevice).replacingFirst("    name: \"YAML test pad\"", with: "\tname: \"YAML test pad\"")
        let path = Self.write(text, directory)
        #expect {
            _ = try Self.read(path)
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.line == Self.line(of: "\tname:", in: text)
                && failure.problem.contains("YAML forbids tabs for indentation: indent with spaces")
        }
    }

    // MARK: - forcescaled's --replay FILE:DEVICE

    @Test func replayValuesSplitAtTheLastColonOnlyWhenTheWholeIsNoFile() {
        let files: Set<String> = ["all.yml", "odd:name.yml", "dir/rec.yml"]
        let exists = { files.contains($0) }
        #expect(RecordingFiles.splitReplay("all.yml", exists: exists) == ("all.yml", nil))
        #expect(RecordingFiles.splitReplay("all.yml:event9", exists: exists) == ("all.yml", "event9"))
        #expect(RecordingFiles.splitReplay("all.yml:2", exists: exists) == ("all.yml", "2"))
        #expect(RecordingFiles.splitReplay("odd:name.yml", exists: exists) == ("odd:name.yml", nil))
        #expect(RecordingFiles.splitReplay("dir/rec.yml:Wacom Intuos S Pen", exists: exists) == ("dir/rec.yml", "Wacom Intuos S Pen"))
        // Neither the whole nor the part before the colon exists: the whole is the file
        // (and its error says it does not exist).
        #expect(RecordingFiles.splitReplay("missing.yml:1", exists: exists) == ("missing.yml:1", nil))
        #expect(RecordingFiles.splitReplay("all.yml:", exists: exists) == ("all.yml:", nil))
    }
}
