import Foundation
import FoundationXML
import ScaleCore
import ScaleLog
import ScaleProtocol
import TestWaiting
import Testing
#if canImport(FoundationXML)
#endif

/// A force log written through ScaleLog's `LogDatabase`, the daemon's own writer, for
/// the `forcescale log` commands to read.
final class SampleLog {
    let directory: URL
    let path: String

    /// 2026-11-30 10:00:00 UTC (GNU date: `date -u -d 2026-11-30T10:00:00Z +%s` = 1796032800).
    static let start: Int64 = 1_796_032_800_000_000

    static func time(_ seconds: Double) -> WallTime {
        WallTime(microseconds: start + Int64((seconds * 1e6).rounded()))
    }

    /// Three sessions: 1 on the Wacom (a press with a PEAK whose rumble played 0.412 ms after
    /// its frame, stable at 180 g), 2 on a pad with
    /// an awkward name (no stable weight), 3 on the Wacom an hour later and still open.
    /// - Parameter directory: An existing folder for the log (removed with it); a new
    ///   scratch folder when `nil`.
    init(in directory: URL? = nil) throws {
        self.directory = try directory ?? CLI.temporaryDirectory()
        path = self.directory.appendingPathComponent("log.sqlite").path
        let database = try LogDatabase.open(path: path)
        defer { database.close() }
        let wacom = try database.device(key: "0003-056a-00b9-wacom-intuos4-6x9-pen", name: "Wacom Intuos4 6x9 Pen")
        let odd = try database.device(key: "0006-0000-0000-odd", name: #"Tom's "pad", <v2> & co"#)

        var first = try database.openSession(device: wacom, started: Self.time(0), model: .nominal)
        try database.append(Self.press(session: first.id), to: &first)
        try database.append(LoggedPeak(session: first.id, time: Self.time(1.5), raw: 2047, grams: 385, rumble: .played(latencyMicroseconds: 412)))
        try database.close(&first, at: Self.time(3))

        var second = try database.openSession(device: odd, started: Self.time(60), model: .calibrated)
        try database.append([
            LoggedReading(session: second.id, time: Self.time(60), raw: 3, force: 0.1 + 0.2, grams: 77.03921568627451, contacts: 1, flags: []),
            LoggedReading(session: second.id, time: Self.time(60.5), raw: 0, force: 0, grams: -1.25, contacts: 0, flags: []),
        ], to: &second)
        try database.close(&second, at: Self.time(60.5))

        var third = try database.openSession(device: wacom, started: Self.time(3600), model: .nominal)
        try database.append([LoggedReading(session: third.id, time: Self.time(3600), raw: 100, force: 0.05, grams: 18.8, contacts: 1, flags: [])], to: &third)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// 31 readings over 3 s: up to 180 g, stable from 1 s, saturated at 1.5 s, lifted at 3 s.
    static func press(session: Int64) -> [LoggedReading] {
        (0...30).map { step in
            let seconds = Double(step) / 10
            let saturated = step == 15
            let grams = saturated ? 385 : step == 30 ? 0 : Swift.min(180, 180 * seconds)
            var flags: ReadingFlags = []
            if saturated { flags.insert(.saturated) }
            if step >= 10 && step < 30 && !saturated { flags.insert(.stable) }
            return LoggedReading(
                session: session, time: time(seconds), raw: saturated ? 2047 : Int32(grams * 5.3), force: grams / 385, grams: grams,
                contacts: step == 30 ? 0 : 1, flags: flags)
        }
    }

    func run(_ arguments: [String], timeZone: String = "UTC") throws -> CLI.Result {
        try CLI.run(["log"] + arguments + ["--db", path], environment: ["TZ": timeZone])
    }
}

@Suite struct LogCommandTests {
    // MARK: - sessions

    @Test func sessionsAreATableInLocalTime() throws {
        let log = try SampleLog()
        let result = try log.run(["sessions"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == """
            ID  DEVICE                  START                DURATION   PEAK G  STABLE G  READINGS  RUMBLES
             1  Wacom Intuos4 6x9 Pen   2026-11-30 10:00:00     3.0 s  >=385.0     180.0        31  played in 0.41 ms
             2  Tom's "pad", <v2> & co  2026-11-30 10:01:00     0.5 s     77.0         -         2  -
             3  Wacom Intuos4 6x9 Pen   2026-11-30 11:00:00      open     18.8         -         1  -
            >= saturated: the pad was at the top of its range, so the object weighed at least that, maybe far more

            """)
        // The same start, two hours later on the clock of UTC+2 (a POSIX TZ needs no zone files).
        let shifted = try log.run(["sessions"], timeZone: "XYZ-2")
        #expect(shifted.stdout.contains("2026-11-30 12:00:00"))
    }

    @Test func sessionsAsJSONLines() throws {
        let log = try SampleLog()
        let result = try log.run(["sessions", "--json"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines.first == #"{"session":1,"device":"Wacom Intuos4 6x9 Pen","device_key":"0003-056a-00b9-wacom-intuos4-6x9-pen","started":1796032800.000000,"ended":1796032803.000000,"duration":3.000000,"peak_grams":385.0,"stable_grams":180.0,"readings":31,"model":"nominal","peak_saturated":true,"peaks":[{"time":1796032801.500000,"raw":2047,"grams":385.0,"rumble":"played","rumble_latency":0.000412}]}"#)
        let second = try JSONValue.parse(lines[1])
        #expect(second["device"]?.stringValue == #"Tom's "pad", <v2> & co"#)
        #expect(second["peak_grams"]?.numberValue == 77.03921568627451, "every digit the log has")
        #expect(second["stable_grams"] == nil && second["model"]?.stringValue == "calibrated")
        let open = try JSONValue.parse(lines[2])
        #expect(open["ended"] == nil && open["duration"] == nil, "an open session has no end: the keys are left out, not null")
    }

    @Test func sessionsFilterByDeviceAndTime() throws {
        let log = try SampleLog()
        let wacom = try log.run(["sessions", "--device", "WACOM", "--json"])
        #expect(wacom.stdout.split(separator: "\n").compactMap { try? JSONValue.parse($0)["session"]?.numberValue } == [1, 3])
        // Sessions still going on at or after 10:00:30 UTC: the second (ended 10:01:00.5) and the open third.
        let since = try log.run(["sessions", "--since", "2026-11-30T10:00:30Z", "--json"])
        #expect(since.stdout.split(separator: "\n").compactMap { try? JSONValue.parse($0)["session"]?.numberValue } == [2, 3])
        // The same moment typed as local time in UTC+2, and as Unix seconds.
        let local = try log.run(["sessions", "--since", "2026-11-30 12:00:30", "--json"], timeZone: "XYZ-2")
        #expect(local.stdout == since.stdout)
        let unix = try log.run(["sessions", "--since", "1796032830", "--json"])
        #expect(unix.stdout == since.stdout)
        // Nothing matches: said in words, status 0.
        let none = try log.run(["sessions", "--device", "huion"])
        #expect(none.status == 0 && none.stdout == "No sessions of a device matching 'huion'.\n")
    }

    @Test func localTimesFollowTheZonesDaylightSavingRules() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("summer.sqlite").path
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "pad", name: "pad")
        // Two sessions ending a second either side of 2026-07-01 10:00:00 UTC
        // (GNU date: `date -u -d 2026-07-01T10:00:00Z +%s` = 1782900000).
        for end: Int64 in [1_782_899_999, 1_782_900_001] {
            var session = try database.openSession(device: device, started: WallTime(microseconds: (end - 1) * 1_000_000), model: .nominal)
            try database.close(&session, at: WallTime(microseconds: end * 1_000_000))
        }
        database.close()
        // Central European time is UTC+1 in winter and UTC+2 in summer: noon on 1 July there
        // is 10:00 UTC. A POSIX TZ rule needs no zone files.
        let result = try CLI.run(["log", "sessions", "--since", "2026-07-01T12:00", "--db", path], environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: " ").first } == ["2"])
        #expect(result.stdout.contains("2026-07-01 12:00:00"), "the start shown in summer time: \(result.stdout)")
    }

    @Test func aTimeAgoCountsFromNow() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("recent.sqlite").path
        // Two sessions that ended three hours and thirty minutes before now.
        let now = Int64(Date().timeIntervalSince1970 * 1e6)
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "pad", name: "pad")
        for minutesAgo in [180, 30] {
            let end = WallTime(microseconds: now - Int64(minutesAgo) * 60_000_000)
            var session = try database.openSession(device: device, started: WallTime(microseconds: end.microseconds - 1_000_000), model: .nominal)
            try database.close(&session, at: end)
        }
        database.close()
        func ids(_ since: String) throws -> [Double] {
            try CLI.run(["log", "sessions", "--since", since, "--json", "--db", path]).stdout
                .split(separator: "\n").compactMap { try? JSONValue.parse($0)["session"]?.numberValue }
        }
        #expect(try ids("1h") == [2])
        #expect(try ids("90m") == [2])
        #expect(try ids("4h") == [1, 2])
        #expect(try ids("1d") == [1, 2])
        #expect(try ids("10m") == [])
    }

    @Test func aBadSinceIsAUsageErrorWithExamples() throws {
        let log = try SampleLog()
        for value in ["yesterday", "2026-02-30", "5x"] {
            let result = try log.run(["sessions", "--since", value])
            #expect(result.status == 64)
            #expect(result.stderr.contains("The value '\(value)' is invalid for '--since <time>'"))
            #expect(result.stderr.contains("2026-11-30T14:00") && result.stderr.contains("30m"), "shows what to type instead")
            #expect(result.stdout.isEmpty)
        }
    }

    // MARK: - export

    @Test func csvExportParsesBackToTheLoggedValues() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--session", "1", "--format", "csv"])
        #expect(result.status == 0, "\(result.stderr)")
        // Python's csv module reads it: a reader that is not ours.
        let rows = try Self.pythonCSV(result.stdout)
        #expect(rows.first == ["session", "device", "time", "raw", "force", "grams", "contacts", "saturated", "stable"])
        let expected = SampleLog.press(session: 1)
        #expect(rows.count == expected.count + 1)
        for (row, reading) in zip(rows.dropFirst(), expected) {
            #expect(row[0] == "1" && row[1] == "Wacom Intuos4 6x9 Pen")
            #expect(row[2] == reading.time.description)
            #expect(Int32(row[3]) == reading.raw && Double(row[4]) == reading.force && Double(row[5]) == reading.grams)
            #expect(Int(row[6]) == reading.contacts)
            #expect(row[7] == String(reading.flags.contains(.saturated)) && row[8] == String(reading.flags.contains(.stable)))
        }
    }

    @Test func csvQuotesAwkwardDeviceNames() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--session", "2"])
        // 77.03921568627452 is the shortest text of the Double 77.03921568627451 stands for (Python's repr agrees).
        #expect(result.stdout.contains("\r\n2,\"Tom's \"\"pad\"\", <v2> & co\",1796032860.000000,3,0.30000000000000004,77.03921568627452,1,false,false\r\n"))
        let rows = try Self.pythonCSV(result.stdout)
        #expect(rows.dropFirst().map { $0[1] } == [#"Tom's "pad", <v2> & co"#, #"Tom's "pad", <v2> & co"#])
        #expect(rows.last?[5] == "-1.25")
    }

    @Test func jsonLinesExportSinceATimeAcrossSessions() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--since", "2026-11-30T10:00:02Z", "--format", "jsonl"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try result.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
        // From 2 s on: readings 20…30 of the press, both of session 2, the one of session 3.
        #expect(lines.count == 11 + 2 + 1)
        #expect(lines.map { $0["session"]?.numberValue ?? 0 } == Array(repeating: 1, count: 11) + [2, 2, 3])
        let times = lines.compactMap { $0["time"]?.numberValue }
        #expect(times == times.sorted() && times.first == 1_796_032_802)
        #expect(lines[11]["device"]?.stringValue == #"Tom's "pad", <v2> & co"# && lines[11]["force"]?.numberValue == 0.1 + 0.2)
    }

    @Test func peaksExportWithTheirRumbles() throws {
        let log = try SampleLog()
        let csv = try log.run(["export", "--peaks"])
        #expect(csv.status == 0, "\(csv.stderr)")
        #expect(csv.stdout == "session,device,time,raw,grams,rumble,rumble_latency,rumble_errno\r\n"
            + "1,Wacom Intuos4 6x9 Pen,1796032801.500000,2047,385.0,played,0.000412,\r\n")
        let none = try log.run(["export", "--peaks", "--session", "2", "--format", "jsonl"])
        #expect(none.status == 0 && none.stdout.isEmpty)
        let json = try log.run(["export", "--peaks", "--session", "1", "--format", "jsonl"])
        #expect(json.stdout == #"{"session":1,"device":"Wacom Intuos4 6x9 Pen","time":1796032801.500000,"raw":2047,"grams":385.0,"rumble":"played","rumble_latency":0.000412}"# + "\n")
    }

    @Test func exportWithoutAFilterIsTheWholeLog() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--format", "jsonl"])
        #expect(result.stdout.split(separator: "\n").count == 31 + 2 + 1)
    }

    @Test func exportToAFileReplacesItWhole() throws {
        let log = try SampleLog()
        let file = log.directory.appendingPathComponent("press.csv")
        try "old contents\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try log.run(["export", "--session", "1", "--output", file.path])
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result.stderr)")
        let standardOutput = try log.run(["export", "--session", "1"]).stdout
        #expect(try String(contentsOf: file, encoding: .utf8) == standardOutput)
        // No temporary left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: log.directory.path).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func anInterruptedExportLeavesTheOldFileAndNoTemporary() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 300 000 readings: long enough to export that a signal lands in the middle.
        let path = directory.appendingPathComponent("big.sqlite").path
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "pad", name: "pad")
        var session = try database.openSession(device: device, started: SampleLog.time(0), model: .nominal)
        let readings = (0..<300_000).map { (step: Int) -> LoggedReading in
            let level = Double(step % 256)
            return LoggedReading(session: 1, time: SampleLog.time(Double(step) / 1000), raw: Int32(step % 256), force: level / 255,
                                 grams: level / 255 * 385, contacts: 1, flags: [])
        }
        try database.transaction { () throws(LogDatabaseError) in try database.append(readings, to: &session) }
        try database.close(&session, at: SampleLog.time(300))
        database.close()
        let output = directory.appendingPathComponent("export.csv")
        try "the previous export\n".write(to: output, atomically: true, encoding: .utf8)
        for signal in [SIGINT, SIGTERM] {
            // Started as a shell starts it, with no signal blocked: a test runs on a thread
            // that blocks them, and a child would inherit that (python3 clears the mask, then
            // execs forcescale).
            let clearMask = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
            let export = try ChildProcess("/usr/bin/python3", ["-c", clearMask, CLI.binDirectory.appendingPathComponent("forcescale").path,
                                                               "log", "export", "--db", path, "--output", output.path])
            // Wait for the temporary file: the export is under way.
            try waitFor("the export's temporary file beside \(output.lastPathComponent)", every: 0.005,
                        saw: { "\((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])" }) {
                guard export.isRunning else {
                    throw DaemonTestError(description: "the export ended before its temporary file was seen: \(export.wait())")
                }
                return try FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.contains(".tmp-") }
            }
            export.signal(signal)
            let result = export.wait()
            // Foundation gives the signal's number as the status of a process it ended.
            #expect(!result.exited && !result.timedOut && result.status == signal,
                    "the export should end by the signal \(signal), as any program does: \(result)")
            #expect(try String(contentsOf: output, encoding: .utf8) == "the previous export\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }.isEmpty, "no temporary left")
        }
    }

    @Test func exportToAnUncreatableFileExits73AndLeavesNothing() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--output", "/nonexistent/dir/out.csv"])
        #expect(result.status == 73)
        #expect(result.stderr.hasPrefix("error: /nonexistent/dir/out.csv: no such file or directory"))
    }

    @Test func exportTakesSessionOrSinceNotBoth() throws {
        let log = try SampleLog()
        let result = try log.run(["export", "--session", "1", "--since", "1h"])
        #expect(result.status == 64 && result.stderr.contains("Give either --session or --since, not both"))
        let format = try log.run(["export", "--format", "xlsx"])
        #expect(format.status == 64 && format.stderr.contains("xlsx"))
    }

    // MARK: - plot

    @Test func plotWritesAnSVGThatParsesAndRasters() throws {
        let log = try SampleLog()
        let file = log.directory.appendingPathComponent("session 1.svg")
        let result = try log.run(["plot", "--session", "1", "--output", file.path])
        #expect(result.status == 0 && result.stdout.isEmpty, "\(result.stderr)")
        let svg = try String(contentsOf: file, encoding: .utf8)
        let texts = try Self.xmlTexts(svg)
        #expect(texts.contains("Session 1 on Wacom Intuos4 6x9 Pen"))
        #expect(texts.contains { $0.hasPrefix("started 2026-11-30 10:00:00 +0000 · 3.0 s · 31 readings") })
        #expect(texts.contains("385.0 g") && texts.contains("stable 180.0 g"))
        let png = log.directory.appendingPathComponent("session 1.png")
        let convert = try Self.runTool("/usr/bin/rsvg-convert", ["-o", png.path, file.path])
        #expect(convert == 0)
        let bytes = try Data(contentsOf: png)
        #expect(bytes.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
    }

    @Test func plotEscapesTheDeviceNameAndGoesToStandardOutputWithADash() throws {
        let log = try SampleLog()
        let result = try log.run(["plot", "--session", "2", "--output", "-"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("Tom&apos;s &quot;pad&quot;, &lt;v2&gt; &amp; co"))
        #expect(try Self.xmlTexts(result.stdout).contains(#"Session 2 on Tom's "pad", <v2> & co"#))
    }

    @Test func plotOfAnUnknownSessionExits66() throws {
        let log = try SampleLog()
        let file = log.directory.appendingPathComponent("none.svg")
        let result = try log.run(["plot", "--session", "99", "--output", file.path])
        #expect(result.status == 66)
        #expect(result.stderr == "error: \(log.path): the log has no session 99 ('forcescale log sessions' lists them)\n")
        #expect(!FileManager.default.fileExists(atPath: file.path))
        let export = try log.run(["export", "--session", "99"])
        #expect(export.status == 66 && export.stdout.isEmpty)
    }

    @Test func plotNeedsASessionAndAnOutput() throws {
        let log = try SampleLog()
        #expect(try log.run(["plot", "--output", "x.svg"]).status == 64)
        #expect(try log.run(["plot", "--session", "1"]).status == 64)
        #expect(try log.run(["plot", "--session", "one", "--output", "x.svg"]).status == 64)
    }

    // MARK: - stats

    @Test func statsCountWhatTheLogHolds() throws {
        let log = try SampleLog()
        let result = try log.run(["stats"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("force log \(log.path) (schema \(LogDatabase.schemaVersion))\n"))
        for line in ["  devices     2", "  sessions    3", "  readings    34", "  peaks       1", "  from        2026-11-30 10:00:00 +0000"] {
            #expect(result.stdout.contains(line + "\n"), "missing '\(line)' in:\n\(result.stdout)")
        }
        let json = try JSONValue.parse(try log.run(["stats", "--json"]).stdout.dropLast())
        #expect(json["readings"]?.numberValue == 34 && json["sessions"]?.numberValue == 3 && json["peaks"]?.numberValue == 1)
        #expect(json["first"]?.numberValue == 1_796_032_800 && (json["file_bytes"]?.numberValue ?? 0) > 0)
    }

    // MARK: - The log's own errors

    @Test func aMissingLogExits66AndSaysHowToSwitchLoggingOn() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("absent.sqlite").path
        for subcommand in [["sessions"], ["export"], ["plot", "--session", "1", "--output", "-"], ["stats"]] {
            let result = try CLI.run(["log"] + subcommand + ["--db", path])
            #expect(result.status == 66, "\(subcommand)")
            #expect(result.stderr.hasPrefix("error: \(path): no force log there"))
            #expect(result.stderr.contains("--log"))
        }
    }

    @Test func withoutDbTheDaemonsDefaultLogIsRead() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try CLI.run(["log", "stats"], environment: ["HOME": directory.path, "XDG_STATE_HOME": directory.path + "/state"])
        // The system daemon's log when it is there (and root's daemon keeps its state there);
        // else the one a daemon of this user keeps in $XDG_STATE_HOME.
        let system = "/var/lib/forcescale/log.sqlite"
        let expected = geteuid() == 0 || FileManager.default.fileExists(atPath: system) ? system : directory.path + "/state/forcescale/log.sqlite"
        #expect((result.stdout + result.stderr).contains(expected), "\(result.stdout)\(result.stderr)")
    }

    /// The `forcescale` binary run as an unprivileged user: as `nobody` through runuser(1)
    /// when the tests run as root (who may read anything), else as this user. nobody runs
    /// a copy in `shared`, since the build may be where nobody cannot go.
    static func runUnprivileged(_ arguments: [String], environment: [String: String] = [:], shared: SharedWithOtherUsers) throws -> CLI.Result {
        guard geteuid() == 0 else { return try CLI.run(arguments, environment: environment) }
        let binary = try shared.program("forcescale")
        let assignments = ["PATH=/usr/bin:/bin", "LANG=C.UTF-8"] + environment.map { "\($0.key)=\($0.value)" }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        process.arguments = ["-u", "nobody", "--", "/usr/bin/env", "-i"] + assignments + [binary] + arguments
        // Both outputs are small (a line or a table): pipes read after the exit cannot stall it.
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return CLI.Result(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    @Test func aUsersDefaultLogIsInTheirStateDirectory() throws {
        let shared = try SharedWithOtherUsers()
        let directory = try shared.makeDirectory("home")
        let result = try Self.runUnprivileged(["log", "stats"], environment: ["HOME": directory.path, "XDG_STATE_HOME": directory.path + "/state"],
                                              shared: shared)
        let system = "/var/lib/forcescale/log.sqlite"
        let expected = FileManager.default.fileExists(atPath: system) ? system : directory.path + "/state/forcescale/log.sqlite"
        #expect((result.stdout + result.stderr).contains(expected), "\(result.stdout)\(result.stderr)")
    }

    @Test func aLogThisUserMayNotReadExits66WithWhatToDo() throws {
        let shared = try SharedWithOtherUsers()
        // In a folder the user nobody may enter, so that only the file's own mode keeps it out.
        let log = try SampleLog(in: try shared.makeDirectory("log"))
        #expect(chmod(log.path, 0o000) == 0)
        let result = try Self.runUnprivileged(["log", "sessions", "--db", log.path], shared: shared)
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("error: \(log.path): cannot be opened"))
        #expect(result.stderr.contains("check that this user may read it"))
    }

    @Test func aCopiedLogWithoutItsSharedMemoryFileSaysWhatToDo() throws {
        let shared = try SharedWithOtherUsers()
        let log = try SampleLog(in: try shared.makeDirectory("log"))
        // Only the main file, readable, in a directory this user cannot write (a 0755 one of
        // root's for nobody; a 0555 one for anyone else).
        let copy = log.directory.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: log.path, toPath: copy.appendingPathComponent("log.sqlite").path)
        #expect(chmod(copy.path, 0o555) == 0)
        defer { chmod(copy.path, 0o755) }
        let result = try Self.runUnprivileged(["log", "sessions", "--db", copy.appendingPathComponent("log.sqlite").path], shared: shared)
        #expect(result.status == 66)
        #expect(result.stderr.contains("its log.sqlite-shm file is missing and this user may not create it"), "\(result.stderr)")
    }

    @Test func aFileThatIsNotALogExits65() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("notes.txt")
        try String(repeating: "not a database\n", count: 100).write(to: text, atomically: true, encoding: .utf8)
        let notDatabase = try CLI.run(["log", "sessions", "--db", text.path])
        #expect(notDatabase.status == 65)
        #expect(notDatabase.stderr.contains("not an SQLite database"))
        // An SQLite file of some other program, made by the sqlite3 tool.
        let other = directory.appendingPathComponent("other.sqlite").path
        #expect(try Self.runTool("/usr/bin/sqlite3", [other, "CREATE TABLE t (x); INSERT INTO t VALUES (1);"]) == 0)
        let notALog = try CLI.run(["log", "stats", "--db", other])
        #expect(notALog.status == 65 && notALog.stderr.contains("not a forcescale log"))
    }

    @Test func aDamagedLogExits65AndAnExportToAFileLeavesNothingHalfDone() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A log of 20 000 readings, then pages in its middle overwritten.
        let path = directory.appendingPathComponent("damaged.sqlite").path
        let database = try LogDatabase.open(path: path)
        let device = try database.device(key: "pad", name: "pad")
        var session = try database.openSession(device: device, started: SampleLog.time(0), model: .nominal)
        let readings = (0..<20_000).map { (step: Int) -> LoggedReading in
            LoggedReading(session: 1, time: SampleLog.time(Double(step) / 100), raw: 1, force: 0.5, grams: 192.5, contacts: 1, flags: [])
        }
        try database.transaction { () throws(LogDatabaseError) in try database.append(readings, to: &session) }
        try database.close(&session, at: SampleLog.time(200))
        database.close()
        // The sqlite3 tool checkpoints the WAL into the file, then the damage is done.
        #expect(try Self.runTool("/usr/bin/sqlite3", [path, "PRAGMA wal_checkpoint(TRUNCATE);"]) == 0)
        let handle = try #require(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 4096 * 40)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4096 * 20))
        try handle.close()
        let output = directory.appendingPathComponent("out.csv")
        let result = try CLI.run(["log", "export", "--db", path, "--output", output.path])
        #expect(result.status == 65)
        #expect(result.stderr.contains("malformed") && result.stderr.contains(".recover"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path), "no half export under the name")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }.isEmpty)
    }

    @Test func aLogFromANewerForcescaleExits65() throws {
        let log = try SampleLog()
        #expect(try Self.runTool("/usr/bin/sqlite3", [log.path, "PRAGMA user_version = 99;"]) == 0)
        let result = try log.run(["sessions"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("written by a newer forcescale (log schema 99"))
    }

    // MARK: - Beside a running daemon

    /// The reason the log is read-only and in WAL mode: the commands work while forcescaled
    /// writes the file, and see the sessions it has committed.
    @Test func theCommandsReadALogWhileForcescaledWritesIt() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory), directory: directory, arguments: ["--log"])
        defer { daemon.cleanUp() }
        let path = daemon.stateDirectory + "/log.sqlite"
        var listed: [JSONValue] = []
        func sessions() throws -> [JSONValue] {
            let result = try CLI.run(["log", "sessions", "--json", "--db", path])
            // 66 until the daemon's writer thread has made the file; the file appears with
            // its whole schema (LogDatabase makes it beside and links it into place), so a
            // poll never meets a half-made log.
            #expect(result.status == 0 || result.status == 66, "status \(result.status): \(result.stderr)")
            return try result.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
        }
        // The demo's letter is lifted after about 3.3 s; its session is then complete.
        let ended = try waitForValue("an ended session in the log", every: 0.2, saw: { "\(listed)" }) { () throws -> JSONValue? in
            listed = try sessions()
            return listed.first { $0["ended"] != nil }
        }
        let id = Int(try #require(ended["session"]?.numberValue))
        let count = Int(try #require(ended["readings"]?.numberValue))
        #expect(count > 50)
        // Its readings, exported while the daemon goes on logging the next objects.
        let export = try CLI.run(["log", "export", "--session", String(id), "--format", "jsonl", "--db", path])
        #expect(export.status == 0, "\(export.stderr)")
        let lines = try export.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
        #expect(lines.count == count, "the session's count and its exported readings agree")
        let times = lines.compactMap { $0["time"]?.numberValue }
        #expect(times == times.sorted())
        let plot = try CLI.run(["log", "plot", "--session", String(id), "--output", "-", "--db", path])
        #expect(plot.status == 0)
        #expect(try Self.xmlTexts(plot.stdout).contains("Session \(id) on forcescale demo pad (synthetic)"))
        let stats = try CLI.run(["log", "stats", "--json", "--db", path])
        let logged = try JSONValue.parse(stats.stdout.dropLast())["readings"]?.numberValue ?? 0
        #expect(stats.status == 0 && logged >= Double(count))
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
    }

    /// The issue's promise: switch logging on, pull the plug, and later list, export and plot.
    @Test func afterTheDaemonIsKilledTheLogIsListedExportedAndPlotted() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A touch of a second, then one of two minutes: the plug is pulled during the second,
        // once the log holds the first whole and readings of the second, however long the
        // daemon's writer took to get there.
        let recording = try DaemonRecordings.presses(in: directory, name: "touches", [(start: 1, seconds: 1), (start: 2.5, seconds: 120)])
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log"])
        defer { daemon.cleanUp() }
        let path = daemon.stateDirectory + "/log.sqlite"
        var listed = ""
        try waitFor("the log to hold an ended session and more than 10 readings of an open one", every: 0.2, saw: { listed }) {
            let listing = try CLI.run(["log", "sessions", "--json", "--db", path])
            listed = "status \(listing.status): \(listing.stdout)\(listing.stderr)"
            // 66 until the daemon's writer thread has made the file.
            guard listing.status == 0 else { return false }
            let sessions = try listing.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
            guard sessions.count >= 2, sessions.first?["ended"] != nil, let last = sessions.last, last["ended"] == nil else { return false }
            return (last["readings"]?.numberValue ?? 0) > 10
        }
        let killed = daemon.stop(signal: SIGKILL)
        #expect(!killed.exited)
        let listing = try CLI.run(["log", "sessions", "--json", "--db", path])
        #expect(listing.status == 0, "\(listing.stderr)")
        let sessions = try listing.stdout.split(separator: "\n").map { try JSONValue.parse($0) }
        #expect(sessions.count >= 2, "\(listing.stdout)")
        // Nobody closed the session the kill cut short: it is listed as still open.
        let last = try #require(sessions.last)
        #expect(last["ended"] == nil)
        let id = String(Int(try #require(last["session"]?.numberValue)))
        let table = try CLI.run(["log", "sessions", "--db", path])
        #expect(table.stdout.split(separator: "\n").last?.contains(" open ") == true, "\(table.stdout)")
        let export = try CLI.run(["log", "export", "--session", id, "--db", path])
        #expect(export.status == 0 && export.stdout.split(separator: "\r\n").count > 10)
        let plotFile = directory.appendingPathComponent("cut-short.svg")
        let plot = try CLI.run(["log", "plot", "--session", id, "--output", plotFile.path, "--db", path])
        #expect(plot.status == 0, "\(plot.stderr)")
        let texts = try Self.xmlTexts(try String(contentsOf: plotFile, encoding: .utf8))
        #expect(texts.contains { $0.contains("still open") }, "\(texts)")
    }

    // MARK: - The man page

    /// ManPageTests checks the sections of the top-level subcommands; the log group's own
    /// subcommands share one section, "forcescale log", checked here the same way.
    @Test(arguments: ["sessions", "export", "plot", "stats"])
    func theManPageDescribesEveryOptionOfLog(_ name: String) throws {
        let page = try ManPage(named: "forcescale.1")
        let section = try #require(page.section(titled: "forcescale log"), "man/forcescale.1 has no section 'forcescale log'")
        #expect(section.mentions("forcescale log \(name)"), "the section's synopsis does not show 'forcescale log \(name)'")
        let help = Help(try ManPageTests.output(["help", "log", name]))
        #expect(help.options.count >= 3, "could not read the options of 'forcescale help log \(name)'")
        let everywhere = Set(try ManPageTests.help(of: nil).options.flatMap(\.names))
        for option in help.options where everywhere.isDisjoint(with: option.names) {
            let entries = page.entries(for: option, in: [section])
            #expect(!entries.isEmpty, "'forcescale log \(name)' takes \(option.name), which the section 'forcescale log' does not describe")
            for expected in option.documentedWords {
                #expect(entries.contains { $0.mentions(expected) }, "\(option.name) of 'forcescale log \(name)': '\(expected)' is not in its man page entry")
            }
        }
    }

    @Test func theManPageDescribesNoLogOptionThatIsGone() throws {
        let section = try #require(try ManPage(named: "forcescale.1").section(titled: "forcescale log"))
        var known: Set<String> = []
        for name in ["sessions", "export", "plot", "stats"] {
            known.formUnion(Help(try ManPageTests.output(["help", "log", name])).options.flatMap(\.names))
        }
        for described in section.describedOptions {
            #expect(known.contains(described), "the section 'forcescale log' describes \(described), which no log subcommand takes")
        }
    }

    // MARK: - Helpers

    /// Rows as Python's csv module reads them (RFC 4180 with `newline=''`).
    static func pythonCSV(_ text: String) throws -> [[String]] {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.csv"), output = directory.appendingPathComponent("out.json")
        try text.write(to: input, atomically: true, encoding: .utf8)
        let script = "import csv, json, sys; json.dump(list(csv.reader(open(sys.argv[1], newline='', encoding='utf-8'), strict=True)), open(sys.argv[2], 'w'))"
        #expect(try runTool("/usr/bin/python3", ["-c", script, input.path, output.path]) == 0)
        let rows = try JSONValue.parse(String(contentsOf: output, encoding: .utf8)).arrayValue ?? []
        return rows.map { ($0.arrayValue ?? []).map { $0.stringValue ?? "" } }
    }

    /// The text content of every element, after XML parsing (which fails the test if the
    /// document is not well-formed).
    static func xmlTexts(_ svg: String) throws -> [String] {
        final class Collector: NSObject, XMLParserDelegate {
            var texts: [String] = []
            var current: String?
            func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
                current = ""
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { current? += string }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
                if let current, !current.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { texts.append(current) }
                current = nil
            }
        }
        let collector = Collector()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = collector
        #expect(parser.parse(), "the SVG is not well-formed XML: \(String(describing: parser.parserError))")
        return collector.texts
    }

    @discardableResult
    static func runTool(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
