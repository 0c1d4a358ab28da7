import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// The CLI against a daemon from the future: a later minor version of the protocol with a
/// gram model, fields and a class this forcescale does not know. The protocol promises that
/// such a client keeps working; above all it must not drop the readings.
@Suite struct FutureDaemonTests {
    /// A reading by a model this build does not know, stable with something on the pad, with
    /// a field this build does not know either (`tilt`).
    static func reading(_ index: Int) -> String {
        let microseconds = 100_000_000 + index * 20_000
        let time = "\(microseconds / 1_000_000)." + String(String(microseconds % 1_000_000 + 1_000_000).dropFirst())
        return #"{"class":"READING","device":"event7","time":"# + time
            + #","tilt":[0.25,-1.5],"raw":120,"force":0.4706,"grams":123.4,"saturated":false,"contacts":1,"stable":true,"model":"future-model"}"#
    }

    @Test func watchJSONPassesTheReadingsOfAnUnknownModelThrough() throws {
        let daemon = try FutureDaemon()
        defer { daemon.stop() }
        let watch = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescale").path, ["watch", "--json", "--socket", daemon.socketPath])
        #expect(daemon.waitForReadingsSent(5), "waited \(formatSeconds(patience)) s for the stand-in to send 5 readings")
        // Stopped once it has printed what the checks need, not after a fixed time.
        try waitFor("three lines from forcescale watch --json", every: 0.02, saw: { "\(watch.stdout.debugDescription) \(watch.stderr)" }) {
            watch.stdout.split(separator: "\n").count >= 3
        }
        watch.signal(SIGINT)
        let watched = watch.wait()
        #expect(watched.exited && watched.status == 0, "\(watched.stderr)")
        let lines = watched.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count >= 3, "\(watched.stdout)")
        // Exactly as sent, in order: the unknown class between them is not a stream line.
        #expect(lines == (0..<lines.count).map(Self.reading), "\(watched.stdout)")
        #expect(daemon.requests.first == #"{"class":"WATCH","enable":true}"#)
    }

    @Test func theGaugeShowsTheReadingsAndNamesTheUnknownModel() throws {
        let daemon = try FutureDaemon()
        defer { daemon.stop() }
        let gauge = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescale").path, ["watch", "--socket", daemon.socketPath])
        #expect(daemon.waitForReadingsSent(5), "waited \(formatSeconds(patience)) s for the stand-in to send 5 readings")
        try waitFor("three lines from forcescale watch", every: 0.02, saw: { "\(gauge.stdout.debugDescription) \(gauge.stderr)" }) {
            gauge.stdout.split(separator: "\n").count >= 3
        }
        gauge.signal(SIGINT)
        let gauged = gauge.wait()
        #expect(gauged.exited && gauged.status == 0, "\(gauged.stderr)")
        let lines = gauged.stdout.split(separator: "\n")
        #expect(lines.count >= 3, "\(gauged.stdout)")
        // Standard output is a file: a line per reading, 47% of force, 123.4 g, stable.
        #expect(lines.allSatisfy { $0.contains(" s    47%      123.4 g  ") && $0.hasSuffix("  stable  future-model model") }, "\(gauged.stdout)")
    }

    @Test func weighTakesAStableReadingOfAnUnknownModel() throws {
        let daemon = try FutureDaemon()
        defer { daemon.stop() }
        let socket = ["--socket", daemon.socketPath]
        // Generous for the machine's sake: weigh returns at the first stable reading.
        let weigh = try forcescale(["weigh", "--timeout", "30"] + socket)
        #expect(weigh.status == 0, "\(weigh.stderr)")
        #expect(weigh.stdout == "123.4 g\n")
        let weighJSON = try forcescale(["weigh", "--json", "--timeout", "30"] + socket)
        #expect(weighJSON.status == 0, "\(weighJSON.stderr)")
        // From the stream or from POLL, the line is the daemon's READING, byte for byte.
        let line = try #require(weighJSON.stdout.split(separator: "\n").first.map(String.init))
        #expect(weighJSON.stdout == line + "\n" && line.hasPrefix(#"{"class":"READING","device":"event7","time":1"#))
        #expect(line.hasSuffix(#","raw":120,"force":0.4706,"grams":123.4,"saturated":false,"contacts":1,"stable":true,"model":"future-model"}"#))
        // STATUS first: whether the daemon has a device open at all, and which; then the
        // stream and the newest reading of that device.
        let watch = #"{"class":"WATCH","enable":true,"device":"event7"}"#, poll = #"{"class":"POLL","device":"event7"}"#
        #expect(daemon.requests.prefix(6) == [#"{"class":"STATUS"}"#, watch, poll, #"{"class":"STATUS"}"#, watch, poll])
    }

    /// forcescale-web passes the daemon's lines on as it received them: a field this build
    /// does not know reaches `/events` and `/api/status` byte for byte.
    @Test func forcescaleWebForwardsTheDaemonsLinesByteForByte() throws {
        let daemon = try FutureDaemon()
        defer { daemon.stop() }
        let web = try WebUnderTest(socket: daemon.socketPath)
        defer { _ = web.stop() }
        let stream = try EventStreamClient(port: web.port, key: web.key)
        try stream.waitUntil("three readings on /events") { $0.filter { $0.event == "reading" }.count >= 3 }
        let readings = stream.events.filter { $0.event == "reading" }.map(\.data)
        // Each is one of the stand-in's lines, unknown field and all, in the order sent.
        let first = try #require((0..<1000).first { Self.reading($0) == readings.first }, "not a line the stand-in sent: \(readings.first ?? "")")
        #expect(readings == (first..<first + readings.count).map(Self.reading))
        #expect(readings.allSatisfy { $0.contains(#","tilt":[0.25,-1.5],"#) })
        try waitFor("/api/status to find the daemon up") { try web.get("/api/status").hasPrefix(#"{"up":true"#) }
        #expect(try web.get("/api/status") == #"{"up":true,"control":false,"status":"# + FutureDaemon.status + "}\n")
    }

    @Test func statusShowsTheUnknownModelByName() throws {
        let daemon = try FutureDaemon()
        defer { daemon.stop() }
        let status = try forcescale(["status", "--socket", daemon.socketPath])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.hasPrefix("forcescaled 9.9.0 on \(daemon.socketPath)\n"), "\(status.stdout)")
        #expect(status.stdout.contains("\n  device      event7, future-model model\n"), "\(status.stdout)")
        let json = try forcescale(["status", "--json", "--socket", daemon.socketPath])
        #expect(json.stdout == FutureDaemon.status + "\n")
        #expect(daemon.requests == [#"{"class":"STATUS"}"#, #"{"class":"STATUS"}"#])
    }
}

/// A stand-in for a later forcescaled on a real Unix socket, written from docs/protocol.md
/// rather than from ScaleCore's writers: greets with a higher minor version and a field
/// this build does not know, answers WATCH (then a line of an unknown class, then a READING
/// every 20 ms), POLL and STATUS, and records the requests it gets. Each connection is
/// served on a thread of its own until the client leaves or the test stops it.
final class FutureDaemon: @unchecked Sendable {
    static let version = #"{"class":"VERSION","release":"9.9.0","proto_major":1,"proto_minor":8,"features":["future-model"]}"#
    static let unknownClass = #"{"class":"FORECAST","grams":130.0}"#
    static let status = #"{"class":"STATUS","release":"9.9.0","uptime":12.5,"clients":1,"device":"event7","model":"future-model","calibration":{"points":0,"tare":0.0,"fit":"power"},"dropped":0,"temperature":31.5}"#

    let directory: URL
    var socketPath: String { directory.appendingPathComponent("future.sock").path }
    private let listener: Int32
    /// Written once to stop every thread: each polls its read end beside its socket.
    private let stopPipe: [Int32]
    private let condition = NSCondition()
    private var receivedRequests: [String] = []
    private var readingsSent = 0
    private var running = 0

    init() throws {
        directory = try CLI.temporaryDirectory()
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw DaemonTestError(description: "pipe: \(errno)") }
        stopPipe = pipeEnds
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let path = directory.appendingPathComponent("future.sock").path
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 8) == 0 else {
            throw DaemonTestError(description: "cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        start { self.acceptLoop() }
    }

    /// The request lines received so far, over all connections, in order.
    var requests: [String] {
        condition.lock()
        defer { condition.unlock() }
        return receivedRequests
    }

    /// Waits until `count` READING lines have been sent, over all connections.
    /// - Returns: Whether they were within `timeout` seconds.
    func waitForReadingsSent(_ count: Int, timeout: Double = patience) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while readingsSent < count, condition.wait(until: deadline) {}
        return readingsSent >= count
    }

    /// Stops every thread, waits for them, and removes the socket's directory.
    func stop() {
        _ = write(stopPipe[1], "x", 1)
        let deadline = Date().addingTimeInterval(patience)
        condition.lock()
        while running > 0, condition.wait(until: deadline) {}
        condition.unlock()
        close(listener)
        close(stopPipe[0])
        close(stopPipe[1])
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: Threads

    private func start(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        running += 1
        condition.unlock()
        Thread {
            body()
            self.condition.lock()
            self.running -= 1
            self.condition.broadcast()
            self.condition.unlock()
        }.start()
    }

    /// Waits up to `milliseconds` for `descriptor` to be readable.
    /// - Returns: `nil` once told to stop, else whether it is readable.
    private func wait(for descriptor: Int32, milliseconds: Int32) -> Bool? {
        var entries = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: stopPipe[0], events: Int16(POLLIN), revents: 0)]
        let ready = poll(&entries, 2, milliseconds)
        if ready > 0, entries[1].revents != 0 { return nil }
        return ready > 0 && entries[0].revents != 0
    }

    private func acceptLoop() {
        while let readable = wait(for: listener, milliseconds: 1000) {
            guard readable else { continue }
            // Glibc's module leaves accept4 out; the children the tests start must not
            // inherit the connection, or a client's exit would not end it.
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            start { self.serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        guard send(Self.version, on: connection) else { return }
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var watching = false
        var sent = 0
        while let readable = wait(for: connection, milliseconds: 20) {
            if readable {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                pending += chunk[..<count]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    condition.lock()
                    receivedRequests.append(line)
                    condition.unlock()
                    let className = (try? JSONValue.parse(line))?["class"]?.stringValue ?? ""
                    let reply: [String]
                    switch className {
                    case "WATCH":
                        watching = true
                        reply = [#"{"class":"WATCH","enable":true}"#, Self.unknownClass]
                    case "POLL":
                        reply = [#"{"class":"POLL","time":101.0,"reading":"# + FutureDaemonTests.reading(sent) + "}"]
                    case "STATUS":
                        reply = [Self.status]
                    default:
                        reply = [#"{"class":"ERROR","message":"not served by this stand-in","request":""# + className + #""}"#]
                    }
                    for line in reply where !send(line, on: connection) { return }
                }
            } else if watching {
                guard send(FutureDaemonTests.reading(sent), on: connection) else { return }
                sent += 1
                condition.lock()
                readingsSent += 1
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// Sends a line and its newline. - Returns: false once the client has gone.
    private func send(_ line: String, on connection: Int32) -> Bool {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }
}
