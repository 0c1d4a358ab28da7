import Foundation
import KernelTestSupport
import Glibc

/// v. The wall clock stepped an hour back and an hour forward (as `date -s` or an NTP step
/// does) while `forcescaled --log` serves a pad: the daemon goes on serving, each logged
/// session's times run forward from its first reading however the clock moved under it,
/// the step shows from the next session on, and the log passes SQLite's integrity check.
/// The VM's clock ends where it would have been.
enum WallClockSteps {
    static func run(_ programs: Programs) {
        let folder = makeScenarioFolder("v")
        let socketPath = folder + "/sock"
        let logPath = folder + "/state/log.sqlite"
        defer { try? FileManager.default.removeItem(atPath: folder) }

        guard let pad = makeDevice(Tables.pressurePad, scenario: "v") else { return }
        defer { pad.destroy() }
        guard let (daemon, _) = DaemonOnDevice.startDaemon(
            programs, daemonPath: programs.forcescaled,
            ["--device", Tables.pressurePad.name, "--socket", socketPath, "--state-dir", folder + "/state",
             "--log", "--no-rumble", "--interval-ms", "0"], scenario: "v")
        else { return }
        guard let client = SocketClient(path: socketPath) else {
            check(false, "v: connect to \(socketPath)", String(cString: strerror(errno)))
            daemon.stop(SIGKILL)
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        check(client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil, "v: WATCH is answered", client.tail())
        func readingCount() -> Int { client.lines.filter { $0.contains(Marker.reading) }.count }
        var sent = 0
        /// One frame, sent once the previous one's reading reached the client.
        func frame(_ value: Int32?, down: Bool = false) {
            if let value { pad.press(value, down: down) } else { pad.release() }
            sent += 1
            let wanted = sent
            waitFor("reading \(wanted) at the client", within: Limits.reaction) { readingCount() >= wanted }
        }
        let hour: Int = 3600
        var stepped = 0
        func stepClock(by seconds: Int) {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            now.tv_sec += seconds
            check(clock_settime(CLOCK_REALTIME, &now) == 0, "v: the wall clock is stepped by \(seconds) s", String(cString: strerror(errno)))
            stepped += seconds
        }
        defer { if stepped != 0 { stepClock(by: -stepped) } }

        // Touch 1: the clock goes back an hour in its middle.
        frame(50, down: true)
        frame(80)
        stepClock(by: -hour)
        frame(120)
        frame(nil)
        // Touch 2, on the stepped clock: forward an hour in its middle.
        frame(60, down: true)
        stepClock(by: hour)
        frame(90)
        frame(nil)
        // Touch 3, on the clock as it was.
        frame(70, down: true)
        frame(nil)
        let (pollStatus, poll) = runToEnd("status", [programs.forcescale, "status", "--json", "--socket", socketPath], timeout: Limits.command)
        check(pollStatus == .exited(0), "v: the daemon still answers after the steps", poll?.tail() ?? "")

        daemon.signal(SIGTERM)
        waitFor("the daemon's exit after SIGTERM", within: Limits.exit) { daemon.hasFinished }
        if !daemon.hasFinished { daemon.stop(SIGKILL) }
        check(daemon.ended == .exited(0), "v: forcescaled exits 0 on SIGTERM", daemon.tail())
        let (integrityStatus, integrity) = runToEnd("sqlite3 integrity_check", ["/usr/bin/sqlite3", "-readonly", logPath, "PRAGMA integrity_check"], timeout: Limits.command)
        check(integrityStatus == .exited(0) && integrity?.output == ["ok"], "v: the log passes PRAGMA integrity_check", integrity?.tail() ?? "")

        // Each session's reading times (Unix seconds), from the CSV export.
        let (exportStatus, export) = runToEnd("log export", [programs.forcescale, "log", "export", "--db", logPath], timeout: Limits.command)
        var times: [Int: [Double]] = [:]
        for line in (export?.output ?? []).dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 3, let session = Int(fields[0]), let time = Double(fields[2]) else { continue }
            times[session, default: []].append(time)
        }
        let sessions = times.keys.sorted().map { times[$0]! }
        guard check(exportStatus == .exited(0) && sessions.map(\.count) == [4, 3, 2], "v: three sessions of 4, 3 and 2 readings are logged",
                    "saw \(sessions.map(\.count))\n\(export?.tail() ?? "")") else { return }
        for (index, session) in sessions.enumerated() {
            let forward = zip(session, session.dropFirst()).allSatisfy { $0 <= $1 }
            check(forward && session.last! - session.first! < 600, "v: session \(index + 1)'s times run forward and span minutes at most",
                  "saw \(session.map { String(format: "%.6f", $0) })")
        }
        // Session 2 began on the clock an hour back; session 3 on the clock as it was.
        let second = sessions[1].first! - sessions[0].first!
        let third = sessions[2].first! - sessions[0].first!
        check(second > -Double(hour) && second < -Double(hour) + 600, "v: session 2 starts an hour (less the minutes between) before session 1",
              "its start is \(String(format: "%.3f", second)) s from session 1's")
        check(third > 0 && third < 600, "v: session 3 starts minutes after session 1", "its start is \(String(format: "%.3f", third)) s from session 1's")
    }
}
