import Foundation
import ScaleCore
import ScaleProtocol
import ScaleRecording
import Testing

/// Names someone else chose, seen from the user's side: a recording whose device calls
/// itself `Pad␛]0;PWNED␇␛[31m RED⏎<0>forcescaled: FORGED` (issue 60: it set the terminal's
/// title, turned the text red and forged a journal record), replayed by `forcescale` and
/// served by `forcescaled`. What a person reads shows each control character as an escape on
/// the name's own line; what a program reads (`--json`, the protocol) keeps the exact name,
/// JSON's own escapes and nothing more.
@Suite struct UntrustedNameTests {
    static let hostile = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
    static let shown = #"Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED"#
    /// An evemu `N:` line ends at its newline: the name up to there.
    static let hostileOneLine = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED"
    static let shownOneLine = #"Pad\e]0;PWNED\a\e[31m RED"#
    /// A file name with an escape sequence in it (Linux allows any byte but `/` and NUL).
    static let hostileFile = "pad\u{1B}[31m\u{07}.events"
    static let shownFile = #"pad\e[31m\a.events"#

    /// Whether any byte of `text` is a control character a terminal acts on (ESC, BEL, CSI
    /// and the rest); newlines and tabs are allowed as the output's own layout.
    static func hasRawControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
    }

    /// The demo's recording with its device renamed, as evemu text and as a libinput record.
    static func demo(named name: String, in directory: URL) throws -> Recording {
        let evemu = directory.appendingPathComponent("demo.events").path
        let written = try CLI.run(["demo", "--write", evemu])
        try #require(written.status == 0, "forcescale demo --write: \(written.stderr)")
        var recording = try Recording(evemuText: try String(contentsOfFile: evemu, encoding: .utf8), fileName: evemu)
        recording.device.name = name
        return recording
    }

    /// A libinput record (YAML) of the demo whose device has the hostile name, newline included.
    static func hostileRecord(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("hostile.yml").path
        try LibinputRecordWriter.text(of: try demo(named: hostile, in: directory), node: "/dev/input/event9")
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func replayOfALibinputRecordPrintsTheNameEscapedOnItsOwnLine() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = try Self.hostileRecord(in: directory)
        let result = try CLI.run(["replay", record])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!Self.hasRawControl(result.stdout), "\(result.stdout.prefix(300).debugDescription)")
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        // The header names the device: the whole name, escaped, on the first line.
        #expect(lines.first?.hasPrefix(Self.shown + ": ABS_") == true, "\(lines.first.debugDescription)")
        #expect(!lines.contains { $0.hasPrefix("<0>") }, "a line of its own from the name")
        // Past the header the gauge is what a plainly named device gives.
        let plain = directory.appendingPathComponent("plain.yml").path
        try LibinputRecordWriter.text(of: try Self.demo(named: "demo pad", in: directory), node: "/dev/input/event9")
            .write(toFile: plain, atomically: true, encoding: .utf8)
        let reference = try CLI.run(["replay", plain])
        #expect(reference.status == 0, "\(reference.stderr)")
        #expect(lines.dropFirst() == reference.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropFirst())
    }

    @Test func replayJSONIsTheSameWhateverTheNameSinceItCarriesNoName() throws {
        // `replay --json` writes READING and PEAK lines, which name no device (a recording's
        // lines carry none): nothing of the name can reach them, escaped or not.
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let record = try Self.hostileRecord(in: directory)
        let plain = directory.appendingPathComponent("plain.yml").path
        try LibinputRecordWriter.text(of: try Self.demo(named: "demo pad", in: directory), node: "/dev/input/event9")
            .write(toFile: plain, atomically: true, encoding: .utf8)
        let hostile = try CLI.run(["replay", "--json", record])
        let reference = try CLI.run(["replay", "--json", plain])
        #expect(hostile.status == 0, "\(hostile.stderr)")
        #expect(!hostile.stdout.isEmpty)
        #expect(hostile.stdout == reference.stdout)
    }

    @Test func replayOfAnEvemuFileWithAHostileNameAndFileNameEscapesBoth() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try Self.demo(named: Self.hostileOneLine, in: directory)
        let path = directory.appendingPathComponent(Self.hostileFile).path
        // A file as someone else wrote it: the raw name on its N: line (forcescale's own writer
        // escapes it).
        let text = EvemuWriter.text(of: recording).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasPrefix("N: ") ? "N: " + Self.hostileOneLine : String($0) }.joined(separator: "\n")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try CLI.run(["replay", path])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(!Self.hasRawControl(result.stdout))
        #expect(result.stdout.hasPrefix(Self.shownOneLine + ": ABS_"), "\(result.stdout.prefix(200).debugDescription)")

        // The same file with a malformed line that carries escapes: the error names the
        // file and the line, both escaped, and quotes the line escaped.
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let firstEvent = try #require(lines.firstIndex { $0.hasPrefix("E:") })
        lines.insert("E: 1.000000 \u{1B}]0;PWNED\u{07} 0000", at: firstEvent + 1)
        let bad = directory.appendingPathComponent("bad " + Self.hostileFile).path
        try lines.joined(separator: "\n").write(toFile: bad, atomically: true, encoding: .utf8)
        let failed = try CLI.run(["replay", bad])
        #expect(failed.status == 65)
        #expect(!Self.hasRawControl(failed.stderr), "\(failed.stderr.debugDescription)")
        let shownBad = UntrustedText.escaped(bad)
        #expect(failed.stderr.hasPrefix("error: \(shownBad):\(firstEvent + 2): "), "\(failed.stderr.debugDescription)")
        #expect(failed.stderr.contains(#"found 'E: 1.000000 \e]0;PWNED\a 0000'"#), "\(failed.stderr.debugDescription)")
        #expect(failed.stderr.hasSuffix("\n") && failed.stderr.dropLast().split(separator: "\n").count == 1)

        // A file that cannot be opened: its name escaped in the error.
        let missing = try CLI.run(["replay", directory.appendingPathComponent("missing " + Self.hostileFile).path])
        #expect(missing.status == 66)
        #expect(!Self.hasRawControl(missing.stderr), "\(missing.stderr.debugDescription)")
        #expect(missing.stderr.contains("missing " + Self.shownFile), "\(missing.stderr.debugDescription)")
    }

    @Test func theDaemonLogsTheNameOnOneRecordAndClientsPrintItEscapedOrExact() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The daemon names a recording's device after its file: a hostile one too.
        let record = directory.appendingPathComponent("hostile\u{1B}[31m.yml").path
        try FileManager.default.moveItem(atPath: try Self.hostileRecord(in: directory), toPath: record)
        // An unreadable calibration for the device: the daemon's warning names the device by
        // its own name (its state file is named after the name reduced to [a-z0-9-]).
        let state = directory.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try "not a calibration".write(
            to: state.appendingPathComponent("0006-0000-0000-pad-0-pwned-31m-red-0-forcescaled-forged.json"), atomically: true, encoding: .utf8)
        let daemon = try DaemonUnderTest(recording: record, directory: directory, arguments: ["--verbose"])
        defer { daemon.cleanUp() }
        let node = "hostile\u{1B}[31m.yml"
        let shownNode = #"hostile\e[31m.yml"#

        // status and devices: the name and the file name escaped, each on its line.
        let status = try forcescale(["status", "--socket", daemon.socketPath])
        #expect(status.exited && status.status == 0, "\(status.stderr)")
        #expect(!Self.hasRawControl(status.stdout), "\(status.stdout.debugDescription)")
        #expect(status.stdout.contains("  device      \(shownNode) (\(Self.shown))"), "\(status.stdout)")
        #expect(!status.stdout.split(separator: "\n").contains { $0.hasPrefix("<0>") })
        let devices = try forcescale(["devices", "--socket", daemon.socketPath])
        #expect(devices.exited && devices.status == 0, "\(devices.stderr)")
        #expect(!Self.hasRawControl(devices.stdout), "\(devices.stdout.debugDescription)")
        #expect(devices.stdout.contains(Self.shown), "\(devices.stdout)")

        // --json: the daemon's line as it is, which JSON's escapes keep on one line and
        // which parses back to the exact name.
        let statusJSON = try forcescale(["status", "--json", "--socket", daemon.socketPath])
        #expect(statusJSON.exited && statusJSON.status == 0, "\(statusJSON.stderr)")
        #expect(!Self.hasRawControl(statusJSON.stdout))
        #expect(statusJSON.stdout.contains(#""Pad\u001b]0;PWNED\u0007\u001b[31m RED\n<0>forcescaled: FORGED""#), "\(statusJSON.stdout)")
        let parsed = try JSONValue.parse(String(statusJSON.stdout.dropLast()))
        let served = try #require(parsed["devices"]?.arrayValue?.first)
        #expect(served["name"]?.stringValue == Self.hostile)
        #expect(served["device"]?.stringValue == node)
        let devicesJSON = try forcescale(["devices", "--json", "--socket", daemon.socketPath])
        #expect(devicesJSON.exited && devicesJSON.status == 0, "\(devicesJSON.stderr)")
        let listed = try #require(JSONValue.parse(String(devicesJSON.stdout.dropLast()))["devices"]?.arrayValue)
        #expect(listed.contains { $0["name"]?.stringValue == Self.hostile }, "\(devicesJSON.stdout)")

        // A client's request naming a device with escapes in it: refused, and the refusal
        // that the client prints quotes it escaped.
        let refused = try forcescale(["status", "--socket", daemon.socketPath, "--device", "nope\u{1B}[2J"])
        #expect(refused.exited && refused.status != 0)
        #expect(!Self.hasRawControl(refused.stderr), "\(refused.stderr.debugDescription)")
        #expect(refused.stderr.contains(#"'nope\e[2J'"#) && refused.stderr.contains(shownNode), "\(refused.stderr)")

        // The log: every line a record of its own with its priority first, no control
        // character, the name and the file name escaped where they are said.
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(!Self.hasRawControl(stopped.stderr), "\(stopped.stderr.debugDescription)")
        let records = stopped.stderr.split(separator: "\n")
        #expect(!records.isEmpty)
        for record in records {
            #expect(record.range(of: #"^<[3-7]>"#, options: .regularExpression) != nil, "a line that is no record of its own: \(record)")
        }
        #expect(records.contains { $0.hasPrefix("<5>serving the recording ") && $0.contains(shownNode) }, "\(stopped.stderr)")
        #expect(records.contains { $0.hasPrefix("<4>the calibration of '\(Self.shown)' was unreadable") }, "\(stopped.stderr)")
    }

    /// The page shows the daemon's names (a card's title is the device's own name) as text:
    /// its script sets `textContent`, and nothing in it parses a string as HTML.
    @Test func thePageWritesNamesAsTextNeverAsMarkup() throws {
        let script = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Sources/ScaleWeb/Page/page.js"), encoding: .utf8)
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment", "DOMParser", "srcdoc"] {
            #expect(!script.contains(sink), "page.js uses \(sink), which would take a name for markup")
        }
        #expect(script.contains(".textContent = "))
    }
}
