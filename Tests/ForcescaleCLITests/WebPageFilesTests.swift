import Foundation
import ScaleCore
import ScaleProtocol
import Testing

/// The page is edited as files (Sources/ScaleWeb/Page) and built into forcescale-web
/// (the EmbedPage plugin): `/` serves page.html, `/page.css` and `/page.js` the other two,
/// byte for byte, read from the binary, not from disk; and the units it offers are
/// ScaleCore's MassUnit, put in at `/* units */`.
@Suite struct WebPageFilesTests {
    static let unitsOpening = #"<script type="application/json" id="units">"# + "\n"

    /// The JSON between `<script type="application/json" id="units">` and `</script>` of a
    /// page as served.
    static func servedUnits(_ page: String) throws -> String {
        let start = try #require(page.range(of: unitsOpening), "no units' script element in the page")
        let end = try #require(page[start.upperBound...].range(of: "\n</script>"))
        return String(page[start.upperBound..<end.lowerBound])
    }

    @Test func thePageServedIsItsFilesBuiltIn() throws {
        let page = CLI.packageRoot.appendingPathComponent("Sources/ScaleWeb/Page")
        func file(_ name: String) throws -> String { try String(contentsOf: page.appendingPathComponent(name), encoding: .utf8) }
        let html = try file("page.html"), css = try file("page.css"), script = try file("page.js")
        // The units' marker once, on a line of its own; the style and the script by address.
        #expect(html.components(separatedBy: Self.unitsOpening + "/* units */\n").count == 2)
        #expect(html.contains(#"<link rel="stylesheet" href="page.css">"#) && html.contains(#"<script src="page.js"></script>"#))
        #expect(!html.contains("<style") && !html.contains("<script>"), "inline code the Content-Security-Policy would refuse")
        // A copy of the binary in a directory of its own: the page cannot come from the tree.
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = directory.appendingPathComponent("forcescale-web")
        try FileManager.default.copyItem(at: CLI.binDirectory.appendingPathComponent("forcescale-web"), to: binary)
        let keys = directory.appendingPathComponent("keys")
        try FileManager.default.createDirectory(at: keys, withIntermediateDirectories: false)
        let child = try ChildProcess(
            binary.path, ["--socket", directory.appendingPathComponent("no-daemon").path, "--listen", "127.0.0.1:0", "--key-dir", keys.path])
        let web = WebUnderTest(child: child, port: try WebUnderTest.waitForPort(child), keyDirectory: keys)
        let response = try web.request("GET", "/")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/html; charset=utf-8")
        // The units' JSON is made from ScaleCore when served (the test below checks it).
        let units = try Self.servedUnits(response.text)
        let expected = html.replacingOccurrences(of: Self.unitsOpening + "/* units */\n", with: Self.unitsOpening + units + "\n")
        #expect(response.text == expected)
        // The style and the script, files of their own (no inline code for the
        // Content-Security-Policy to allow), byte for byte.
        let style = try web.request("GET", "/page.css")
        #expect(style.status == 200 && style.headers["content-type"] == "text/css; charset=utf-8" && style.text == css)
        let code = try web.request("GET", "/page.js")
        #expect(code.status == 200 && code.headers["content-type"] == "text/javascript; charset=utf-8" && code.text == script)
        #expect(css.contains(".scale") && script.contains("EventSource") && html.hasPrefix("<!DOCTYPE html>"))
    }

    /// The units in the page are MassUnit's, all of them, in its order: the symbol, the
    /// name, the very `Double` of grams per unit and the decimals the CLI writes. page.js
    /// converts and rounds with these, and the browser tests read them from the page.
    @Test func theUnitsServedAreScaleCoresMassUnits() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path)
        let response = try web.request("GET", "/")
        #expect(response.status == 200)
        let text = try Self.servedUnits(response.text)
        let served = try #require(try JSONValue.parse(text)["units"]?.arrayValue)
        #expect(served.count == MassUnit.allCases.count)
        for (entry, unit) in zip(served, MassUnit.allCases) {
            #expect(entry["symbol"]?.stringValue == unit.rawValue, "\(entry)")
            #expect(entry["name"]?.stringValue == unit.name, "\(entry)")
            #expect(entry["grams_per_unit"]?.numberValue == unit.gramsPerUnit, "\(entry): \(unit.gramsPerUnit)")
            #expect(entry["decimals"]?.numberValue == Double(unit.displayDecimals), "\(entry)")
        }
        // What the page's script reads, so nothing else is there to drift.
        #expect(Set(try #require(try JSONValue.parse(text).objectValue).keys) == ["units"])
    }
}
