import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import Testing
import ScaleRecording

/// `forcescale characterize --replay` end to end, on the demo pen (`demo --pen --write`)
/// whose truth is known: an activation force of 6.0 g (it first reads 1 at 6.03 g), a
/// logarithmic response to 400 g, 3 % hysteresis at mid-range.
@Suite struct CharacterizeCLITests {
    static let weights = DemoPen.weights.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ",")

    func withDemoPen(_ body: (_ file: String, _ directory: URL) throws -> Void) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("pen.events").path
        let written = try CLI.run(["demo", "--pen", "--write", file])
        try #require(written.status == 0, "forcescale demo --pen --write failed: \(written.stderr)")
        try body(file, directory)
    }

    @Test func theDemoPenIsCharacterizedAsItWasMade() throws {
        try withDemoPen { file, directory in
            let plot = directory.appendingPathComponent("pen.svg").path
            let result = try CLI.run(["characterize", "--replay", file, "--weights", Self.weights, "--json", "--plot", plot])
            #expect(result.status == 0, "\(result.stderr)")
            let json = try JSONValue.parse(result.stdout.trimmingCharacters(in: .newlines))
            #expect(json["class"]?.stringValue == "CHARACTERIZATION")
            #expect(json["device"]?.stringValue == "forcescale demo pen (synthetic)")
            let iaf = try #require(json["iaf_grams"]?.numberValue)
            let uncertainty = try #require(json["iaf_uncertainty_grams"]?.numberValue)
            #expect((iaf - 6.03).magnitude <= 1 && (iaf - 6.03).magnitude <= uncertainty, "IAF \(iaf) ± \(uncertainty)")
            #expect(json["unregistered"]?.arrayValue?.compactMap(\.numberValue) == [2.3, 3.92, 5.74])
            #expect(json["saturation_grams"]?.numberValue == 425)
            let hysteresis = try #require(json["hysteresis_percent"]?.numberValue)
            #expect((hysteresis - 3).magnitude < 0.5, "hysteresis \(hysteresis)")
            // Each P-value is where the demo pen really reads that tenth, within 1 % of the range.
            let p = try #require(json["p"]?.objectValue)
            #expect(p.count == 11)
            #expect(p["P100"] == .null)
            for tenth in 1...9 {
                let grams = try #require(p["P\(tenth * 10)"]?.numberValue, "P\(tenth * 10)")
                #expect((DemoPen.pressing(grams) - Double(tenth) / 10).magnitude <= 0.01, "P\(tenth * 10) = \(grams) g")
            }
            let exports = try #require(json["exports"]?.objectValue)
            let curveValues = try #require(exports["xsetwacom"]?["curve"]?.arrayValue)
            let curve = curveValues.compactMap(\.numberValue)
            #expect(curve.count == 4 && curve.allSatisfy { (0...100).contains($0) })
            #expect(exports["xsetwacom"]?["command"]?.stringValue == "xsetwacom set \"forcescale demo pen (synthetic) stylus\" PressureCurve " + curve.map { String(Int($0)) }.joined(separator: " "))
            #expect(exports["gnome"]?["command"]?.stringValue?.contains("/org/gnome/desktop/peripherals/stylus/default-0000:0000/ pressure-curve") == true)
            #expect(exports["libinput"]?["range"]?.stringValue?.hasSuffix(":1") == true)
            #expect(exports["opentabletdriver"]?["tip_threshold_percent"]?.numberValue != nil)
            let records = try #require(exports["penpressuredata"]?["records"]?.arrayValue)
            #expect(records.count == DemoPen.weights.count)
            #expect(records.first?.arrayValue?.compactMap(\.numberValue) == [2.3, 0])
            // The plot is an SVG that a real renderer reads.
            let svg = try String(contentsOfFile: plot, encoding: .utf8)
            #expect(svg.hasPrefix("<?xml") && svg.contains("Pen response of forcescale demo pen (synthetic)"))
            let png = directory.appendingPathComponent("pen.png").path
            let rendered = try run("/usr/bin/rsvg-convert", ["-o", png, plot])
            #expect(rendered.status == 0, "\(rendered.stderr)")
            // Every text inside the drawing, as chromium lays it out (the legend's last entry
            // once ran past the right edge).
            let fit = try run("/usr/bin/python3", [CLI.packageRoot.appendingPathComponent("Tests/Browser/svg_fit.py").path, plot],
                              environment: ["HOME": directory.path, "TMPDIR": directory.path], timeout: 300)
            #expect(fit.status == 0 && fit.stdout.contains("all texts fit"), "\(fit.stdout)\n\(fit.stderr)")
            // The low forces get room: a logarithmic force axis, its decades labelled.
            #expect(svg.contains("force on the tip (g, logarithmic)"))
            for label in [">1<", ">10<", ">100<"] { #expect(svg.contains("class=\"x-tick\"") && svg.contains(label), "\(label)") }
            // The IAF's band is wide enough to see, and its ± is written.
            let band = try #require(svg.split(separator: "\n").first { $0.contains("class=\"iaf-band\"") })
            let width = try #require(band.split(separator: " ").first { $0.hasPrefix("width=") }.flatMap { Double($0.dropFirst(7).dropLast()) })
            #expect(width >= 6, "\(band)")
            #expect(svg.contains(#"class="iaf-label""#) && svg.contains("IAF \(String(format: "%.2f", iaf)) g ± \(String(format: "%.2f", uncertainty)) g"), "\(svg)")
        }
    }

    @Test func theTableSaysTheSameForAPerson() throws {
        try withDemoPen { file, _ in
            let json = try JSONValue.parse(try CLI.run(["characterize", "--replay", file, "--weights", Self.weights, "--json"]).stdout.trimmingCharacters(in: .newlines))
            let table = try CLI.run(["characterize", "--replay", file, "--weights", Self.weights])
            #expect(table.status == 0)
            let iaf = try #require(json["iaf_grams"]?.numberValue)
            #expect(table.stdout.contains("Initial activation force (IAF): \(String(format: "%.2f", iaf)) g ±"), "\(table.stdout)")
            #expect(table.stdout.contains("registered from 7.50 g; 5.74 g did not"))
            #expect(table.stdout.contains("Saturation: the top of the range with 425.0 g"))
            #expect(table.stdout.contains("xsetwacom set \"forcescale demo pen (synthetic) stylus\" PressureCurve "))
        }
    }

    @Test func theYAMLOfTheSameRecordingGivesTheSameAnswer() throws {
        try withDemoPen { file, directory in
            let recording = try Recording(evemuText: String(contentsOfFile: file, encoding: .utf8), fileName: file)
            let yaml = directory.appendingPathComponent("pen.yml").path
            try LibinputRecordWriter.text(of: recording).write(toFile: yaml, atomically: true, encoding: .utf8)
            let fromEvemu = try CLI.run(["characterize", "--replay", file, "--weights", Self.weights, "--json"])
            let fromYAML = try CLI.run(["characterize", "--replay", yaml, "--weights", Self.weights, "--json"])
            #expect(fromYAML.status == 0, "\(fromYAML.stderr)")
            #expect(fromYAML.stdout == fromEvemu.stdout)
        }
    }

    @Test func badWeightsAndRecordingsAreRefusedWithWhatToDo() throws {
        try withDemoPen { file, directory in
            let few = try CLI.run(["characterize", "--replay", file, "--weights", "5,10"])
            #expect(few.status == 64 && few.stderr.contains("needs at least 3 known weights"), "\(few.stderr)")
            let garbage = try CLI.run(["characterize", "--replay", file, "--weights", "5,ten,20"])
            #expect(garbage.status == 64 && garbage.stderr.contains("ten is not a weight: --weights lists weights in grams"), "\(garbage.stderr)")
            let missing = try CLI.run(["characterize", "--replay", file])
            #expect(missing.status == 64 && missing.stderr.contains("--weights"), "\(missing.stderr)")
            // 16 touches, 4 weights: the message says what to give.
            let short = try CLI.run(["characterize", "--replay", file, "--weights", "10,20,30,40"])
            #expect(short.status == 65, "\(short.stderr)")
            #expect(short.stderr.hasPrefix("error: \(file): the recording holds "), "\(short.stderr)")
            #expect(short.stderr.contains("give one weight for each touch, in the order they were placed"))
            let absent = try CLI.run(["characterize", "--replay", directory.appendingPathComponent("none.events").path, "--weights", Self.weights])
            #expect(absent.status == 66, "\(absent.stderr)")
            // A plot into a folder that does not exist is 73.
            let unplottable = try CLI.run(["characterize", "--replay", file, "--weights", Self.weights, "--plot", "/nonexistent/dir/pen.svg"])
            #expect(unplottable.status == 73 && unplottable.stderr.contains("/nonexistent/dir/pen.svg"), "\(unplottable.stderr)")
        }
    }
}
