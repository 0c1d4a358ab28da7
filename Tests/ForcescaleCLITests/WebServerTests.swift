import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// forcescale-web end to end: the built program against a real forcescaled serving a
/// scripted recording, over real sockets (docs/web.md).
@Suite(.serialized) struct WebServerTests {
    /// A forcescaled serving `recording` once, not in a loop, so that the stream ends and
    /// values can be compared at rest.
    private static func daemonOnce(_ recording: String, in directory: URL, arguments: [String] = []) throws -> ChildProcess {
        let socket = directory.appendingPathComponent("sock").path
        let child = try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescaled").path,
            ["--replay", recording, "--socket", socket, "--state-dir", directory.appendingPathComponent("state").path] + arguments)
        try waitUntilListening(child, on: socket)
        return child
    }

    /// `promtool check metrics`, which reads the exposition from standard input.
    private static func promtool(_ text: String) throws -> ProcessResult {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("metrics").path
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return try run("/bin/sh", ["-c", "exec /usr/bin/promtool check metrics < \"$1\"", "sh", file])
    }

    @Test func metricsPassPromtoolAndTheStrictOpenMetricsParserAndEqualTheStream() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two presses, released, starting 5 s in: time for the web server to be watching (on a
        // busy machine it may miss the first; the comparisons hold for what it received).
        let recording = try DaemonRecordings.presses(in: directory, name: "presses", [(start: 5, seconds: 1), (start: 6.5, seconds: 1)])
        // The presses stay between 39 % and 47 % of full force: a threshold of 40 % makes one
        // PEAK per press.
        let daemon = try Self.daemonOnce(recording, in: directory, arguments: ["--threshold", "0.4"])
        defer { daemon.kill() }
        let web = try WebUnderTest(socket: directory.appendingPathComponent("sock").path)
        // Last-Event-ID 0: everything the server has had since it started.
        let stream = try EventStreamClient(port: web.port, key: web.key, lastEventID: 0)
        #expect(stream.response.status == 200)
        #expect(stream.response.headers["content-type"]?.hasPrefix("text/event-stream") == true)
        // The second press's release ends the recording.
        try stream.waitUntil("the second press's release") { events in
            events.filter { $0.event == "reading" && $0.data.contains(#""contacts":0"#) }.count >= 2
        }
        let readings = stream.events.filter { $0.event == "reading" }.map { try! JSONValue.parse($0.data) }
        let peaks = stream.events.filter { $0.event == "peak" }.map { try! JSONValue.parse($0.data) }
        #expect(readings.count > 100)
        #expect(peaks.count >= 1)
        let last = try #require(readings.last)

        let text = try web.get("/metrics")
        let checked = try Self.promtool(text)
        #expect(checked.status == 0, "promtool check metrics: \(checked.stdout) \(checked.stderr)\n\(text)")
        func sample(_ name: String, in exposition: String) -> Double? {
            exposition.split(separator: "\n").first { $0.hasPrefix(name + " ") || $0.hasPrefix(name + "{") }
                .flatMap { Double($0.split(separator: " ").last ?? "") }
        }
        #expect(sample("forcescale_readings_total", in: text) == Double(readings.count))
        #expect(sample("forcescale_peaks_total", in: text) == Double(peaks.count))
        #expect(sample("forcescale_weight_grams", in: text) == (last.number("settled_grams") ?? last.number("grams")))
        #expect(sample("forcescale_force_ratio", in: text) == last.number("force"))
        #expect(sample("forcescale_raw", in: text) == last.number("raw"))
        #expect(sample("forcescale_contacts", in: text) == 0)
        #expect(sample("forcescale_daemon_up", in: text) == 1)
        #expect(sample("forcescale_peak_grams_count", in: text) == Double(peaks.count))
        let peakSum = peaks.compactMap { $0.number("grams") }.reduce(0, +)
        #expect(abs((sample("forcescale_peak_grams_sum", in: text) ?? -1) - peakSum) < 1e-6)
        #expect(text.contains(#"forcescale_build_info{version=""#))

        let open = try web.request("GET", "/metrics", headers: ["Accept": "application/openmetrics-text; version=1.0.0"])
        #expect(open.headers["content-type"]?.hasPrefix("application/openmetrics-text; version=1.0.0") == true)
        let parsed = try python("""
            import sys
            from prometheus_client.openmetrics.parser import text_string_to_metric_families
            for family in text_string_to_metric_families(open(sys.argv[1]).read()):
                for s in family.samples:
                    if 'le' not in s.labels:
                        print(s.name, float(s.value))
            """, input: open.text)
        #expect(parsed.status == 0, "the OpenMetrics parser: \(parsed.stderr)\n\(open.text)")
        #expect(sample("forcescale_readings_total", in: parsed.stdout) == Double(readings.count))
        #expect(sample("forcescale_peak_grams_count", in: parsed.stdout) == Double(peaks.count))
        #expect(sample("forcescale_weight_grams", in: parsed.stdout) == (last.number("settled_grams") ?? last.number("grams")))
    }

    @Test func theStreamCarriesTheDaemonsLinesUnchangedWithIncreasingIDs() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        let watcher = try daemon.connect()
        _ = watcher.request(#"{"class":"WATCH","enable":true}"#)
        let stream = try EventStreamClient(port: web.port, key: web.key)
        #expect(stream.retry == nil || stream.retry == 2000)
        try stream.waitUntil("50 readings and a peak") { events in
            events.filter { $0.event == "reading" }.count >= 50 && events.contains { $0.event == "peak" }
        }
        #expect(stream.retry == 2000)
        #expect(stream.events.first == ParsedEvent(id: stream.events.first?.id, event: "daemon", data: #"{"up":true}"#))
        let ids = stream.events.compactMap(\.id)
        #expect(ids.count == stream.events.count)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        // Every line the daemon sent its own watcher after the stream's first reading is in
        // the stream, byte for byte (the two connections started at different moments).
        var direct: [String] = []
        while direct.count < 60, let line = watcher.readLine() {
            if line.contains(#""class":"READING""#) || line.contains(#""class":"PEAK""#) { direct.append(line) }
        }
        try stream.waitUntil("the stream to pass the watcher's lines") { events in
            let data = Set(events.map(\.data))
            return direct.suffix(20).allSatisfy { data.contains($0) }
        }
        let streamed = stream.events.filter { $0.event != "daemon" }.map(\.data)
        #expect(direct.suffix(20).allSatisfy { streamed.contains($0) })
    }

    @Test func aClientResumesFromLastEventIDAndSeesTheDaemonGoAndCome() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        var stream = try EventStreamClient(port: web.port, key: web.key)
        try stream.waitUntil("20 readings") { $0.filter { $0.event == "reading" }.count >= 20 }
        let seen = try #require(stream.events.filter { $0.event == "reading" }.dropFirst(10).first?.id)
        stream = try EventStreamClient(port: web.port, key: web.key, lastEventID: seen)
        try stream.waitUntil("the events after \(seen)") { $0.count >= 3 }
        // The ring still has what followed `seen`: the first event is the very next one.
        #expect(stream.events.first?.id == seen + 1)
        #expect(stream.events.first?.event == "reading")
        try stream.waitUntil("the daemon's state after the missed events") { $0.contains { $0.event == "daemon" } }

        #expect(try web.get("/api/status").hasPrefix(#"{"up":true,"control":false,"status":{"class":"STATUS","#))
        // What the daemon says it reads, for the info metric.
        #expect(try web.get("/metrics").contains(#"forcescale_device_info{device="\#(DaemonRecordings.intuosDeviceName)",name="#))
        daemon.child.signal(SIGTERM)
        try stream.waitUntil("the daemon to be reported gone") { $0.last?.event == "daemon" && $0.last?.data == #"{"up":false}"# }
        #expect(try web.get("/api/status") == #"{"up":false,"control":false,"status":null}"# + "\n")
        #expect(try web.get("/metrics").contains("\nforcescale_daemon_up 0\n"))
        _ = daemon.child.wait()
        try daemon.restart()
        let before = stream.events.count
        try stream.waitUntil("the daemon back, and readings again") { events in
            let after = events.dropFirst(before)
            return after.first == ParsedEvent(id: after.first?.id, event: "daemon", data: #"{"up":true}"#)
                && after.contains { $0.event == "reading" }
        }
        #expect(try web.get("/metrics").contains("\nforcescale_daemon_up 1\n"))
    }

    @Test func aHundredClientsGetEveryEventWhileOneNeverReads() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.busy(in: directory))
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        // Connects, asks, and never reads a byte: a small receive buffer fills at once.
        let stuck = try HTTPTestConnection(port: web.port, receiveBuffer: 4096)
        try stuck.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(web.key)\r\n\r\n")
        var clients: [EventStreamClient] = []
        for _ in 0..<100 { clients.append(try EventStreamClient(port: web.port, key: web.key)) }
        // From the first event every client has after the last one connected (greetings take
        // ids too, so earlier ids may differ), each gets the same, gapless run of events.
        let collect = 300
        try waitFor("every client to get \(collect) events", saw: { "\(clients.map { $0.events.count }.min() ?? 0) at least" }, between: {
            for client in clients { client.poll(timeout: 0) }
            usleep(5000)
        }) {
            clients.allSatisfy { $0.events.filter { $0.event == "reading" }.count >= collect }
        }
        let greetings = clients.map { client -> UInt64 in client.events.first { $0.event == "daemon" }?.id ?? 0 }
        let start = try #require(greetings.max())
        let runs = clients.map { client in client.events.filter { $0.event == "reading" && $0.id! > start }.map { $0.id! } }
        let common = runs.map { $0.count }.min() ?? 0
        #expect(common > 100)
        for (index, run) in runs.enumerated() {
            #expect(Array(run.prefix(common)) == Array(runs[0].prefix(common)), "client \(index)")
            #expect(zip(run, run.dropFirst()).allSatisfy { $1 == $0 + 1 }, "client \(index) has a gap")
            #expect(clients[index].comments.allSatisfy { !$0.contains("skipped") }, "client \(index)")
        }
        // The one that never read holds nothing of the server's but its place in the shared
        // ring (EventCursor); the server goes on.
        #expect(web.child.isRunning)
        withExtendedLifetime(stuck) {}
    }

    @Test func badRequestsGetTheirStatusWhileAStreamGoesOn() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        let stream = try EventStreamClient(port: web.port, key: web.key)
        // A client that sends half its headers and stops.
        let slow = try HTTPTestConnection(port: web.port)
        try slow.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")

        #expect(try web.request("GET", "/nope").status == 404)
        let wrongMethod = try web.request("POST", "/metrics")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        #expect(try web.request("GET", "/api/tare").headers["allow"] == "POST")
        #expect(try web.request("POST", "/api/tare", headers: ["Origin": "http://127.0.0.1:\(web.port)"], body: Array(repeating: 65, count: 5000)).status == 413)
        // A chunked body that grows past the limit.
        let chunked = try HTTPTestConnection(port: web.port)
        try chunked.send("POST /api/tare HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + String(repeating: "400\r\n" + String(repeating: "a", count: 1024) + "\r\n", count: 3) + "0\r\n\r\n")
        #expect(try chunked.readResponse().status == 413)
        #expect(try web.request("GET", "/metrics", headers: ["X-Big": String(repeating: "a", count: 20000)]).status == 431)
        let malformed = try HTTPTestConnection(port: web.port)
        try malformed.send("GARBAGE\r\n\r\n")
        #expect(malformed.closes(within: patience))
        let noHost = try HTTPTestConnection(port: web.port)
        try noHost.send("GET /metrics HTTP/1.1\r\n\r\n")
        #expect(try noHost.readResponse().status == 400)
        // A body far too big to read through: the connection is closed.
        let huge = try HTTPTestConnection(port: web.port)
        try huge.send("POST /api/tare HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
        #expect(huge.closes(within: patience))
        // Without --allow-control, tare is refused whatever the origin.
        let tare = try web.request("POST", "/api/tare", headers: ["Origin": "http://127.0.0.1:\(web.port)"])
        #expect(tare.status == 403)
        #expect(tare.text.contains("--allow-control"))

        // The slow client is closed after the connection timeout (10 s), and the stream
        // went on all along.
        #expect(slow.closes(within: patience))
        let count = stream.events.count
        try stream.waitUntil("more events after the bad requests") { $0.count > count + 10 }
        #expect(try web.get("/metrics").contains("forcescale_readings_total"))
    }

    @Test func tareNeedsAllowControlAndThePagesOrigin() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath, arguments: ["--allow-control"])
        try waitFor("the daemon to be connected") { try web.get("/api/status").hasPrefix(#"{"up":true"#) }
        #expect(try web.get("/api/status").hasPrefix(#"{"up":true,"control":true,"status":{"#), "the page is told that tare works here")
        let page = "http://127.0.0.1:\(web.port)"
        let tare = try web.request("POST", "/api/tare", headers: ["Origin": page])
        #expect(tare.status == 200, "\(tare.text)")
        #expect(tare.text.hasPrefix(#"{"class":"TARE","#))
        #expect(try web.request("POST", "/api/tare", headers: ["Origin": "http://evil.example"]).status == 403)
        #expect(try web.request("POST", "/api/tare").status == 403)
        // A name that is not this server's gets no further than the Host check.
        #expect(try web.request("POST", "/api/tare", headers: ["Origin": "http://evil.example:\(web.port)", "Host": "evil.example:\(web.port)"]).status == 421)
    }

    @Test func anIdleStreamGetsAKeepAliveAndTheDaemonsAbsence() throws {
        // No daemon at all: the stream says so, then stays open with keep-alives (every 15 s).
        let web = try WebUnderTest(socket: "/nonexistent/sock")
        let stream = try EventStreamClient(port: web.port, key: web.key)
        try stream.waitUntil("the daemon's absence") { $0.first?.event == "daemon" && $0.first?.data == #"{"up":false}"# }
        try waitFor("a keep-alive comment", within: patience, saw: { "comments \(stream.comments), closed \(stream.isClosed)" },
                    between: { stream.poll(timeout: 0.2) }) { stream.comments.contains(" keep-alive") }
        #expect(!stream.isClosed)
    }

    @Test func stoppingEndsEveryStreamAndExitsCleanly() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        let streams = try (0..<5).map { _ in try EventStreamClient(port: web.port, key: web.key) }
        for stream in streams { try stream.waitUntil("a reading") { $0.contains { $0.event == "reading" } } }
        let stopped = web.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        for stream in streams {
            try waitFor("the stream to end", between: { stream.poll(timeout: 0.05) }) { stream.isClosed }
        }
    }

    @Test func aStreamsClientLeavingIsNoWarning() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Readings every 10 ms without end: the server writes to the stream that left at once.
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.busy(in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        do {
            let leaving = try EventStreamClient(port: web.port, key: web.key)
            try leaving.waitUntil("a reading") { $0.contains { $0.event == "reading" } }
        }
        // Another stream's 200 readings (2 s of them) take the server well past its next
        // write to the one that left.
        let staying = try EventStreamClient(port: web.port, key: web.key)
        try staying.waitUntil("200 readings") { $0.filter { $0.event == "reading" }.count >= 200 }
        let stopped = web.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("libmicrohttpd"), "\(stopped.stderr)")
    }

    @Test func usageAndListeningErrorsHaveTheirExitStatus() throws {
        let bad = try CLI.run(["--listen", "example.com:80"], product: "forcescale-web")
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--listen example.com:80"))
        let help = try CLI.run(["--help"], product: "forcescale-web")
        #expect(help.status == 0)
        #expect(help.stdout.contains("--allow-control"))
        #expect(help.stdout.contains("127.0.0.1:19385"))
        // The man page is what an installed user has; docs/web.md is in the source tree only.
        #expect(help.stdout.contains("See forcescale-web(1)."), "\(help.stdout)")
        #expect(!help.stdout.contains("docs/"), "\(help.stdout)")
        // A port that is taken: 69, and the message names it.
        let holder = try WebUnderTest(socket: "/nonexistent/sock")
        let taken = try CLI.run(["--socket", "/nonexistent/sock", "--listen", "127.0.0.1:\(holder.port)"], product: "forcescale-web")
        #expect(taken.status == 69)
        #expect(taken.stderr.contains("127.0.0.1:\(holder.port)"))
        // Without a daemon it serves all the same and says the daemon is down.
        #expect(try holder.get("/api/status") == #"{"up":false,"control":false,"status":null}"# + "\n")
        #expect(try holder.get("/metrics").contains("\nforcescale_daemon_up 0\n"))
    }

    @Test func socketActivationServesTheInheritedSocket() throws {
        // A free port: bound by the kernel's choice, then let go for the activator to take.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        let port = UInt16(bigEndian: address.sin_port)
        close(probe)
        let keys = try CLI.temporaryDirectory()
        let child = try ChildProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", "127.0.0.1:\(port)", CLI.binDirectory.appendingPathComponent("forcescale-web").path, "--socket", "/nonexistent/sock",
             "--key-dir", keys.path])
        let web = WebUnderTest(child: child, port: port, keyDirectory: keys)
        // The activator listens at once and starts the program on the first connection.
        // (Its keys are written once it starts: the first requests may go without.)
        let metrics = try waitForValue("the activated server to answer", saw: { child.stderr }) { try? web.get("/metrics") }
        #expect(metrics.contains("forcescale_daemon_up 0"))
        #expect(child.stderr.contains("listening on http://127.0.0.1:\(port)/"))
        let stopped = web.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
    }
}
