import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// The daemon's force log end to end: the real forcescaled writing a real SQLite file,
/// read back with Debian's `sqlite3` (not with the code that wrote it), killed with SIGKILL
/// mid-stream, and given a disk that is read-only and then full.
@Suite(.serialized) struct DaemonLogTests {
    /// A touchpad pressed at 1 kHz (a frame every millisecond, the pressure changing every
    /// frame) in touches of 0.4 s with 0.1 s releases between them; with `--interval-ms 0`
    /// every frame is a READING. Made from the demo's device description.
    static func kilohertz(in directory: URL, seconds: Int = 4) throws -> String {
        let demo = try String(contentsOfFile: try DaemonRecordings.demo(in: directory), encoding: .utf8)
        var text = demo.split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.hasPrefix("E:") }.joined(separator: "\n") + "\n"
        func stamp(_ microseconds: Int) -> String {
            "\(microseconds / 1_000_000)." + String(String(microseconds % 1_000_000 + 1_000_000).dropFirst())
        }
        for touch in 0..<(seconds * 2) {
            let start = 1_000_000 + touch * 500_000
            text += "E: \(stamp(start)) 0001 014a 1\nE: \(stamp(start)) 0001 0145 1\nE: \(stamp(start)) 0003 0000 400\nE: \(stamp(start)) 0003 0001 450\n"
            for frame in 0..<400 {
                let time = stamp(start + frame * 1_000)
                text += "E: \(time) 0003 0018 \(60 + (frame * 7 + touch * 13) % 180)\nE: \(time) 0000 0000 0\n"
            }
            let release = stamp(start + 400_000)
            text += "E: \(release) 0001 014a 0\nE: \(release) 0001 0145 0\nE: \(release) 0003 0018 0\nE: \(release) 0000 0000 0\n"
        }
        let path = directory.appendingPathComponent("kilohertz.events").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `sqlite3` on the file (read-write, as a restarted daemon would open it, so a
    /// crashed file's WAL is recovered first). - Returns: its output lines.
    static func sqlite(_ path: String, _ sql: String) throws -> [String] {
        let result = try run("/usr/bin/sqlite3", ["-batch", path, sql])
        #expect(result.exited && result.status == 0, "sqlite3 \(sql): \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    /// `CLOCK_REALTIME - CLOCK_MONOTONIC` in µs, as the daemon computes it.
    static func wallOffset() -> Int64 {
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        return Int64(wall.tv_sec) * 1_000_000 + Int64(wall.tv_nsec) / 1_000 - monotonicMicroseconds()
    }

    static func logLines(_ stderr: String, level: Int, containing text: String) -> [Substring] {
        stderr.split(separator: "\n").filter { $0.hasPrefix("<\(level)>") && $0.contains(text) }
    }

    // MARK: - Logging

    @Test func aLoggedReplayIsInTheFileWithItsSessionsAndStatusSaysSo() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory, arguments: ["--log"])
        defer { daemon.cleanUp() }
        let path = daemon.stateDirectory + "/log.sqlite"
        let client = try daemon.connect()
        client.send(#"{"class":"WATCH"}"#)
        var received: [JSONValue] = []
        let before = Self.wallOffset()
        // The demo's first object rests on the pad from 1 s to about 4 s: five seconds of
        // readings by their own times (the daemon's clock, whatever the machine's load).
        while let reading = client.nextReading() {
            received.append(reading)
            if eventMicroseconds(reading) - eventMicroseconds(received[0]) >= 5_000_000 { break }
        }
        let observer = try daemon.connect()
        func status() throws -> JSONValue { try JSONValue.parse(try #require(observer.request(#"{"class":"STATUS"}"#))) }
        // Batches of up to a second: the rows come within one (on an idle machine).
        var lastStatus: JSONValue?
        try waitFor("more than 100 readings written to the log", every: 0.05, saw: { "\(lastStatus.map { "\($0)" } ?? "no STATUS")" }) {
            lastStatus = try status()
            return lastStatus?["log"]?["written"]?.numberValue ?? 0 > 100
        }
        let log = try #require(try status()["log"], "STATUS has no log with --log")
        #expect(log["path"]?.stringValue == path)
        // Less than a second's readings (about 80 at the demo's 80 Hz) wait at any time.
        #expect((log["pending"]?.numberValue ?? -1) < 100)
        #expect(log["dropped"]?.numberValue == 0)
        #expect(log["error"] == nil)
        let words = try forcescale(["status", "--socket", daemon.socketPath])
        #expect(words.stdout.contains("\n  log         \(path), ") && words.stdout.contains(" readings and PEAKs written"), "\(words.stdout)")
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("<5>logging readings to \(path) (schema 4)\n"), "\(stopped.stderr)")

        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"])
        #expect(try Self.sqlite(path, "PRAGMA journal_mode") == ["wal"])
        #expect(try Self.sqlite(path, "SELECT key || '|' || name FROM devices") == ["0006-0000-0000-forcescale-demo-pad-synthetic|forcescale demo pad (synthetic)"])
        // Every session ended (the last one by the stop), its count matching its rows.
        #expect(try Self.sqlite(path, "SELECT count(*) FROM sessions WHERE ended IS NULL OR readings != (SELECT count(*) FROM readings WHERE session = sessions.id)") == ["0"])
        // The readings the watcher got are in the file, with the same values, at their wall time.
        let touching = received.filter { ($0.number("contacts") ?? 0) > 0 }
        try #require(touching.count > 50)
        let logged = try Self.sqlite(path, "SELECT time, raw, printf('%.1f', grams) FROM readings WHERE contacts > 0 ORDER BY session, n")
        var byRaw: [String: [Int64]] = [:]
        for row in logged {
            let fields = row.split(separator: "|")
            byRaw["\(fields[1])|\(fields[2])", default: []].append(Int64(fields[0])!)
        }
        for reading in touching {
            let key = "\(Int(reading.number("raw")!))|\(String(format: "%.1f", reading.number("grams")!))"
            let wall = Int64((reading.number("time")! * 1e6).rounded()) + before
            #expect(byRaw[key]?.contains { abs($0 - wall) < 50_000 } == true, "READING \(key) at \(wall) is not in the log")
        }
    }

    /// Two devices logging at once (issue 28): forcescaled serves two recordings (`--replay`
    /// twice, played once each, from the same moment), a pen held at raw 100 and a touchpad
    /// held at raw 60. Their readings reach the log interleaved; `forcescale log` shows a
    /// session for each, overlapping in time, and the export of each session has its own
    /// device's readings only.
    @Test func devicesThatLogAtOnceHaveSessionsOfTheirOwn() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let pen = try DaemonRecordings.dashboardPress(in: directory, name: "pen.events", held: 100, deviceName: "Test tablet Pen")
        let pad = try DaemonRecordings.dashboardPress(in: directory, name: "pad.events", held: 60, deviceName: "Test Touchpad")
        let socket = directory.appendingPathComponent("sock").path
        let path = directory.appendingPathComponent("log.sqlite").path
        let daemon = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescaled").path,
                                      ["--replay", pen, "--replay", pad, "--log", "--log-db", path, "--socket", socket,
                                       "--state-dir", directory.appendingPathComponent("state").path])
        defer { daemon.kill() }
        try waitUntilListening(daemon, on: socket)
        // Each recording is one touch of about 3.3 s; its session ends with the release.
        var sessions: [[String: Any]] = []
        try waitFor("two ended sessions in the log", within: 2 * patience, every: 0.2, saw: { "\(sessions)" }) {
            let listed = try forcescale(["log", "sessions", "--json", "--db", path])
            sessions = listed.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            return sessions.count >= 2 && sessions.allSatisfy { $0["ended"] is Double }
        }
        daemon.signal(SIGTERM)
        #expect(daemon.wait().status == 0)
        let final = try forcescale(["log", "sessions", "--json", "--db", path]).stdout.split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        try #require(final.count == 2, "one session per device: \(final)")
        #expect(Set(final.compactMap { $0["device"] as? String }) == ["Test tablet Pen", "Test Touchpad"], "\(final)")
        // At once: each started before the other ended.
        let (first, second) = (final[0], final[1])
        #expect((first["started"] as! Double) < (second["ended"] as! Double) && (second["started"] as! Double) < (first["ended"] as! Double), "\(final)")
        for session in final {
            let id = try #require(session["session"] as? Int)
            let device = try #require(session["device"] as? String)
            let export = try forcescale(["log", "export", "--session", String(id), "--format", "jsonl", "--db", path])
            let readings = export.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(readings.count == session["readings"] as? Int && readings.count > 300, "\(session): \(readings.count) readings exported")
            #expect(readings.allSatisfy { $0["device"] as? String == device && $0["session"] as? Int == id })
            // The held pressure of this device, never the other's.
            let raws = Set(readings.compactMap { $0["raw"] as? Int })
            let (own, other) = device == "Test tablet Pen" ? (100, 60) : (60, 100)
            #expect(raws.contains(own) && !raws.contains(other), "\(device)'s session has raw values \(raws.sorted())")
            #expect(readings.filter { $0["raw"] as? Int == own }.count >= 250, "\(device): its 2.5 s held at \(own)")
        }
    }

    @Test func retentionChangedOnSIGHUPAppliesAtOnceAndTheFileWaitsForARestart() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("forcescale.conf").path
        let path = directory.appendingPathComponent("rig.sqlite").path
        try "log-db = \(path)\n".write(toFile: config, atomically: true, encoding: .utf8)
        // The demo at full speed: a session of about 265 readings every 4 s or so.
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory, arguments: ["--config", config])
        defer { daemon.cleanUp() }
        // Polled while the daemon writes: a failed query (sqlite3 finding the file busy) is a "not yet".
        func value(_ sql: String) -> Int? {
            guard let result = try? run("/usr/bin/sqlite3", ["-batch", "-readonly", path, sql]), result.status == 0 else { return nil }
            return Int(result.stdout.split(separator: "\n").first?.split(separator: ".").first ?? "")
        }
        try waitFor("forcescaled to log to \(path)", saw: { daemon.stderr }) { daemon.stderr.contains("<5>logging readings to \(path)") }
        // Three sessions end about 13 s into the demo: the deadline adds that to the usual.
        try waitFor("three ended sessions in the log", within: 15 + patience, every: 0.2,
                    saw: { "\(value("SELECT count(*) FROM sessions WHERE ended IS NOT NULL") ?? -1); \(daemon.stderr)" }) {
            value("SELECT count(*) FROM sessions WHERE ended IS NOT NULL") ?? 0 >= 3
        }

        try "log-db = \(directory.path)/elsewhere.sqlite\nlog-keep-readings = 300\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.child.signal(SIGHUP)
        try waitFor("forcescaled to say log-keep-readings changed", saw: { daemon.stderr }) { daemon.stderr.contains("log-keep-readings no limit → 300") }
        #expect(daemon.stderr.contains("<4>log-db \(path) → \(directory.path)/elsewhere.sqlite: takes effect when forcescaled restarts"), "\(daemon.stderr)")
        // Whole sessions go, oldest first, until the ended ones hold no more than 300 readings
        // (the one in progress is never removed).
        let heldSQL = "SELECT total(readings) FROM sessions WHERE ended IS NOT NULL AND id != (SELECT max(id) FROM sessions)"
        try waitFor("the ended sessions to hold at most 300 readings", every: 0.2, saw: { "\(value(heldSQL) ?? -1); \(daemon.stderr)" }) {
            let held = value(heldSQL) ?? -1
            return held >= 0 && held <= 300
        }
        // Their readings follow in steps of 2000, between batches.
        let orphansSQL = "SELECT count(*) FROM readings WHERE session NOT IN (SELECT id FROM sessions)"
        try waitFor("no readings left of removed sessions", every: 0.2, saw: { "\(value(orphansSQL) ?? -1)" }) { value(orphansSQL) == 0 }
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/elsewhere.sqlite"))
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0)
        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"])
    }

    // MARK: - Crash safety

    /// SIGKILL at random moments of a 1 kHz stream: the file opens, is sound, and what is
    /// missing is at most what was still waiting to be written — the batch being gathered
    /// (up to 100 readings, or a second's) and the one being committed.
    @Test func aKilledDaemonLosesAtMostTheBatchesInFlight() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try Self.kilohertz(in: directory)
        let path = directory.appendingPathComponent("crash.sqlite").path
        var losses: [Int] = []
        var pendingFigures: [Int] = []
        for run in 0..<5 {
            let daemon = try DaemonUnderTest(
                recording: recording, directory: directory.appendingPathComponent("run\(run)"),
                arguments: ["--log-db", path, "--interval-ms", "0"])
            defer { daemon.cleanUp() }
            let watcher = try daemon.connect()
            watcher.send(#"{"class":"WATCH"}"#)
            let killAfter = Double.random(in: 0.7...3.0)
            // The monotonic times of the readings with a contact that reached the watcher.
            var delivered: [Int64] = []
            let offset = Self.wallOffset()
            let killAt = Date().addingTimeInterval(killAfter)
            var killed = false
            var askedForStatus = false
            // What the daemon said was still waiting for its log writer just before the kill,
            // and how many readings reached the watcher from then on: on a busy machine the
            // writer may run behind, and the loss is bounded by what was in flight, not by a
            // constant.
            var pendingAtKill = 0
            var deliveredBeforeStatus = 0
            // Reads until the connection ends: lines already sent when the daemon died still count.
            while let line = watcher.readLine() {
                if !askedForStatus, Date() >= killAt {
                    // The reply comes in order with the readings on this connection.
                    watcher.send(#"{"class":"STATUS"}"#)
                    askedForStatus = true
                }
                if !killed, line.hasPrefix(#"{"class":"STATUS""#) {
                    daemon.child.kill()
                    killed = true
                    deliveredBeforeStatus = delivered.count
                    if case .status(let status)? = try? DaemonLine.decode(line: line) {
                        pendingAtKill = status.log?.pending ?? 0
                    }
                    continue
                }
                // Plain string work, not a JSON parse, so that the watcher keeps up with 1 kHz.
                guard line.hasPrefix(#"{"class":"READING""#), !line.contains(#""contacts":0,"#),
                      let time = line.firstRange(of: #""time":"#)?.upperBound,
                      let seconds = Double(line[time...].prefix { $0 != "," }) else { continue }
                delivered.append(Int64((seconds * 1e6).rounded()))
            }
            #expect(killed, "the stream ended before the kill (run \(run)): \(daemon.stderr)")
            try #require(!delivered.isEmpty, "run \(run): no readings")
            #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"], "run \(run)")
            // The newest reading in the file, on the daemon's monotonic clock (± the µs by
            // which the two offsets differ; readings are 1000 µs apart).
            let newestWall = Int64(try Self.sqlite(path, "SELECT coalesce(max(time), 0) FROM readings WHERE contacts > 0").first ?? "") ?? 0
            let newest = newestWall - offset
            let since = delivered[0] + offset - 500
            let stored = Int(try Self.sqlite(path, "SELECT count(*) FROM readings WHERE contacts > 0 AND time >= \(since)").first ?? "") ?? -1
            let deliveredUpToNewest = delivered.filter { $0 <= newest + 500 }.count
            // What was delivered after the newest stored reading is what the kill cost.
            let lost = delivered.count - deliveredUpToNewest
            losses.append(lost)
            // Nothing before it is missing: the file holds every delivered reading up to its
            // newest (more, only if the watcher fell behind and the daemon dropped lines for it).
            #expect(stored >= deliveredUpToNewest, "run \(run): \(stored) readings stored up to the newest, \(deliveredUpToNewest) delivered")
            // Within a touch readings are 1 ms apart, between touches 100 ms: a gap in between
            // is a line the daemon dropped for the watcher. Without one the counts are equal.
            let watcherMissedSome = zip(delivered, delivered.dropFirst()).contains { $1 - $0 > 1_500 && $1 - $0 < 50_000 }
            if !watcherMissedSome {
                #expect(stored == deliveredUpToNewest, "run \(run): \(stored) readings stored up to the newest, \(deliveredUpToNewest) delivered")
            }
            // The batch being gathered and the one being committed (100 each) are what a
            // writer that keeps up loses; one that runs behind also loses what was waiting.
            let deliveredAfterStatus = delivered.count - deliveredBeforeStatus
            let bound = 200 + pendingAtKill + deliveredAfterStatus
            #expect(lost <= bound, "run \(run): killed after \(killAfter) s, \(delivered.count) delivered, \(stored) stored, \(lost) lost; bound \(bound) = 200 + \(pendingAtKill) pending at the STATUS before the kill + \(deliveredAfterStatus) delivered after it")
            pendingFigures.append(pendingAtKill)
        }
        // The figure for BENCHMARKS.md and the report.
        print("force log crash runs: readings lost at SIGKILL \(losses), waiting for the writer at the kill \(pendingFigures) (delivered after the newest stored reading, 1 kHz, batches of 100)")
        // A restart closes the sessions the kills left open.
        let restarted = try DaemonUnderTest(recording: recording, directory: directory.appendingPathComponent("after"), arguments: ["--log-db", path])
        try waitFor("the restarted forcescaled to close the sessions left open", saw: { restarted.stderr }) {
            restarted.stderr.contains("left open by a crash closed")
        }
        _ = restarted.stop()
        #expect(try Self.sqlite(path, "SELECT count(*) FROM sessions WHERE ended IS NULL") == ["0"])
        restarted.cleanUp()
    }

    // MARK: - Another process holding the log's lock

    /// A second program holds the log in an exclusive transaction for a while (an sqlite3
    /// shell left in BEGIN, a backup tool): one error line naming the lock, the daemon serves
    /// all along, the readings wait in memory, and once the lock is gone they are written
    /// without a gap.
    @Test func anotherProcessHoldingTheLogsLockCostsOneErrorAndNothingIsLost() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("log.sqlite").path
        let recording = try Self.kilohertz(in: directory, seconds: 2)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log-db", path, "--interval-ms", "0"])
        defer { daemon.cleanUp() }
        let observer = try daemon.connect()
        func status() throws -> JSONValue { try JSONValue.parse(try #require(observer.request(#"{"class":"STATUS"}"#))) }
        try waitFor("readings written to the log", saw: { "\((try? status())?["log"].map { "\($0)" } ?? "no STATUS")" }) {
            (try status()["log"]?["written"]?.numberValue ?? 0) > 0
        }

        // The holder takes the lock, says so by making a file, and keeps it until its
        // standard input closes.
        let held = directory.appendingPathComponent("held").path
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
            connection.execute("BEGIN EXCLUSIVE")
            open(sys.argv[2], "w").close()
            sys.stdin.read()
            connection.execute("COMMIT")
            """, path, held]
        let input = Pipe()
        holder.standardInput = input
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        try waitFor("the other process to hold the lock", saw: { "no \(held)" }) { FileManager.default.fileExists(atPath: held) }

        try waitFor("one error about the force log", within: 10 + patience, saw: { daemon.stderr }) {
            Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 1
        }
        let error = Self.logLines(daemon.stderr, level: 3, containing: "force log:")[0]
        #expect(error.contains("another process holds the file's lock"), "\(error)")
        let watcher = try daemon.connect()
        watcher.send(#"{"class":"WATCH"}"#)
        _ = watcher.nextReply()
        #expect(watcher.nextReading() != nil, "no readings while another process holds the log's lock")
        var waiting = 0.0
        try waitFor("more than 1000 readings pending", every: 0.05, saw: { "\((try? status())?["log"].map { "\($0)" } ?? "no STATUS")" }) {
            waiting = try status()["log"]?["pending"]?.numberValue ?? 0
            return waiting > 1000
        }

        // The lock goes: writing resumes by itself at the next retry (at most a minute away).
        try input.fileHandleForWriting.close()
        holder.waitUntilExit()
        #expect(holder.terminationStatus == 0)
        try waitFor("the force log to resume", within: 60 + patience, saw: { daemon.stderr }) {
            daemon.stderr.contains("<5>force log: writing to \(path) again")
        }
        let resumed = try status()["log"]
        #expect(resumed?["dropped"]?.numberValue == 0 && resumed?["error"] == nil, "\(resumed.map { "\($0)" } ?? "no log in STATUS")")
        #expect(Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 1, "\(daemon.stderr)")
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(!stopped.stderr.contains("entries were dropped") && !stopped.stderr.contains("could not be written"), "\(stopped.stderr)")
        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"])
        // What waited while the lock was held is in the file.
        #expect(Double(try Self.sqlite(path, "SELECT count(*) FROM readings").first ?? "") ?? 0 > waiting)
    }

    // MARK: - A disk that is read-only, then full

    /// A tmpfs of its own (this needs root with CAP_SYS_ADMIN, which the test machines
    /// have): mounted read-only first, then writable, then filled. Each failure is one error
    /// line, the daemon serves all along, and logging resumes by itself each time.
    @Test func aReadOnlyThenFullDiskCostsOneErrorEachAndLoggingResumes() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let mountPoint = directory.appendingPathComponent("disk").path
        try mountTmpfs(at: mountPoint, options: "size=384k,ro")
        defer { unmount(mountPoint) }
        let path = mountPoint + "/log.sqlite"
        let recording = try Self.kilohertz(in: directory, seconds: 2)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log-db", path, "--interval-ms", "0"])
        defer { daemon.cleanUp() }
        let observer = try daemon.connect()
        func status() throws -> JSONValue { try JSONValue.parse(try #require(observer.request(#"{"class":"STATUS"}"#))) }

        // Read-only: one error, the daemon serves.
        try waitFor("one error about the force log", saw: { daemon.stderr }) { Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 1 }
        #expect(try status()["log"]?["error"]?.stringValue?.contains(path) == true)
        let watcher = try daemon.connect()
        watcher.send(#"{"class":"WATCH"}"#)
        _ = watcher.nextReply()
        #expect(watcher.nextReading() != nil, "no readings while the log cannot be written")
        // Readings wait in memory meanwhile.
        try waitFor("more than 1000 readings pending", every: 0.05, saw: { "\((try? status())?["log"].map { "\($0)" } ?? "no STATUS")" }) {
            (try status()["log"]?["pending"]?.numberValue ?? 0) > 1000
        }
        // The writer retries 1 s and 3 s after the failure; the retries must not log again. A
        // failed retry shows nowhere, so the time for two of them is what this waits for. (A
        // correct daemon passes however long it is; a busy machine can only mean fewer retries.)
        usleep(3_500_000)
        #expect(Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 1, "retries must not log again: \(daemon.stderr)")

        // Writable: it resumes by itself, with the readings that waited.
        #expect(try run("/bin/mount", ["-o", "remount,rw", mountPoint]).status == 0)
        // At the next retry, which may be a minute away: the retries back off up to 60 s.
        try waitFor("the force log to resume", within: 60 + patience, saw: { daemon.stderr }) {
            daemon.stderr.contains("<5>force log: writing to \(path) again")
        }
        #expect(try status()["log"]?["error"] == nil)
        #expect((try status()["log"]?["written"]?.numberValue ?? 0) > 1000)

        // Full: one more error, saying so.
        try waitFor("a second error about the force log (the disk full)", within: 60 + patience, saw: { daemon.stderr }) {
            Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 2
        }
        let full = Self.logLines(daemon.stderr, level: 3, containing: "force log:")[1]
        #expect(full.contains("the disk is full"), "\(full)")
        #expect(try status()["log"]?["error"]?.stringValue?.contains("the disk is full") == true)
        let servedWhileFull = try daemon.connect()
        #expect(servedWhileFull.request(#"{"class":"POLL"}"#)?.hasPrefix(#"{"class":"POLL","time":"#) == true)
        // Two retries' time again, for the same reason as above.
        usleep(3_500_000)
        #expect(Self.logLines(daemon.stderr, level: 3, containing: "force log:").count == 2, "\(daemon.stderr)")

        // Room again: it resumes by itself once more.
        #expect(try run("/bin/mount", ["-o", "remount,size=16m", mountPoint]).status == 0)
        try waitFor("the force log to resume once more", within: 60 + patience, saw: { daemon.stderr }) {
            daemon.stderr.components(separatedBy: "<5>force log: writing to \(path) again").count == 3
        }
        #expect(try status()["log"]?["error"] == nil)
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(try Self.sqlite(path, "PRAGMA integrity_check") == ["ok"])
        #expect(Int(try Self.sqlite(path, "SELECT count(*) FROM readings").first ?? "") ?? 0 > 2000)
    }
}
