import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// q. `forcescaled` with two pressure devices at once, a pen (0–2047, no force feedback)
/// and a touchpad that rumbles (0–255), each named by `--device`, the pad also named by
/// `--rumble-device`: STATUS lists both, each rumbling through the pad, whose one effect is
/// uploaded once; a watching client gets each one's readings under its own name, and each
/// one's PEAK plays that effect; TARE without a device is refused with an ERROR listing
/// both, and a TARE of the pad leaves the pen's grams alone; each is calibrated on its own
/// (a point on the pen, then one on the pad, each in its own state file); a flood of the
/// pen (SYN_DROPPED) leaves the pad's readings alone and is counted for the pen only; the
/// pen is unplugged while the pad streams, and the pad's readings go on, STATUS then naming
/// it alone; SIGTERM exits 0 and erases the effect.
enum TwoDevices {
    static func run(_ programs: Programs) {
        guard let daemonPath = programs.runnableForcescaled(scenario: "q") else { return }
        let folder = makeScenarioFolder("q")
        let socketPath = folder + "/sock"
        let stateDirectory = folder + "/state"
        defer { try? FileManager.default.removeItem(atPath: folder) }

        guard let pad = makeDevice(Tables.rumblePad, scenario: "q") else { return }
        defer { pad.destroy() }
        guard let penDevice = makeDevice(Tables.pen2047, scenario: "q") else { return }
        // Unplugged halfway through (then nil).
        var pen: VirtualDevice? = penDevice
        defer { pen?.destroy() }
        let padName = (pad.node as NSString).lastPathComponent
        let penName = (pen!.node as NSString).lastPathComponent

        // 1. Both served: STATUS lists each, and no one device at the top.
        guard let (daemon, statusLine) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath,
            // The pen by its name, so that a pen plugged in later is taken up; the pad by its node.
            ["--device", Tables.pen2047.name, "--device", pad.node, "--rumble-device", pad.node, "--socket", socketPath, "--state-dir", stateDirectory],
            scenario: "q")
        else { return }
        defer { if !daemon.hasFinished { daemon.stop(SIGKILL) } }
        // The daemon opens both before it serves anyone: the first STATUS lists both.
        check(statusLine.contains(#""device":"\#(penName)","name":"forcescale pen 2047""#)
                && statusLine.contains(#""device":"\#(padName)","name":"forcescale rumble pad""#)
                && !statusLine.contains(#""clients":1,"device""#),
              "q: STATUS lists the pen (\(penName)) and the pad (\(padName)), and names neither at the top", "saw \(statusLine)")
        let rumbles = statusLine.components(separatedBy: #""rumble":"\#(pad.node)","pressure""#).count - 1
        check(rumbles == 2, "q: STATUS: both devices rumble through the pad (the pen through --rumble-device)", "saw \(statusLine)")
        // Both devices are open (and their effect uploaded) before the daemon serves anyone.
        let opened = pad.forceFeedback
        check(opened.uploads.count == 1, "q: one effect is uploaded on the pad, shared by the pen", "saw \(opened.uploads)")
        let effect = opened.uploads.first?.effectID ?? -1

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

        // Each device's PEAK plays the pad's one effect.
        peak(pen!, name: penName, maximum: 2047, back: 1024, pad: pad, effect: effect, client: client)
        peak(pad, name: padName, maximum: 255, back: 100, pad: pad, effect: effect, client: client)

        // 3. TARE without a device is refused, listing both; a TARE of the pad leaves the pen.
        client.send(#"{"class":"TARE"}"#)
        let refused = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"ERROR""#) || $0.hasPrefix(#"{"class":"TARE""#) }
        // Listed in the order they were opened: their nodes' order.
        let served = [penName, padName].sorted { (Int($0.dropFirst(5)) ?? 0) < (Int($1.dropFirst(5)) ?? 0) }
        check(refused == #"{"class":"ERROR","message":"2 devices are served (\#(served.joined(separator: ", "))): name one with --device (the request's 'device')","request":"TARE"}"#,
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
        let calibrations = Self.devices(in: status).mapValues { entry -> String in
            let calibration = entry["calibration"] as? [String: Any]
            let points = (calibration?["points"] as? NSNumber)?.intValue ?? -1
            let tare = (calibration?["tare"] as? NSNumber)?.doubleValue ?? -1
            return "\(entry["model"] as? String ?? "?") \(points) " + String(format: "%.1f", tare)
        }
        check(calibrations == [penName: "calibrated 1 0.0", padName: "calibrated 1 151.0"],
              "q: STATUS: the pen has its point and no tare, the pad its point and its tare", "saw \(status)")
        let stateFiles = ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
        check(stateFiles.count == 2, "q: each device has a calibration file of its own", "saw \(stateFiles)")

        // 5. A flood of the pen while the daemon is stopped: the kernel drops the pen's events
        // (SYN_DROPPED), never the pad's one frame.
        daemon.signal(SIGSTOP)
        waitFor("the daemon stopped", within: Limits.reaction) { ProcessInfoFile.stat(daemon.pid)?.state == "T" }
        var batch: [Event] = []
        for index in 0..<20_000 {
            batch += [.abs(ABS_PRESSURE, Int32(index * 7 % 2048)), .report]
            if batch.count >= 600 { pen!.send(batch); batch.removeAll(keepingCapacity: true) }
        }
        pen!.send(batch + [.abs(ABS_PRESSURE, 1030), .report])
        pad.press(120)
        let beforeFlood = client.lines.count
        daemon.signal(SIGCONT)
        let flooded = daemon.waitForError("/dev/input/\(penName): events were dropped (SYN_DROPPED)", timeout: Limits.reaction * 2)
        check(flooded, "q: the daemon says the pen's events were dropped", daemon.tail())
        let padRead = waitFor("the pad's READING raw 120 after the flood", within: Limits.reaction * 2) {
            client.lines.dropFirst(beforeFlood).contains(where: reading(of: padName, raw: 120))
        }
        check(padRead.held, "q: the pad's frame sent during the pen's flood is read", "\(padRead.account)\n\(client.tail())")
        client.send(#"{"class":"STATUS"}"#)
        let counted = client.waitFor(Limits.reaction * 2) { $0.hasPrefix(#"{"class":"STATUS""#) } ?? ""
        let drops = Self.devices(in: counted).mapValues { ($0["dropped_events"] as? NSNumber)?.intValue ?? -1 }
        check((drops[penName] ?? 0) >= 1 && drops[padName] == 0, "q: STATUS counts the drops for the pen only", "saw \(counted)")

        // 6. The pen unplugged while the pad streams: the pad's readings go on.
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
        let alone = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"STATUS""#) && !$0.contains(#""device":"\#(penName)""#) } ?? ""
        check(alone.contains(#""device":"\#(padName)","model":"calibrated""#) && !alone.contains(#""device":"\#(penName)""#),
              "q: STATUS then names the pad alone, at the top as with one device", "saw \(alone)")
        pad.release()

        // 7. A pen plugged in again is taken up under its new node, with its calibration.
        guard let replugged = makeDevice(Tables.pen2047, scenario: "q") else { return }
        pen = replugged
        let newName = (replugged.node as NSString).lastPathComponent
        let takenUp = daemon.waitForError("reading \(replugged.node) (forcescale pen 2047)", timeout: Limits.readerStart)
        check(takenUp, "q: a pen plugged in again is taken up", daemon.tail())
        let beforeReplug = client.lines.count
        replugged.press(1030, down: true)
        let readAgain = waitFor("a READING of the replugged pen", within: Limits.reaction) {
            client.lines.dropFirst(beforeReplug).contains { reading(of: newName, raw: 1030)($0) && $0.contains(#""model":"calibrated""#) }
        }
        check(readAgain.held, "q: the replugged pen's readings come under its new name (\(newName)), calibrated", "\(readAgain.account)\n\(client.tail())")
        replugged.release()

        // 8. SIGTERM: the effect erased, once.
        daemon.signal(SIGTERM)
        let stopped = waitFor("the daemon's exit after SIGTERM and the erase at the pad", within: Limits.exit) {
            daemon.hasFinished && !pad.forceFeedback.erases.isEmpty
        }
        check(daemon.ended == .exited(0), "q: forcescaled exits 0 on SIGTERM", "saw \(ending(daemon.ended, waited: Limits.exit))\n\(daemon.tail())")
        let final = pad.forceFeedback
        expect("q: SIGTERM erases the pad's one effect; nothing else was uploaded", after: stopped,
               final.erases == [Int32(effect)] && final.uploads.count == 1 && final.problems.isEmpty,
               saw: "uploads \(final.uploads), erases \(final.erases), problems \(final.problems)")
    }

    /// STATUS's `devices`, by name.
    static func devices(in status: String) -> [String: [String: Any]] {
        guard let data = status.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let entries = object["devices"] as? [[String: Any]] else { return [:] }
        var byName: [String: [String: Any]] = [:]
        for entry in entries { if let name = entry["device"] as? String { byName[name] = entry } }
        return byName
    }

    /// Presses `device` to its `maximum` and back to `back`, with `client` watching: its PEAK
    /// names it and was played, and the pad's effect played once more.
    static func peak(_ device: VirtualDevice, name: String, maximum: Int32, back: Int32, pad: VirtualDevice, effect: Int16, client: SocketClient) {
        let playsBefore = pad.forceFeedback.playsByEffect[Int(effect)] ?? 0
        let from = client.lines.count
        device.press(maximum)
        let played = waitFor("\(name)'s PEAK at the client and a play at the pad", within: Limits.reaction) {
            client.lines.dropFirst(from).contains { $0.contains(Marker.peak) && $0.contains(#""device":"\#(name)""#) }
                && (pad.forceFeedback.playsByEffect[Int(effect)] ?? 0) > playsBefore
        }
        let line = client.lines.dropFirst(from).first { $0.contains(Marker.peak) && $0.contains(#""device":"\#(name)""#) } ?? "none"
        check(played.held && line.contains(#""rumble":"played""#),
              "q: \(name)'s PEAK is played through the pad's effect \(effect)", "\(played.account); PEAK \(line); plays \(pad.forceFeedback.playsByEffect)")
        // Back down, and read as such before anything asks for the device's weight (a TARE
        // sent before the daemon read this frame would take the peak's).
        let sent = client.lines.count
        device.press(back)
        waitFor("\(name)'s READING back at raw \(back)", within: Limits.reaction) {
            client.lines.dropFirst(sent).contains { $0.contains(Marker.reading) && $0.contains(#""device":"\#(name)""#) && $0.contains(#""raw":\#(back),"#) }
        }
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
