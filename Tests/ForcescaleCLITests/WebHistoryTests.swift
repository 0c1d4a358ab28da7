import Foundation
import Glibc
import ScaleCore
import ScaleLog
import ScaleProtocol
import TestWaiting
import Testing

/// forcescale-web's history endpoints (`/api/sessions…`, docs/web.md "History") against
/// logs written by the real forcescaled (`--log-db` on a replay), compared with what
/// `forcescale log` itself prints for the same file.
@Suite(.serialized) struct WebHistoryTests {
    /// `forcescale log sessions --json`'s lines for the log, oldest first, without their newlines.
    static func cliSessions(_ path: String) throws -> [String] {
        let result = try CLI.run(["log", "sessions", "--json", "--db", path])
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// A log of `count` ended sessions, written by forcescaled replaying short presses with
    /// `--log-db`, then stopped (which ends the last session).
    static func loggedPresses(in directory: URL, count: Int) throws -> String {
        let presses = (0..<count).map { (index: Int) -> (start: Double, seconds: Double) in
            let start: Double = 1 + Double(index) * 1.5
            let seconds: Double = 0.8 + Double(index % 3) * 0.2
            return (start: start, seconds: seconds)
        }
        return try logged(try DaemonRecordings.presses(in: directory, name: "presses", presses), in: directory, count: count)
    }

    /// A log of at least `count` ended sessions, written by forcescaled replaying `recording`
    /// in a loop with `--log-db`, then stopped (which ends the last session).
    static func logged(_ recording: String, in directory: URL, count: Int) throws -> String {
        let path = directory.appendingPathComponent("force.sqlite").path
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log-db", path])
        var listed: [String] = []
        try waitFor("\(count) ended sessions in the log", every: 0.2, saw: { listed.joined(separator: "\n") }) {
            let result = try CLI.run(["log", "sessions", "--json", "--db", path])
            // 66 until the daemon's writer has made the file.
            guard result.status == 0 else { return false }
            listed = result.stdout.split(separator: "\n").map(String.init)
            return listed.filter { $0.contains(#""ended":"#) }.count >= count
        }
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        return path
    }

    static func sessionID(_ line: String) throws -> Int {
        Int(try #require(try JSONValue.parse(line)["session"]?.numberValue))
    }

    @Test func sessionsArePagedNewestFirstAsLogSessionsListsThem() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.loggedPresses(in: directory, count: 5)
        let expected = Array(try Self.cliSessions(path).reversed())
        try #require(expected.count >= 5)
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])

        // Pages of two, each the CLI's lines as they are, with the cursor to the next page.
        var pages: [String] = []
        var before: Int?
        repeat {
            let response = try web.request("GET", "/api/sessions?limit=2" + (before.map { "&before=\($0)" } ?? ""))
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            pages.append(response.text)
            let page = try JSONValue.parse(response.text.dropLast())
            before = page["next_before"]?.numberValue.map { Int($0) }
            try #require(pages.count <= expected.count)
        } while before != nil
        let chunks = stride(from: 0, to: expected.count, by: 2).map { Array(expected[$0..<min($0 + 2, expected.count)]) }
        #expect(pages.count == chunks.count)
        for (index, chunk) in chunks.enumerated() where index < pages.count {
            let next = index + 1 < chunks.count ? #","next_before":"# + String(try Self.sessionID(chunk.last!)) : ""
            #expect(pages[index] == #"{"sessions":["# + chunk.joined(separator: ",") + "]" + next + "}\n")
        }
        // Without a limit: the newest 20, all of them here.
        #expect(try web.get("/api/sessions") == #"{"sessions":["# + expected.joined(separator: ",") + "]}\n")
        // Past the oldest: an empty page without a cursor.
        #expect(try web.get("/api/sessions?before=1") == #"{"sessions":[]}"# + "\n")
    }

    @Test func downloadsAreByteForByteWhatLogExportAndLogPlotWrite() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.loggedPresses(in: directory, count: 3)
        let sessions = try Self.cliSessions(path)
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        for line in sessions {
            let id = String(try Self.sessionID(line))
            for (suffix, format, type) in [("csv", "csv", "text/csv; charset=utf-8; header=present"), ("json", "jsonl", "application/x-ndjson; charset=utf-8")] {
                let export = try CLI.run(["log", "export", "--session", id, "--format", format, "--db", path])
                #expect(export.status == 0, "\(export.stderr)")
                let response = try web.request("GET", "/api/sessions/\(id).\(suffix)")
                #expect(response.status == 200)
                #expect(response.headers["content-type"] == type)
                #expect(response.headers["content-disposition"] == "attachment; filename=\"session-\(id).\(format)\"")
                // Sent in pieces (chunked), never whole.
                #expect(response.headers["transfer-encoding"] == "chunked")
                #expect(response.body == Array(export.stdout.utf8), "session \(id) as \(format)")
                #expect(export.stdout.count > 100)
            }
            let plot = try CLI.run(["log", "plot", "--session", id, "--output", "-", "--db", path])
            #expect(plot.status == 0, "\(plot.stderr)")
            let svg = try web.request("GET", "/api/sessions/\(id).svg")
            #expect(svg.status == 200)
            #expect(svg.headers["content-type"] == "image/svg+xml; charset=utf-8")
            #expect(svg.text == plot.stdout)
            #expect(plot.stdout.hasPrefix("<svg") || plot.stdout.hasPrefix("<?xml"))
            // HEAD: the same head, no body.
            let head = try web.request("HEAD", "/api/sessions/\(id).csv")
            #expect(head.status == 200 && head.body.isEmpty)
        }
    }

    /// The session's summary: the CLI's line, and its stable weights worked out here from
    /// the exported readings (runs of stable readings with a contact).
    @Test func aSessionsSummaryHasItsStableWeightsAndPeaks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The demo's objects rest still for seconds: stable weights, one object a session.
        let path = try Self.logged(try DaemonRecordings.demo(in: directory), in: directory, count: 2)
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        var weightsSeen = 0
        for line in try Self.cliSessions(path) {
            let id = String(try Self.sessionID(line))
            let body = try web.get("/api/sessions/\(id)")
            #expect(body.hasPrefix(#"{"session":"# + line + #","stable_weights":["#), "\(body)")
            let summary = try JSONValue.parse(body.dropLast())
            let weights = try #require(summary["stable_weights"]?.arrayValue)
            let export = try CLI.run(["log", "export", "--session", id, "--format", "jsonl", "--db", path])
            let readings = try export.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
            var runs: [[JSONValue]] = []
            var current: [JSONValue] = []
            for reading in readings {
                if reading["stable"]?.boolValue == true, (reading["contacts"]?.numberValue ?? 0) > 0 {
                    current.append(reading)
                } else if !current.isEmpty {
                    runs.append(current)
                    current = []
                }
            }
            if !current.isEmpty { runs.append(current) }
            #expect(weights.count == runs.count, "session \(id): \(weights) against \(runs.count) runs")
            for (weight, run) in zip(weights, runs) {
                #expect(weight["from"]?.numberValue == run.first?["time"]?.numberValue)
                #expect(weight["to"]?.numberValue == run.last?["time"]?.numberValue)
                #expect(weight["readings"]?.numberValue == Double(run.count))
                let mean = run.compactMap { $0["grams"]?.numberValue }.reduce(0, +) / Double(run.count)
                #expect(weight["grams"]?.numberValue == (mean * 10).rounded() / 10)
            }
            weightsSeen += weights.count
        }
        // The presses rest long enough to be stable: the comparison above compared something.
        #expect(weightsSeen > 0)
    }

    @Test func anUnknownSessionIs404AndAMalformedOne400() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.loggedPresses(in: directory, count: 1)
        let last = try Self.sessionID(try #require(try Self.cliSessions(path).last))
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        for suffix in ["", ".csv", ".json", ".svg"] {
            let missing = try web.request("GET", "/api/sessions/\(last + 1000)\(suffix)")
            #expect(missing.status == 404, "\(suffix)")
            let error = try JSONValue.parse(missing.text.dropLast())["error"]?.stringValue ?? ""
            #expect(error.contains("no session \(last + 1000)"), "\(error)")
        }
        for bad in ["abc", "-1", "1e3", "3.5", "12a.csv", "", "99999999999999999999.json", "+5"] {
            let response = try web.request("GET", "/api/sessions/\(bad)")
            #expect(response.status == 400, "\(bad): \(response.status) \(response.text)")
            #expect(try JSONValue.parse(response.text.dropLast())["error"]?.stringValue?.contains("not a session id") == true)
        }
        for query in ["limit=0", "limit=201", "limit=x", "before=0", "before=abc"] {
            #expect(try web.request("GET", "/api/sessions?\(query)").status == 400, "\(query)")
        }
        #expect(try web.request("GET", "/api/sessions/\(last).txt").status == 404)
        let post = try web.request("POST", "/api/sessions/\(last).csv")
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        #expect(try web.request("POST", "/api/sessions").status == 405)
        // Every error of /api/ has one shape: JSON with the message and the status.
        let errors: [(String, String, Int)] = [
            ("GET", "/api/sessions/\(last + 1000)", 404), ("GET", "/api/sessions/3.5", 400), ("GET", "/api/sessions/1e3", 400),
            ("GET", "/api/sessions/abc", 400), ("GET", "/api/sessions/\(last).txt", 404), ("GET", "/api/sessions?limit=0", 400),
            ("POST", "/api/sessions", 405), ("GET", "/api/nope", 404), ("GET", "/api/tare", 405), ("POST", "/api/tare", 403),
        ]
        for (method, path, status) in errors {
            let response = try web.request(method, path)
            #expect(response.status == status, "\(method) \(path): \(response.status)")
            #expect(response.headers["content-type"] == "application/json", "\(method) \(path): \(response.headers)")
            let answer = try JSONValue.parse(response.text.dropLast())
            #expect(answer["status"]?.numberValue == Double(status) && answer["error"]?.stringValue?.isEmpty == false, "\(method) \(path): \(response.text)")
        }
    }

    /// The page's own plots: `?layout=narrow` for a phone, `?started=none` without the time
    /// of day (the page writes it in its reader's locale); each fits its drawing.
    @Test func thePagesPlotsAreNarrowOrWithoutTheStartWhenAsked() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = try Self.loggedPresses(in: directory, count: 1)
        let id = try Self.sessionID(try #require(try Self.cliSessions(path).last))
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        let plain = try web.request("GET", "/api/sessions/\(id).svg")
        #expect(plain.status == 200 && plain.text.contains(">started "))
        var files: [String] = []
        for (query, viewBox) in [("layout=narrow&started=none", "0 0 360 500"), ("started=none", "0 0 800 450"), ("layout=narrow", "0 0 360 500")] {
            let response = try web.request("GET", "/api/sessions/\(id).svg?\(query)")
            #expect(response.status == 200 && response.headers["content-type"]?.hasPrefix("image/svg+xml") == true, "\(query)")
            #expect(response.text.contains("viewBox=\"\(viewBox)\""), "\(query)")
            #expect(response.text.contains(">started ") == !query.contains("started=none"), "\(query): \(response.text)")
            let file = directory.appendingPathComponent("plot-\(files.count).svg")
            try response.text.write(to: file, atomically: true, encoding: .utf8)
            files.append(file.path)
        }
        let fit = try run("/usr/bin/python3", [CLI.packageRoot.appendingPathComponent("Tests/Browser/svg_fit.py").path] + files,
                          environment: ["HOME": directory.path, "TMPDIR": directory.path], timeout: 300)
        #expect(fit.status == 0 && fit.stdout.contains("all texts fit"), "\(fit.stdout)\n\(fit.stderr)")
        for query in ["layout=wide", "started=later"] {
            let response = try web.request("GET", "/api/sessions/\(id).svg?\(query)")
            #expect(response.status == 400 && response.headers["content-type"] == "application/json", "\(query): \(response.status)")
        }
    }

    @Test func withoutALogTheAnswerSaysHowToSwitchLoggingOn() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("absent.sqlite").path
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        for endpoint in ["/api/sessions", "/api/sessions/1", "/api/sessions/1.csv", "/api/sessions/1.svg"] {
            let response = try web.request("GET", endpoint)
            #expect(response.status == 404, "\(endpoint)")
            let answer = try JSONValue.parse(response.text.dropLast())
            #expect(answer["log"]?.stringValue == "missing")
            let message = answer["error"]?.stringValue ?? ""
            #expect(message.hasPrefix("\(path): no force log there") && message.contains("forcescaled with --log"), "\(message)")
        }
        // A file that is not a log is said to be one.
        let other = directory.appendingPathComponent("other.sqlite").path
        #expect(try run("/usr/bin/sqlite3", [other, "CREATE TABLE t (x)"]).status == 0)
        let wrong = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", other])
        let response = try wrong.request("GET", "/api/sessions")
        #expect(response.status == 500)
        #expect(response.text.contains("not a forcescale log"), "\(response.text)")
    }

    /// forcescaled logs a long touch while the endpoints read the log: the open session
    /// grows from one listing to the next, and its export holds the readings it had when
    /// asked, in order, while the ended sessions' exports equal `log export`'s.
    @Test func aLogBeingWrittenIsReadAsItGrows() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try DaemonRecordings.presses(in: directory, name: "long", [(start: 1, seconds: 1), (start: 2.5, seconds: 120)])
        let path = directory.appendingPathComponent("force.sqlite").path
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log-db", path])
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath, arguments: ["--log-db", path])
        var seen = ""
        func openSession() throws -> JSONValue? {
            let response = try web.request("GET", "/api/sessions?limit=1")
            seen = "\(response.status) \(response.text)"
            // 404 until the daemon's writer has made the file.
            guard response.status == 200 else { return nil }
            guard let newest = try JSONValue.parse(response.text.dropLast())["sessions"]?.arrayValue?.first, newest["ended"] == nil else { return nil }
            // More readings than the first press (1 s, about 100) ever has: the long touch.
            return (newest["readings"]?.numberValue ?? 0) > 200 ? newest : nil
        }
        let first = try waitForValue("the long touch's open session", every: 0.1, saw: { seen }) { try openSession() }
        let id = Int(try #require(first["session"]?.numberValue))
        let count = try #require(first["readings"]?.numberValue)
        let grown = try waitForValue("the open session to grow", every: 0.1, saw: { seen }) { () throws -> Double? in
            guard let now = try openSession(), Int(now["session"]?.numberValue ?? 0) == id, let readings = now["readings"]?.numberValue, readings > count else { return nil }
            return readings
        }
        #expect(grown > count)
        let export = try web.request("GET", "/api/sessions/\(id).json")
        #expect(export.status == 200)
        let lines = try export.text.split(separator: "\n").map { try JSONValue.parse($0) }
        #expect(Double(lines.count) >= grown)
        #expect(lines.allSatisfy { $0["session"]?.numberValue == Double(id) })
        let times = lines.compactMap { $0["time"]?.numberValue }
        #expect(times == times.sorted())
        // The ended session before it, while the daemon writes.
        let ended = try web.request("GET", "/api/sessions/\(id - 1).csv")
        let cli = try CLI.run(["log", "export", "--session", String(id - 1), "--db", path])
        #expect(ended.status == 200 && ended.body == Array(cli.stdout.utf8))
        #expect(web.child.isRunning)
    }

    /// A session of 300,000 readings (about 20 MB of CSV) is sent in pieces: forcescale-web's
    /// peak memory grows by far less than the export's size while it serves it.
    @Test func aLargeExportIsStreamedNotHeldInMemory() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("large.sqlite").path
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "0006-0000-0000-large", name: "large pad")
        var session = try database.openSession(device: device, started: WallTime(microseconds: 1_796_032_800_000_000), model: .nominal)
        let count = 300_000
        try database.transaction { () throws(LogDatabaseError) in
            for start in stride(from: 0, to: count, by: 10_000) {
                let readings = (start..<start + 10_000).map { (index: Int) -> LoggedReading in
                    let time = WallTime(microseconds: 1_796_032_800_000_000 + Int64(index) * 1000)
                    let raw = Int32(index % 256)
                    let force = Double(raw) / 255
                    return LoggedReading(session: session.id, time: time, raw: raw, force: force, grams: force * 385, contacts: 1, flags: [])
                }
                try database.append(readings, to: &session)
            }
            try database.close(&session, at: WallTime(microseconds: 1_796_032_800_000_000 + Int64(count) * 1000))
        }
        database.close()
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        // Warmed up: the page of sessions read once.
        _ = try web.get("/api/sessions")
        let before = try #require(processStatus(web.child.pid, "VmHWM"))
        let response = try web.request("GET", "/api/sessions/\(session.id).csv")
        #expect(response.status == 200)
        #expect(response.body.count > 20_000_000)
        #expect(response.text.split(separator: "\r\n").count == count + 1)
        let after = try #require(processStatus(web.child.pid, "VmHWM"))
        #expect(after - before < 4096, "peak RSS grew by \(after - before) kB while sending \(response.body.count) bytes")
        let export = try CLI.run(["log", "export", "--session", String(session.id), "--db", path])
        #expect(response.body == Array(export.stdout.utf8))
    }

    /// A session still open of 300,000 readings: its plot is decimated as its rows are read
    /// (not held whole until the picture is drawn) and its summary made as they go, so
    /// forcescale-web's peak memory grows by far less than the readings' size; the plot is
    /// byte for byte `forcescale log plot`'s.
    @Test func anOpenSessionsPlotAndSummaryAreMadeWithoutHoldingIt() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("open.sqlite").path
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "0006-0000-0000-open", name: "open pad")
        let start: Int64 = 1_796_032_800_000_000
        var session = try database.openSession(device: device, started: WallTime(microseconds: start), model: .nominal)
        let count = 300_000
        try database.transaction { () throws(LogDatabaseError) in
            for first in stride(from: 0, to: count, by: 10_000) {
                let readings = (first..<first + 10_000).map { (index: Int) -> LoggedReading in
                    let raw = Int32((index * 7) % 256)
                    let force = Double(raw) / 255
                    // A stable run of 1,000 readings in every 10,000.
                    return LoggedReading(session: session.id, time: WallTime(microseconds: start + Int64(index) * 1000), raw: raw, force: force,
                                         grams: force * 385, contacts: 1, flags: index % 10_000 < 1000 ? [.stable] : [])
                }
                try database.append(readings, to: &session)
            }
        }
        database.close()
        let web = try WebUnderTest(socket: directory.appendingPathComponent("no-daemon").path, arguments: ["--log-db", path])
        // Warmed up: a small answer read from the log once.
        _ = try web.get("/api/sessions")
        let before = try #require(processStatus(web.child.pid, "VmHWM"))
        let plot = try web.request("GET", "/api/sessions/\(session.id).svg")
        let summary = try web.request("GET", "/api/sessions/\(session.id)")
        let after = try #require(processStatus(web.child.pid, "VmHWM"))
        #expect(plot.status == 200 && summary.status == 200)
        // 300,000 points held whole would be 4.8 MB, their array up to 8 MiB.
        #expect(after - before < 2048, "peak RSS grew by \(after - before) kB while plotting \(count) readings")
        let cli = try CLI.run(["log", "plot", "--session", String(session.id), "--output", "-", "--db", path])
        #expect(cli.status == 0, "\(cli.stderr)")
        #expect(plot.body == Array(cli.stdout.utf8))
        #expect(plot.text.contains("still open · 300000 readings"), "\(plot.text.prefix(2000))")
        let weights = try #require(try JSONValue.parse(summary.text.dropLast())["stable_weights"]?.arrayValue)
        #expect(weights.count == count / 10_000)
        #expect(weights.allSatisfy { $0["readings"]?.numberValue == 1000 })
    }
}
