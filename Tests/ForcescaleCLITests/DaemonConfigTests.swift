import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// forcescaled's configuration file, SIGHUP reloads, and serving without a device: real
/// processes, as in DaemonTests. Serialized, because some tests count readings a second.
@Suite(.serialized) struct DaemonConfigTests {
    static var forcescaled: String { CLI.binDirectory.appendingPathComponent("forcescaled").path }

    /// Writes a configuration file in `directory`.
    @discardableResult
    func writeConfig(_ text: String, in directory: URL, name: String = "forcescale.conf") throws -> String {
        let path = directory.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Waits until the daemon's standard error contains `text`.
    func waitForLog(_ text: String, of child: ChildProcess) throws {
        try waitFor("forcescaled to log \(text.debugDescription)", every: 0.02, saw: { "its stderr: \(child.stderr)" }) { child.stderr.contains(text) }
    }

    /// How many READINGs a watching client gets in a second of the readings' own times: the
    /// daemon's clock, which paces the recording, so the count does not depend on how the
    /// machine schedules the daemon or the test. Counts from the first reading made at or
    /// after `start` (by default now, so that readings made before a reload that were still
    /// on their way do not count) until one that is a second or more after it.
    func readingsPerInterval(_ client: RawClient, seconds: Double = 1, from start: Int64 = monotonicMicroseconds()) throws -> Int {
        var first = try #require(client.nextReading())
        while eventMicroseconds(first) < start { first = try #require(client.nextReading()) }
        let end = eventMicroseconds(first) + Int64(seconds * 1_000_000)
        var count = 1
        while true {
            let reading = try #require(client.nextReading())
            if eventMicroseconds(reading) >= end { return count }
            count += 1
        }
    }

    /// Starts forcescaled (not on a recording) and waits until its socket answers.
    func startDaemon(_ arguments: [String], environment: [String: String] = [:], socket: String) throws -> ChildProcess {
        let child = try ChildProcess(Self.forcescaled, arguments, environment: environment)
        try waitUntilListening(child, on: socket)
        return child
    }

    // MARK: Starting with a configuration file

    @Test func anUnknownKeyStopsTheStartWithFileLineAndExit78() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeConfig("# settings\ninterval-ms = 20\ntreshold = 0.5\n", in: directory)
        let socket = directory.appendingPathComponent("sock").path
        let result = try run(Self.forcescaled, [
            "--config", config, "--replay", DaemonRecordings.intuos, "--socket", socket,
            "--state-dir", directory.appendingPathComponent("state").path,
        ])
        #expect(result.exited && result.status == 78, "stderr: \(result.stderr)")
        #expect(result.stderr.hasPrefix("<3>\(config):3: unknown key 'treshold' (did you mean 'threshold'?); the keys are device, interval-ms, threshold, "), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket), "nothing is bound when the configuration is broken")
    }

    @Test func badValuesAndMalformedLinesExit78WithEveryProblem() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = try writeConfig("rumble = yes\ncontacts = all\nnot a setting\n", in: directory)
        let result = try run(Self.forcescaled, ["--config", config, "--replay", DaemonRecordings.intuos, "--socket", directory.appendingPathComponent("sock").path])
        #expect(result.status == 78)
        #expect(result.stderr == """
            <3>\(config):1: bad value 'yes' for 'rumble': it takes on or off
            <3>\(config):2: bad value 'all' for 'contacts': it takes primary, sum or max
            <3>\(config):3: expected 'key = value', found 'not a setting'

            """)
    }

    /// Issue 41: a recording whose first time is later than its last, looped, made the
    /// daemon trap about 16 ms after "listening on" (times ≥ 2³² s) or spin at 95 % CPU. Its
    /// times are refused where it is read, with the line, before anything is bound.
    @Test func aRecordingWhoseTimesGoBackwardsIsRefusedBeforeServing() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("sock").path
        for first in ["100.000000", "4294967296.000000"] {
            let recording = directory.appendingPathComponent("backwards.evemu").path
            try Data("""
                N: backwards pad
                I: 0018 0001 0001 0001
                A: 18 0 255 0 0
                E: \(first) 0003 0018 10
                E: \(first) 0000 0000 0
                E: 12.900000 0003 0018 20
                E: 12.900000 0000 0000 0

                """.utf8).write(to: URL(fileURLWithPath: recording))
            let result = try run(Self.forcescaled, ["--replay", recording, "--loop", "--socket", socket, "--state-dir", directory.appendingPathComponent("state").path])
            // forcescaled(8): 1, "the recording could not be read".
            #expect(result.exited && result.status == 1, "\(first): \(result.stderr)")
            #expect(result.stderr.contains("\(recording):6: event time 12.900000 is earlier than the event before it (\(first))"), "\(result.stderr)")
            #expect(!FileManager.default.fileExists(atPath: socket), "nothing is bound for a recording that cannot be served")
        }
    }

    @Test func aMissingExplicitFileIsAnErrorAndAMissingDefaultIsNot() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let missing = directory.appendingPathComponent("none.conf").path
        let result = try run(Self.forcescaled, ["--config", missing, "--replay", DaemonRecordings.intuos, "--socket", directory.appendingPathComponent("sock").path])
        #expect(result.status == 78)
        #expect(result.stderr == "<3>\(missing): no such file (give an existing file to --config, or leave --config out)\n")
        // Without --config the default file may be missing (it is, in the test's world, or
        // it is a real installation's: either way the daemon starts).
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        #expect(daemon.stderr.contains("<6>configuration from "))
    }

    @Test func pipelineOptionsAreCheckedLikeForcescales() throws {
        let threshold = try CLI.run(["--threshold", "2", "--replay", "x"], product: "forcescaled")
        #expect(threshold.status == 64)
        #expect(threshold.stderr.hasPrefix("Error: The peak threshold must be greater than 0 and at most 1"), "\(threshold.stderr)")
        let interval = try CLI.run(["--interval-ms", "soon", "--replay", "x"], product: "forcescaled")
        #expect(interval.status == 64)
        #expect(interval.stderr.hasPrefix("Error: The value 'soon' is invalid for '--interval-ms <ms>'"), "\(interval.stderr)")
        let contacts = try CLI.run(["--contacts", "all", "--replay", "x"], product: "forcescaled")
        #expect(contacts.status == 64)
        #expect(contacts.stderr.contains("The value 'all' is invalid for '--contacts <mode>'"), "\(contacts.stderr)")
        let intensity = try CLI.run(["--rumble-intensity", "3", "--replay", "x"], product: "forcescaled")
        #expect(intensity.status == 64 && intensity.stderr.hasPrefix("Error: The rumble intensity must be between 0 and 1"))
        let huge = try CLI.run(["--stable-ms", "99999999999999", "--replay", "x"], product: "forcescaled")
        #expect(huge.status == 64 && huge.stderr.hasPrefix("Error: --stable-ms must be at most 86400000 (a day)"), "\(huge.stderr)")
        let help = try CLI.run(["--help"], product: "forcescaled")
        for option in ["--config <file>", "--interval-ms <ms>", "--threshold <force>", "--hysteresis <force>", "--contacts <mode>",
                       "--unit <unit>", "--stable-ms <ms>", "--stable-grams <grams>", "--rumble-intensity <fraction>"] {
            #expect(help.stdout.contains(option), "\(option)")
        }
    }

    @Test func theCommandLineOverridesTheFile() throws {
        let directory = try CLI.temporaryDirectory()
        let config = try writeConfig("interval-ms = 200\nthreshold = 0.9\n", in: directory)
        let busy = try DaemonRecordings.busy(in: directory)
        let daemon = try DaemonUnderTest(recording: busy, directory: directory, arguments: ["--config", config, "--interval-ms", "20"])
        defer { daemon.cleanUp() }
        #expect(daemon.stderr.contains("<6>configuration from \(config): device every pressure device, interval-ms 20, threshold 0.9, "), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("<6>the command line overrides the file's interval-ms\n"))
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        _ = client.nextReading()
        // 20 ms apart: about 50 a second (200 ms would give 5).
        let count = try readingsPerInterval(client)
        #expect(count >= 25 && count <= 60, "\(count) readings in a second")
    }

    @Test func theFilesIntervalSetsTheReadingRate() throws {
        let directory = try CLI.temporaryDirectory()
        let config = try writeConfig("interval-ms = 200\n", in: directory)
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.busy(in: directory), directory: directory, arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        _ = client.nextReading()
        let count = try readingsPerInterval(client)
        #expect(count >= 3 && count <= 7, "\(count) readings in a second at 200 ms")
    }

    // MARK: SIGHUP

    @Test func sighupAppliesANewIntervalAndABrokenFileKeepsTheOld() throws {
        let directory = try CLI.temporaryDirectory()
        let config = try writeConfig("interval-ms = 200\n", in: directory)
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.busy(in: directory), directory: directory, arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        _ = client.nextReading()
        let slow = try readingsPerInterval(client)
        #expect(slow <= 7, "\(slow) readings in a second at 200 ms")

        try writeConfig("interval-ms = 20\n", in: directory)
        daemon.child.signal(SIGHUP)
        try waitForLog("<5>reloaded the configuration from \(config): interval-ms 200 → 20\n", of: daemon.child)
        try waitForLog("<5>the recording starts over with the new settings\n", of: daemon.child)
        _ = client.nextReading()
        let fast = try readingsPerInterval(client)
        #expect(fast >= 25, "\(fast) readings in a second after the reload to 20 ms")
        #expect(daemon.child.isRunning, "SIGHUP does not stop the daemon")

        // A broken file: logged, and the daemon serves on at the rate it had.
        try writeConfig("interval-ms = 20\ninterval-ms = soon\n", in: directory)
        daemon.child.signal(SIGHUP)
        try waitForLog("<3>reload failed: the configuration in effect is kept\n", of: daemon.child)
        #expect(daemon.stderr.contains("<3>\(config):2: 'interval-ms' is set twice (first on line 1); keep one\n"))
        let still = try readingsPerInterval(client)
        #expect(still >= 25, "\(still) readings in a second after a broken reload")
        let status = try #require(try daemon.connect().request(#"{"class":"STATUS"}"#))
        #expect(status.hasPrefix(#"{"class":"STATUS","release":"0.1.0""#))

        // A file that vanishes on reload is an error, too, when it was given with --config.
        try FileManager.default.removeItem(atPath: config)
        daemon.child.signal(SIGHUP)
        try waitForLog("<3>\(config): no such file", of: daemon.child)

        let stopped = daemon.stop(signal: SIGTERM)
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
    }

    @Test func sighupReportsWhatNeedsARestartAndAppliesTheLogLevel() throws {
        let directory = try CLI.temporaryDirectory()
        let config = try writeConfig("unit = g\n", in: directory)
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos, directory: directory, arguments: ["--config", config])
        defer { daemon.cleanUp() }
        let elsewhere = directory.appendingPathComponent("other.sock").path
        try writeConfig("unit = oz\nlog-level = debug\nsocket = \(elsewhere)\ngroup = root\nrumble = off\n", in: directory)
        daemon.child.signal(SIGHUP)
        try waitForLog("<5>reloaded the configuration from \(config): unit g → oz, rumble on → off, log-level info → debug\n", of: daemon.child)
        // The test's --socket wins over the file's; the group needs a restart.
        try waitForLog("<5>the command line overrides the file's socket\n", of: daemon.child)
        try waitForLog("<4>group forcescale → root: takes effect when forcescaled restarts\n", of: daemon.child)
        try waitForLog("<6>rumble: not used while serving a recording\n", of: daemon.child)
        // The socket stays where it was; debug messages now show.
        _ = try daemon.connect()
        try waitForLog("<7>", of: daemon.child)
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
        // The same again: the pending restart is said again, nothing else changed.
        daemon.child.signal(SIGHUP)
        try waitForLog("<5>reloaded the configuration from \(config): nothing changed\n", of: daemon.child)
        let stopped = daemon.stop(signal: SIGINT)
        #expect(stopped.exited && stopped.status == 0)
        #expect(stopped.stderr.contains("stopping on signal 2"))
    }

    // MARK: Without a device

    @Test func withoutADeviceTheDaemonServesAndWaits() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("input")
        try FileManager.default.createDirectory(at: input, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("sock").path
        let daemon = try startDaemon(
            ["--socket", socket, "--state-dir", directory.appendingPathComponent("state").path, "--config", try writeConfig("", in: directory)],
            environment: ["FORCESCALE_INPUT_DIR": input.path], socket: socket)
        defer { daemon.kill() }
        #expect(daemon.stderr.contains("<5>no pressure device found: none of the 0 input devices reports usable pressure"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("<5>waiting for a pressure device\n"))
        #expect(daemon.stderr.contains("<5>listening on \(socket)\n"))

        let client = try RawClient(path: socket)
        #expect(client.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true)
        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        #expect(status["device"] == nil && status["model"] == nil && status["calibration"] == nil && status["rumble"] == nil)
        #expect(status.number("clients") == 1)
        #expect(client.request(#"{"class":"POLL"}"#) == #"{"class":"POLL"}"#)
        #expect(client.request(#"{"class":"DEVICES"}"#) == #"{"class":"DEVICES","devices":[]}"#)
        #expect(client.request(#"{"class":"CALIBRATE","grams":100}"#)
            == #"{"class":"ERROR","message":"no device to calibrate: none is open (\#(Self.noDevice))","request":"CALIBRATE"}"#)
        #expect(client.request(#"{"class":"TARE"}"#) == #"{"class":"ERROR","message":"no device to tare: none is open (\#(Self.noDevice))","request":"TARE"}"#)
        #expect(client.request(#"{"class":"CALIBRATION"}"#) == #"{"class":"ERROR","message":"no device is open (\#(Self.noDevice))","request":"CALIBRATION"}"#)
        let rumble = client.request(#"{"class":"RUMBLE"}"#) ?? ""
        #expect(rumble.hasPrefix(#"{"class":"ERROR","message":"rumble unavailable: "#) && rumble.contains("no device can rumble (no pressure device is open)"),
                "\(rumble)")
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)

        // Something appears in the input directory (inotify wakes the daemon): not an
        // evdev node, so it is listed with its error and the daemon waits on.
        try Data("not a device".utf8).write(to: input.appendingPathComponent("event3"))
        var lastDevices = ""
        let listed = try waitForValue("DEVICES to list event3", every: 0.02, saw: { lastDevices }) { () throws -> JSONValue? in
            lastDevices = try #require(client.request(#"{"class":"DEVICES"}"#))
            return try JSONValue.parse(lastDevices)["devices"]?.arrayValue?.first
        }
        #expect(listed["path"]?.stringValue == input.appendingPathComponent("event3").path)
        #expect(listed["active"]?.boolValue == false && listed["error"] != nil)
        #expect(daemon.isRunning)

        // A reload with nothing there says it waits still.
        daemon.signal(SIGHUP)
        try waitForLog("<5>reloaded the configuration from ", of: daemon)

        daemon.signal(SIGTERM)
        let result = daemon.wait()
        #expect(result.exited && result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(client.closesWithin())
    }

    @Test func aMissingInputDirectoryIsSaidAndServedWithout() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("sock").path
        let missing = directory.appendingPathComponent("no-input").path
        let daemon = try startDaemon(
            ["--socket", socket, "--state-dir", directory.appendingPathComponent("state").path, "--device", "Wacom"],
            environment: ["FORCESCALE_INPUT_DIR": missing], socket: socket)
        defer { daemon.kill() }
        #expect(daemon.stderr.contains("<4>\(missing): no such file or directory: no input device can appear there; serving without one"), "\(daemon.stderr)")
        let client = try RawClient(path: socket)
        #expect(client.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true)
        #expect(client.request(#"{"class":"STATUS"}"#)?.hasPrefix(#"{"class":"STATUS""#) == true)
        #expect(client.request(#"{"class":"DEVICES"}"#) == #"{"class":"DEVICES","devices":[]}"#)
        daemon.signal(SIGTERM)
        let result = daemon.wait()
        #expect(result.exited && result.status == 0, "\(result.stderr)")
    }

    /// What the daemon's ERROR says to do when it has no device: the demo route among it.
    static let noDevice = "plug one in or name it with forcescaled --device; without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop"

    /// `weigh`, with or without --tare-first, says at once that the daemon has no device
    /// rather than asking for an object and waiting; every command that needs a device names
    /// the demo route, and none promises that a device will appear (the daemon of this test
    /// has no input directory, so none can).
    @Test func weighWithNoDeviceOpenSaysSo() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("sock").path
        let daemon = try startDaemon(
            ["--socket", socket, "--state-dir", directory.appendingPathComponent("state").path],
            environment: ["FORCESCALE_INPUT_DIR": directory.appendingPathComponent("no-input").path], socket: socket)
        defer { daemon.kill() }
        for flags in [[], ["--tare-first"]] {
            let weigh = try forcescale(["weigh", "--timeout", "60", "--socket", socket] + flags)
            #expect(weigh.status == 69, "\(flags): \(weigh.stderr)")
            #expect(weigh.stdout.isEmpty)
            #expect(weigh.stderr == "error: forcescaled on \(socket) has no pressure device open: plug one in or name it with forcescaled --device; 'forcescale devices' lists what this machine has. Without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop\n")
        }
        // status says the same, without claiming that one is about to appear.
        let status = try forcescale(["status", "--socket", socket])
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("""
              device      none open: plug one in or name it with forcescaled --device; 'forcescale devices' lists what this machine has
                          Without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop

            """), "\(status.stdout)")
        #expect(!status.stdout.contains("appear"), "\(status.stdout)")
        // tare and calibrate print the daemon's ERROR and exit 1.
        for arguments in [["tare"], ["calibrate", "--grams", "20"], ["calibrate", "--reset"]] {
            let refused = try forcescale(arguments + ["--socket", socket])
            #expect(refused.status == 1, "\(arguments): \(refused.stderr)")
            #expect(refused.stderr.hasSuffix(" (\(Self.noDevice))\n") && !refused.stderr.contains("appear"), "\(arguments): \(refused.stderr)")
        }
        #expect(try forcescale(["devices", "--socket", socket]).stdout == "forcescaled sees no input devices. "
            + "Without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop\n")
        let characterize = try forcescale(["characterize", "--weights", "5,20,100", "--socket", socket])
        #expect(characterize.status == 69, "\(characterize.stderr)")
        #expect(characterize.stderr.hasSuffix("Without one, try the demo pen: forcescale demo --pen --write pen.events, "
            + "then forcescale characterize --replay pen.events with the weights its comment lists\n"), "\(characterize.stderr)")
        // watch says at once why nothing shows, then waits for readings as ever.
        let watch = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescale").path, ["watch", "--socket", socket])
        defer { watch.kill() }
        try waitFor("watch to say the daemon has no device", saw: { watch.stderr }) { watch.stderr.contains("\n") }
        #expect(watch.stderr == "forcescale: forcescaled on \(socket) has no pressure device open: its readings show here once it opens one. "
            + "Without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop\n")
        #expect(watch.isRunning)
    }
}
