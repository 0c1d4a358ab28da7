import Foundation
import Testing

/// The page is edited as files (Sources/ScaleWeb/Page) and built into forcescale-web
/// (the EmbedPage plugin): what `/` serves is page.html with page.css and page.js put in
/// where it names them, byte for byte, read from the binary, not from disk.
@Suite struct WebPageFilesTests {
    @Test func thePageServedIsItsFilesBuiltIn() throws {
        let page = CLI.packageRoot.appendingPathComponent("Sources/ScaleWeb/Page")
        func file(_ name: String) throws -> String { try String(contentsOf: page.appendingPathComponent(name), encoding: .utf8) }
        let html = try file("page.html"), css = try file("page.css"), script = try file("page.js")
        // Each marker once, on a line of its own: the files are whole documents otherwise.
        #expect(html.components(separatedBy: "/* page.css */\n").count == 2)
        #expect(html.components(separatedBy: "/* page.js */\n").count == 2)
        let expected = html.replacingOccurrences(of: "/* page.css */\n", with: css).replacingOccurrences(of: "/* page.js */\n", with: script)
        // A copy of the binary in a directory of its own: the page cannot come from the tree.
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = directory.appendingPathComponent("forcescale-web")
        try FileManager.default.copyItem(at: CLI.binDirectory.appendingPathComponent("forcescale-web"), to: binary)
        let child = try ChildProcess(binary.path, ["--socket", directory.appendingPathComponent("no-daemon").path, "--listen", "127.0.0.1:0"])
        let web = WebUnderTest(child: child, port: try WebUnderTest.waitForPort(child))
        let response = try web.request("GET", "/")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "text/html; charset=utf-8")
        #expect(response.text == expected)
        #expect(css.contains(".scale") && script.contains("EventSource") && html.hasPrefix("<!DOCTYPE html>"))
    }
}
