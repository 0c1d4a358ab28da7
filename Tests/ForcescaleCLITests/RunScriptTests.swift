import Foundation
import Glibc
import TestWaiting
import Testing

/// `make run` (scripts/run) with this build: the daemon on the built-in demo, forcescale-web
/// on loopback with its URL printed, `forcescale watch` in the foreground, and all three gone
/// when the script is stopped (issue 11).
@Suite struct RunScriptTests {
    @Test func runServesThePageAndStopsEverything() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // No event nodes to find: the script serves the demo, whatever this machine has.
        let noDevices = directory.appendingPathComponent("input")
        try FileManager.default.createDirectory(at: noDevices, withIntermediateDirectories: true)
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let script = try ChildProcess(
            "/bin/sh", [CLI.packageRoot.appendingPathComponent("scripts/run").path],
            environment: ["FORCESCALE_BIN_DIR": CLI.binDirectory.path, "XDG_RUNTIME_DIR": runtime.path,
                          "FORCESCALE_INPUT_DIR": noDevices.path, "HOME": directory.path])
        defer { script.kill() }

        var url = ""
        try waitFor("scripts/run to print forcescale-web's URL", saw: { "stdout: \(script.stdout.suffix(1500)); stderr: \(script.stderr.suffix(1500))" }) {
            guard script.isRunning else { throw DaemonTestError(description: "scripts/run exited: \(script.stdout) \(script.stderr)") }
            guard let line = script.stdout.split(separator: "\n").first(where: { $0.hasPrefix("forcescale-web is serving the page at http://127.0.0.1:") }) else { return false }
            url = String(line.split(separator: " ")[6])
            return true
        }
        let port = try #require(Int(url.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }), "no port in \(url)")
        #expect(url == "http://127.0.0.1:\(port)/")
        let page = try httpGet(port: port, path: "/")
        #expect(page.status == 200 && page.body.contains(#"id="dial""#), "GET \(url): \(page.status)")
        var metrics: HTTPResponse?
        try waitFor("the demo's readings on \(url)metrics", saw: { metrics?.body.suffix(1500).description ?? "nothing" }) {
            metrics = try? httpGet(port: port, path: "/metrics")
            return metrics.map { $0.body.contains("\nforcescale_daemon_up 1") && $0.body.contains("forcescale_readings_total") } ?? false
        }
        // And watch shows them in the foreground.
        try waitFor("forcescale watch's lines", saw: { script.stdout.suffix(1500).description }) {
            script.stdout.contains(" g ")
        }

        script.signal(SIGTERM)
        let result = script.wait()
        #expect(result.exited && result.status == 143, "scripts/run after SIGTERM: \(result.status) \(result.stderr)")
        // Both servers are gone: nothing answers on the port, the socket's directory is
        // removed, and no process names the private runtime directory any more.
        #expect((try? httpGet(port: port, path: "/", timeout: 5)) == nil, "forcescale-web still answers on \(url)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime.path).isEmpty, "left in XDG_RUNTIME_DIR: \(try FileManager.default.contentsOfDirectory(atPath: runtime.path))")
        let left = try processesNaming(runtime.path)
        #expect(left.isEmpty, "still running: \(left)")
    }
}

/// The command lines in /proc that contain `text`.
func processesNaming(_ text: String) throws -> [String] {
    var found: [String] = []
    for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") where entry.allSatisfy(\.isNumber) {
        guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
        let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        if line.contains(text) { found.append("\(entry): \(line)") }
    }
    return found
}
