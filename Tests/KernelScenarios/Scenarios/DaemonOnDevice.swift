import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// h. `forcescaled` on the FF pad: STATUS names the device and its rumble; the peak effect
/// is uploaded once at open; a watching client sees a press's READING and PEAK while the
/// device plays once; RUMBLE success plays its 2 segments through the same slot (updated in
/// place) and the peak effect is put back; TARE under raw 100 answers ≈ 151 g and writes the
/// state directory; SIGTERM exits 0, erases the effect and removes the socket.
enum DaemonOnDevice {
    static func run(_ programs: Programs) {
        guard let daemonPath = programs.runnableForcescaled(scenario: "h") else { return }
        let folder = makeScenarioFolder("h")
        let socketPath = folder + "/sock"
        let stateDirectory = folder + "/state"
        defer { try? FileManager.default.removeItem(atPath: folder) }

        guard let pad = makeDevice(Tables.rumblePad, scenario: "h") else { return }
        defer { pad.destroy() }
        let nodeName = (pad.node as NSString).lastPathComponent

        // 1. The daemon starts and answers STATUS.
        guard let (daemon, statusLine) = startDaemon(
            programs, daemonPath: daemonPath,
            ["--device", pad.node, "--socket", socketPath, "--state-dir", stateDirectory, "-v"], scenario: "h")
        else { return }
        check(statusLine.contains("\"device\":\"\(nodeName)\"") && statusLine.contains("\"rumble\":"),
              "h: STATUS names the device (\(nodeName)) and a rumble device", "saw \(statusLine)")

        // 2. The peak effect, prepared at open. The daemon opens its device (uploading the
        // effect) before its loop serves anyone, and the device side records an upload
        // before answering it: by the STATUS answer every upload made at open is in the log.
        let prepared = waitFor("the peak effect's upload at open", within: Limits.reaction) { pad.forceFeedback.uploads.count >= 1 }
        let opened = pad.forceFeedback
        expect("h: exactly one FF_RUMBLE upload at open (the peak effect)", after: prepared,
               opened.uploads.count == 1 && opened.uploads.allSatisfy { $0.type == UInt16(FF_RUMBLE) && $0.length > 0 },
               saw: "\(opened.uploads)")
        let id = opened.uploads.first?.effectID ?? -1

        // 3. A watching client sees a press's READING and PEAK; the device plays once.
        guard let client = SocketClient(path: socketPath) else {
            check(false, "h: connect to \(socketPath)", String(cString: strerror(errno)))
            daemon.stop(SIGKILL)
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        let watching = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil
        check(watching, "h: WATCH is answered", "waited \(Int(Limits.reaction)) s for the WATCH reply\n\(client.tail())")
        pressToPeak(pad, client: client, effect: id, "h: the client sees READING raw 255 and a PEAK; the device plays effect \(id) once")

        // 4. RUMBLE success through the daemon: 2 plays in the same slot, then the peak effect
        // back. What it gave is counted at the end, after SIGTERM's erase: only that bounds
        // a stray upload or play that a pattern's timer could still make.
        client.send(#"{"class":"RUMBLE","pattern":"success"}"#)
        let reply = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"RUMBLE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        check(reply == #"{"class":"RUMBLE","pattern":"success"}"#, "h: RUMBLE success is answered in kind",
              "\(reply == nil ? "waited \(Int(Limits.reaction)) s for a RUMBLE or ERROR reply; " : "")saw \(reply ?? "nothing")\n\(client.tail())")
        let restored = waitFor("the pattern's 2 plays and the peak effect's upload back", within: Limits.reaction) {
            let log = pad.forceFeedback
            return log.plays >= 3 && log.uploads.count >= 4
        }

        // 5. TARE while pressing raw 100: nominal 100/255 × 385 = 151.0 g.
        pad.press(100, down: true)
        let pressed = client.waitFor(Limits.reaction) { $0.contains(Marker.reading) && $0.contains("\"raw\":100,") } != nil
        client.send(#"{"class":"TARE"}"#)
        let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        let grams = tare.flatMap(Self.number("grams"))
        check(pressed && grams.map { abs($0 - 151.0) < 0.15 } == true && tare?.contains("\"device\":\"\(nodeName)\"") == true,
              "h: TARE under raw 100 replies with its device and ≈ 151 g",
              "\(pressed ? "" : "waited \(Int(Limits.reaction)) s for READING raw 100 in vain; ")saw \(tare ?? "no TARE reply within \(Int(Limits.reaction)) s")\n\(client.tail())")
        func stateFiles() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
        }
        expect("h: the state directory holds a .json file after TARE", within: Limits.reaction, waitingFor: "a .json file in \(stateDirectory)",
               { !stateFiles().isEmpty }, saw: "\((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? [])")
        pad.release()

        // 6. SIGTERM, right behind a marker on the FF stream (what the daemon asked of the
        // device before it, it asked while serving): exit 0, the effect erased, the socket
        // removed. Once the daemon has exited, every request it made has been answered and
        // recorded, its plays before them.
        let marker = pad.queueMarker()
        daemon.signal(SIGTERM)
        let stopped = waitFor("the daemon's exit after SIGTERM, the FF marker and the erase at the device", within: Limits.exit) {
            daemon.hasFinished && (marker.map(pad.hasRecorded(marker:)) ?? false) && !pad.forceFeedback.erases.isEmpty
        }
        if !daemon.hasFinished { daemon.stop(SIGKILL) }
        let ended = daemon.ended
        check(ended == .exited(0), "h: forcescaled exits 0 on SIGTERM", "saw \(ending(ended, waited: Limits.exit))\n\(daemon.tail())")
        let final = pad.forceFeedback
        let beforeSignal = final.markers.first { $0.number == marker }
        let newUploads = Array(final.uploads.dropFirst(opened.uploads.count))
        expect("h: the pattern's 2 segments give 2 plays", after: stopped, restored.held && final.plays == 3,
               saw: "\(final.plays - 1) plays after the press's one (\(restored.account)): \(final.sequence)")
        expect("h: the pattern's uploads update effect \(id) in place (one id in use, no erase)", after: stopped,
               Set(final.uploads.map(\.effectID)) == [id] && newUploads.allSatisfy { $0.replacedID == id } && beforeSignal?.erases == 0,
               saw: "uploads \(final.uploads), erases \(final.erases) (\(beforeSignal.map { "\($0.erases)" } ?? "?") before SIGTERM)")
        expect("h: the 2 segments' uploads are followed by one upload of the peak effect back", after: stopped,
               newUploads.count == 3 && newUploads.last?.length == opened.uploads.first?.length,
               saw: "\(newUploads.count) new uploads \(newUploads) (peak effect \(opened.uploads))")
        expect("h: SIGTERM erases effect \(id)", after: stopped, final.erases == [Int32(id)], saw: "erases \(final.erases)")
        expect("h: the socket file is gone after SIGTERM", after: stopped, !fileExists(socketPath), saw: "\(socketPath) is still there")
        expect("h: every FF request was answered", after: stopped, final.problems.isEmpty, saw: "\(final.problems)")
    }

    /// Starts forcescaled with `arguments` (which name its `--socket`) and waits until
    /// `forcescale status` answers on that socket.
    /// - Returns: The daemon and its first STATUS line, or `nil` after reporting why not.
    static func startDaemon(_ programs: Programs, daemonPath: String, _ arguments: [String], scenario: String) -> (Child, String)? {
        guard let socketIndex = arguments.firstIndex(of: "--socket"), socketIndex + 1 < arguments.count else {
            preconditionFailure("startDaemon needs --socket among the arguments")
        }
        let socketPath = arguments[socketIndex + 1]
        let daemon: Child
        do {
            daemon = try Child("forcescaled", [daemonPath] + arguments)
        } catch {
            check(false, "\(scenario): start forcescaled", "\(error)")
            return nil
        }
        // The socket appears when the daemon has bound it; asking before that only costs
        // a process start under emulation.
        waitFor("forcescaled to bind \(socketPath)", within: Limits.readerStart) { fileExists(socketPath) || !daemon.isRunning }
        let (statusLine, attempts) = firstStatus(programs, socketPath: socketPath, pause: 0.5) { daemon.isRunning }
        let answered = !statusLine.isEmpty
        check(answered, "\(scenario): 'forcescale status --socket' exits 0 once the daemon is up",
              "asked \(attempts) times over up to \(Int(Limits.readerStart)) s; daemon \(daemon.ended.map(\.description) ?? "running")\n\(daemon.tail())")
        guard answered else {
            daemon.stop(SIGKILL)
            return nil
        }
        return (daemon, statusLine)
    }

    /// forcescaled on `node` (a socket and state directory of its own) with a raw client
    /// watching its stream, for `body`, which gets the daemon, the client and the first
    /// STATUS line; the client is closed, the daemon stopped and the folder removed after.
    static func watching(_ programs: Programs, daemonPath: String, node: String, scenario: String, _ body: (Child, SocketClient, String) -> Void) {
        let folder = makeScenarioFolder(scenario)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socketPath = folder + "/sock"
        guard let (daemon, statusLine) = startDaemon(
            programs, daemonPath: daemonPath, ["--device", node, "--socket", socketPath, "--state-dir", folder + "/state"], scenario: scenario)
        else { return }
        defer { daemon.stop(SIGTERM) }
        guard let client = SocketClient(path: socketPath) else {
            check(false, "\(scenario): connect to \(socketPath)", String(cString: strerror(errno)))
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        let watching = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil
        guard check(watching, "\(scenario): WATCH is answered", "waited \(Int(Limits.reaction)) s for the WATCH reply\n\(client.tail())") else { return }
        body(daemon, client, statusLine)
    }

    /// Asks `forcescale status --json` on `socketPath` until it answers, for up to
    /// `Limits.readerStart` while `keepTrying` holds, `pause` seconds apart (pacing: each
    /// attempt starts a process).
    /// - Returns: The STATUS line (empty when none came) and the number of attempts.
    static func firstStatus(_ programs: Programs, socketPath: String, pause: Double, while keepTrying: () -> Bool) -> (line: String, attempts: Int) {
        var attempts = 0
        var line = ""
        retry(Limits.readerStart, pause: pause) {
            guard keepTrying() else { return true }
            attempts += 1
            let (ended, status) = runToEnd("status", [programs.forcescale, "status", "--json", "--socket", socketPath], timeout: Limits.command)
            guard ended == .exited(0) else { return false }
            line = status?.output.first { $0.contains("\"class\":\"STATUS\"") } ?? ""
            return true
        }
        return (line, attempts)
    }

    /// Presses the pad to its maximum and lifts it, with `client` watching: checks (as
    /// `name`) that the client saw READING raw 255 and a PEAK and the pad played `id` once.
    ///
    /// "Once" is judged at a marker on the pad's FF stream written after the client got the
    /// release's reading: the daemon plays before it sends a PEAK, and sends the release's
    /// reading after that, so every play the press caused is before the marker.
    static func pressToPeak(_ pad: VirtualDevice, client: SocketClient, effect id: Int16, _ name: String) {
        let playsBefore = pad.forceFeedback.plays
        let from = client.lines.count
        pad.press(255, down: true)
        let sawPress = waitFor("READING raw 255 and a PEAK at the client, and a play at the device", within: Limits.reaction) {
            let lines = client.lines.dropFirst(from)
            return lines.contains { $0.contains(Marker.reading) && $0.contains("\"raw\":255,") }
                && lines.contains { $0.contains(Marker.peak) } && pad.forceFeedback.plays > playsBefore
        }
        pad.release()
        let released = waitFor("the release's READING at the client", within: Limits.reaction) {
            client.lines.dropFirst(from).contains { $0.contains(Marker.reading) && $0.contains("\"contacts\":0") }
        }
        let marker = released.held ? pad.queueMarker() : nil
        let marked = waitFor("the FF marker written after the release's READING", within: Limits.reaction) {
            marker.map(pad.hasRecorded(marker:)) ?? false
        }
        let log = pad.forceFeedback
        let atMarker = log.markers.first { $0.number == marker }
        expect(name, after: marked, sawPress.held && atMarker?.plays == playsBefore + 1 && log.playsByEffect[Int(id)] == playsBefore + 1,
               saw: "\(sawPress.held ? "" : sawPress.account + "; ")\((atMarker?.plays ?? log.plays) - playsBefore) plays \(log.playsByEffect)\n\(client.tail())")
    }

    static func number(_ key: String) -> (String) -> Double? {
        { line in
            guard let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
            return (object[key] as? NSNumber)?.doubleValue
        }
    }
}

/// A raw client of the daemon's socket: lines read on a thread of its own.
final class SocketClient: @unchecked Sendable {
    /// The daemon's socket.
    let path: String
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    /// Lines already matched by `waitFor`, so one reply is not taken twice.
    private var consumed = 0
    /// The daemon closed the connection (or reading it failed): no line can come any more.
    private var ended = false
    private var closed = false

    init?(path: String) {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { Glibc.close(fd); return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { Glibc.close(fd); return nil }
        descriptor = fd
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            var pending: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                for byte in buffer[0..<count] {
                    if byte == UInt8(ascii: "\n") {
                        let line = String(decoding: pending, as: UTF8.self)
                        pending.removeAll(keepingCapacity: true)
                        lock.lock()
                        received.append(line)
                        lock.unlock()
                    } else {
                        pending.append(byte)
                    }
                }
                Changes.announce()
            }
            lock.lock()
            ended = true
            lock.unlock()
            Changes.announce()
        }
    }

    var lines: [String] { lock.lock(); defer { lock.unlock() }; return received }

    /// Whether the connection has ended from the daemon's side: every line it sent is here.
    var hasEnded: Bool { lock.lock(); defer { lock.unlock() }; return ended }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            if written <= 0 { return }
            offset += written
        }
    }

    /// The first line not yet consumed that matches, waiting up to `timeout`.
    func waitFor(_ timeout: Double, _ matches: @escaping (String) -> Bool) -> String? {
        var found: String?
        waitUntil(timeout) {
            lock.lock()
            defer { lock.unlock() }
            guard let index = received.indices.dropFirst(consumed).first(where: { matches(received[$0]) }) else { return false }
            found = received[index]
            consumed = index + 1
            return true
        }
        return found
    }

    /// The last stable READING after the first `index` lines (of `contacts` contacts when
    /// given), as an object.
    func lastStableReading(after index: Int, contacts: Int? = nil) -> [String: Any]? {
        lines.dropFirst(index).compactMap { line -> [String: Any]? in
            guard line.contains(Marker.reading), let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["stable"] as? Bool == true,
                  contacts.map({ (object["contacts"] as? NSNumber)?.intValue == $0 }) ?? true else { return nil }
            return object
        }.last
    }

    func tail(_ count: Int = 8) -> String { lines.suffix(count).map { "socket: " + $0 }.joined(separator: "\n") }

    /// Idempotent: a scenario may close early and again in a `defer` (a second close could
    /// hit a descriptor number reused meanwhile).
    func close() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        shutdown(descriptor, Int32(SHUT_RDWR))
        Glibc.close(descriptor)
    }
}
