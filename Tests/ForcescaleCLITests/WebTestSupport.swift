import Foundation
import Glibc
import ScaleCore
import TestWaiting
import Testing

/// A forcescale-web started on a free loopback port, as a child process, for the end-to-end
/// tests of Tests/ForcescaleCLITests/WebServerTests.swift. It writes its access keys into a
/// directory of its own (`--key-dir`), and `request` sends the best of them (the control key
/// with `--allow-control`, else the read key) unless told to send none: the tests of what
/// the endpoints do enter as the allowed user does, and those of who may enter say so.
final class WebUnderTest {
    let child: ChildProcess
    /// The port it reported in its `listening on http://127.0.0.1:PORT/` line.
    let port: UInt16
    /// Its `--key-dir`, removed with it.
    let keyDirectory: URL
    /// The read key, and the control key when it made one; empty before it wrote them (a
    /// program that systemd-socket-activate starts on the first connection).
    var readKey: String { (try? Self.keys(in: keyDirectory))?.read ?? "" }
    var controlKey: String? { (try? Self.keys(in: keyDirectory))?.control }
    /// The key requests carry by default: the control key when there is one.
    var key: String { controlKey ?? readKey }
    /// The address that lets a browser in (`?key=`), as forcescale-web-open and make run open it.
    var keyedURL: String { "http://127.0.0.1:\(port)/?key=\(key)" }

    /// Starts `forcescale-web --socket SOCKET --listen 127.0.0.1:0 --key-dir DIR ARGUMENTS`
    /// and waits for the line that names its address.
    init(socket: String, arguments: [String] = []) throws {
        keyDirectory = try CLI.temporaryDirectory()
        child = try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescale-web").path,
            ["--socket", socket, "--listen", "127.0.0.1:0", "--key-dir", keyDirectory.path] + arguments)
        port = try Self.waitForPort(child)
        _ = try Self.keys(in: keyDirectory)
    }

    /// Adopts a process started otherwise (systemd-socket-activate) on a known port, with
    /// its keys in `keyDirectory` (which it removes).
    init(child: ChildProcess, port: UInt16, keyDirectory: URL) {
        self.child = child
        self.port = port
        self.keyDirectory = keyDirectory
    }

    /// The keys forcescale-web wrote into `directory` (they are there before it says where
    /// it listens).
    static func keys(in directory: URL) throws -> (read: String, control: String?) {
        func key(_ name: String) -> String? {
            (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let read = key("read-key") else {
            throw DaemonTestError(description: "no read-key in \(directory.path)")
        }
        return (read, key("control-key"))
    }

    static func waitForPort(_ child: ChildProcess) throws -> UInt16 {
        try waitForValue("forcescale-web to say where it listens", saw: { "its stderr: \(child.stderr.suffix(2000))" }) {
            guard child.isRunning else {
                throw DaemonTestError(description: "forcescale-web exited at start: \(child.wait().stderr)")
            }
            guard let range = child.stderr.range(of: "listening on http://127.0.0.1:") else { return nil }
            return UInt16(child.stderr[range.upperBound...].prefix { $0.isNumber })
        }
    }

    deinit {
        child.kill()
        try? FileManager.default.removeItem(at: keyDirectory)
    }

    var stderr: String { child.stderr }

    func stop(timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        child.signal(SIGTERM)
        return child.wait(timeout: timeout, sourceLocation: sourceLocation)
    }

    /// One request on a connection of its own, with `Host: 127.0.0.1:PORT` unless `headers`
    /// has another, and `Authorization: Bearer` with `key` when `authorized`.
    func request(_ method: String = "GET", _ path: String, headers: [String: String] = [:], body: [UInt8] = [], authorized: Bool = true) throws -> HTTPTestResponse {
        let connection = try HTTPTestConnection(port: port)
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if headers["Host"] == nil { head += "Host: 127.0.0.1:\(port)\r\n" }
        if authorized, headers["Authorization"] == nil { head += "Authorization: Bearer \(key)\r\n" }
        head += "Connection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try connection.send(Array((head + "\r\n").utf8) + body)
        return try connection.readResponse()
    }

    /// The body of a successful GET.
    func get(_ path: String, headers: [String: String] = [:]) throws -> String {
        let response = try request("GET", path, headers: headers)
        guard response.status == 200 else {
            throw DaemonTestError(description: "GET \(path): \(response.status) \(response.text)")
        }
        return response.text
    }
}

/// A response as the tests look at it.
struct HTTPTestResponse {
    var status: Int
    /// Header names in lower case.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// A TCP connection to 127.0.0.1 whose every read waits with a deadline (`poll`).
final class HTTPTestConnection {
    /// -1 once closed: deinit runs also when a whole instance's init throws, and closing a
    /// number twice could close another test's descriptor given that number in between.
    private(set) var descriptor: Int32
    private(set) var buffer: [UInt8] = []
    private(set) var reachedEnd = false

    /// - Parameters:
    ///   - receiveBuffer: SO_RCVBUF, to make a client that never reads fill up sooner.
    ///   - source: The loopback address to connect from (`127.0.0.2`…), for a peer address
    ///     other than 127.0.0.1.
    init(port: UInt16, receiveBuffer: Int32? = nil, from source: String? = nil) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw DaemonTestError(description: "socket: \(errno)") }
        if var size = receiveBuffer {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let error = errno
                closeOnce()
                throw DaemonTestError(description: "bind to \(source): \(String(cString: strerror(error)))")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            let error = errno
            closeOnce()
            throw DaemonTestError(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(error)))")
        }
    }

    deinit { closeOnce() }

    private func closeOnce() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw DaemonTestError(description: "send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Reads what is there, waiting at most `timeout` seconds for something. - Returns: false
    /// when nothing came in time.
    @discardableResult
    func fill(timeout: Double) -> Bool {
        guard !reachedEnd else { return false }
        switch receiveOnce(from: descriptor, waitingMilliseconds: Int32(max(0, timeout * 1000)), into: &buffer) {
        case .timedOut, .interrupted: return false
        case .received: return true
        case .ended:
            reachedEnd = true
            return true
        }
    }

    /// Takes `count` bytes off the front of what was read.
    func take(_ count: Int) -> [UInt8] {
        defer { buffer.removeFirst(count) }
        return Array(buffer.prefix(count))
    }

    /// Reads one whole response: its head, then a body of Content-Length, chunked, or to the
    /// end of the connection.
    func readResponse(timeout: Double = patience) throws -> HTTPTestResponse {
        let deadline = monotonicNow() + timeout
        func more(_ what: String) throws {
            guard !reachedEnd, fill(timeout: deadline - monotonicNow()) else {
                throw DaemonTestError(description: "no \(what) in \(formatSeconds(timeout)) s; got \(String(decoding: buffer.prefix(500), as: UTF8.self))")
            }
        }
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.indices.dropLast(3).first { buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10 }
            if headEnd == nil { try more("response head") }
        }
        let head = String(decoding: take(headEnd! + 4), as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        var body: [UInt8] = []
        if let length = headers["content-length"].flatMap({ Int($0) }) {
            while buffer.count < length { try more("body") }
            body = take(length)
        } else if headers["transfer-encoding"] == "chunked" {
            while true {
                var lineEnd: Int? = nil
                while lineEnd == nil {
                    lineEnd = buffer.indices.dropLast().first { buffer[$0] == 13 && buffer[$0 + 1] == 10 }
                    if lineEnd == nil { try more("chunk size") }
                }
                let size = Int(String(decoding: take(lineEnd! + 2).dropLast(2), as: UTF8.self), radix: 16) ?? 0
                while buffer.count < size + 2 { try more("chunk") }
                body += take(size + 2).dropLast(2)
                if size == 0 { break }
            }
        } else {
            while !reachedEnd { try more("body to the end of the connection") }
            body = take(buffer.count)
        }
        return HTTPTestResponse(status: status, headers: headers, body: body)
    }

    /// Whether the server closes the connection within `timeout` seconds (what it sends
    /// meanwhile is read and dropped).
    func closes(within timeout: Double) -> Bool {
        let deadline = monotonicNow() + timeout
        while !reachedEnd {
            buffer.removeAll()
            guard fill(timeout: deadline - monotonicNow()) || reachedEnd else { return false }
        }
        return true
    }
}

/// One SSE event as a test client parsed it.
struct ParsedEvent: Equatable {
    var id: UInt64?
    var event: String
    var data: String
}

/// A `/events` client that parses the stream as a browser's EventSource would (the fields
/// this server sends), reading the chunked body by hand.
final class EventStreamClient {
    let connection: HTTPTestConnection
    private(set) var events: [ParsedEvent] = []
    private(set) var comments: [String] = []
    private(set) var retry: Int?
    private var body: [UInt8] = []
    private var current = ParsedEvent(id: nil, event: "message", data: "")
    private var hasData = false
    /// The response's status and headers.
    let response: HTTPTestResponse

    /// - Parameter key: The key to send (`Authorization: Bearer`), none when `nil`.
    init(port: UInt16, key: String?, lastEventID: UInt64? = nil, from source: String? = nil) throws {
        connection = try HTTPTestConnection(port: port, from: source)
        var head = "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        if let key { head += "Authorization: Bearer \(key)\r\n" }
        if let lastEventID { head += "Last-Event-ID: \(lastEventID)\r\n" }
        try connection.send(head + "\r\n")
        // The head only: the body never ends.
        let deadline = monotonicNow() + patience
        var headEnd: Int?
        while headEnd == nil {
            let buffer = connection.buffer
            headEnd = buffer.indices.dropLast(3).first { buffer[$0] == 13 && buffer[$0 + 1] == 10 && buffer[$0 + 2] == 13 && buffer[$0 + 3] == 10 }
            if headEnd == nil {
                guard connection.fill(timeout: deadline - monotonicNow()) else { throw DaemonTestError(description: "no response head from /events") }
            }
        }
        let responseHead = String(decoding: connection.take(headEnd! + 4), as: UTF8.self)
        var headers: [String: String] = [:]
        for line in responseHead.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        let status = Int(responseHead.split(separator: " ").dropFirst().first ?? "") ?? 0
        response = HTTPTestResponse(status: status, headers: headers, body: [])
        decode()
    }

    /// Reads what has come, waiting at most `timeout` seconds. - Returns: whether anything came.
    @discardableResult
    func poll(timeout: Double) -> Bool {
        guard connection.fill(timeout: timeout) else { return false }
        decode()
        return true
    }

    var isClosed: Bool { connection.reachedEnd }

    /// Waits until `condition` holds on the events read so far.
    func waitUntil(_ what: String, within seconds: Double = patience, _ condition: ([ParsedEvent]) -> Bool) throws {
        try waitFor(what, within: seconds, saw: { "\(events.count) events, the last: \(events.suffix(3)); closed: \(isClosed)" },
                    between: { self.poll(timeout: 0.05) }) { condition(self.events) }
    }

    private func decode() {
        // Chunked transfer: size line, data, CRLF.
        while let lineEnd = connection.buffer.indices.dropLast().first(where: { connection.buffer[$0] == 13 && connection.buffer[$0 + 1] == 10 }) {
            guard let size = Int(String(decoding: connection.buffer[..<lineEnd], as: UTF8.self), radix: 16) else { return }
            guard connection.buffer.count >= lineEnd + 2 + size + 2 else { return }
            _ = connection.take(lineEnd + 2)
            body += connection.take(size)
            _ = connection.take(2)
        }
        // Lines of the event stream.
        while let newline = body.firstIndex(of: 10) {
            let line = String(decoding: body[..<newline], as: UTF8.self)
            body.removeFirst(newline + 1)
            if line.isEmpty {
                if hasData || current.event != "message" { events.append(current) }
                current = ParsedEvent(id: nil, event: "message", data: "")
                hasData = false
            } else if line.hasPrefix(":") {
                comments.append(String(line.dropFirst()))
            } else if line.hasPrefix("id: ") {
                current.id = UInt64(line.dropFirst(4))
            } else if line.hasPrefix("event: ") {
                current.event = String(line.dropFirst(7))
            } else if line.hasPrefix("data: ") {
                current.data += (hasData ? "\n" : "") + line.dropFirst(6)
                hasData = true
            } else if line.hasPrefix("retry: ") {
                retry = Int(line.dropFirst(7))
            }
        }
    }
}

/// Reads `/proc/PID/status` fields (kB).
func processStatus(_ pid: pid_t, _ field: String) -> Int? {
    // Read with read(2): /proc's files report a size of 0, which Foundation's readers trust.
    let descriptor = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        bytes += chunk[..<count]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
}
