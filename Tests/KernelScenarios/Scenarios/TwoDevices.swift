import Foundation
import KernelTestSupport
import Glibc

/// q. `forcescaled` with two pressure devices at once, a pen (0–2047) and a touchpad
/// (0–255), each named by `--device`: STATUS lists both; a watching client gets each one's
/// readings under its own name; TARE without a device is refused with an ERROR listing
/// both, and a TARE of the pad leaves the pen's grams alone; each is calibrated on its own
/// (a point on the pen, then one on the pad, each in its own state file); the pen is
/// unplugged while the pad streams, and the pad's readings go on, STATUS then naming it
/// alone; SIGTERM exits 0.
enum TwoDevices {
    static func run(_ programs: Programs) {
        let daemonPath = (programs.forcescale as NSString).deletingLastPathComponent + "/forcescaled"
        guard access(daemonPath, X_OK) == 0 else {
            check(false, "q: \(daemonPath) is there", "run 'swift build' first")
            return
        }
        let folder = "/tmp/forcescale-kt-q-\(getpid())"
        let socketPath = folder + "/sock"
        let stateDirectory = folder + "/state"
        mkdir(folder, 0o755)
        defer { try? FileManager.default.removeItem(atPath: folder) }

        guard let pad = makeDevice(Tables.synapticsPad, scenario: "q") else { return }
        defer { pad.destroy() }
        guard var pen: VirtualDevice? = makeDevice(Tables.pen2047, scenario: "q") else { return }
        defer { pen?.destroy() }
        let padName = (pad.node as NSString).lastPathComponent
        let penName = (pen!.node as NSString).lastPathComponent

        // 1. Both served: STATUS lists each, and no one device at the top.
        guard let (daemon, statusLine) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath,
            ["--device", pen!.node, "--device", pad.node, "--no-rumble", "--socket", socketPath, "--state-dir", stateDirectory],
            scenario: "q")
        else { return }
        defer { if !daemon.hasFinished { daemon.stop(SIGKILL) } }
        // The daemon opens both before it serves anyone: the first STATUS lists both.
        check(statusLine.contains(#""device":"\#(penName)","name":"forcescale pen 2047""#)
                && statusLine.contains(#""device":"\#(padName)","name":"forcescale test pad""#)
                && !statusLine.contains(#""clients":1,"device""#),
              "q: STATUS lists the pen (\(penName)) and the pad (\(padName)), and names neither at the top", "saw \(statusLine)")

        guard let client = SocketClient(path: socketPath) else {
            check(false, "q: connect to \(socketPath)", String(cString: strerror(errno)))
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH"}"#)
        check(client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil, "q: WATCH is answered", client.tail())

        // 2. Each device's readings under its own name.
        pen!.press(1024, down: true)
        pad.press(100, down: true)
        func reading(of device: String, raw: Int) -> (String) -> Bool {
            { $0.contains(Marker.reading) && $0.contains(#""device":"\#(device)""#) && $0.contains(#""raw":\#(raw),"#) }
        }
        let seen = waitFor("READINGs of the pen at raw 1024 and of the pad at raw 100", within: Limits.reaction) {
            client.lines.contains(where: reading(of: penName, raw: 1024)) && client.lines.contains(where: reading(of: padName, raw: 100))
        }
        check(seen.held, "q: a watch of all gets the pen's and the pad's readings, each named", "\(seen.account)\n\(client.tail())")

        // 3. TARE without a device is refused, listing both; a TARE of the pad leaves the pen.
        client.send(#"{"class":"TARE"}"#)
        let refused = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"ERROR""#) || $0.hasPrefix(#"{"class":"TARE""#) }
        // Listed in the order they were opened: their nodes' order.
        let served = [penName, padName].sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
        check(refused == #"{"class":"ERROR","message":"2 devices are served (\#(served.joined(separator: ", "))): name one with 'device'","request":"TARE"}"#,
              "q: TARE naming no device is refused with an ERROR listing both", "saw \(refused ?? "no reply within \(Int(Limits.reaction)) s")")
        client.send(#"{"class":"TARE","device":"\#(padName)"}"#)
        let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        // Nominal: 100/255 × 385 = 151.0 g.
        check(tare.flatMap(DaemonOnDevice.number("grams")).map { abs($0 - 151.0) < 0.15 } == true && tare?.contains(#""device":"\#(padName)""#) == true,
              "q: TARE of the pad under raw 100 answers ≈ 151 g for the pad", "saw \(tare ?? "no reply")")
        let afterTare = client.lines.count
        pen!.press(1030)
        pad.press(110)
        // The pen untared: 1030/2047 × 385 = 193.7 g; the pad tared: 110/255 × 385 − 151.0 = 15.1 g.
        let weighed = waitFor("the pen's READING raw 1030 and the pad's raw 110 after the tare", within: Limits.reaction) {
            let lines = client.lines.dropFirst(afterTare)
            return lines.contains(where: reading(of: penName, raw: 1030)) && lines.contains(where: reading(of: padName, raw: 110))
        }
        let penGrams = client.lines.dropFirst(afterTare).first(where: reading(of: penName, raw: 1030)).flatMap(DaemonOnDevice.number("grams"))
        let padGrams = client.lines.dropFirst(afterTare).first(where: reading(of: padName, raw: 110)).flatMap(DaemonOnDevice.number("grams"))
        expect("q: after the pad's tare the pen weighs untared (193.7 g) and the pad tared (15.1 g)", after: weighed,
               penGrams.map { abs($0 - 193.7) < 0.15 } == true && padGrams.map { abs($0 - 15.1) < 0.15 } == true,
               saw: "pen \(penGrams.map { "\($0)" } ?? "none"), pad \(padGrams.map { "\($0)" } ?? "none")\n\(client.tail())")

        // 4. Each calibrated on its own, the weight held steady (a unit of noise) meanwhile.
        calibrate(pen!, name: penName, raw: 1030, grams: 200, client: client)
        calibrate(pad, name: padName, raw: 110, grams: 50, client: client)
        client.send(#"{"class":"STATUS"}"#)
        let status = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"STATUS""#) } ?? ""
        check(status.contains(#""device":"\#(penName)","name":"forcescale pen 2047","model":"calibrated","calibration":{"points":1,"tare":0.0"#)
                && status.contains(#""device":"\#(padName)","name":"forcescale test pad","model":"calibrated","calibration":{"points":1,"tare":151.0"#),
              "q: STATUS: the pen has its point and no tare, the pad its point and its tare", "saw \(status)")
        let stateFiles = ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
        check(stateFiles.count == 2, "q: each device has a calibration file of its own", "saw \(stateFiles)")

        // 5. The pen unplugged while the pad streams: the pad's readings go on.
        let streaming = Streamer(pad, around: 110)
        let beforeUnplug = client.lines.count
        pen?.destroy()
        pen = nil
        let removed = daemon.waitForError("/dev/input/\(penName): device removed", timeout: Limits.reaction)
        check(removed, "q: the daemon notices the pen's removal", daemon.tail())
        let afterRemoval = client.lines.count
        let goesOn = waitFor("20 READINGs of the pad after the pen's removal", within: Limits.reaction) {
            client.lines.dropFirst(afterRemoval).filter { $0.contains(Marker.reading) && $0.contains(#""device":"\#(padName)""#) }.count >= 20
        }
        streaming.stop()
        check(goesOn.held && daemon.isRunning, "q: the pad streams on after the pen is unplugged", "\(goesOn.account)\n\(client.tail())")
        let strays = client.lines.dropFirst(beforeUnplug).filter { $0.hasPrefix(#"{"class":"ERROR""#) }
        check(strays.isEmpty, "q: the unplug sends the watcher no ERROR", "\(strays)")
        client.send(#"{"class":"STATUS"}"#)
        let alone = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"STATUS""#) } ?? ""
        check(alone.contains(#""device":"\#(padName)","model":"calibrated""#) && !alone.contains(#""device":"\#(penName)""#),
              "q: STATUS then names the pad alone, at the top as with one device", "saw \(alone)")
        pad.release()

        // 6. SIGTERM.
        daemon.signal(SIGTERM)
        waitFor("the daemon's exit after SIGTERM", within: Limits.exit) { daemon.hasFinished }
        check(daemon.ended == .exited(0), "q: forcescaled exits 0 on SIGTERM", "saw \(ending(daemon.ended, waited: Limits.exit))\n\(daemon.tail())")
    }

    /// CALIBRATE `name` with `grams` while `device` rests at `raw` with a unit of noise, and
    /// checks the reply names the device and a point near `raw`.
    static func calibrate(_ device: VirtualDevice, name: String, raw: Int32, grams: Int, client: SocketClient) {
        let streaming = Streamer(device, around: raw)
        defer { streaming.stop() }
        client.send(#"{"class":"CALIBRATE","grams":\#(grams),"device":"\#(name)"}"#)
        let reply = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"CALIBRATE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        let point = reply.flatMap(DaemonOnDevice.number("raw"))
        check(reply?.hasPrefix(#"{"class":"CALIBRATE","device":"\#(name)","grams":\#(grams).0,"#) == true && point.map { abs($0 - Double(raw) - 0.5) <= 1 } == true,
              "q: CALIBRATE of \(name) with \(grams) g takes its point at raw ≈ \(raw)", "saw \(reply ?? "no reply within \(Int(Limits.reaction)) s")\n\(client.tail())")
    }
}

/// Frames of a resting weight on a thread of its own: `raw` and `raw + 1` in turn, every
/// 10 ms, until stopped (a device sends nothing while its pressure stays the same, and a
/// weight is never still to the unit).
final class Streamer: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var finished = false

    init(_ device: VirtualDevice, around raw: Int32) {
        Thread.detachNewThread { [self] in
            var frame = 0
            while !isStopped {
                device.press(raw + Int32(frame % 2))
                frame += 1
                Clock.sleep(0.01)
            }
            lock.lock()
            finished = true
            lock.unlock()
        }
    }

    private var isStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopped }

    /// Stops and waits until the thread sends no more (the device may be used again then).
    func stop() {
        lock.lock()
        stopped = true
        lock.unlock()
        waitUntil(Limits.reaction) { lock.lock(); defer { lock.unlock() }; return finished }
    }
}
