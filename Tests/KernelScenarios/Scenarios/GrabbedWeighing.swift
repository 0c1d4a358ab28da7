import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// x. `forcescale weigh --grab --tare-first` through forcescaled on a pad, with evtest
/// reading the same node: while the weighing runs evtest sees none of the pad's events (the
/// daemon holds EVIOCGRAB), and it sees them again once the weighing has answered; the same
/// when the client is killed (SIGKILL) mid-weighing, which gives the pad back through the
/// daemon noticing that its connection went.
///
/// evtest prints events in order, so "none while grabbed" is judged by order, not by time:
/// after the weighing a frame with a pressure never used before (a marker) is injected and
/// waited for; every ABS_PRESSURE line evtest printed between the last one before the grab
/// and the marker would be an event that leaked through the grab.
enum GrabbedWeighing {
    static let pressureLine = NoGrab.pressureLine
    /// The pressure of the last frame injected while the pad was taken (see `weighing`).
    nonisolated(unsafe) static var lastInjected: Int32?

    static func run(_ programs: Programs) {
        guard let evtest = programs.evtest else {
            Report.shared.skip("x: evtest sees nothing of the pad while weigh --grab runs", reason: "evtest is not installed")
            return
        }
        guard let daemonPath = programs.runnableForcescaled(scenario: "x") else { return }
        guard let pad = makeDevice(Tables.pressurePad, scenario: "x") else { return }
        defer { pad.destroy() }
        let nodeName = (pad.node as NSString).lastPathComponent
        let folder = makeScenarioFolder("x")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socketPath = folder + "/sock"

        guard let (daemon, _) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath,
            ["--device", pad.node, "--socket", socketPath, "--state-dir", folder + "/state", "-v"], scenario: "x")
        else { return }
        defer { daemon.stop(SIGTERM) }
        guard let client = SocketClient(path: socketPath) else {
            check(false, "x: connect to \(socketPath)", String(cString: strerror(errno)))
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        guard check(client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil, "x: WATCH is answered",
                    "waited \(Int(Limits.reaction)) s\n\(client.tail())") else { return }

        let arguments = programs.stdbuf.map { [$0, "-oL", evtest, pad.node] } ?? [evtest, pad.node]
        let watcher: Child
        do {
            watcher = try Child("evtest", arguments, counting: [pressureLine])
        } catch {
            check(false, "x: start evtest", "\(error)")
            return
        }
        defer { watcher.stop(SIGINT) }
        let testing = waitFor("evtest's 'Testing ...' line (or its end)", within: Limits.readerStart) {
            watcher.output.contains { $0.contains("Testing ...") } || !watcher.isRunning
        }
        guard expect("x: evtest opens \(pad.node)", after: testing, watcher.output.contains { $0.contains("Testing ...") } && watcher.isRunning,
                     saw: watcher.tail()) else { return }

        // 1. The weighing answers: the pad is given back before the weight is printed.
        guard let answered = weighing(programs, pad: pad, node: nodeName, daemon: daemon, client: client, watcher: watcher,
                                      socketPath: socketPath, round: 1, contact: 40, object: 240, marker: 77)
        else { return }
        let weigh = answered.weigh
        let ended = weigh.wait(Limits.exit)
        let line = weigh.output.first { $0.contains("\"class\":\"ADDED\"") } ?? ""
        // ABS_PRESSURE at 40 units a gram (the physical model): 200 units are 5 g. (Less than
        // the daemon's stable-grams, 2 g, would land without a reading that is not stable,
        // and weigh would never see an object arrive.)
        let grams = DaemonOnDevice.number("grams")(line)
        check(ended == .exited(0) && grams.map { abs($0 - 5.0) < 0.3 } == true,
              "x: weigh --grab --tare-first answers the weight added (5.0 g) and exits 0",
              "\(ending(ended, waited: Limits.exit)); output \(weigh.output) \(weigh.errorText)\n\(daemon.tail())")
        check(daemon.errorsContain("gave \(nodeName) back"), "x: the daemon logs the pad given back on the client's request", daemon.tail())
        afterGrab(pad: pad, watcher: watcher, from: answered.evtestLines, marker: 77, what: "once the weighing answered")

        // 2. The client killed mid-weighing: the daemon gives the pad back when its connection goes.
        pad.release()
        guard let killed = weighing(programs, pad: pad, node: nodeName, daemon: daemon, client: client, watcher: watcher,
                                    socketPath: socketPath, round: 2, contact: 50, object: nil, marker: 88)
        else { return }
        let status = killed.weigh.stop(SIGKILL)
        check(status == .signaled(SIGKILL), "x: weigh --grab is killed mid-weighing (SIGKILL)", "saw \(ending(status, waited: Limits.exit))")
        let given = waitFor("the daemon's log of the killed client's pad given back", within: Limits.reaction) {
            daemon.errorsContain("left: \(nodeName) is given back")
        }
        expect("x: the daemon gives the pad back when the killed client's connection goes", after: given,
               daemon.errorsContain("left: \(nodeName) is given back"), saw: daemon.tail())
        afterGrab(pad: pad, watcher: watcher, from: killed.evtestLines, marker: 88, what: "once the killed client's connection went")
        pad.release()
    }

    /// Starts `weigh --grab --tare-first`, waits for the daemon to take the pad, then rests a
    /// contact at `contact` (and `contact + 1` in turn) until the daemon's own stream shows it
    /// stable for 3 s of event time, and adds an object at `object` until weigh ends.
    /// - Returns: The weigh child, and how many ABS_PRESSURE lines evtest had printed before
    ///   the grab.
    static func weighing(
        _ programs: Programs, pad: VirtualDevice, node: String, daemon: Child, client: SocketClient, watcher: Child,
        socketPath: String, round: Int, contact: Int32, object: Int32?, marker: Int32
    ) -> (weigh: Child, evtestLines: Int)? {
        // Before the grab: the contact lands and evtest shows it (a pressure of its own), so
        // every line evtest will print before the marker came while the pad was taken.
        pad.press(contact - 10, down: true)
        let shown = waitFor("evtest's line of pressure \(contact - 10)", within: Limits.reaction) {
            watcher.output.contains { $0.hasSuffix(pressureLine + "\(contact - 10)") }
        }
        guard expect("x\(round): evtest sees the contact land before the grab", after: shown,
                     watcher.output.contains { $0.hasSuffix(pressureLine + "\(contact - 10)") }, saw: watcher.tail()) else { return nil }
        let before = watcher.count(pressureLine)
        let taken = daemon.errorCount("takes \(node)")
        let weigh: Child
        do {
            weigh = try Child("forcescale weigh --grab", [
                programs.forcescale, "weigh", "--grab", "--tare-first", "--json", "--timeout", String(Int(Limits.readerStart)),
                "--socket", socketPath,
            ])
        } catch {
            check(false, "x\(round): start forcescale weigh --grab", "\(error)")
            return nil
        }
        let grabbed = waitFor("the daemon's log of the pad taken", within: Limits.readerStart) {
            daemon.errorCount("takes \(node)") > taken || !weigh.isRunning
        }
        guard expect("x\(round): the daemon takes \(node) for weigh --grab", after: grabbed,
                     daemon.errorCount("takes \(node)") > taken && weigh.isRunning,
                     saw: "\(weigh.output) \(weigh.errorText)\n\(daemon.tail())") else {
            weigh.stop(SIGKILL)
            return nil
        }
        // The contact, held still: two neighbouring pressures in turn (the kernel drops a
        // value that does not change), a frame every 50 ms (pacing input; it waits for
        // nothing), until the daemon's stream has been stable at it for 3 s of event time:
        // weigh, which watches the same stream from before it, has its zero by then.
        let start = client.lines.count
        var frames = 0
        while weigh.isRunning && stableSeconds(client, from: start, atLeast: contact) < 3 && Double(frames) * 0.05 < Limits.readerStart {
            pad.press(contact + Int32(frames % 2))
            frames += 1
            Clock.sleep(0.05)
        }
        let stableFor = stableSeconds(client, from: start, atLeast: contact)
        guard check(stableFor >= 3, "x\(round): the daemon sees the contact stable for 3 s while the pad is taken",
                    "after \(frames) frames: stable for \(stableFor) s; weigh \(weigh.isRunning ? "runs" : "ended")\n\(client.tail())") else {
            weigh.stop(SIGKILL)
            return nil
        }
        guard let object else { return (weigh, before) }
        // The object, while the daemon still holds the pad: before each frame the scenario
        // tries EVIOCGRAB itself (EBUSY while the daemon holds it; when it succeeds the pad
        // is free, and it is given back at once). Once weigh has its answer it gives the pad
        // back before printing, and frames injected after that reach evtest rightly: they are
        // not injected. Only a release between the probe and the frame's write can let one
        // frame through after the grab, the last (afterGrab allows that one).
        let probe = GrabProbe(node: pad.node)
        frames = 0
        while weigh.isRunning && Double(frames) * 0.05 < Limits.readerStart {
            guard probe?.isTakenByAnother() ?? true else { break }
            pad.press(object + Int32(frames % 2))
            frames += 1
            Clock.sleep(0.05)
        }
        if probe == nil { note("x\(round): could not open \(pad.node) to see whether it is grabbed; injected until weigh ended") }
        lastInjected = object + Int32((frames - 1) % 2)
        return (weigh, before)
    }

    /// For how many seconds of event time the daemon's stream (after line `start`) has been
    /// stable with one contact pressing at least `raw`, up to its newest reading.
    static func stableSeconds(_ client: SocketClient, from start: Int, atLeast raw: Int32) -> Double {
        var since: Double?
        var last = 0.0
        for line in client.lines.dropFirst(start) {
            guard let reading = OutputLine(line), reading.isReading, reading.contacts == 1, reading.raw >= Int(raw) else { continue }
            let time = DaemonOnDevice.number("time")(line) ?? 0
            if line.contains("\"stable\":true") {
                if since == nil { since = time }
                last = time
            } else {
                since = nil
            }
        }
        return since.map { last - $0 } ?? 0
    }

    /// After a grab ends: a marker pressure is injected and evtest must show it, with no
    /// ABS_PRESSURE line between the last one before the grab and the marker.
    static func afterGrab(pad: VirtualDevice, watcher: Child, from before: Int, marker: Int32, what: String) {
        pad.press(marker)
        let seen = waitFor("evtest's line of the marker pressure \(marker)", within: Limits.reaction) {
            watcher.output.contains { $0.hasSuffix(pressureLine + "\(marker)") }
        }
        let lines = watcher.output.filter { $0.contains(pressureLine) }
        var between = Array(lines.dropFirst(before).prefix { !$0.hasSuffix(pressureLine + "\(marker)") })
        // The one frame a release between the probe and the write may let through (weighing).
        if between.count == 1, let last = lastInjected, between[0].hasSuffix(pressureLine + "\(last)") {
            note("x: evtest saw the last frame (pressure \(last)): the pad was given back between the probe and its write")
            between = []
        }
        lastInjected = nil
        expect("x: evtest sees the pad again \(what)", after: seen, lines.contains { $0.hasSuffix(pressureLine + "\(marker)") },
               saw: watcher.tail())
        expect("x: evtest saw none of the pad's events while it was taken (\(what))", after: seen, between.isEmpty,
               saw: "\(between.count) ABS_PRESSURE lines between the grab and the marker: \(between.prefix(3)) … \(between.suffix(2))")
    }
}

/// Whether another reader holds a device with EVIOCGRAB, asked the only way the kernel
/// tells: by trying to grab it (EBUSY when another holds it), and giving it back at once.
final class GrabProbe {
    private let descriptor: Int32
    private let handle: OpaquePointer

    init?(node: String) {
        descriptor = open(node, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var device: OpaquePointer?
        guard libevdev_new_from_fd(descriptor, &device) == 0, let device else {
            close(descriptor)
            return nil
        }
        handle = device
    }

    deinit {
        libevdev_free(handle)
        close(descriptor)
    }

    /// `true` while another reader holds the device; `false` once it is free.
    func isTakenByAnother() -> Bool {
        guard libevdev_grab(handle, LIBEVDEV_GRAB) == 0 else { return true }
        _ = libevdev_grab(handle, LIBEVDEV_UNGRAB)
        return false
    }
}
