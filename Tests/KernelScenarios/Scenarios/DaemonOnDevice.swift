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
        let daemonPath = (programs.forcescale as NSString).deletingLastPathComponent + "/forcescaled"
        guard access(daemonPath, X_OK) == 0 else {
            check(false, "h: \(daemonPath) is there", "run 'swift build' first")
            return
        }
        let folder = "/tmp/forcescale-kt-h-\(getpid())"
        let socketPath = folder + "/sock"
        let stateDirectory = folder + "/state"
        mkdir(folder, 0o755)
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

        // 2. The peak effect, prepared at open.
        waitUntil(Limits.reaction) { pad.forceFeedback.uploads.count >= 1 }
        Clock.sleep(0.3)
        let opened = pad.forceFeedback
        check(opened.uploads.count == 1 && opened.uploads.allSatisfy { $0.type == UInt16(FF_RUMBLE) && $0.length > 0 },
              "h: exactly one FF_RUMBLE upload at open (the peak effect)", "saw \(opened.uploads)")
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
        check(watching, "h: WATCH is answered", client.tail())
        let afterPress = pressToPeak(pad, client: client, effect: id,
                                     "h: the client sees READING raw 255 and a PEAK; the device plays effect \(id) once")

        // 4. RUMBLE success through the daemon: 2 plays in the same slot, then the peak effect back.
        client.send(#"{"class":"RUMBLE","pattern":"success"}"#)
        let reply = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"RUMBLE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        check(reply == #"{"class":"RUMBLE","pattern":"success"}"#, "h: RUMBLE success is answered in kind", "saw \(reply ?? "nothing")\n\(client.tail())")
        let restored = waitUntil(Limits.reaction) { let log = pad.forceFeedback; return log.plays >= 3 && log.uploads.count >= 4 }
        Clock.sleep(1.0)
        let afterRumble = pad.forceFeedback
        let newUploads = Array(afterRumble.uploads.dropFirst(opened.uploads.count))
        check(restored && afterRumble.plays == 3, "h: the pattern's 2 segments give 2 plays", "saw \(afterRumble.plays - afterPress.plays) plays: \(afterRumble.sequence)")
        check(Set(afterRumble.uploads.map(\.effectID)) == [id] && newUploads.allSatisfy { $0.replacedID == id } && afterRumble.erases.isEmpty,
              "h: the pattern's uploads update effect \(id) in place (one id in use, no erase)",
              "saw uploads \(afterRumble.uploads), erases \(afterRumble.erases)")
        check(newUploads.count == 3 && newUploads.last?.length == opened.uploads.first?.length,
              "h: the 2 segments' uploads are followed by one upload of the peak effect back",
              "saw \(newUploads.count) new uploads \(newUploads) (peak effect \(opened.uploads))")

        // 5. TARE while pressing raw 100: nominal 100/255 × 385 = 151.0 g.
        pad.press(100, down: true)
        let pressed = client.waitFor(Limits.reaction) { $0.contains(Marker.reading) && $0.contains("\"raw\":100,") } != nil
        client.send(#"{"class":"TARE"}"#)
        let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        let grams = tare.flatMap(Self.number("grams"))
        check(pressed && grams.map { abs($0 - 151.0) < 0.15 } == true && tare?.contains("\"device\":\"\(nodeName)\"") == true,
              "h: TARE under raw 100 replies with its device and ≈ 151 g", "saw \(tare ?? "nothing")\n\(client.tail())")
        var stateFiles: [String] = []
        waitUntil(5) {
            stateFiles = ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
            return !stateFiles.isEmpty
        }
        check(!stateFiles.isEmpty, "h: the state directory holds a .json file after TARE",
              "saw \((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? [])")
        pad.release()

        // 6. SIGTERM: exit 0, the effect erased, the socket removed.
        let ended = daemon.stop(SIGTERM)
        check(ended == .exited(0), "h: forcescaled exits 0 on SIGTERM", "saw \(ended.map(\.description) ?? "no exit")\n\(daemon.tail())")
        waitUntil(Limits.reaction) { !pad.forceFeedback.erases.isEmpty }
        let final = pad.forceFeedback
        check(final.erases == [Int32(id)], "h: SIGTERM erases effect \(id)", "saw erases \(final.erases)")
        check(!fileExists(socketPath), "h: the socket file is gone after SIGTERM", "\(socketPath) is still there")
        check(final.problems.isEmpty, "h: every FF request was answered", "\(final.problems)")
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
        let (statusLine, attempts) = firstStatus(programs, socketPath: socketPath, pause: 0.5) { daemon.isRunning }
        let answered = !statusLine.isEmpty
        check(answered, "\(scenario): 'forcescale status --socket' exits 0 once the daemon is up",
              "after \(attempts) attempts, daemon \(daemon.ended.map(\.description) ?? "running")\n\(daemon.tail())")
        guard answered else {
            daemon.stop(SIGKILL)
            return nil
        }
        return (daemon, statusLine)
    }

    /// Asks `forcescale status --json` on `socketPath` until it answers, for up to
    /// `Limits.readerStart` while `keepTrying` holds. A plain loop, not waitUntil: runToEnd
    /// waits on the same condition itself.
    /// - Returns: The STATUS line (empty when none came) and the number of attempts.
    static func firstStatus(_ programs: Programs, socketPath: String, pause: Double, while keepTrying: () -> Bool) -> (line: String, attempts: Int) {
        var attempts = 0
        let deadline = Clock.now() + Limits.readerStart
        while Clock.now() < deadline, keepTrying() {
            attempts += 1
            let (ended, status) = runToEnd("status", [programs.forcescale, "status", "--json", "--socket", socketPath], timeout: Limits.command)
            if ended == .exited(0) {
                return (status?.output.first { $0.contains("\"class\":\"STATUS\"") } ?? "", attempts)
            }
            Clock.sleep(pause)
        }
        return ("", attempts)
    }

    /// Presses the pad to its maximum and lifts it, with `client` watching: checks (as
    /// `name`) that the client saw READING raw 255 and a PEAK and the pad played `id` once.
    /// - Returns: The pad's force-feedback log after the release.
    @discardableResult
    static func pressToPeak(_ pad: VirtualDevice, client: SocketClient, effect id: Int16, _ name: String) -> ForceFeedbackLog {
        pad.press(255, down: true)
        let sawPress = waitUntil(Limits.reaction) {
            client.lines.contains { $0.contains(Marker.reading) && $0.contains("\"raw\":255,") }
                && client.lines.contains { $0.contains(Marker.peak) } && pad.forceFeedback.plays >= 1
        }
        pad.release()
        waitUntil(Limits.reaction) { client.lines.contains { $0.contains(Marker.reading) && $0.contains("\"contacts\":0") } }
        Clock.sleep(0.3)
        let afterPress = pad.forceFeedback
        check(sawPress && afterPress.plays == 1 && afterPress.playsByEffect[Int(id)] == 1, name,
              "saw \(afterPress.plays) plays \(afterPress.playsByEffect)\n\(client.tail())")
        return afterPress
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
    private let descriptor: Int32
    private let lock = NSLock()
    private var received: [String] = []
    /// Lines already matched by `waitFor`, so one reply is not taken twice.
    private var consumed = 0

    init?(path: String) {
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
        }
    }

    var lines: [String] { lock.lock(); defer { lock.unlock() }; return received }

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

    func tail(_ count: Int = 8) -> String { lines.suffix(count).map { "socket: " + $0 }.joined(separator: "\n") }

    func close() { shutdown(descriptor, Int32(SHUT_RDWR)); Glibc.close(descriptor) }
}
