import Foundation
import Glibc
import TestWaiting
import Testing

/// `make run` (scripts/run) with this build: the daemon on the built-in demo, forcescale-web
/// on loopback with its URL printed, and the URL with its key that lets a browser in,
/// `forcescale watch` in the foreground, and all three gone when the script is stopped.
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
        defer {
            script.kill()
            // Whatever the script started and left behind when the test failed: each of
            // them names the private runtime directory on its command line.
            for (pid, _) in (try? processesNaming(runtime.path)) ?? [] { kill(pid, SIGKILL) }
        }

        var url = ""
        try waitFor("scripts/run to print forcescale-web's URL", saw: { "stdout: \(script.stdout.suffix(1500)); stderr: \(script.stderr.suffix(1500))" }) {
            guard script.isRunning else { throw DaemonTestError(description: "scripts/run exited: \(script.stdout) \(script.stderr)") }
            guard let line = script.stdout.split(separator: "\n").first(where: { $0.hasPrefix("forcescale-web is serving the page at http://127.0.0.1:") }) else { return false }
            url = String(line.split(separator: " ")[6])
            return true
        }
        let port = try #require(Int(url.dropFirst("http://127.0.0.1:".count).prefix { $0.isNumber }), "no port in \(url)")
        #expect(url == "http://127.0.0.1:\(port)/")
        let keyLine = try #require(script.stdout.split(separator: "\n").first { $0.hasPrefix("  open it with its key: \(url)?key=") }, "\(script.stdout)")
        let key = String(keyLine.split(separator: "=").last ?? "")
        #expect(key.count == 64 && key.allSatisfy(\.isHexDigit), "\(keyLine)")
        // The address with the key lets a browser in (a cookie, and the key out of the
        // address); without it, nothing.
        let entry = try httpGet(port: port, path: "/?key=\(key)")
        #expect(entry.status == 303 && entry.headers["location"] == "/" && entry.headers["set-cookie"]?.contains(key) == true, "\(entry.status) \(entry.headers)")
        #expect(try httpGet(port: port, path: "/").status == 401)
        let page = try httpGet(port: port, path: "/", key: key)
        #expect(page.status == 200 && page.text.contains(#"class="dial""#), "GET \(url): \(page.status)")
        var metrics: HTTPTestResponse?
        try waitFor("the demo's readings on \(url)metrics", saw: { metrics?.text.suffix(1500).description ?? "nothing" }) {
            metrics = try? httpGet(port: port, path: "/metrics", key: key)
            return metrics.map { $0.text.contains("\nforcescale_daemon_up 1") && $0.text.contains("forcescale_readings_total") } ?? false
        }
        // And watch shows them in the foreground.
        try waitFor("forcescale watch's lines", saw: { script.stdout.suffix(1500).description }) {
            script.stdout.contains(" g ")
        }

        script.signal(SIGTERM)
        // Waited for through /proc rather than through the script's Process alone: a child
        // left running would keep Foundation from ever seeing the script end.
        do {
            try waitFor("scripts/run, forcescaled, forcescale-web and watch to stop after SIGTERM",
                        saw: { "still running: \((try? processesNaming(runtime.path).map(\.commandLine)) ?? [])" }) {
                try processesNaming(runtime.path).isEmpty && hasEnded(script.pid)
            }
        } catch {
            Issue.record("\(error)")
            for (pid, _) in try processesNaming(runtime.path) { kill(pid, SIGKILL) }
        }
        let result = script.wait()
        #expect(result.exited && result.status == 143, "scripts/run after SIGTERM: \(result.status) \(result.stderr)")
        // Nothing answers on the port any more, and the socket's directory is removed.
        #expect((try? httpGet(port: port, path: "/", timeout: 5)) == nil, "forcescale-web still answers on \(url)")
        let leftFiles = try FileManager.default.contentsOfDirectory(atPath: runtime.path)
        #expect(leftFiles.isEmpty, "left in XDG_RUNTIME_DIR: \(leftFiles)")
    }
}

/// Whether a process has exited (a zombie waiting to be reaped counts as ended).
func hasEnded(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
    // The state follows the command name in parentheses, which may itself hold spaces.
    guard let close = stat.lastIndex(of: ")") else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}

/// The processes whose command lines contain `text` (zombies have none, so they are left out).
func processesNaming(_ text: String) throws -> [(pid: pid_t, commandLine: String)] {
    var found: [(pid: pid_t, commandLine: String)] = []
    for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") where entry.allSatisfy(\.isNumber) {
        guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
        let line = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
        if line.contains(text), let pid = pid_t(entry) { found.append((pid, line)) }
    }
    return found
}
