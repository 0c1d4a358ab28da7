import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
@testable import ScaleCore
import Testing
@testable import ScaleDisplay

/// An SVG read back with Foundation's XML parser (libxml2): a parse error fails the test,
/// and the elements are there to look at.
final class ParsedSVG: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        var text = ""
        /// The value of a number attribute.
        func number(_ name: String) -> Double? { attributes[name].flatMap(Double.init) }
    }

    private(set) var elements: [Element] = []
    private var open: [Int] = []
    private(set) var error: Error?

    init(_ svg: String) throws {
        super.init()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = self
        if !parser.parse() { throw parser.parserError ?? error ?? CocoaError(.coderReadCorrupt) }
    }

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        open.append(elements.count)
        elements.append(Element(name: name, attributes: attributes))
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let index = open.last { elements[index].text += string }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) { error = parseError }

    func all(_ cssClass: String) -> [Element] { elements.filter { $0.attributes["class"] == cssClass } }
    func first(_ cssClass: String) -> Element? { all(cssClass).first }

    /// The polyline's points as (x, y).
    var linePoints: [(x: Double, y: Double)] {
        guard let points = first("grams")?.attributes["points"] else { return [] }
        return points.split(separator: " ").map { pair in
            let xy = pair.split(separator: ",").map { Double($0)! }
            return (xy[0], xy[1])
        }
    }

    /// The (x, y) a `translate(x,y)` transform moves to.
    static func translation(_ element: Element) -> (x: Double, y: Double)? {
        guard let transform = element.attributes["transform"], transform.hasPrefix("translate("), transform.hasSuffix(")") else { return nil }
        let numbers = transform.dropFirst("translate(".count).dropLast().split(separator: ",").compactMap { Double($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    /// Maps a value to its pixel position the way a reader of the picture does: by the tick
    /// labels and where they stand (x of the time ticks, y of the gram ticks). Independent of
    /// the renderer's own arithmetic.
    func scale(ticks cssClass: String, attribute: String, offset: Double = 0) throws -> (Double) -> Double {
        let ticks = try all(cssClass).map { element in
            (value: try #require(Double(element.text)), position: try #require(element.number(attribute)) - offset)
        }
        let first = try #require(ticks.first), last = try #require(ticks.last)
        #expect(ticks.count >= 3, "an axis should have at least 3 ticks, has \(ticks.count)")
        return { value in first.position + (value - first.value) / (last.value - first.value) * (last.position - first.position) }
    }
}

/// Builds sessions for the plot tests.
enum PlotSamples {
    static let start = WallTime(microseconds: 1_764_500_000_000_000)

    static func session(id: Int64 = 7, device: String = "Test Pad", seconds: Double?, peakGrams: Double = 0, stable: Double? = nil, readings: Int = 0) -> LoggedSession {
        LoggedSession(
            id: id, device: LoggedDevice(id: 1, key: "0003-0000-0000-test-pad", name: device), started: start,
            ended: seconds.map { at($0) }, peakGrams: peakGrams, stableGrams: stable, readingCount: readings, model: .nominal)
    }

    static func at(_ seconds: Double) -> WallTime {
        WallTime(microseconds: start.microseconds + Int64((seconds * 1e6).rounded()))
    }

    static func reading(_ seconds: Double, _ grams: Double, session: Int64 = 7) -> LoggedReading {
        LoggedReading(session: session, time: at(seconds), raw: Int32(grams), force: grams / 385, grams: grams, contacts: 1, flags: [])
    }

    /// A press: up to 180 g in a second, a wobble, settling, a spike to 385 g at 2.5 s.
    static func press() -> (session: LoggedSession, readings: [LoggedReading], peaks: [LoggedPeak]) {
        var readings: [LoggedReading] = []
        for step in 0...400 {
            let t = Double(step) * 0.01
            var grams = t < 1 ? 180 * t : 180 + 6 * (1 - Swift.min(1, (t - 1))) * ((step % 10 < 5) ? 1 : -1)
            if step == 250 { grams = 385 }
            readings.append(reading(t, grams))
        }
        let peaks = [LoggedPeak(session: 7, time: at(2.5), raw: 255, grams: 385)]
        return (session(seconds: 4, peakGrams: 385, stable: 180, readings: readings.count), readings, peaks)
    }

    static func render(_ session: LoggedSession, _ readings: [LoggedReading], peaks: [LoggedPeak] = [], started: String = "2025-11-30 11:53:20 +0100") -> String {
        var plot = ForcePlot(session: session, startedText: started, peaks: peaks)
        for reading in readings { plot.add(reading) }
        return plot.render()
    }
}

@Suite struct ForcePlotTests {
    @Test func aPressParsesAsSVGWithEveryReadingAtItsPlace() throws {
        let (session, readings, peaks) = PlotSamples.press()
        let svg = try ParsedSVG(PlotSamples.render(session, readings, peaks: peaks))
        #expect(svg.elements.first?.name == "svg")
        #expect(svg.elements.first?.attributes["width"] == "800" && svg.elements.first?.attributes["height"] == "450")
        // 401 readings over 700 pixel columns: none shares a column, so all are drawn.
        let points = svg.linePoints
        #expect(points.count == readings.count)
        let x = try svg.scale(ticks: "x-tick", attribute: "x")
        // Gram labels sit 4 px below their grid line, to centre them on it.
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        for (point, reading) in zip(points, readings) {
            let seconds = Double(reading.time.microseconds - session.started.microseconds) / 1e6
            #expect((point.x - x(seconds)).magnitude <= 0.11, "reading at \(seconds) s drawn at x \(point.x), expected \(x(seconds))")
            #expect((point.y - y(reading.grams)).magnitude <= 0.11, "reading of \(reading.grams) g drawn at y \(point.y), expected \(y(reading.grams))")
        }
    }

    @Test func axesAreLabelledWithUnitsAndNiceTicks() throws {
        let (session, readings, peaks) = PlotSamples.press()
        let svg = try ParsedSVG(PlotSamples.render(session, readings, peaks: peaks))
        #expect(svg.first("x-label")?.text == "time since the session started (s)")
        #expect(svg.first("y-label")?.text == "weight (g)")
        #expect(svg.all("x-tick").map(\.text) == ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0"])
        #expect(svg.all("y-tick").map(\.text) == ["0", "100", "200", "300", "400", "500"])
    }

    @Test func titleNamesDeviceSessionAndStart() throws {
        let (session, readings, peaks) = PlotSamples.press()
        let svg = try ParsedSVG(PlotSamples.render(session, readings, peaks: peaks))
        #expect(svg.first("title")?.text == "Session 7 on Test Pad")
        let subtitle = try #require(svg.first("subtitle")?.text)
        #expect(subtitle == "started 2025-11-30 11:53:20 +0100 · 4.0 s · 401 readings · nominal model")
    }

    @Test func everyPeakIsMarkedAtItsPlaceWithItsGrams() throws {
        let (session, readings, _) = PlotSamples.press()
        let peaks = [
            LoggedPeak(session: 7, time: PlotSamples.at(1.0), raw: 200, grams: 180),
            LoggedPeak(session: 7, time: PlotSamples.at(2.5), raw: 255, grams: 385),
            LoggedPeak(session: 7, time: PlotSamples.at(3.5), raw: 250, grams: 300.25),
        ]
        let svg = try ParsedSVG(PlotSamples.render(session, readings, peaks: peaks))
        let x = try svg.scale(ticks: "x-tick", attribute: "x")
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        let markers = svg.all("peak")
        #expect(markers.count == 3)
        for (marker, peak) in zip(markers, peaks) {
            let at = try #require(ParsedSVG.translation(marker))
            let seconds = Double(peak.time.microseconds - session.started.microseconds) / 1e6
            #expect((at.x - x(seconds)).magnitude <= 0.11 && (at.y - y(peak.grams)).magnitude <= 0.11)
        }
        #expect(svg.all("peak-label").map(\.text) == ["180.0 g", "385.0 g", "300.3 g"])
        #expect(svg.elements.contains { $0.text.contains("PEAK (threshold reached)") }, "the legend says what the triangles are")
    }

    @Test func theStableWeightIsADashedLineWithItsLabel() throws {
        let (session, readings, peaks) = PlotSamples.press()
        let svg = try ParsedSVG(PlotSamples.render(session, readings, peaks: peaks))
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        let line = try #require(svg.first("stable"))
        #expect(line.attributes["stroke-dasharray"] != nil)
        let y1 = try #require(line.number("y1"))
        #expect((y1 - y(180)).magnitude <= 0.11 && line.number("y2") == y1)
        #expect(svg.first("stable-label")?.text == "stable 180.0 g")
    }

    @Test func theHeaviestReadingIsMarkedWhenNoPeakSitsOnIt() throws {
        let readings = [PlotSamples.reading(0, 10), PlotSamples.reading(1, 150.04), PlotSamples.reading(2, 20)]
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 2, peakGrams: 150.04, readings: 3), readings))
        let x = try svg.scale(ticks: "x-tick", attribute: "x")
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        let circle = try #require(svg.first("maximum"))
        let (cx, cy) = (try #require(circle.number("cx")), try #require(circle.number("cy")))
        #expect((cx - x(1)).magnitude <= 0.11 && (cy - y(150.04)).magnitude <= 0.11)
        #expect(svg.first("maximum-label")?.text == "max 150.0 g")
        #expect(svg.all("peak").isEmpty && svg.first("stable") == nil, "no PEAK, no stable weight: nothing drawn for them")
        // With a PEAK on the same reading the circle would only hide the triangle.
        let peak = LoggedPeak(session: 7, time: PlotSamples.at(1), raw: 150, grams: 150.04)
        let withPeak = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 2, peakGrams: 150.04, readings: 3), readings, peaks: [peak]))
        #expect(withPeak.first("maximum") == nil && withPeak.all("peak").count == 1)
    }

    @Test func deviceNamesAreEscaped() throws {
        let name = #"Tom & Jerry's <pad> "v2""#
        let text = PlotSamples.render(PlotSamples.session(device: name, seconds: 1), [PlotSamples.reading(0, 1), PlotSamples.reading(1, 2)],
                                      started: "<now> & then")
        #expect(text.contains("Tom &amp; Jerry&apos;s &lt;pad&gt; &quot;v2&quot;"))
        let svg = try ParsedSVG(text)
        #expect(svg.first("title")?.text == "Session 7 on \(name)")
        #expect(svg.first("subtitle")?.text.hasPrefix("started <now> & then · ") == true)
    }

    @Test func controlCharactersCannotBreakTheXML() throws {
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(device: "bad\u{1}name\u{7}", seconds: 1), [PlotSamples.reading(0, 1)]))
        #expect(svg.first("title")?.text == "Session 7 on bad\u{FFFD}name\u{FFFD}")
    }

    @Test func anEmptySessionIsAValidPlotWithANote() throws {
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: nil), []))
        #expect(svg.first("grams") == nil)
        #expect(svg.first("note")?.text == "No readings were logged in this session.")
        #expect(svg.all("x-tick").count >= 3 && svg.all("y-tick").count >= 3, "the axes are drawn all the same")
        #expect(svg.first("subtitle")?.text.contains("still open") == true)
    }

    @Test func aSingleReadingIsDrawnAsADot() throws {
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 0, peakGrams: 42, readings: 1), [PlotSamples.reading(0, 42)]))
        #expect(svg.linePoints.count == 1)
        let x = try svg.scale(ticks: "x-tick", attribute: "x")
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        let dot = try #require(svg.first("grams-dot"))
        let (cx, cy) = (try #require(dot.number("cx")), try #require(dot.number("cy")))
        #expect((cx - x(0)).magnitude <= 0.11 && (cy - y(42)).magnitude <= 0.11)
        #expect(svg.first("note")?.text == "One reading only: 42.0 g at 0.000 s.")
    }

    @Test func aLongSessionIsDecimatedButKeepsItsPeak() throws {
        // 200 000 readings over 200 s of noise between 50 and 60 g, one spike of 333 g.
        var plot = ForcePlot(session: PlotSamples.session(seconds: 200, peakGrams: 333, readings: 200_000), startedText: "then", peaks: [])
        var generator = SplitMix64(seed: 6)
        for step in 0..<200_000 {
            let grams = step == 123_457 ? 333 : 50 + Double(generator.next() % 1000) / 100
            plot.add(PlotSamples.reading(Double(step) / 1000, grams))
        }
        let svg = try ParsedSVG(plot.render())
        let points = svg.linePoints
        #expect(points.count <= 2 * 700 && points.count >= 700, "two points per pixel column at most, got \(points.count)")
        let y = try svg.scale(ticks: "y-tick", attribute: "y", offset: 4)
        let top = try #require(points.map(\.y).min())
        #expect((top - y(333)).magnitude <= 0.11, "the spike survives decimation")
        #expect(zip(points, points.dropFirst()).allSatisfy { $0.x <= $1.x }, "points stay in time order")
        #expect(svg.first("maximum-label")?.text == "max 333.0 g")
    }

    @Test func crowdedPeaksKeepEveryMarkerAndSaySoWhenLabelsAreLeftOut() throws {
        let readings = (0...100).map { PlotSamples.reading(Double($0) / 10, 100) }
        let peaks = (0..<20).map { LoggedPeak(session: 7, time: PlotSamples.at(5 + Double($0) * 0.01), raw: 255, grams: 385) }
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 10, peakGrams: 385, readings: 101), readings, peaks: peaks))
        #expect(svg.all("peak").count == 20)
        let labelled = svg.all("peak-label").count
        #expect(labelled >= 1 && labelled < 20)
        #expect(svg.all("note").contains { $0.text == "\(20 - labelled) PEAK labels left out where PEAKs crowd." })
    }

    @Test func aReadingStampedBeforeTheStartStaysInsideThePlot() throws {
        // The wall clock stepped back during the session: its first reading is "before" it.
        let readings = [PlotSamples.reading(-0.5, 10), PlotSamples.reading(0.5, 20), PlotSamples.reading(1, 30)]
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 1, peakGrams: 30, readings: 3), readings))
        let points = svg.linePoints
        #expect(points.count == 3)
        #expect(points.allSatisfy { $0.x >= ForcePlot.Layout.standard.left && $0.x <= ForcePlot.Layout.standard.right })
        #expect(svg.all("x-tick").first?.text.hasPrefix("-") == true, "the time axis reaches back to it")
    }

    /// A session still open, given its readings' earliest and latest times, is decimated as
    /// the readings come, and the picture is the one drawn from all of them held until
    /// rendering: byte for byte, with a reading stamped before the start and an infinite
    /// one (left out) among 50,000.
    @Test func anOpenSessionDecimatedAsItComesIsThePictureOfAllItsReadings() throws {
        var readings = (0..<50_000).map { PlotSamples.reading(Double($0) / 1000, 40 + Double(($0 * 7919) % 1000) / 10) }
        readings[10_000] = PlotSamples.reading(-2, 12)
        readings[20_000].grams = .infinity
        let session = PlotSamples.session(seconds: nil, peakGrams: 140, readings: readings.count)
        let finite = readings.filter { $0.grams.isFinite }
        let times = finite.map(\.time).min()!...finite.map(\.time).max()!
        var streamed = ForcePlot(session: session, startedText: "then", peaks: [], readingTimes: times)
        for reading in readings { streamed.add(reading) }
        let held = PlotSamples.render(session, readings, started: "then")
        #expect(streamed.render() == held)
        #expect(try ParsedSVG(held).linePoints.count <= 2 * 700)
    }

    @Test func gramsBelowZeroGetAZeroLine() throws {
        let readings = [PlotSamples.reading(0, -20), PlotSamples.reading(1, 40)]
        let svg = try ParsedSVG(PlotSamples.render(PlotSamples.session(seconds: 1, peakGrams: 40, readings: 2), readings))
        let labels = svg.all("y-tick").map(\.text)
        #expect(labels.first.flatMap(Double.init).map { $0 <= -20 } == true && labels.contains("0"))
    }

    @Test func rsvgConvertRastersThePlot() throws {
        let converter = "/usr/bin/rsvg-convert"
        #expect(FileManager.default.isExecutableFile(atPath: converter), "rsvg-convert is missing; scripts/setup installs librsvg2-bin")
        let (session, readings, peaks) = PlotSamples.press()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("forcescale-plot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let svgFile = directory.appendingPathComponent("press.svg"), pngFile = directory.appendingPathComponent("press.png")
        try PlotSamples.render(session, readings, peaks: peaks, started: "2025-11-30 11:53:20 +0100").write(to: svgFile, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: converter)
        process.arguments = ["--format", "png", "--output", pngFile.path, svgFile.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && message.isEmpty, "rsvg-convert: \(message)")
        let png = try Data(contentsOf: pngFile)
        #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "a PNG signature")
        // IHDR: width and height, big-endian, at bytes 16 and 20.
        func word(_ offset: Int) -> UInt32 { png[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) } }
        #expect(png.count > 24 && word(16) == 800 && word(20) == 450)
        if let keep = ProcessInfo.processInfo.environment["FORCESCALE_KEEP_PLOTS"] {
            // For a person to look at: FORCESCALE_KEEP_PLOTS=/tmp/plots swift test --filter rsvg
            try? FileManager.default.copyItem(at: pngFile, to: URL(fileURLWithPath: keep).appendingPathComponent("press.png"))
            try? FileManager.default.copyItem(at: svgFile, to: URL(fileURLWithPath: keep).appendingPathComponent("press.svg"))
        }
    }
}

@Suite struct PlotAxisTests {
    @Test(arguments: [
        (0.0, 4.0, 8, ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0", "3.5", "4.0"]),
        (0.0, 9.3, 6, ["0", "2", "4", "6", "8", "10"]),
        (0.0, 0.37, 6, ["0.0", "0.1", "0.2", "0.3", "0.4"]),
        (0.0, 1.5, 6, ["0.00", "0.25", "0.50", "0.75", "1.00", "1.25", "1.50"]),
        (-20.0, 40.0, 6, ["-20", "-10", "0", "10", "20", "30", "40"]),
        (0.0, 3600.0, 8, ["0", "500", "1000", "1500", "2000", "2500", "3000", "3500", "4000"]),
        (0.0, 125.0, 5, ["0", "25", "50", "75", "100", "125"]),
    ])
    func ticksAreNiceAndCoverTheRange(low: Double, high: Double, ticks: Int, labels: [String]) {
        let axis = PlotAxis(covering: low, high, ticks: ticks)
        #expect(axis.ticks.map(axis.label) == labels)
        #expect(axis.lower <= low && axis.upper >= high)
    }

    @Test func aRangeOfZeroWidthStillMakesAnAxis() {
        let zero = PlotAxis(covering: 0, 0)
        #expect(zero.lower == 0 && zero.upper > 0 && zero.ticks.count >= 3)
        let one = PlotAxis(covering: 42, 42)
        #expect(one.lower < 42 && one.upper > 42)
        let broken = PlotAxis(covering: .nan, .infinity)
        #expect(broken.ticks.count >= 2 && broken.lower.isFinite && broken.upper.isFinite)
    }
}

@Suite struct PlotDecimatorTests {
    @Test func keepsEveryPointWhenEachHasItsColumn() {
        var decimator = PlotDecimator(span: 0...9, columns: 10)
        for second in 0...9 { decimator.add(PlotPoint(seconds: Double(second), grams: Double(second * second))) }
        #expect(decimator.points.map(\.grams) == (0...9).map { Double($0 * $0) })
    }

    @Test func keepsTheLowestAndHighestOfEachColumnInTimeOrder() {
        var decimator = PlotDecimator(span: 0...1, columns: 1)
        for (index, grams) in [5.0, 9, 1, 7, 9, 1].enumerated() { decimator.add(PlotPoint(seconds: Double(index) / 10, grams: grams)) }
        // The first 9 (at 0.1 s) before the first 1 (at 0.2 s).
        #expect(decimator.points == [PlotPoint(seconds: 0.1, grams: 9), PlotPoint(seconds: 0.2, grams: 1)])
    }

    @Test func pointsThatAreNotNumbersAreLeftOut() {
        var decimator = PlotDecimator(span: 0...1, columns: 4)
        decimator.add(PlotPoint(seconds: 0, grams: .nan))
        decimator.add(PlotPoint(seconds: 0.5, grams: 3))
        #expect(decimator.points == [PlotPoint(seconds: 0.5, grams: 3)])
    }
}
