import Foundation
import Glibc
import ScaleCore
import ScaleTestSupport
import Testing
@testable import ScaleRecording

/// `libinput record` files (YAML, version 1) read where evemu files are, known by their
/// content: the same device and events as the evemu file of the same frames, the pressure
/// device of several, and every malformation named by file and line. The files are written
/// here, in the layout libinput-record.c writes (flow lists, comments after events).
@Suite struct LibinputRecordingTests {
    /// A pad: X, Y, ABS_PRESSURE 0–255, BTN_TOUCH and BTN_TOOL_FINGER, three frames.
    static let evemu = """
        # EVEMU 1.3
        N: YAML test pad
        I: 0011 0002 0007 01b1
        P: 05 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 20 04 00 00 00 00 00 00
        B: 03 03 00 00 01 00 00 00 00
        A: 00 1472 5472 0 0 42
        A: 01 1408 4448 0 0 68
        A: 18 0 255 0 0 0
        E: 12.000000 0001 014a 1
        E: 12.000000 0001 0145 1
        E: 12.000000 0003 0018 40
        E: 12.000000 0000 0000 0
        E: 12.012500 0003 0018 41
        E: 12.012500 0000 0000 0
        E: 12.025000 0003 0018 0
        E: 12.025000 0001 014a 0
        E: 12.025000 0001 0145 0
        E: 12.025000 0000 0000 0

        """

    static let padDevice = """
        - node: /dev/input/event5
          evdev:
            # Name: YAML test pad
            name: "YAML test pad"
            id: [17, 2, 7, 433]
            codes:
              0: [0, 1, 3] # EV_SYN
              1: [325, 330] # EV_KEY
              3: [0, 1, 24] # EV_ABS
            absinfo:
              0: [1472, 5472, 0, 0, 42]
              1: [1408, 4448, 0, 0, 68]
              24: [0, 255, 0, 0, 0]
            properties: [0, 2]
          hid: [5, 1, 9, 2]
          udev:
            properties:
            - ID_INPUT=1
            - ID_INPUT_TOUCHPAD=1
          quirks:
          events:
          # Current time is 10:31:28
          - evdev:
            - [ 12,      0,   1, 330,     1] # EV_KEY / BTN_TOUCH                 1
            - [ 12,      0,   1, 325,     1] # EV_KEY / BTN_TOOL_FINGER           1
            - [ 12,      0,   3,  24,    40] # EV_ABS / ABS_PRESSURE             40
            - [ 12,      0,   0,   0,     0] # ------------ SYN_REPORT (0) ---------- +0ms
          - libinput:
            - {time: 0.0, type: POINTER_MOTION, delta: [0.0, 0.0]}
          - evdev:
            - [ 12,  12500,   3,  24,    41]
            - [ 12,  12500,   0,   0,     0]
          - hid:
              time: [12, 20000]
              hidraw0: [1, 2, 3]
          - evdev:
            - [ 12,  25000,   3,  24,     0]
            - [ 12,  25000,   1, 330,     0]
            - [ 12,  25000,   1, 325,     0]
            - [ 12,  25000,   0,   0,     0]

        """

    /// A keyboard of no pressure, recorded before the pad (`libinput record --all`).
    static let keyboardDevice = """
        - node: /dev/input/event0
          evdev:
            name: "AT Translated Set 2 keyboard"
            id: [17, 1, 1, 43841]
            codes:
              0: [0, 1, 4]
              1: [1, 2, 3, 30]
            properties: []
          events:
          - evdev:
            - [ 11, 500000,   1,  30,     1]
            - [ 11, 500000,   0,   0,     0]

        """

    static func record(_ devices: String...) -> String {
        "# libinput record\nversion: 1\nndevices: \(devices.count)\nlibinput:\n  version: \"1.22.1\"\n  git: \"unknown\"\nsystem:\n  os: \"debian:12\"\n  kernel: \"6.1.0-57-amd64\"\n  dmi: \"dmi:bvnX\"\ndevices:\n"
            + devices.joined()
    }

    struct Played: Equatable {
        var devices: [DeviceDescription] = []
        var events: [InputEvent] = []
    }

    static func play(_ path: String) throws -> Played {
        var played = Played()
        try RecordingFiles(file: path).read(onDevice: { played.devices.append($0) }, onEvent: { played.events.append($0) })
        return played
    }

    @Test func aRecordReadsAsTheEvemuFileOfTheSameFrames() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/pad.evemu", Self.evemu)
        writeFile(directory.path + "/pad.yml", Self.record(Self.padDevice))
        let fromEvemu = try Self.play(directory.path + "/pad.evemu")
        let fromYAML = try Self.play(directory.path + "/pad.yml")
        #expect(fromYAML.events == fromEvemu.events)
        #expect(fromYAML.events.count == 10)
        let (yaml, evemu) = (try #require(fromYAML.devices.first), try #require(fromEvemu.devices.first))
        #expect(yaml.name == evemu.name && yaml.identity == evemu.identity && yaml.axes == evemu.axes && yaml.properties == evemu.properties)
        #expect(yaml.supports(.key, EventCode(rawValue: 330)) && evemu.supports(.key, EventCode(rawValue: 330)))
    }

    @Test func ofSeveralDevicesThePressureDeviceIsPlayed() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/all.yml", Self.record(Self.keyboardDevice, Self.padDevice))
        let played = try Self.play(directory.path + "/all.yml")
        #expect(played.devices.map(\.name) == ["YAML test pad"])
        #expect(played.events.count == 10 && played.events.first?.value == 1 && played.events.first?.code.rawValue == 330)
    }

    @Test func aRecordWithoutAPressureDeviceGivesItsFirstDeviceToBeRefused() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/keyboard.yml", Self.record(Self.keyboardDevice))
        var devices: [String] = []
        #expect(throws: (any Error).self) {
            try RecordingFiles(file: directory.path + "/keyboard.yml").read(
                onDevice: { devices.append($0.name); _ = try PressureSource.select(for: $0) }, onEvent: { _ in })
        }
        #expect(devices == ["AT Translated Set 2 keyboard"])
    }

    /// Each malformation, with the line it must name and what it must say.
    @Test(arguments: [
        ("version: 1\n", "- [ 12,  12500,   0,   0,     0]", "- [ 12,  12500,   3,   0,     0]", "a frame that does not end with SYN_REPORT"),
        ("version: 1\n", "24: [0, 255, 0, 0, 0]", "24: [0, 0, 0, 0, 0]", "the absinfo of ABS_PRESSURE has max 0 not above min 0"),
        ("version: 1\n", "- [ 12,  12500,   3,  24,    41]", "- [ 12,  1250000,   3,  24,    41]", "event time 12.1250000 is out of range"),
        ("version: 1\n", "- [ 12,  12500,   3,  24,    41]", "- [ 12,  12500,   3,  24,    4294967296]", "is out of range (type 0 to 31"),
        ("version: 1\n", "- [ 12,  12500,   3,  24,    41]", "- [ 11,  12500,   3,  24,    41]", "event time 11.012500 is earlier than the event before it (12.000000)"),
        ("version: 1\n", "- [ 12,  12500,   3,  24,    41]", "- [ 12,  12500,   3,  24]", "an event needs 5 whole numbers"),
        ("version: 1\n", "id: [17, 2, 7, 433]", "id: [17, 2, 7]", "'id:' needs 4 numbers"),
        ("version: 1\n", "version: 1\n", "version: 2\n", "libinput record version 2 is not supported"),
        ("version: 1\n", "    name: \"YAML test pad\"", "    name: \"YAML test pad", "not valid YAML"),
    ] as [(String, String, String, String)])
    func malformationsAreNamedByFileAndLine(_ unused: String, _ original: String, _ replacement: String, _ message: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/bad.yml"
        let good = Self.record(Self.padDevice)
        let bad = good.replacingFirst(original, with: replacement)
        #expect(bad != good, "the case's text \(original) is not in the record")
        writeFile(path, bad)
        let expectedLine = bad.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(replacement.split(separator: "\n")[0]) }.map { $0 + 1 }
        #expect {
            _ = try Self.play(path)
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.file == path && failure.problem.contains(message) && "\(error)".hasPrefix("\(path):\(failure.line): ")
                && (message == "not valid YAML" || message.hasPrefix("a frame") || failure.line == expectedLine)
        }
    }

    @Test func aTruncatedRecordIsRefusedWithItsLastLine() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/cut.yml"
        let good = Self.record(Self.padDevice)
        // Cut inside the last frame's list: the YAML is still well formed, the frame is not.
        writeFile(path, String(good.prefix(upTo: good.range(of: "- [ 12,  25000,   1, 325,     0]")!.lowerBound)))
        #expect {
            _ = try Self.play(path)
        } throws: { error in
            guard case .libinput(let failure)? = error as? RecordingError else { return false }
            return failure.problem.contains("SYN_REPORT")
        }
    }

    /// Mutated records (bytes flipped, lines dropped, repeated or cut short) end in a
    /// recording or a typed error, never a crash or a hang.
    @Test func mutatedRecordsAreReadOrRefusedCleanly() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/mutated.yml"
        let good = Array(Self.record(Self.keyboardDevice, Self.padDevice).utf8)
        var state: UInt64 = 0x6c69_6269_6e70_7574
        func random(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(max(1, bound)))
        }
        var outcomes: [String: Int] = [:]
        for _ in 0..<1500 {
            var bytes = good
            for _ in 0...random(3) {
                let position = random(bytes.count)
                switch random(4) {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: random(256))
                case 1: bytes.removeSubrange(position..<min(bytes.count, position + random(40) + 1))
                case 2: bytes.insert(Array("[{-: ,#\n".utf8)[random(8)], at: position)
                default: bytes = Array(bytes.prefix(position))
                }
                if bytes.isEmpty { break }
            }
            writeFile(path, String(decoding: bytes, as: UTF8.self))
            do {
                _ = try Self.play(path)
                outcomes["read", default: 0] += 1
            } catch let error as RecordingError {
                outcomes["refused", default: 0] += 1
                #expect(!"\(error)".isEmpty)
            } catch {
                Issue.record("an error of another type: \(error)")
            }
        }
        #expect(outcomes["refused", default: 0] > 0)
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
