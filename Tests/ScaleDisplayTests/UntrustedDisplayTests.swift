import ScaleCore
import ScaleProtocol
import Testing
@testable import ScaleDisplay

/// What ScaleDisplay writes of names someone else chose: a person's text shows control
/// characters as escapes, JSON keeps the exact name (with JSON's escapes), a CSV cell that a
/// spreadsheet would take for a formula gets OWASP's `'`, and numbers stay numbers.
@Suite struct UntrustedDisplayTests {
    static let hostile = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
    static let shown = #"Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED"#
    /// The name as JSONLineWriter writes it: JSON's escapes, one line.
    static let inJSON = #""Pad\u001b]0;PWNED\u0007\u001b[31m RED\n<0>forcescaled: FORGED""#

    static func hasControl(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F }
    }

    @Test func theSessionTableShowsTheNameEscapedOnItsRowAndJSONKeepsItExact() throws {
        let session = LoggedSession(
            id: 4, device: LoggedDevice(id: 1, key: "k", name: Self.hostile), started: WallTime(microseconds: 0),
            ended: WallTime(microseconds: 1_000_000), peakGrams: 12, stableGrams: nil, readingCount: 3, model: .nominal)
        let table = SessionText.table([session]) { _ in "t" }
        let lines = table.split(separator: "\n")
        #expect(lines.count == 2, "the header and one row: \(table.debugDescription)")
        #expect(lines.last?.hasPrefix(" 4  \(Self.shown)  t") == true, "\(table.debugDescription)")
        #expect(!Self.hasControl(table))
        let json = SessionText.jsonLine(session)
        #expect(json.contains(#""device":"# + Self.inJSON))
        #expect(json.split(separator: "\n").count == 1)
        #expect(try JSONValue.parse(String(json.dropLast()))["device"]?.stringValue == Self.hostile)
    }

    @Test func aModelNameFromTheDaemonIsEscapedInTheGauge() {
        let gauge = Gauge(style: .plain, unit: .grams, origin: EventTime(microseconds: 0))
        let reading = ReadingMessage(
            time: EventTime(microseconds: 20_000), raw: 120, force: 0.4706, grams: 123.4, saturated: false, contacts: 1,
            stable: true, model: GramModelName(rawValue: "x\u{1B}[2Jy\n"))
        #expect(gauge.line(for: reading).hasSuffix(#"stable  x\e[2Jy\n model"#))
    }

    @Test func thePenReportEscapesTheNameForAPersonAndKeepsItForPrograms() throws {
        let measurements = [(5.0, nil), (10, 120), (20, 400), (50, 1_100), (100, 2_000), (200, 3_200)].map { grams, raw in
            WeightMeasurement(grams: grams, touch: raw.map { PenTouch(pressing: SettledPressure(mean: $0, standardDeviation: 2, count: 40)) })
        }
        let pen = try PenCharacterization(measurements: measurements, axis: 0...4095)
        let report = PenReport(pen: pen, device: Self.hostile, vendor: 0x056a, product: 0x00b9)
        #expect(report.text.hasPrefix("Pen: \(Self.shown) (pressure 0–4095)\n"), "\(report.text.prefix(120).debugDescription)")
        #expect(!Self.hasControl(report.text))
        #expect(report.json.contains(#""device":"# + Self.inJSON))
    }

    @Test func thePlotsTitleHoldsTheNameAsTextInWellFormedXML() throws {
        let text = PlotSamples.render(PlotSamples.session(device: Self.hostile, seconds: 1), [PlotSamples.reading(0, 1), PlotSamples.reading(1, 2)])
        #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F })
        let svg = try ParsedSVG(text)
        // XML cannot carry ESC or BEL even as references: they are U+FFFD; the newline is a
        // character reference, text of the title, never markup.
        #expect(svg.first("title")?.text == "Session 7 on Pad\u{FFFD}]0;PWNED\u{FFFD}\u{FFFD}[31m RED\n<0>forcescaled: FORGED")
    }

    @Test func aCSVCellAFormulaWouldBeGetsAQuoteAndNumbersStayNumbers() throws {
        let names: [Int64: String] = [1: "=HYPERLINK(\"http://x\",\"pad\")", 2: "+1", 3: "-pad", 4: "@SUM(A1)", 5: "Plain pad"]
        let readings = (1...5).map { session in
            LoggedReading(session: Int64(session), time: WallTime(microseconds: 1_000_000), raw: -3, force: 0.1, grams: -45.4, contacts: 1, flags: [])
        }
        var exporter = ReadingExporter(format: .csv, deviceNames: names)
        var text = exporter.header
        for reading in readings { exporter.append(reading, to: &text) }
        let records = try CSVReader.records(text).dropFirst()
        #expect(records.map { $0[1] } == ["'=HYPERLINK(\"http://x\",\"pad\")", "'+1", "'-pad", "'@SUM(A1)", "Plain pad"])
        // A negative number is a number: raw and grams as they are.
        #expect(records.allSatisfy { $0[3] == "-3" && $0[5] == "-45.4" })

        var peaks = PeakExporter(format: .csv, deviceNames: names).header
        PeakExporter(format: .csv, deviceNames: names).append(
            LoggedPeak(session: 1, time: WallTime(microseconds: 2_000_000), raw: -7, grams: -45.4, rumble: nil), to: &peaks)
        let peak = try #require(try CSVReader.records(peaks).last)
        #expect(peak[1] == "'=HYPERLINK(\"http://x\",\"pad\")")
        #expect(peak[3] == "-7" && peak[4] == "-45.4")

        // JSON lines keep the name as it is: a program reads no formula.
        var jsonExporter = ReadingExporter(format: .jsonl, deviceNames: names)
        var jsonl = ""
        jsonExporter.append(readings[0], to: &jsonl)
        #expect(try JSONValue.parse(String(jsonl.dropLast()))["device"]?.stringValue == names[1])
    }
}
