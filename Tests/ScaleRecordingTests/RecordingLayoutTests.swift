import Glibc
import ScaleCore
import ScaleTestSupport
import Testing
@testable import ScaleRecording

/// The ways the public evemu-devices collection lays its recordings out, each built here
/// from small files of our own: which file describes the device, and which events play.
@Suite struct RecordingLayoutTests {
    /// A description of `name` whose pressure axis ends at `maximum`, so that a test can tell
    /// which of two descriptions was read.
    static func description(_ name: String, pressureMaximum maximum: Int = 255, header: String = "# EVEMU 1.2\n") -> String {
        header + """
            # Input device name: "\(name)"
            # a comment line of the kind evemu-record writes before the description
            N: \(name)
            I: 0003 056a 00b9 0104
            P: 00 00 00 00 00 00 00 00
            B: 00 0b 00 00 00 00 00 00 00
            B: 03 03 00 00 01 00 00 00 00
            A: 00 0 4000 0 0 10
            A: 01 0 3000 0 0 10
            A: 18 0 \(maximum) 0 0 0

            """
    }

    static let events = """
        E: 1.000000 0003 0018 58
        E: 1.000000 0000 0000 0
        E: 1.010000 0003 0018 0
        E: 1.010000 0000 0000 0

        """

    struct Played {
        var devices: [DeviceDescription] = []
        var values: [Int32] = []
    }

    func play(_ files: RecordingFiles) throws -> Played {
        var played = Played()
        try files.read(onDevice: { played.devices.append($0) }, onEvent: { played.values.append($0.value) })
        return played
    }

    @Test func aFullFileNamedLikeTheEventsOfAPairIsReadWithItsOwnDescription() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Pen.desc", Self.description("Pen from the desc", pressureMaximum: 1023))
        writeFile(directory.path + "/Pen.stylus-drag.events", Self.description("Pen recorded whole", pressureMaximum: 2047) + Self.events)
        let files = RecordingFiles(file: directory.path + "/Pen.stylus-drag.events")
        #expect(files.descriptionPath == directory.path + "/Pen.stylus-drag.events")
        #expect(files.eventsPath == nil)
        let played = try play(files)
        #expect(played.devices.map(\.name) == ["Pen recorded whole"])
        #expect(played.devices.first?.axes[.absPressure]?.maximum == 2047)
        #expect(played.values == [58, 0, 0, 0])
    }

    @Test func aFullFileWithoutAHeaderAndWithCRLFStillWins() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Pen.desc", Self.description("Pen from the desc"))
        let whole = (Self.description("Pen recorded whole", header: "") + Self.events).split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
        writeFile(directory.path + "/Pen.tap.events", whole)
        let played = try play(RecordingFiles(file: directory.path + "/Pen.tap.events"))
        #expect(played.devices.map(\.name) == ["Pen recorded whole"])
        #expect(played.values == [58, 0, 0, 0])
    }

    @Test(arguments: [
        // (events file, description files beside it, the one that must be taken)
        ("Pad.events", ["Pad.desc"], "Pad.desc"),
        ("Pad.press.events", ["Pad.desc"], "Pad.desc"),
        ("Pad Finger double-tap.events", ["Pad Finger.desc"], "Pad Finger.desc"),
        ("Pad Finger double-tap.event", ["Pad Finger.desc"], "Pad Finger.desc"),
        ("Pad.tap.events", ["Pad.device"], "Pad.device"),
        ("Pad.laptop.scroll.events", ["Pad.desc", "Pad.laptop.device"], "Pad.laptop.device"),
        ("Pad.events", ["Pad.desc", "Pad.device"], "Pad.desc"),
        ("Pad 2.0.tap.events", ["Pad 2.0.desc", "Pad 2.desc"], "Pad 2.0.desc"),
        ("eGalax Inc. Touch tap.events", ["eGalax Inc. Touch.desc"], "eGalax Inc. Touch.desc"),
    ])
    func anEventsOnlyFileFindsTheDescriptionBesideIt(events: String, descriptions: [String], expected: String) throws {
        let directory = TemporaryDirectory()
        for name in descriptions { writeFile(directory.path + "/" + name, Self.description(name)) }
        writeFile(directory.path + "/" + events, "# events only, recorded with an older evemu\n" + Self.events)
        let files = RecordingFiles(file: directory.path + "/" + events)
        #expect(files.descriptionPath == directory.path + "/" + expected)
        #expect(files.eventsPath == directory.path + "/" + events)
        let played = try play(files)
        #expect(played.devices.map(\.name) == [expected])
        #expect(played.values == [58, 0, 0, 0])
    }

    /// "NAME variant" loses one word, and only when nothing dotted follows it: "Tablet Pad"
    /// is another device than "Tablet", and its buttons must not play as the pen's.
    @Test(arguments: ["Tablet Pad.buttons-left.events", "Tablet Pad Ring touch.events"])
    func aShorterNameIsAnotherDevice(events: String) throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Tablet.desc", Self.description("Tablet"))
        writeFile(directory.path + "/" + events, Self.events)
        let files = RecordingFiles(file: directory.path + "/" + events)
        #expect(files.descriptionPath == directory.path + "/" + events)
        do {
            _ = try play(files)
            Issue.record("\(events) was played with a description that is not its own")
        } catch let error as RecordingError {
            guard case .noDescription(let file) = error else { throw error }
            #expect(file == directory.path + "/" + events)
            #expect(error.description.contains("forcescale replay NAME.desc '\(file)'"))
        }
    }

    /// A description alone, of either name, is read as its device and then refused: there is
    /// nothing to replay (a reader that printed the device's header and exited 0 left the
    /// person thinking it had played).
    @Test func descriptionOnlyFilesOfEitherNameAreRefusedForHavingNoEvents() throws {
        let directory = TemporaryDirectory()
        for name in ["Pen.desc", "Pen Tool.device"] {
            let path = directory.path + "/" + name
            writeFile(path, Self.description(name))
            var devices: [String] = []
            #expect {
                try RecordingFiles(file: path).read(onDevice: { devices.append($0.name) }, onEvent: { _ in })
            } throws: { error in
                guard case .noEvents(let file)? = error as? RecordingError else { return false }
                return file == path && "\(error)".contains("nothing to replay")
            }
            #expect(devices == [name])
        }
    }

    @Test func aCompanionWithEventsOfItsOwnIsRefusedNamingItsLine() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Pad.desc", Self.description("Pad") + Self.events)
        writeFile(directory.path + "/Pad.tap.events", Self.events)
        let files = RecordingFiles(file: directory.path + "/Pad.tap.events")
        #expect(files.descriptionIsCompanion)
        do {
            _ = try play(files)
            Issue.record("a description holding events was taken as a companion")
        } catch let error as RecordingError {
            guard case .parse(let parse) = error else { throw error }
            #expect(parse.file == directory.path + "/Pad.desc")
            #expect(parse.line == 12)
            #expect(error.description.contains("replay it alone"))
        }
    }

    @Test func anErrorInTheEventsHalfNamesThatFileAndLine() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Pad Finger.desc", Self.description("Pad Finger"))
        writeFile(directory.path + "/Pad Finger tap.events", "E: 1.000000 0003 0018 58\r\n# a comment\r\nE: 1.000000 0000 zz 0\r\n")
        do {
            _ = try play(RecordingFiles(file: directory.path + "/Pad Finger tap.events"))
            Issue.record("a malformed event was read")
        } catch RecordingError.parse(let parse) {
            #expect(parse.file == directory.path + "/Pad Finger tap.events")
            #expect(parse.line == 3)
        }
    }

    @Test func anExplicitPairStillRefusesADescriptionInItsEventsHalf() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/Pen.desc", Self.description("Pen"))
        writeFile(directory.path + "/Pen.drag.events", Self.description("Pen") + Self.events)
        let files = RecordingFiles(file: directory.path + "/Pen.desc", eventsFile: directory.path + "/Pen.drag.events")
        #expect(throws: RecordingError.self) { _ = try play(files) }
    }

    @Test func whetherAFileStartsWithADescriptionIsDecidedByItsFirstLineThatCounts() {
        let directory = TemporaryDirectory()
        let cases: [(String, Bool?)] = [
            (Self.description("Pen"), true),
            ("# EVEMU 1.3\n# only comments\n\n" + Self.events, false),
            ("", false),
            ("\r\n# nothing but a comment\r\n", false),
            // Events then a description: malformed, so reading it alone says why.
            (Self.events + "N: late\n", nil),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let path = directory.path + "/case\(index).events"
            writeFile(path, text)
            #expect(RecordingFiles.startsWithDescription(path) == expected, "case \(index)")
        }
        #expect(RecordingFiles.startsWithDescription(directory.path + "/missing.events") == nil)
    }
}
