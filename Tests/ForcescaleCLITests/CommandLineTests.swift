import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import Testing

/// The CLI as a user meets it: exit statuses, error messages naming file and line, help.
@Suite struct CommandLineTests {
    func withFile(_ name: String, _ contents: String, _ body: (String) throws -> Void) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url, atomically: true, encoding: .utf8)
        try body(url.path)
    }

    @Test func malformedRecordingNamesFileAndLineAndExits65() throws {
        try withFile("bad.events", "# EVEMU 1.2\nN: pad\nA: 18 0 255 0 0 0\nE: 1.000000 0003 0018 abc\n") { path in
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.hasPrefix("error: \(path):4: expected 'E: <seconds>.<microseconds> <type hex> <code hex> <value>', found 'E: 1.000000 0003 0018 abc'"))
            #expect(result.stdout.isEmpty)
        }
    }

    @Test func missingFileExits66WithAHint() throws {
        let result = try CLI.run(["replay", "/nonexistent/pad.events"])
        #expect(result.status == 66)
        #expect(result.stderr == "error: /nonexistent/pad.events: no such file or directory (check the path; recordings end in .events or .desc (evemu) or .yml or .yaml (libinput record))\n")
    }

    @Test func degenerateRangeNamesDeviceAndAxis() throws {
        try withFile("flat.events", "N: Flat Pad\nA: 18 0 0 0 0 0\nE: 1.000000 0003 0018 0\nE: 1.000000 0000 0000 0\n") { path in
            let result = try CLI.run(["replay", "--json", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("'Flat Pad': ABS_PRESSURE range 0..0 is degenerate"))
        }
    }

    @Test func deviceWithoutPressureIsRefused() throws {
        try withFile("mouse.events", "N: A Mouse\nA: 00 0 100 0 0\nE: 1.000000 0000 0000 0\n") { path in
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("'A Mouse' has no pressure axis"))
        }
    }

    @Test func eventsWithoutTheirDescriptionSayWhatToGive() throws {
        try withFile("lonely.events", "E: 1.000000 0003 0018 5\nE: 1.000000 0000 0000 0\n") { path in
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("\(path): no device description"))
            #expect(result.stderr.contains("forcescale replay NAME.desc"))
        }
    }

    @Test func emptyFileIsAnErrorNotACrash() throws {
        try withFile("empty.events", "") { path in
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("no device description"))
        }
    }

    @Test func binaryGarbageIsAnErrorNotACrash() throws {
        try withFile("garbage.events", "N: x\n\u{7}\u{0}\u{1B}[31m\u{FFFD}\n") { path in
            let result = try CLI.run(["replay", path])
            #expect(result.status == 65)
            #expect(result.stderr.contains("\(path):2: not an evemu line"))
        }
    }

    @Test func usageErrorsExit64() throws {
        let unknown = try CLI.run(["replay", "--bogus", "x"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("Error: Unknown option '--bogus'\nUsage: forcescale replay <file>"))
        let threshold = try CLI.run(["replay", "--threshold", "2", "x"])
        #expect(threshold.status == 64)
        #expect(threshold.stderr.hasPrefix("Error: The peak threshold must be greater than 0 and at most 1"))
        let unit = try CLI.run(["replay", "--unit", "stone", "x"])
        #expect(unit.status == 64)
        #expect(unit.stderr.contains("The value 'stone' is invalid for '--unit <unit>'"))
        let missing = try CLI.run(["replay"])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("Error: Missing expected argument '<file>'"))
    }

    @Test func helpIsTheSameThreeWays() throws {
        let long = try CLI.run(["replay", "--help"])
        let short = try CLI.run(["replay", "-h"])
        let word = try CLI.run(["help", "replay"])
        #expect(long.status == 0 && short.status == 0 && word.status == 0)
        #expect(long.stdout == short.stdout && long.stdout == word.stdout)
        #expect(long.stdout.hasPrefix("OVERVIEW: Replay a recording (evemu or libinput record) through the scale\n"))
        #expect(long.stdout.contains("\nUSAGE: forcescale replay <file> [<events-file>] [--json]"))
        #expect(long.stdout.contains("\nARGUMENTS:\n  <file>  ") && long.stdout.contains("\nOPTIONS:\n"))
        let root = try CLI.run(["--help"])
        #expect(root.stdout.contains("SUBCOMMANDS:\n  demo (default)") && root.stdout.contains("\n  replay  "))
        let version = try CLI.run(["--version"])
        #expect(version.status == 0 && version.stdout == "0.1.0\n")
    }

    @Test func unitChangesTheGaugeButNotTheJSON() throws {
        let path = CLI.recordings.appendingPathComponent("tablets/Wacom Intuos4 6x9.stylus-drag.events").path
        let gauge = try CLI.run(["replay", "--unit", "oz", path])
        #expect(gauge.status == 0)
        // 385 g is 13.580 oz.
        #expect(gauge.stdout.contains("100%+   >=13.580 oz") && gauge.stdout.contains("at least 13.580 oz (saturated)"))
        #expect(gauge.stdout.contains("PEAK    >=13.580 oz  raw 2047 reached the peak threshold"))
        #expect(gauge.stdout.hasPrefix("Wacom Intuos4 6x9: ABS_PRESSURE 0..2047, nominal model\n"))
        let json = try CLI.run(["replay", "--json", path])
        let jsonInOunces = try CLI.run(["replay", "--json", "--unit", "oz", path])
        #expect(json.stdout.contains("\"grams\":385.0") && jsonInOunces.stdout == json.stdout)
    }

    @Test func aReaderThatGoesAwayEndsTheReplayQuietly() throws {
        // Like `forcescale replay --json BIG | head -1`: the pipe closes after one line.
        let process = Process()
        process.executableURL = CLI.binDirectory.appendingPathComponent("forcescale")
        process.arguments = ["replay", "--json", "--interval-ms", "0", CLI.recordings.appendingPathComponent("tablets/Wacom Cintiq 13HD.events").path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        _ = out.fileHandleForReading.readData(ofLength: 1)
        try out.fileHandleForReading.close()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(err.fileHandleForReading.readDataToEndOfFile().isEmpty)
    }

    @Test func daemonWithoutADeviceServesAndStopsCleanly() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("sock").path
        let config = directory.appendingPathComponent("empty.conf")
        try Data().write(to: config)
        let daemon = try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescaled").path,
            ["--socket", socket, "--state-dir", directory.appendingPathComponent("state").path, "--config", config.path],
            environment: ["FORCESCALE_INPUT_DIR": directory.path])
        defer { daemon.kill() }
        // Without a device it must listen all the same.
        try waitUntilListening(daemon, on: socket)
        let connected = try RawClient(path: socket)
        #expect(connected.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true)
        let status = try JSONValue.parse(try #require(connected.request(#"{"class":"STATUS"}"#)))
        #expect(status["class"]?.stringValue == "STATUS" && status["device"] == nil)
        #expect(daemon.stderr.contains("<5>no pressure device found"), "\(daemon.stderr)")
        #expect(daemon.stderr.contains("<5>waiting for a pressure device\n"))
        daemon.signal(SIGTERM)
        let result = daemon.wait()
        #expect(result.exited && result.status == 0, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: socket))
    }
}

@Suite struct DemoCommandTests {
    @Test func fastDemoShowsThreeWeighingsAndOnePeak() throws {
        let result = try CLI.run(["demo", "--fast", "--json"])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.filter { $0.contains("\"class\":\"PEAK\"") }.count == 1)
        #expect(lines.filter { $0.contains("\"contacts\":0") }.count == 3)
        #expect(lines.contains { $0.contains("\"grams\":179.7") && $0.contains("\"stable\":true") })
    }

    @Test func writtenDemoReplaysToTheSameReadings() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("demo.events").path
        let written = try CLI.run(["demo", "--write", path])
        #expect(written.status == 0)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.hasPrefix("# EVEMU 1.3\n# synthetic: generated by 'forcescale demo'"))
        let demo = try CLI.run(["demo", "--fast", "--json"])
        let replay = try CLI.run(["replay", "--json", path])
        #expect(replay.status == 0)
        #expect(replay.stdout == demo.stdout)
    }

    @Test func writingToAFIFOWritesThroughItAndLeavesItAFIFO() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(path, 0o600) == 0)
        // A reader first, so the writer's open does not wait; the demo (about 40 KB) fits
        // the pipe's buffer, so nothing has to be read while it writes.
        let reader = open(path, O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        let written = try CLI.run(["demo", "--write", path])
        #expect(written.status == 0, "\(written.stderr)")
        var buffer = [UInt8](repeating: 0, count: 16)
        #expect(read(reader, &buffer, buffer.count) == buffer.count)
        #expect(String(decoding: buffer, as: UTF8.self) == "# EVEMU 1.3\n# sy")
        var status = stat()
        #expect(stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced by a plain file")
    }

    /// A 0-byte file is empty, not "the events half of a split pair"; a description alone
    /// has nothing to replay and says so, with status 65, instead of printing a header.
    @Test func anEmptyFileOrADescriptionAloneIsRefusedForWhatItIs() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty.events").path
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        let refusedEmpty = try CLI.run(["replay", empty])
        #expect(refusedEmpty.status == 65)
        #expect(refusedEmpty.stderr.hasPrefix("error: \(empty): the file is empty: no events"), "\(refusedEmpty.stderr)")
        let description = directory.appendingPathComponent("pad.desc").path
        try Data("N: pad\nI: 0003 0001 0001 0001\nA: 18 0 255 0 0\n".utf8).write(to: URL(fileURLWithPath: description))
        let refusedDescription = try CLI.run(["replay", description])
        #expect(refusedDescription.status == 65)
        #expect(refusedDescription.stdout.isEmpty)
        #expect(refusedDescription.stderr.hasPrefix("error: \(description): a device description without any event, so there is nothing to replay"),
                "\(refusedDescription.stderr)")
    }

    @Test func writeToAnUnwritablePlaceFailsClearly() throws {
        // docs/cli.md's table of exit statuses: 73, an output file that cannot be created.
        let result = try CLI.run(["demo", "--write", "/nonexistent/dir/demo.events"])
        #expect(result.status == 73)
        #expect(result.stderr.hasPrefix("error: /nonexistent/dir/demo.events: no such file or directory"))
    }
}
