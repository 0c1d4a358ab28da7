import Foundation
import KernelTestSupport
import Glibc

/// l. The force log on a live device: `forcescaled --log` on the pressure pad logs each
/// touch as a session holding exactly the readings its clients were sent; a touch cut short
/// by unplugging the pad is closed at the loss, and the same pad plugged back in is the same
/// device in the log; after SIGTERM the file passes SQLite's integrity check, and
/// `forcescale log` lists, exports and plots it.
enum ForceLogOnDevice {
    static func run(_ programs: Programs) {
        let daemonPath = programs.forcescaled
        let folder = makeScenarioFolder("l")
        let socketPath = folder + "/sock"
        let stateDirectory = folder + "/state"
        let logPath = stateDirectory + "/log.sqlite"
        defer { try? FileManager.default.removeItem(atPath: folder) }

        guard var pad = makeDevice(Tables.pressurePad, scenario: "l") else { return }
        guard let (daemon, _) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath,
            ["--device", Tables.pressurePad.name, "--socket", socketPath, "--state-dir", stateDirectory,
             "--log", "--no-rumble", "--interval-ms", "0"], scenario: "l")
        else {
            pad.destroy()
            return
        }
        guard let client = SocketClient(path: socketPath) else {
            check(false, "l: connect to \(socketPath)", String(cString: strerror(errno)))
            daemon.stop(SIGKILL)
            pad.destroy()
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        check(client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil, "l: WATCH is answered",
              "waited \(Int(Limits.reaction)) s for the WATCH reply\n\(client.tail())")
        func readingCount() -> Int { client.lines.filter { $0.contains(Marker.reading) }.count }

        // Each frame is sent once the previous one's reading reached the client: the daemon
        // has then taken it (and a frame still queued at the unplug would be lost).
        // Touch 1: a press rising to 200 and its release.
        for (step, value) in [40, 90, 140, 200, 200 - 1].enumerated() {
            pad.press(Int32(value), down: step == 0)
            let wanted = step + 1
            waitFor("reading \(wanted) (raw \(value)) at the client", within: Limits.reaction) { readingCount() >= wanted }
        }
        pad.release()
        waitFor("the release's reading (6th) at the client", within: Limits.reaction) { readingCount() >= 6 }
        // Touch 2: pressed, then the pad is unplugged under the finger.
        pad.press(150, down: true)
        waitFor("the reading of touch 2 (raw 150) at the client", within: Limits.reaction) { readingCount() >= 7 }
        pad.destroy()
        expect("l: the daemon notices the unplug", within: Limits.reaction, waitingFor: "'removed' on the daemon's stderr",
               { daemon.errorsContain("removed") }, saw: daemon.tail())
        // Touch 3 on the pad plugged back in.
        guard let replugged = makeDevice(Tables.pressurePad, scenario: "l") else {
            daemon.stop(SIGKILL)
            return
        }
        pad = replugged
        defer { pad.destroy() }
        // The daemon says when it reads the pad again (its second 'reading' notice: event
        // numbers are reused, so the node alone does not tell); then its STATUS must name it.
        let nodeName = (pad.node as NSString).lastPathComponent
        let noticed = waitFor("the daemon's second 'reading /dev/input/…' notice", within: Limits.readerStart) {
            daemon.errorCount("reading /dev/input/") >= 2 || !daemon.isRunning
        }
        var reopened = false
        var asked = 0
        // Asked every half second (pacing: each question starts a process).
        retry(Limits.readerStart, pause: 0.5) {
            asked += 1
            let (ended, status) = runToEnd("status", [programs.forcescale, "status", "--json", "--socket", socketPath], timeout: Limits.command)
            reopened = ended == .exited(0) && (status?.output.contains { $0.contains("\"device\":\"\(nodeName)\"") } ?? false)
            return reopened || !daemon.isRunning
        }
        check(reopened, "l: the daemon takes the pad up again",
              "\(noticed.account); asked STATUS \(asked) times over up to \(Int(Limits.readerStart)) s for device \(nodeName)\n\(daemon.tail())")
        let beforeThird = readingCount()
        pad.press(90, down: true)
        waitFor("the reading of touch 3 (raw 90) at the client", within: Limits.reaction) { readingCount() >= beforeThird + 1 }
        pad.release()
        waitFor("the release's reading of touch 3 at the client", within: Limits.reaction) { readingCount() >= beforeThird + 2 }

        daemon.signal(SIGTERM)
        // What the client was sent is complete once the daemon has exited and the
        // connection has ended.
        let finished = waitFor("the daemon's exit after SIGTERM and the end of the client's connection", within: Limits.exit) {
            daemon.hasFinished && client.hasEnded
        }
        if !daemon.hasFinished { daemon.stop(SIGKILL) }
        let stopped = daemon.ended
        check(stopped == .exited(0), "l: forcescaled --log exits 0 on SIGTERM (the log flushed)",
              "saw \(ending(stopped, waited: Limits.exit))\n\(daemon.tail())")
        // What the client was sent, touch by touch (a touch ends with its zero reading, or
        // with the unplug).
        let sent = client.lines.filter { $0.contains(Marker.reading) }.compactMap(OutputLine.init)

        let (integrityStatus, integrity) = runToEnd("sqlite3 integrity_check", ["/usr/bin/sqlite3", "-readonly", logPath, "PRAGMA integrity_check"], timeout: Limits.command)
        check(integrityStatus == .exited(0) && integrity?.output == ["ok"], "l: the log passes PRAGMA integrity_check", integrity?.tail() ?? "")

        let (listStatus, list) = runToEnd("log sessions", [programs.forcescale, "log", "sessions", "--json", "--db", logPath], timeout: Limits.command)
        let sessions = (list?.output ?? []).compactMap { line -> [String: Any]? in
            guard let data = line.data(using: .utf8) else { return nil }
            return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        }
        guard check(listStatus == .exited(0) && sessions.count == 3, "l: log sessions lists the three touches", list?.tail() ?? "") else { return }
        let peaks = sessions.map { ($0["peak_grams"] as? NSNumber)?.doubleValue ?? -1 }
        // The pad reports a pressure resolution (40 units per gram): the physical model.
        let expected = [200.0, 150, 90].map { $0 / 40 }
        check(zip(peaks, expected).allSatisfy { abs($0 - $1) < 0.001 }, "l: each session's peak is its hardest press (\(expected.map { String(format: "%.2f", $0) }) g)", "saw \(peaks)")
        check(sessions.allSatisfy { $0["ended"] != nil }, "l: every session is closed, the unplugged touch included", "\(sessions)")
        check(Set(sessions.compactMap { $0["device_key"] as? String }).count == 1, "l: the pad plugged back in is the same device in the log", "\(sessions)")

        // The readings of each session are those the client was sent, in order.
        var touches: [[Int]] = [[]]
        for reading in sent {
            touches[touches.count - 1].append(reading.raw)
            if reading.contacts == 0 { touches.append([]) }
        }
        // The unplugged touch has no release reading: it ends where touch 3 begins.
        if let cut = touches.firstIndex(where: { $0.first == 150 }), touches[cut].contains(90) {
            let split = touches[cut].firstIndex(of: 90)!
            touches.insert(Array(touches[cut][split...]), at: cut + 1)
            touches[cut] = Array(touches[cut][..<split])
        }
        touches.removeAll { $0.isEmpty }
        for (index, session) in sessions.enumerated() {
            guard let id = (session["session"] as? NSNumber)?.intValue else { continue }
            let (status, export) = runToEnd("log export", [programs.forcescale, "log", "export", "--session", String(id), "--format", "csv", "--db", logPath], timeout: Limits.command)
            let raws = (export?.output ?? []).dropFirst().compactMap { line -> Int? in
                let fields = line.split(separator: ",", omittingEmptySubsequences: false)
                return fields.count > 3 ? Int(fields[3]) : nil
            }
            let want = index < touches.count ? touches[index] : []
            expect("l: session \(id) holds the \(want.count) readings the client was sent", after: finished,
                   status == .exited(0) && raws == want, saw: "log \(raws), client \(want)\n\(export?.tail() ?? "")")
        }

        let plot = folder + "/first.svg"
        let first = (sessions.first?["session"] as? NSNumber)?.intValue ?? 1
        let (plotStatus, plotter) = runToEnd("log plot", [programs.forcescale, "log", "plot", "--session", String(first), "--output", plot, "--db", logPath], timeout: Limits.command)
        let svg = (try? String(contentsOfFile: plot, encoding: .utf8)) ?? ""
        check(plotStatus == .exited(0) && svg.hasPrefix("<?xml") && svg.contains("</svg>"), "l: log plot draws the first session", plotter?.tail() ?? "")
    }
}
