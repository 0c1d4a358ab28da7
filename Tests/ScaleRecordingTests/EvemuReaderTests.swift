import Testing
import ScaleCore
@testable import ScaleRecording

@Suite struct EvemuReaderTests {
    static let version12 = """
        # EVEMU 1.2
        # Input device name: "Pad"
        N: Pad # with a hash
        I: 0011 0002 0007 01b1
        P: 05 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 00 00 00 00 00 00 00 00
        B: 01 20 e5 00 00 00 00 00 00
        A: 18 0 255 0 0 40
        A: 35 1472 5472 8 0
        E: 1330050188.628846 0003 0018 58
        E: 1330050188.628852 0001 014a 1 # a trailing comment
        # a comment between events
        E: 1330050188.628857 0000 0000 0
        """

    @Test func readsDescriptionAndEvents() throws {
        let recording = try Recording(evemuText: Self.version12, fileName: "pad.events")
        let device = recording.device
        #expect(device.name == "Pad # with a hash")
        #expect(device.identity == DeviceIdentity(bus: 0x11, vendor: 2, product: 7, version: 0x1b1))
        #expect(device.has(.pointer) && device.has(.buttonPad) && !device.has(.direct))
        // 0x20 in byte 40 of the key bits is bit 325 (BTN_TOOL_FINGER); 0xe5 in byte 41 holds BTN_TOUCH (330).
        #expect(device.supports(.key, .btnTouch))
        #expect(device.supports(.key, .btnToolFinger))
        #expect(!device.supports(.key, .btnToolPen))
        #expect(device.axes[.absPressure] == AxisRange(minimum: 0, maximum: 255, resolution: 40))
        #expect(device.axes[.absMTPositionX] == AxisRange(minimum: 1472, maximum: 5472, fuzz: 8, resolution: 0))
        #expect(recording.events == [
            InputEvent(time: EventTime(seconds: 1330050188, microseconds: 628846), type: .absolute, code: .absPressure, value: 58),
            InputEvent(time: EventTime(seconds: 1330050188, microseconds: 628852), type: .key, code: .btnTouch, value: 1),
            InputEvent(time: EventTime(seconds: 1330050188, microseconds: 628857), type: .synchronization, code: .synReport, value: 0),
        ])
    }

    @Test func readsAcrossChunkBoundariesAndWithoutFinalNewline() throws {
        let text = Self.version12
        let whole = try Recording(evemuText: text, fileName: "x")
        // Feed one byte at a time: every line is split across chunks.
        var reader = EvemuReader(fileName: "x")
        var events: [InputEvent] = []
        for byte in Array(text.utf8) {
            try [byte].withUnsafeBytes { try reader.feed($0) { events.append($0) } }
        }
        try reader.finish { events.append($0) }
        #expect(events == whole.events)
        #expect(reader.device == whole.device)
        #expect(reader.formatVersion == "1.2")
    }

    @Test func acceptsCRLFNegativeValuesAndShortFractions() throws {
        let text = "N: x\r\nA: 18 -5 5 0 0\r\nE: 1.5 0003 0018 -3\r\n"
        let recording = try Recording(evemuText: text, fileName: "x")
        #expect(recording.events == [InputEvent(time: EventTime(microseconds: 1_500_000), type: .absolute, code: .absPressure, value: -3)])
        #expect(recording.device.axes[.absPressure]?.minimum == -5)
    }

    /// The fixed-width fast path must read evemu's own layout exactly as the general parser
    /// does, and step aside (nil) for anything else.
    @Test(arguments: [
        ("E: 1369413757.964832 0003 0000 23122\t# EV_ABS / ABS_X  23122", true),
        ("E: 0.000001 0001 014a 1", true),
        ("E: 1.500000 0003 0018 -2147483648", true),
        ("E: 1.500000 0003 0018 2147483647 # max", true),
        ("E: 12.123456 00A3 0B1c 0395", true),
        ("E: 1.5 0003 0018 7", false),                 // short fraction: general parser
        ("E:  1.500000 0003 0018 7", false),           // two spaces
        ("E: 1.500000 3 18 7", false),                 // unpadded hex
        ("E: 1.500000 0003 0018 2147483648", false),   // out of range: rejected by both
        ("E: 1.500000 0003 0018 7x", false),
    ] as [(String, Bool)])
    func canonicalFastPathAgreesWithTheGeneralParser(line: String, isCanonical: Bool) {
        Array(line.utf8).withUnsafeBufferPointer { bytes in
            let fast = EvemuReader.parseCanonicalEvent(bytes)
            let general = EvemuReader.parseEvent(bytes)
            #expect((fast != nil) == isCanonical)
            if let fast { #expect(fast == general) }
        }
    }

    @Test func writerOutputReadsBackTheSame() throws {
        let original = try Recording(evemuText: Self.version12, fileName: "x")
        let text = EvemuWriter.text(of: original)
        #expect(text.hasPrefix("# EVEMU 1.3\n"))
        let again = try Recording(evemuText: text, fileName: "y")
        #expect(again.device == original.device)
        #expect(again.events == original.events)
    }

    /// A device that names itself with a newline and an event line cannot put that event
    /// into a recording of it: the name is written on its one `N:` line, escaped.
    @Test func aNameCannotForgeLinesOfTheRecording() throws {
        let original = try Recording(evemuText: Self.version12, fileName: "x")
        var device = original.device
        device.name = "Pad\nE: 0.000001 0001 014a 1\nA: 18 0 1 0 0 0"
        let text = EvemuWriter.text(of: Recording(device: device, events: original.events, comments: original.comments))
        #expect(text.split(separator: "\n").filter { $0.hasPrefix("N: ") } == [#"N: Pad\nE: 0.000001 0001 014a 1\nA: 18 0 1 0 0 0"#])
        let again = try Recording(evemuText: text, fileName: "y")
        #expect(again.events == original.events)
        #expect(again.device.axes == original.device.axes)
    }

    /// One case per kind of malformation, with the line it must name.
    @Test(arguments: [
        ("N: x\nE: 1.000000 0003 0018\n", 2, "expected 'E: <seconds>.<microseconds>"),
        ("N: x\nE: 1.000000 0003 0018 12 34\n", 2, "expected 'E:"),
        ("N: x\nE: 1,000000 0003 0018 1\n", 2, "expected 'E:"),
        ("N: x\nE: 1.0000001 0003 0018 1\n", 2, "expected 'E:"),
        ("N: x\nE: 1.000000 0003 zz18 1\n", 2, "expected 'E:"),
        ("N: x\nE: 1.000000 0003 0018 99999999999\n", 2, "expected 'E:"),
        ("N: x\nE: 1.000000 00003 0018 1\n", 2, "expected 'E:"),
        ("# EVEMU 2.0\nN: x\n", 1, "unsupported evemu format version 2.0"),
        ("N: x\nI: 0011 0002 0007\n", 2, "'I:' needs 4 hex fields"),
        ("N: x\nI: 0011 0002 0007 fffff\n", 2, "'I:' field 'fffff' is not a 16-bit hex number"),
        ("N: x\nP: 05 0g\n", 2, "property byte '0g' is not a two-digit hex number"),
        ("N: x\nB: 20 00\n", 2, "'B:' event type 0x20 is beyond EV_MAX"),
        ("N: x\nB: 01 100\n", 2, "bitmask byte '100'"),
        ("N: x\nB:\n", 2, "'B:' needs an event type"),
        ("N: x\nA: 18 0 255 0\n", 2, "'A:' needs 5 or 6 fields"),
        ("N: x\nA: 18 0 255 0 0 0 0\n", 2, "'A:' needs 5 or 6 fields"),
        ("N: x\nA: 40 0 255 0 0\n", 2, "'A:' axis code '40' is not a hex ABS_ code"),
        ("N: x\nA: 18 0 2x5 0 0\n", 2, "'A:' field '2x5' of axis ABS_PRESSURE is not a 32-bit integer"),
        ("N: x\nX: what\n", 2, "unknown line kind 'X:'"),
        ("N: x\ngarbage\n", 2, "not an evemu line: 'garbage'"),
        ("N: x\nE: 1.000000 0003 0018 1\nA: 18 0 255 0 0\n", 3, "after the first event"),
        // Times that go backwards (issue 41: looped, they made forcescaled trap or spin).
        ("N: x\nE: 100.000000 0003 0018 1\nE: 100.000000 0000 0000 0\nE: 12.900000 0003 0018 2\n", 4,
         "event time 12.900000 is earlier than the event before it (100.000000)"),
        ("N: x\nE: 4294967296.000000 0003 0018 1\nE: 1.000000 0003 0018 2\n", 3, "is earlier than the event before it"),
    ] as [(String, Int, String)])
    func malformedLineIsNamed(text: String, line: Int, message: String) {
        #expect {
            _ = try Recording(evemuText: text, fileName: "bad.events")
        } throws: { error in
            guard let error = error as? EvemuParseError else { return false }
            return error.file == "bad.events" && error.line == line && error.problem.contains(message)
                && error.description.hasPrefix("bad.events:\(line): ")
        }
    }

    @Test func eventsFileOfAPairRejectsDescriptionLines() {
        var reader = EvemuReader(fileName: "pad.events", acceptsDescription: false)
        let bytes = Array("E: 1.000000 0003 0018 1\nN: sneaky\n".utf8)
        #expect(throws: EvemuParseError(file: "pad.events", line: 2, problem: "a device description line in the events file of a split pair; give the .desc file first, or this file alone")) {
            try bytes.withUnsafeBytes { try reader.feed($0) { _ in } }
        }
    }

    @Test func aDescriptionFoundBesideEventsRejectsEventsOfItsOwn() throws {
        var reader = EvemuReader(fileName: "pad.desc", acceptsEvents: false)
        let bytes = Array("N: pad\r\nA: 18 0 255 0 0\r\n# fine so far\r\nE: 1.000000 0003 0018 1\r\n".utf8)
        do {
            try bytes.withUnsafeBytes { try reader.feed($0) { _ in } }
            Issue.record("an event was accepted")
        } catch let error as EvemuParseError {
            #expect(error.file == "pad.desc" && error.line == 4)
            #expect(error.problem.hasPrefix("an event in a file taken as the description beside an events file"))
        }
        #expect(reader.device?.name == "pad")
    }

    @Test func eventsWithoutDescriptionHaveNoDevice() throws {
        #expect(throws: EvemuParseError.self) { _ = try Recording(evemuText: "E: 1.000000 0000 0000 0\n", fileName: "e") }
    }
}
