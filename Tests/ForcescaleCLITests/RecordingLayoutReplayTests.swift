import Foundation
import ScaleCore
import ScaleProtocol
import Testing

/// `forcescale replay` on a directory laid out the way the public evemu-devices collection
/// lays out its recordings (pairs by dot or by space, `.events` and `.event`, `.desc` and
/// `.device`, `.evemu`, headers or none, comments, CRLF), built from small files of our
/// own: every recording with a pressure axis plays with the description that is its own,
/// every one without is refused with exit 65 and the reason.
@Suite struct RecordingLayoutReplayTests {
    static func description(_ name: String, pressureMaximum: Int?, header: String = "# EVEMU 1.3\n") -> String {
        var text = header + """
            # Input device name: "\(name)"
            # Supported events:
            #   Event type 3 (EV_ABS)
            N: \(name)
            I: 0003 056a 00cc 0110
            P: 02 00 00 00 00 00 00 00
            B: 00 0b 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 03 03 00 00 01 00 00 00 00
            A: 00 0 4000 0 0 10
            A: 01 0 3000 0 0 10

            """
        if let pressureMaximum { text += "A: 18 0 \(pressureMaximum) 0 0 0\n" }
        return text
    }

    /// A steady press at `pressure` for 0.3 s, then the release.
    static func events(pressure: Int) -> String {
        var lines = ["# recorded with an older evemu: events only"]
        var time = 0
        func frame(_ value: Int) {
            let stamp = String(format: "1000.%06d", time)
            lines.append("E: \(stamp) 0003 0018 \(value)")
            lines.append("E: \(stamp) 0000 0000 0")
            time += 10_000
        }
        for _ in 0..<30 { frame(pressure) }
        frame(0)
        return lines.joined(separator: "\n") + "\n"
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var file: String
        var status: Int32
        /// What the first line of standard output (status 0) or standard error must hold.
        var says: String
        var testDescription: String { file }
    }

    /// file name → contents, as the collection would hold them side by side.
    static let layout: [String: String] = [
        "tablets/Pen.desc": description("Pen (desc)", pressureMaximum: 1023),
        // A whole recording named like the events half of a pair: its own description wins.
        "tablets/Pen.stylus-drag.events": description("Pen (whole)", pressureMaximum: 2047) + events(pressure: 1000),
        "tablets/Pen.stylus-tap.events": events(pressure: 500),
        "tablets/Tablet Finger.desc": description("Tablet Finger", pressureMaximum: nil, header: ""),
        "tablets/Tablet Finger double-tap.event": events(pressure: 10),
        "tablets/Tablet Pen.device": description("Tablet Pen", pressureMaximum: 4095),
        "tablets/Tablet Pen hover.events": events(pressure: 4095),
        "tablets/canvas_pen.evemu": (description("Canvas Pen", pressureMaximum: 4095, header: "")
            + events(pressure: 3000)).replacingOccurrences(of: "\n", with: "\r\n"),
        "tablets/Remote Pad.events": description("Remote Pad", pressureMaximum: nil) + events(pressure: 1),
        "touchpads/Pad.desc": description("Pad", pressureMaximum: 255, header: ""),
        "touchpads/Pad.laptop.device": description("Pad (laptop)", pressureMaximum: 127, header: ""),
        "touchpads/Pad.laptop.edge-scroll.events": events(pressure: 60),
        "touchpads/Pad.events": events(pressure: 200),
        "touchpads/Mouse.device": description("Mouse", pressureMaximum: nil),
        "touchpads/Pad Ring touch.events": events(pressure: 30),
    ]

    static let cases: [Case] = [
        Case(file: "tablets/Pen.stylus-drag.events", status: 0, says: "Pen (whole): ABS_PRESSURE 0..2047"),
        Case(file: "tablets/Pen.stylus-tap.events", status: 0, says: "Pen (desc): ABS_PRESSURE 0..1023"),
        Case(file: "tablets/Pen.desc", status: 65, says: "Pen.desc: a device description without any event, so there is nothing to replay"),
        Case(file: "tablets/Tablet Finger double-tap.event", status: 65, says: "'Tablet Finger' has no pressure axis"),
        Case(file: "tablets/Tablet Pen.device", status: 65, says: "Tablet Pen.device: a device description without any event, so there is nothing to replay"),
        Case(file: "tablets/Tablet Pen hover.events", status: 0, says: "Tablet Pen: ABS_PRESSURE 0..4095"),
        Case(file: "tablets/canvas_pen.evemu", status: 0, says: "Canvas Pen: ABS_PRESSURE 0..4095"),
        Case(file: "tablets/Remote Pad.events", status: 65, says: "'Remote Pad' has no pressure axis"),
        Case(file: "touchpads/Pad.laptop.edge-scroll.events", status: 0, says: "Pad (laptop): ABS_PRESSURE 0..127"),
        Case(file: "touchpads/Pad.events", status: 0, says: "Pad: ABS_PRESSURE 0..255"),
        Case(file: "touchpads/Mouse.device", status: 65, says: "'Mouse' has no pressure axis"),
        Case(file: "touchpads/Pad Ring touch.events", status: 65, says: "Pad Ring touch.events: no device description"),
    ]

    static func makeCollection() throws -> URL {
        let root = try CLI.temporaryDirectory()
        for (name, text) in layout {
            let url = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return root
    }

    @Test func everyCaseNamesAFileOfTheLayout() {
        #expect(Set(Self.cases.map(\.file)).isSubset(of: Self.layout.keys))
    }

    @Test(arguments: cases)
    func replayTakesTheRightDescriptionOrRefuses(_ recording: Case) throws {
        let root = try Self.makeCollection()
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent(recording.file).path
        let result = try CLI.run(["replay", path])
        #expect(result.status == recording.status, "\(result.stderr)")
        if recording.status == 0 {
            #expect(result.stdout.split(separator: "\n").first.map(String.init)?.hasPrefix(recording.says) == true, "\(result.stdout.prefix(200))")
            #expect(result.stderr.isEmpty)
        } else {
            #expect(result.stderr.hasPrefix("error: "))
            #expect(result.stderr.contains(recording.says), "\(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// The events really play: a press to the top of the range in the events half comes out
    /// as readings and a PEAK, which only a description ending at that value makes of it.
    @Test func theEventsOfASpaceSeparatedPairPlayThroughThePipeline() throws {
        let root = try Self.makeCollection()
        defer { try? FileManager.default.removeItem(at: root) }
        let result = try CLI.run(["replay", "--json", root.appendingPathComponent("tablets/Tablet Pen hover.events").path])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("\"class\":\"READING\"") && $0.contains("\"raw\":4095") })
        #expect(lines.contains { $0.contains("\"class\":\"PEAK\"") })
    }

    /// forcescaled --replay finds a pair's description the same way: its readings of the
    /// press saturate, which they only do with the 0..4095 range of "Tablet Pen.device".
    @Test func theDaemonServesASpaceSeparatedPairWithTheDescriptionBesideIt() throws {
        let root = try Self.makeCollection()
        defer { try? FileManager.default.removeItem(at: root) }
        let daemon = try DaemonUnderTest(recording: root.appendingPathComponent("tablets/Tablet Pen hover.events").path)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH","enable":true}"#) == #"{"class":"WATCH","enable":true}"#)
        // The recording loops: a reading of the press comes within a pass or two.
        var pressed: JSONValue?
        for _ in 0..<200 {
            guard let reading = client.nextReading() else { break }
            if reading.number("raw") == 4095 { pressed = reading; break }
        }
        let reading = try #require(pressed, "no READING of the press; forcescaled said: \(daemon.stderr)")
        #expect(reading["device"]?.stringValue == "Tablet Pen hover.events")
        #expect(reading["saturated"] == .bool(true))
    }

    @Test func aMalformedLineInTheEventsHalfNamesThatFileAndLine() throws {
        let root = try Self.makeCollection()
        defer { try? FileManager.default.removeItem(at: root) }
        let events = root.appendingPathComponent("tablets/Tablet Pen broken.events")
        try "# events only\r\nE: 1.000000 0003 0018 5\r\nE: 1.000000 0000 0000 x\r\n".write(to: events, atomically: true, encoding: .utf8)
        let result = try CLI.run(["replay", events.path])
        #expect(result.status == 65)
        #expect(result.stderr.hasPrefix("error: \(events.path):3: expected 'E: "), "\(result.stderr)")
    }
}
