import Foundation
@testable import ScaleCore
import Testing
@testable import ScaleDisplay

/// Every text of the log's plots lies inside its drawing, as a browser lays it out: each
/// plot below, in the standard and the narrow layout, is measured by Tests/Browser/svg_fit.py
/// (chromium's getBBox of every text, through its transform, against the viewBox). The
/// cases are those whose texts run longest: a long device name, a saturated stable weight's
/// "at least … (saturated)", a PEAK and the heaviest reading at the edges, notes, a time
/// axis reaching before the start, every legend entry. `forcescale characterize --plot`'s
/// pen plot is measured the same way in CharacterizeCLITests, and the plots forcescale-web
/// serves in WebHistoryTests.
@Suite struct PlotFitTests {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The sessions to draw, each with a name for its file.
    static func cases() -> [(name: String, session: LoggedSession, readings: [LoggedReading], peaks: [LoggedPeak])] {
        let (session, readings, peaks) = PlotSamples.press()
        var saturated = PlotSamples.session(device: String(repeating: "Wacom Intuos Pro L Pen with a very long name ", count: 3), seconds: 4,
                                            peakGrams: 385, stable: 385, readings: readings.count)
        saturated.stableSaturated = true
        saturated.peakSaturated = true
        let edge = [PlotSamples.reading(0, 385), PlotSamples.reading(2, 100), PlotSamples.reading(4, 384.9)]
        let crowded = (0...100).map { PlotSamples.reading(Double($0) / 10, 100) }
        let crowdedPeaks = (0..<20).map { LoggedPeak(session: 7, time: PlotSamples.at(5 + Double($0) * 0.01), raw: 255, grams: 385) }
        return [
            ("press", session, readings, peaks),
            ("saturated-long-name", saturated, readings.map { var r = $0; r.flags.insert(.saturated); return r }, peaks),
            ("marks-at-the-edges", PlotSamples.session(seconds: 4, peakGrams: 385, stable: 0.4, readings: 3), edge,
             [LoggedPeak(session: 7, time: PlotSamples.at(0), raw: 255, grams: 385), LoggedPeak(session: 7, time: PlotSamples.at(4), raw: 255, grams: 384.9)]),
            ("crowded-peaks", PlotSamples.session(seconds: 10, peakGrams: 385, readings: 101), crowded, crowdedPeaks),
            ("empty", PlotSamples.session(seconds: 0, readings: 0), [], []),
            ("one-reading", PlotSamples.session(seconds: 1, peakGrams: 12.5, readings: 1), [PlotSamples.reading(0.5, 12.5)], []),
            ("below-zero-long", PlotSamples.session(seconds: 3600, peakGrams: 40, stable: -0.3, readings: 3),
             [PlotSamples.reading(-0.5, -20), PlotSamples.reading(1800, 40), PlotSamples.reading(3600, -0.3)], []),
        ]
    }

    @Test func everyTextOfTheLogsPlotsLiesInsideItsDrawing() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("forcescale-plot-fit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = []
        for (name, session, readings, peaks) in Self.cases() {
            for (layoutName, layout) in [("standard", ForcePlot.Layout.standard), ("narrow", ForcePlot.Layout.narrow)] {
                for started in ["2025-11-30 11:53:20 +0100", nil] as [String?] {
                    var plot = ForcePlot(session: session, startedText: started, peaks: peaks, layout: layout)
                    for reading in readings { plot.add(reading) }
                    let file = directory.appendingPathComponent("\(name)-\(layoutName)\(started == nil ? "-no-start" : "").svg")
                    try plot.render().write(to: file, atomically: true, encoding: .utf8)
                    files.append(file.path)
                }
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.packageRoot.appendingPathComponent("Tests/Browser/svg_fit.py").path] + files
        process.environment = ProcessInfo.processInfo.environment.merging(["HOME": directory.path, "TMPDIR": directory.path]) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0 && text.contains("all texts fit"), "svg_fit.py exited \(process.terminationStatus):\n\(text)")
        // The narrow layout's smallest text is 12 px: drawn 330 px wide or more (the page
        // at 390 px; Tests/Browser/history.py checks the width) it stays at least 11 px.
        for line in text.split(separator: "\n") where line.contains("-narrow") {
            #expect(line.contains("smallest font 12 px") || line.contains("smallest font 13 px"), "\(line)")
        }
        print(text)
    }

    @Test func theNarrowLayoutLeavesTheStartToThePageWhenAsked() throws {
        let (session, readings, peaks) = PlotSamples.press()
        var plot = ForcePlot(session: session, startedText: nil, peaks: peaks, layout: .narrow)
        for reading in readings { plot.add(reading) }
        let svg = try ParsedSVG(plot.render())
        #expect(svg.elements.first?.attributes["viewBox"] == "0 0 360 500")
        #expect(svg.first("title")?.text == "Session 7")
        #expect(svg.first("device")?.text == "on Test Pad")
        #expect(svg.first("subtitle")?.text == "4.0 s · 401 readings · nominal model")
        #expect(!svg.elements.contains { $0.text.contains("2025") }, "no time of day in the picture")
    }

    @Test func theLegendWrapsRatherThanRunOffThePicture() {
        let rows = ForcePlot.legendRows(["pressing", "releasing", "response", "with the exported curve", "IAF ± uncertainty", "not registered"],
                                        in: 76...788, gap: 16)
        #expect(rows.map { $0.map(\.index) } == [[0, 1, 2, 3, 4], [5]])
        #expect(rows[1].first?.x == 76)
        // One entry wider than the room still gets a row of its own, not an endless loop.
        #expect(ForcePlot.legendRows([String(repeating: "x", count: 200), "y"], in: 0...100, gap: 10).count == 2)
    }

    @Test func aLogarithmicAxisHasDecadesWithTicksAtOneTwoAndFive() {
        let axis = LogPlotAxis(covering: 2.3, 425)
        #expect(axis.lower == 1 && axis.upper == 1000)
        #expect(axis.ticks.map(axis.label) == ["1", "2", "5", "10", "20", "50", "100", "200", "500", "1000"])
        #expect(LogPlotAxis(covering: 0.3, 40).ticks.map(LogPlotAxis(covering: 0.3, 40).label).prefix(3) == ["0.1", "0.2", "0.5"])
        // Each decade as long as the next; 0 (a weight that did not register) at the start.
        #expect(axis.position(of: 10, from: 0, to: 300) == 100 && axis.position(of: 100, from: 0, to: 300) == 200)
        #expect(axis.position(of: 0, from: 0, to: 300) == 0)
    }
}
