import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// The recordings the daemon tests serve.
enum DaemonRecordings {
    /// A pen dragged across a tablet for 1.5 s: readings all the time the pen presses, one
    /// PEAK, never a stable one. Served in a loop, a pass lasts about 2.5 s.
    static var intuos: String {
        CLI.recordings.appendingPathComponent("tablets/Wacom Intuos4 6x9.stylus-drag.events").path
    }

    /// The state file of the Intuos (`DeviceDescription.stateIdentity`: bus, vendor,
    /// product and the name reduced to `[a-z0-9-]`, from the recording's `I:` and `N:`).
    static let intuosStateFile = "0003-056a-00b9-wacom-intuos4-6x9.json"
    /// The device name the daemon gives a recording in READING, TARE, CALIBRATION…
    static let intuosDeviceName = "Wacom Intuos4 6x9.stylus-drag.events"

    /// The demo session (`forcescale demo --write`): a letter, an apple and a mug, each
    /// resting still for 2 s or more, so stable readings come within 3 s at any moment of a
    /// loop (a pass lasts about 13 s).
    static func demo(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("demo.events").path
        let written = try run(CLI.binDirectory.appendingPathComponent("forcescale").path, ["demo", "--write", path])
        #expect(written.status == 0, "forcescale demo --write: \(written.stderr)")
        return path
    }

    /// A synthetic touchpad pressed without pause for `seconds`, its pressure changing every
    /// 10 ms: the daemon sends a READING every throttle interval, about 100 a second, the
    /// most it ever sends. Made from the demo's device description.
    static func busy(in directory: URL, seconds: Int = 60) throws -> String {
        try presses(in: directory, name: "busy", [(start: 1, seconds: Double(seconds))], releaseTheLast: false)
    }

    /// A synthetic touchpad pressed at `start` for `seconds` (times of the recording), each
    /// press's pressure changing every 10 ms, and released after each press (the last one
    /// only if `releaseTheLast`). Made from the demo's device description.
    static func presses(in directory: URL, name: String, _ presses: [(start: Double, seconds: Double)], releaseTheLast: Bool = true) throws -> String {
        var text = try demoDevice(in: directory)
        for (index, press) in presses.enumerated() {
            let start = Int((press.start * 1_000_000).rounded())
            text += "E: \(stamp(start)) 0001 014a 1\nE: \(stamp(start)) 0001 0145 1\nE: \(stamp(start)) 0003 0000 400\nE: \(stamp(start)) 0003 0001 450\n"
            let frames = Int((press.seconds * 100).rounded())
            for frame in 0..<frames {
                let time = stamp(start + frame * 10_000)
                text += "E: \(time) 0003 0018 \(100 + frame % 20)\nE: \(time) 0000 0000 0\n"
            }
            if releaseTheLast || index < presses.count - 1 {
                let release = stamp(start + frames * 10_000)
                text += "E: \(release) 0001 014a 0\nE: \(release) 0001 0145 0\nE: \(release) 0003 0018 0\nE: \(release) 0000 0000 0\n"
            }
        }
        let path = directory.appendingPathComponent("\(name).events").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// The demo's device description (its lines before the first event): a 0-255 pressure
    /// touchpad with no resolution, so its readings use the nominal model.
    static func demoDevice(in directory: URL) throws -> String {
        let demo = try String(contentsOfFile: try self.demo(in: directory), encoding: .utf8)
        return demo.split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.hasPrefix("E:") }.joined(separator: "\n") + "\n"
    }

    /// An evemu event time: seconds and six decimals.
    static func stamp(_ microseconds: Int) -> String {
        "\(microseconds / 1_000_000)." + String(String(microseconds % 1_000_000 + 1_000_000).dropFirst())
    }
}

/// The monotonic clock in microseconds: the clock of the daemon's event times when it
/// serves a recording (RecordingScale restamps events on it, as the kernel stamps live ones).
func monotonicMicroseconds() -> Int64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
}

struct DaemonTestError: Error, CustomStringConvertible {
    var description: String
}

// MARK: - Processes

/// What a finished process did.
struct ProcessResult {
    var status: Int32
    /// Whether it exited (rather than dying of a signal, or being killed for taking too long).
    var exited: Bool
    var timedOut: Bool
    var stdout: String
    var stderr: String
}

/// A child process with standard output and error going to files (no pipe can fill up and
/// stall it), which is killed if it outlives its welcome.
final class ChildProcess {
    let process = Process()
    private let outputFile: URL
    private let errorFile: URL

    /// The command line, for failure messages.
    let commandLine: String

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        commandLine = ([executable] + arguments).joined(separator: " ")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = CLI.cleanEnvironment(environment)
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("forcescale-child-\(UUID().uuidString)")
        outputFile = base.appendingPathExtension("out")
        errorFile = base.appendingPathExtension("err")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardInput = FileHandle.nullDevice
        // Both closed in this process as soon as the child has them (CLI.run says why).
        let output = try FileHandle(forWritingTo: outputFile)
        let error = try FileHandle(forWritingTo: errorFile)
        process.standardOutput = output
        process.standardError = error
        defer {
            try? output.close()
            try? error.close()
        }
        try process.run()
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: outputFile)
        try? FileManager.default.removeItem(at: errorFile)
    }

    var pid: pid_t { process.processIdentifier }
    var isRunning: Bool { process.isRunning }
    var stdout: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    var stderr: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    func signal(_ number: Int32) {
        if process.isRunning { Glibc.kill(process.processIdentifier, number) }
    }

    /// Waits for the process to end; kills it after `timeout` seconds, which is a failure
    /// of the test that says so.
    @discardableResult
    func wait(timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        let timedOut: Bool
        do {
            try waitFor("\(commandLine) to exit", within: timeout, every: 0.005, saw: { "it still running; its stderr: \(stderr.suffix(2000))" }) {
                !process.isRunning
            }
            timedOut = false
        } catch {
            Issue.record("\(error); killed it", sourceLocation: sourceLocation)
            timedOut = true
            kill()
        }
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus, exited: process.terminationReason == .exit && !timedOut,
            timedOut: timedOut, stdout: stdout, stderr: stderr)
    }

    /// SIGKILL, and reaps it.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// Runs a program to its end, killing it after `timeout` seconds (a failure of the test).
func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 2 * patience,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ProcessResult {
    try ChildProcess(executable, arguments, environment: environment).wait(timeout: timeout, sourceLocation: sourceLocation)
}

/// Mounts a tmpfs of its own at `path` (made if missing) with these `mount -o` options:
/// root with CAP_SYS_ADMIN, which the test machines have; without it the test fails saying
/// so. The caller unmounts it with `unmount(_:)`.
func mountTmpfs(at path: String, options: String) throws {
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let mounted = try run("/bin/mount", ["-t", "tmpfs", "-o", options, "tmpfs", path])
    try #require(mounted.status == 0, "mount -t tmpfs failed (root with CAP_SYS_ADMIN is needed): \(mounted.stderr)")
}

/// Unmounts what `mountTmpfs` mounted (lazily: a daemon may still hold a file there).
func unmount(_ path: String) {
    _ = try? run("/bin/umount", ["-l", path])
}

/// Runs Debian's python3 (whose modules are Debian's packages: python3-prometheus-client,
/// python3-jinja2) on `script`, with the path of a file holding `input` as its first
/// argument and `arguments` after it.
func python(_ script: String, input: String, arguments: [String] = []) throws -> ProcessResult {
    let directory = try CLI.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("input").path
    try input.write(toFile: file, atomically: true, encoding: .utf8)
    return try run("/usr/bin/python3", ["-c", script, file] + arguments)
}

/// Runs `forcescale` with arguments, killing it after `timeout` seconds (a failure of the test).
func forcescale(
    _ arguments: [String], environment: [String: String] = [:], timeout: Double = 2 * patience,
    sourceLocation: SourceLocation = #_sourceLocation
) throws -> ProcessResult {
    try run(CLI.binDirectory.appendingPathComponent("forcescale").path, arguments, environment: environment, timeout: timeout,
            sourceLocation: sourceLocation)
}

/// Waits until a forcescaled just started answers on `socket` (a connection that gets its
/// greeting), and fails at once, with its standard error, if it exits instead.
func waitUntilListening(_ child: ChildProcess, on socket: String, within seconds: Double = patience) throws {
    try waitFor("forcescaled to listen on \(socket)", within: seconds, saw: { "its stderr: \(child.stderr.suffix(2000))" }) {
        guard child.isRunning else {
            throw DaemonTestError(description: "forcescaled exited at start: \(child.wait().stderr)")
        }
        guard let probe = try? RawClient(path: socket) else { return false }
        // Accepted: the greeting follows (readLine fails the test if it does not).
        return probe.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true
    }
}

/// A forcescaled serving recordings in a loop (each a device of its own) on a socket in a
/// scratch directory, with its state there too. Killed when the test drops it, whatever
/// happened.
final class DaemonUnderTest {
    let directory: URL
    let recordings: [String]
    let extraArguments: [String]
    private(set) var child: ChildProcess
    var socketPath: String { directory.appendingPathComponent("sock").path }
    var stateDirectory: String { directory.appendingPathComponent("state").path }

    /// Starts the daemon and waits until its socket accepts connections.
    /// - Parameters:
    ///   - directory: The scratch directory; a new one when `nil`. Give the one of an
    ///     earlier daemon to start again on its state.
    convenience init(recording: String, directory: URL? = nil, arguments: [String] = []) throws {
        try self.init(recordings: [recording], directory: directory, arguments: arguments)
    }

    /// Starts the daemon on several recordings at once (`--replay` for each, in order) and
    /// waits until its socket accepts connections.
    init(recordings: [String], directory: URL? = nil, arguments: [String] = []) throws {
        self.directory = try directory ?? CLI.temporaryDirectory()
        self.recordings = recordings
        extraArguments = arguments
        child = try Self.start(recordings: recordings, socket: self.directory.appendingPathComponent("sock").path,
                               state: self.directory.appendingPathComponent("state").path, arguments: arguments)
        try waitUntilListening(child, on: socketPath)
    }

    deinit { child.kill() }

    /// Removes the scratch directory (after stopping the daemon).
    func cleanUp() {
        child.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    var stderr: String { child.stderr }

    /// Sends a signal and waits for the daemon to exit.
    func stop(signal: Int32 = SIGTERM, timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> ProcessResult {
        child.signal(signal)
        return child.wait(timeout: timeout, sourceLocation: sourceLocation)
    }

    /// Stops it with SIGTERM and starts it again on the same socket and state directory.
    func restart() throws {
        let stopped = stop()
        #expect(stopped.exited && stopped.status == 0, "forcescaled did not stop cleanly: \(stopped.stderr)")
        try start()
    }

    /// Starts it again, once stopped, on the same socket and state directory.
    func start() throws {
        child = try Self.start(recordings: recordings, socket: socketPath, state: stateDirectory, arguments: extraArguments)
        try waitUntilListening(child, on: socketPath)
    }

    /// A new connection, with the VERSION greeting read.
    func connect() throws -> RawClient {
        let client = try RawClient(path: socketPath)
        let greeting = client.readLine()
        guard let greeting, greeting.hasPrefix(#"{"class":"VERSION""#) else {
            throw DaemonTestError(description: "no VERSION greeting from forcescaled on \(socketPath): got \(greeting ?? "nothing")")
        }
        return client
    }

    private static func start(recordings: [String], socket: String, state: String, arguments: [String]) throws -> ChildProcess {
        try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescaled").path,
            recordings.flatMap { ["--replay", $0] } + ["--loop", "--socket", socket, "--state-dir", state] + arguments)
    }
}

// MARK: - A client written against the protocol document, not against DaemonClient

/// A Unix socket connection that reads lines with timeouts (`poll`), so that no test can
/// hang on a daemon that does not answer. A read that times out is a failure of the test,
/// recorded at the caller's line with what it waited for and what came instead; the
/// timeouts are generous (`patience`), since a read returns as soon as its line is there.
final class RawClient {
    let descriptor: Int32
    let path: String
    private var buffer: [UInt8] = []
    private(set) var reachedEnd = false
    /// The last line read, for failure messages.
    private var lastLine: String?

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw DaemonTestError(description: "socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            // disconnect() marks it closed: deinit runs when a whole instance's init throws,
            // and a second close could take another test's descriptor of the same number.
            disconnect()
            throw DaemonTestError(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let error = errno
            disconnect()
            throw DaemonTestError(description: "connect to \(path): \(String(cString: strerror(error)))")
        }
    }

    private var isClosed = false

    deinit { disconnect() }

    /// Closes the connection (once).
    func disconnect() {
        guard !isClosed else { return }
        isClosed = true
        close(descriptor)
    }

    /// Writes all of `bytes`. - Returns: false when the daemon has closed the connection.
    @discardableResult
    func send(bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ line: String) -> Bool { send(bytes: Array((line.hasSuffix("\n") ? line : line + "\n").utf8)) }

    /// What reading one line came to.
    private enum Next {
        case line(String)
        case end
        case timeout
    }

    private static func deadline(after seconds: Double) -> Int64 {
        monotonicMicroseconds() + Int64(seconds * 1_000_000)
    }

    /// The next line without its newline, by `deadline`.
    private func next(by deadline: Int64) -> Next {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                lastLine = line
                return .line(line)
            }
            if reachedEnd { return .end }
            guard fill(until: deadline) else { return .timeout }
        }
    }

    /// Records that a wait for `what` ran out after `seconds`, saying what came meanwhile.
    private func recordTimeout(_ what: String, _ seconds: Double, skipped: Int = 0, sourceLocation: SourceLocation) {
        var saw = skipped > 0 ? "\(skipped) READING/PEAK lines, the last \(lastLine ?? "")" : "no line (the last before: \(lastLine ?? "none"))"
        if !buffer.isEmpty { saw += ", then an unfinished line: \(String(decoding: buffer.prefix(300), as: UTF8.self))" }
        let timedOut = WaitTimedOut(what: "\(what) from forcescaled on \(path)", seconds: seconds, saw: saw)
        Issue.record("\(timedOut)", sourceLocation: sourceLocation)
    }

    /// The next line without its newline; `nil` at the end of the stream, or after
    /// `timeout` seconds (a failure of the test).
    func readLine(timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        switch next(by: Self.deadline(after: timeout)) {
        case .line(let line): return line
        case .end: return nil
        case .timeout:
            recordTimeout("a line", timeout, sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Sends a request and returns the next line that is not READING or PEAK.
    func request(_ line: String, timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        send(line)
        return nextLine(notStreamed: true, "the reply to \(line)", timeout: timeout, sourceLocation: sourceLocation)
    }

    /// The next line that is not READING or PEAK.
    func nextReply(timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
        nextLine(notStreamed: true, "a reply (a line other than READING or PEAK)", timeout: timeout, sourceLocation: sourceLocation)
    }

    /// The next READING line, as JSON.
    func nextReading(timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> JSONValue? {
        nextLine(notStreamed: false, "a READING", timeout: timeout, sourceLocation: sourceLocation).flatMap { try? JSONValue.parse($0) }
    }

    /// The next reply (`notStreamed`) or READING, skipping the rest.
    private func nextLine(notStreamed: Bool, _ what: String, timeout: Double, sourceLocation: SourceLocation) -> String? {
        let deadline = Self.deadline(after: timeout)
        var skipped = 0
        while true {
            switch next(by: deadline) {
            case .line(let line):
                let streamed = line.hasPrefix(#"{"class":"READING""#) || line.hasPrefix(#"{"class":"PEAK""#)
                if notStreamed ? !streamed : line.hasPrefix(#"{"class":"READING""#) { return line }
                skipped += 1
            case .end:
                return nil
            case .timeout:
                recordTimeout(what, timeout, skipped: skipped, sourceLocation: sourceLocation)
                return nil
            }
        }
    }

    /// Whether the daemon closes the connection within `timeout` seconds (what it sends
    /// meanwhile is read and dropped); a timeout is recorded as a failure.
    func closesWithin(_ timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let deadline = Self.deadline(after: timeout)
        var dropped = 0
        while !reachedEnd {
            dropped += buffer.count
            buffer.removeAll()
            guard fill(until: deadline) || reachedEnd else {
                let timedOut = WaitTimedOut(what: "forcescaled to close the connection on \(path)", seconds: timeout,
                                            saw: "it open, \(dropped + buffer.count) more bytes sent")
                Issue.record("\(timedOut)", sourceLocation: sourceLocation)
                return false
            }
        }
        return true
    }

    func shutdownWriting() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Reads once, waiting until `deadline`. - Returns: false on timeout.
    private func fill(until deadline: Int64) -> Bool {
        let left = deadline - monotonicMicroseconds()
        guard left > 0 else { return false }
        switch receiveOnce(from: descriptor, waitingMilliseconds: Int32((left + 999) / 1000), into: &buffer) {
        case .timedOut: return false
        case .interrupted, .received: return true
        case .ended:
            reachedEnd = true
            return true
        }
    }
}

/// What one `receiveOnce` came to.
enum ReceiveOutcome {
    case timedOut
    /// A signal interrupted the wait; nothing was read.
    case interrupted
    /// Bytes were appended (or a spurious wake-up read none).
    case received
    /// The peer closed its end, or the socket failed.
    case ended
}

/// Waits up to `milliseconds` for `descriptor` to be readable, then appends what one `recv`
/// gives to `buffer`: the test clients' one way of reading a socket.
func receiveOnce(from descriptor: Int32, waitingMilliseconds milliseconds: Int32, into buffer: inout [UInt8]) -> ReceiveOutcome {
    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    let ready = poll(&entry, 1, max(0, milliseconds))
    if ready < 0 { return errno == EINTR ? .interrupted : .ended }
    if ready == 0 { return .timedOut }
    var chunk = [UInt8](repeating: 0, count: 65536)
    let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
    if count > 0 {
        buffer.append(contentsOf: chunk[..<count])
        return .received
    }
    return count == 0 || (errno != EAGAIN && errno != EINTR) ? .ended : .received
}

extension JSONValue {
    /// A member's number.
    func number(_ key: String) -> Double? { self[key]?.numberValue }
}

// MARK: - Fuzzing

/// SplitMix64: a small seeded generator, so that a failing fuzz run can be repeated.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_CE4E_5B9B
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Request lines for the fuzz test: valid requests, requests with bytes flipped, inserted,
/// removed or cut, pieces spliced together, and plain noise. Never a `\n` inside a line and
/// never a line near the 64 KiB limit (that one ends the connection, tested apart).
struct RequestFuzzer {
    var generator: SplitMix64

    static let seeds = [
        #"{"class":"POLL"}"#, #"{"class":"STATUS"}"#, #"{"class":"DEVICES"}"#, #"{"class":"WATCH"}"#,
        #"{"class":"WATCH","enable":false}"#, #"{"class":"WATCH","enable":true,"device":"event5"}"#,
        #"{"class":"CALIBRATION"}"#, #"{"class":"CALIBRATION","reset":true}"#, #"{"class":"TARE"}"#,
        #"{"class":"CALIBRATE","grams":100}"#, #"{"class":"CALIBRATE","grams":-1}"#, #"{"class":"RUMBLE","pattern":"success"}"#,
        #"{"class":"RUMBLE","pattern":"boom"}"#, #"{"class":"POLL","id":7,"extra":[1,2,{"a":null}]}"#,
        #" { "class" : "STATUS" , "x" : "\u00e9\ud83d\ude00" } "#, #"{"class":"FOO"}"#, #"[1,2,3]"#, #"{}"#,
        #"{"class":"POLL","n":-0.5e-3,"t":true,"f":false}"#, "{\"class\":\"STATUS\"}\r",
    ]
    static let tokens = ["{", "}", "[", "]", ":", ",", "\"", "\\", "\\u", "\\ud800", "null", "true", "1e999", "-0", "01", "NaN",
                         "/*", "\t", "\r", "\u{0}", "\u{7F}", "é", "\u{FFFD}", "😀", "\"class\"", "\"CALIBRATE\"", "\"grams\""]

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func line() -> [UInt8] {
        var bytes: [UInt8]
        switch Int.random(in: 0..<10, using: &generator) {
        case 0:
            bytes = Array(Self.seeds.randomElement(using: &generator)!.utf8)
        case 1:
            // Noise: any byte but a newline.
            bytes = (0..<Int.random(in: 1...80, using: &generator)).map { _ in
                let byte = UInt8.random(in: 0...255, using: &generator)
                return byte == 10 ? 32 : byte
            }
        case 2:
            // Deep nesting, around the 64-level limit.
            let depth = Int.random(in: 60...70, using: &generator)
            let open = Bool.random(using: &generator) ? "[" : "{\"a\":"
            bytes = Array((String(repeating: open, count: depth) + "1").utf8)
        case 3:
            // Tokens strung together.
            bytes = Array((0..<Int.random(in: 1...20, using: &generator)).map { _ in Self.tokens.randomElement(using: &generator)! }.joined().utf8)
        default:
            bytes = Array(Self.seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) { mutate(&bytes) }
        }
        return bytes.map { $0 == 10 ? 32 : $0 }
    }

    private mutating func mutate(_ bytes: inout [UInt8]) {
        guard !bytes.isEmpty else {
            bytes = [UInt8.random(in: 0...255, using: &generator)]
            return
        }
        let index = Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
        case 1: bytes[index] ^= 1 << UInt8.random(in: 0...7, using: &generator)
        case 2: bytes.insert(contentsOf: Self.tokens.randomElement(using: &generator)!.utf8, at: index)
        case 3: bytes.remove(at: index)
        case 4: bytes.removeSubrange(index...)
        default:
            let other = Array(Self.seeds.randomElement(using: &generator)!.utf8)
            bytes.insert(contentsOf: other[Int.random(in: 0..<other.count, using: &generator)...], at: index)
        }
    }
}

/// Reads everything a connection receives on a thread of its own, so that the daemon never
/// sees a client that does not read, while the test thread writes. Counts the replies (lines
/// other than READING and PEAK) as they come.
final class Drain: @unchecked Sendable {
    private let descriptor: Int32
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var lineStart = 0
    private var replies = 0
    private var ended = false
    private var stopRequested = false
    private let done = DispatchSemaphore(value: 0)
    private static let streamPrefixes = [Array(#"{"class":"READING""#.utf8), Array(#"{"class":"PEAK""#.utf8)]

    init(descriptor: Int32) {
        self.descriptor = descriptor
        let thread = Thread { [self] in self.loop() }
        thread.start()
    }

    /// The complete lines received so far.
    var lines: [ArraySlice<UInt8>] {
        condition.lock()
        defer { condition.unlock() }
        return Array(bytes[..<lineStart].split(separator: 10, omittingEmptySubsequences: false).dropLast())
    }

    /// Replies received so far.
    var replyCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return replies
    }

    /// Waits until `count` replies have come, the connection has ended, or `timeout`
    /// seconds have passed. - Returns: the replies received.
    @discardableResult
    func waitForReplies(_ count: Int, timeout: Double = patience) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while replies < count, !ended, condition.wait(until: deadline) {}
        return replies
    }

    /// Stops the thread and waits for it.
    func stop() {
        condition.lock()
        let first = !stopRequested
        stopRequested = true
        condition.unlock()
        if first { _ = done.wait(timeout: .now() + 5) }
    }

    private func loop() {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Wakes now and then to see whether it has been told to stop.
            let ready = poll(&entry, 1, 100)
            condition.lock()
            let stop = stopRequested
            condition.unlock()
            if stop { break }
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { break }
            guard count > 0 else { continue }
            condition.lock()
            bytes.append(contentsOf: chunk[..<count])
            while let newline = bytes[lineStart...].firstIndex(of: 10) {
                let line = bytes[lineStart..<newline]
                if !Self.streamPrefixes.contains(where: { line.starts(with: $0) }) { replies += 1 }
                lineStart = newline + 1
            }
            condition.broadcast()
            condition.unlock()
        }
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
        done.signal()
    }
}
