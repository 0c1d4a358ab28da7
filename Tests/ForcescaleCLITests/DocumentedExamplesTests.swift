import Foundation
import Glibc
import TestWaiting
import Testing

/// Every example of the documentation that shows a command as `$ command` (README.md,
/// docs/*.md, the man pages' EXAMPLES), run, so that none drifts from what the programs do.
///
/// Beside each such example the documentation says how it is checked, on the line before it:
/// `<!-- example KEY: … -->` in Markdown, `.\" example KEY: …` in a man page, where KEY names
/// the test below that runs it and the note says what is compared by a pattern and why; or,
/// visibly, `_Illustrative, not run by the tests: REASON._` (in a man page the paragraph
/// before it starts with `Illustrative, not run by the tests:`). `everyExampleIsRunOrSaysWhyNot`
/// fails on an example with neither, so a new one cannot go unchecked.
@Suite struct DocumentedExamplesTests {
    /// A command of an example and the lines shown after it.
    struct Example {
        var command: String
        var lines: [String]
    }

    /// How the documentation says an example is checked.
    enum Mark: Equatable {
        case run(String)
        case illustrative(String)
    }

    /// A block of a document with at least one `$ ` command.
    struct Block {
        var file: String
        /// The line of its opening fence (or `.EX`), from 1.
        var line: Int
        var mark: Mark?
        var examples: [Example]

        var place: String { "\(file):\(line)" }
    }

    /// The keys of the tests below, each running the examples marked with it.
    static let runners: Set<String> = [
        "demo-terminal", "demo-fast", "replay", "daemon-session", "log", "weigh-tare-first", "weigh-tare-first-lifted", "weigh-grab", "calibration",
        "characterize", "greeting", "web-history", "libinput-record",
    ]

    static let visibleMark = "Illustrative, not run by the tests:"

    /// The documents whose examples are checked: the README, docs/*.md and the man pages.
    static func documents() throws -> [String] {
        let fileManager = FileManager.default
        let docs = try fileManager.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        let man = try fileManager.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("man").path)
            .filter { $0.range(of: #"\.[158]$"#, options: .regularExpression) != nil }.sorted().map { "man/" + $0 }
        return ["README.md"] + docs + man
    }

    /// Every block with a `$ ` command of every document.
    static func allBlocks() throws -> [Block] {
        try documents().flatMap { try blocks(in: $0) }
    }

    /// The blocks marked with a runner's key.
    static func blocks(_ key: String) throws -> [Block] {
        try allBlocks().filter { $0.mark == .run(key) }
    }

    /// The blocks of one document: fenced blocks of Markdown, `.EX`…`.EE` of a man page's
    /// EXAMPLES (its escapes undone).
    static func blocks(in file: String) throws -> [Block] {
        let text = try String(contentsOf: CLI.packageRoot.appendingPathComponent(file), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let isMan = file.hasPrefix("man/")
        var blocks: [Block] = []
        var start: Int?
        var inExamples = !isMan
        for (index, line) in lines.enumerated() {
            if isMan, line.hasPrefix(".SH ") { inExamples = line == ".SH EXAMPLES" }
            guard inExamples else { continue }
            let opens = isMan ? line == ".EX" : line.hasPrefix("```")
            let closes = isMan ? line == ".EE" : line.hasPrefix("```")
            if let first = start, closes {
                let body = lines[(first + 1)..<index].map { isMan ? unescape($0) : $0 }
                if body.contains(where: { $0.hasPrefix("$ ") }) {
                    blocks.append(Block(file: file, line: first + 1, mark: mark(before: first, in: lines, isMan: isMan), examples: examples(body)))
                }
                start = nil
            } else if start == nil, opens {
                start = index
            }
        }
        return blocks
    }

    /// The commands of a block, each with the lines after it (lines before the first command
    /// belong to none).
    static func examples(_ body: [String]) -> [Example] {
        var examples: [Example] = []
        for line in body {
            if line.hasPrefix("$ ") {
                examples.append(Example(command: String(line.dropFirst(2)), lines: []))
            } else if !examples.isEmpty {
                examples[examples.count - 1].lines.append(line)
            }
        }
        return examples
    }

    /// What the lines before a block's opening line say of it.
    static func mark(before opening: Int, in lines: [String], isMan: Bool) -> Mark? {
        var paragraph: [String] = []
        var index = opening - 1
        // The paragraph just before: blank lines (Markdown) or .PP (roff) before it skipped.
        while index >= 0, lines[index].isEmpty || lines[index] == ".PP" { index -= 1 }
        while index >= 0, !lines[index].isEmpty, ![".PP", ".EE"].contains(lines[index]), !lines[index].hasPrefix(".SH"),
              !lines[index].hasPrefix("```") {
            paragraph.insert(lines[index], at: 0)
            index -= 1
        }
        guard let last = paragraph.last else { return nil }
        let comment = isMan ? #"^\.\\" example ([a-z-]+):"# : "^<!-- example ([a-z-]+):.*-->$"
        if let range = last.range(of: comment, options: .regularExpression) {
            let key = last[range].split(separator: " ").dropFirst(isMan ? 2 : 2).first.map { String($0.dropLast()) } ?? ""
            return .run(key)
        }
        let text = paragraph.joined(separator: " ")
        let visible = isMan ? visibleMark : "_" + visibleMark
        if text.hasPrefix(visible) {
            let reason = text.dropFirst(visible.count).trimmingCharacters(in: CharacterSet(charactersIn: " _."))
            return reason.isEmpty ? nil : .illustrative(reason)
        }
        return nil
    }

    /// A roff line as it reads: `\-` a hyphen, `\e` a backslash, `\(aq` an apostrophe.
    static func unescape(_ line: String) -> String {
        line.replacingOccurrences(of: #"\-"#, with: "-").replacingOccurrences(of: #"\(aq"#, with: "'")
            .replacingOccurrences(of: #"\e"#, with: #"\"#)
    }

    @Test func everyExampleIsRunOrSaysWhyNot() throws {
        let blocks = try Self.allBlocks()
        #expect(blocks.count >= 12, "the documents' examples: \(blocks.map(\.place))")
        for block in blocks {
            switch block.mark {
            case nil:
                Issue.record("\(block.place): an example that no test runs and that does not say why (see DocumentedExamplesTests)")
            case .run(let key):
                #expect(Self.runners.contains(key), "\(block.place): no test runs examples marked '\(key)'")
            case .illustrative:
                break
            }
        }
        let used = Set(blocks.compactMap { if case .run(let key) = $0.mark { key } else { nil } })
        #expect(used == Self.runners, "runners with no example: \(Self.runners.subtracting(used))")
    }

    /// The marks are read as meant: a block with neither mark is found, and so are both marks.
    @Test func theMarksAreReadFromTheLinesBefore() {
        let markdown = ["Text.", "<!-- example replay: every line -->", "```", "$ forcescale demo", "```", "",
                        "_Illustrative, not run by the tests: needs a pen._", "", "```", "$ forcescale read", "```", "",
                        "Nothing said.", "```", "$ forcescale read", "```"]
        #expect(Self.mark(before: 2, in: markdown, isMan: false) == .run("replay"))
        #expect(Self.mark(before: 8, in: markdown, isMan: false) == .illustrative("needs a pen"))
        #expect(Self.mark(before: 13, in: markdown, isMan: false) == nil)
        let man = [#".\" example greeting: exactly"#, ".PP", ".EX", "$ nc", ".EE", "Illustrative, not run by the tests: a pad.", ".PP", ".EX"]
        #expect(Self.mark(before: 2, in: man, isMan: true) == .run("greeting"))
        #expect(Self.mark(before: 7, in: man, isMan: true) == .illustrative("a pad"))
    }

    /// Runs a shell command in `directory` with the programs under test first on PATH;
    /// standard error goes where standard output goes, as a terminal shows both.
    static func shell(_ command: String, in directory: URL) throws -> ProcessResult {
        // On lines of their own: a comment at the end of the command ends with its line.
        try run("/bin/sh", ["-c", "cd '\(directory.path)' && {\n\(command)\n} 2>&1"], environment: environment)
    }

    static var environment: [String: String] {
        ["PATH": CLI.binDirectory.path + ":/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1"]
    }

    /// A scratch directory in which `docs` is the checkout's, as in the checkout's root.
    static func workingDirectory() throws -> URL {
        let directory = try CLI.temporaryDirectory()
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("docs"),
                                                   withDestinationURL: CLI.packageRoot.appendingPathComponent("docs"))
        return directory
    }

    /// Runs each command in turn in `directory`; each must print every line shown, in
    /// order, `...` standing for lines left out.
    static func expectEveryLineShown(_ examples: [Example], in directory: URL) throws {
        for example in examples {
            let result = try shell(example.command, in: directory)
            #expect(result.status == 0, "\(example.command): \(result.stdout)")
            var output = result.stdout.components(separatedBy: "\n")[...]
            for shown in example.lines where shown.trimmingCharacters(in: .whitespaces) != "..." {
                guard let index = output.firstIndex(of: shown) else {
                    Issue.record("\(example.command) did not print \(shown.debugDescription) where the documentation shows it")
                    break
                }
                output = output[(index + 1)...]
            }
        }
    }

    @Test func theDemoPrintsWhatItShows() throws {
        let blocks = try Self.blocks("demo-fast")
        try #require(!blocks.isEmpty)
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for block in blocks { try Self.expectEveryLineShown(block.examples, in: directory) }
    }

    /// The demo on a terminal: the gauge redraws in place and leaves a line for each weighing
    /// and each peak; what the terminal shows at the end is compared exactly.
    @Test func theDemoOnATerminalShowsWhatItShows() throws {
        let block = try #require(try Self.blocks("demo-terminal").first)
        let example = try #require(block.examples.first)
        #expect(block.examples.count == 1 && example.command == "forcescale demo")
        #expect(try WeighingGuideTests.onTerminal(example.command) == example.lines.filter { !$0.isEmpty })
    }

    @Test func theReplaysPrintWhatTheyShow() throws {
        let blocks = try Self.blocks("replay")
        try #require(blocks.count == 2, "the gauge and the JSON lines")
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for block in blocks { try Self.expectEveryLineShown(block.examples, in: directory) }
    }

    /// docs/weighing.md's replay of a libinput record of several devices: each command's
    /// output, standard error included (the choice it says, its errors), compared exactly;
    /// a command may fail, as the example of a device without events shows.
    @Test func theLibinputRecordExamplesPrintExactlyWhatTheyShow() throws {
        let blocks = try Self.blocks("libinput-record")
        try #require(blocks.count == 1)
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for example in blocks[0].examples {
            let result = try Self.shell(example.command, in: directory)
            let shown = example.lines.joined(separator: "\n").trimmingCharacters(in: .newlines)
            #expect(result.stdout.trimmingCharacters(in: .newlines) == shown, "\(example.command) printed:\n\(result.stdout)")
        }
    }

    /// A session at a shell: commands run in turn in one directory, `forcescaled … &` started
    /// in the background (its log lines are those shown after it), `kill %1` stopping it.
    /// Every line printed must be the line shown, once both have gone through `patterns`.
    final class Session {
        let directory: URL
        let patterns: [(String, String)]
        /// Whether `…` in a line shown stands for any text there (the rest of a long line).
        let ellipsis: Bool
        private(set) var daemon: ChildProcess?
        private var logged = 0

        init(in directory: URL, patterns: [(String, String)], ellipsis: Bool = false) {
            self.directory = directory
            self.patterns = patterns
            self.ellipsis = ellipsis
        }

        /// Whether the lines printed are the lines shown, once both have gone through the
        /// patterns; with `ellipsis`, a `…` shown matches any text.
        func same(_ printed: [String], _ shown: [String]) -> Bool {
            let printed = normalized(printed), shown = normalized(shown)
            guard ellipsis else { return printed == shown }
            return printed.count == shown.count && zip(printed, shown).allSatisfy { line, pattern in
                let pieces = pattern.components(separatedBy: "…")
                guard pieces.count > 1 else { return line == pattern }
                let expression = "^" + pieces.map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*") + "$"
                return line.range(of: expression, options: .regularExpression) != nil
            }
        }

        deinit { daemon?.kill() }

        /// The lines through the patterns. The documentation's daemons find no configuration
        /// file in /etc; on a machine with one, the line saying which configuration a daemon
        /// took is left out on both sides.
        func normalized(_ lines: [String]) -> [String] {
            let configured = FileManager.default.fileExists(atPath: "/etc/forcescale/forcescale.conf")
            return lines.filter { !configured || !$0.hasPrefix("<6>configuration from ") }
                .map { line in patterns.reduce(line) { $0.replacingOccurrences(of: $1.0, with: $1.1, options: .regularExpression) } }
        }

        func run(_ example: Example, sourceLocation: SourceLocation = #_sourceLocation) throws {
            let command = example.command
            let shown = example.lines
            if command.hasPrefix("forcescaled "), command.hasSuffix(" &") {
                let line = String(command.dropLast(2))
                let daemon = try ChildProcess("/bin/sh", ["-c", "cd '\(directory.path)' && exec \(line)"], environment: DocumentedExamplesTests.environment)
                self.daemon = daemon
                // Once the lines shown are logged, "listening on" among them, it answers. No
                // connection of the test's own: `status` would count it among the clients
                // until the daemon has seen it go.
                try waitFor("\(command) to log \(shown.count) lines", saw: { daemon.stderr }) {
                    guard daemon.isRunning else { throw DaemonTestError(description: "\(command) exited: \(daemon.stderr)") }
                    return daemon.stderr.components(separatedBy: "\n").count - 1 >= shown.count
                }
                #expect(normalized(daemonLines()) == normalized(shown), "\(command)", sourceLocation: sourceLocation)
            } else if command == "kill %1" {
                let daemon = try #require(daemon, "a daemon to stop")
                daemon.signal(SIGTERM)
                let stopped = daemon.wait()
                #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)", sourceLocation: sourceLocation)
                #expect(normalized(daemonLines()) == normalized(shown), "\(command)", sourceLocation: sourceLocation)
                self.daemon = nil
            } else {
                let result = try DocumentedExamplesTests.shell(command, in: directory)
                #expect(result.status == 0, "\(command): \(result.stdout)", sourceLocation: sourceLocation)
                // As a terminal shows them: CSV's CRLF line ends (RFC 4180) end lines too.
                let printed = result.stdout.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n").dropLast()
                #expect(same(Array(printed), shown), "\(command) printed:\n\(result.stdout)", sourceLocation: sourceLocation)
            }
        }

        /// The daemon's log lines not looked at yet.
        private func daemonLines() -> [String] {
            let all = daemon?.stderr.components(separatedBy: "\n").dropLast() ?? []
            defer { logged = all.count }
            return Array(all.dropFirst(logged))
        }
    }

    /// docs/cli.md's session against a letter resting on the demo pad: the same answers at any
    /// moment, so every line is compared exactly but for the uptime, the moment status runs.
    /// It is run twice: the second run, in the same directories, must print the same.
    @Test func theDaemonSessionPrintsWhatItShowsEveryTime() throws {
        let block = try #require(try Self.blocks("daemon-session").first)
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let patterns = [
            (#"up +[0-9.]+ s$"#, "up 0 s"), (#""uptime":[0-9.]+"#, #""uptime":0"#),
            (#"\(pid [0-9]+, uid [0-9]+, gid [0-9]+\)"#, "(pid 1, uid 1, gid 1)"),
        ]
        for _ in 1...2 {
            let session = Session(in: directory, patterns: patterns)
            for example in block.examples {
                let local = { (text: String) in text.replacingOccurrences(of: "/tmp/demo", with: directory.path + "/demo") }
                try session.run(Example(command: local(example.command), lines: example.lines.map(local)))
            }
            #expect(session.daemon == nil, "the session stops its daemon")
        }
    }

    /// docs/cli.md's force log: the demo's recording played once under `--log` by a daemon
    /// that `timeout` stops, then the commands. Compared exactly but for the sessions' start
    /// (the local time it is run) and the exported readings' times (the same moment).
    @Test func theLogExamplesPrintWhatTheyShow() throws {
        let block = try #require(try Self.blocks("log").first)
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = Session(in: directory, patterns: [
            (#"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}"#, "DATE TIME"),
            (#"^([0-9]+,[^,]+,)[0-9]+\.[0-9]{6},"#, "$1TIME,"),
        ])
        for example in block.examples { try session.run(example) }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("mug.png").path))
    }

    /// The lines of the fenced block that a Markdown document marks with `key` (a session
    /// with no `$ ` command, which `blocks(in:)` leaves to its own test).
    static func markedBlock(_ key: String, in file: String) throws -> [String] {
        let text = try String(contentsOf: CLI.packageRoot.appendingPathComponent(file), encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let marked = try #require(lines.firstIndex { $0.hasPrefix("<!-- example \(key):") }, "\(file) marks no block '\(key)'")
        let opening = try #require(lines[marked...].firstIndex { $0.hasPrefix("```") }, "\(file): no block after '\(key)'")
        let closing = try #require(lines[(opening + 1)...].firstIndex { $0.hasPrefix("```") }, "\(file): the block of '\(key)' does not end")
        return Array(lines[(opening + 1)..<closing])
    }

    /// docs/protocol.md's session, typed line by line into a connection to docs/cli.md's demo
    /// daemon (the letter resting on the demo pad): every line the daemon sends is compared
    /// but for "uptime" and "time", the moment's, and the calibration point's "n": how many
    /// frames its window held, which depends on where in the recording's loop it was asked
    /// (a letter lying still sends no events). Of the READINGs that stream while watching,
    /// the first two are compared; those still on their way when watching stops are skipped.
    @Test func theProtocolSessionIsWhatItShows() throws {
        let shown = try Self.markedBlock("protocol-session", in: "docs/protocol.md")
        #expect(shown.filter { $0.hasPrefix("> ") }.count >= 8, "\(shown)")
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = ExampleRecordingTests.path("letter.events")
        let daemon = try DaemonUnderTest(recording: recording, directory: directory)
        defer { daemon.cleanUp() }
        let client = try RawClient(path: daemon.socketPath)
        func normalized(_ line: String) -> String {
            line.replacingOccurrences(of: #""(uptime|time|n)":[0-9.]+"#, with: #""$1":0"#, options: .regularExpression)
                .replacingOccurrences(of: recording, with: "docs/examples/letter.events")
        }
        var stoppedWatching = false
        for line in shown {
            if line.hasPrefix("> ") {
                let request = String(line.dropFirst(2))
                #expect(client.send(request), "\(request)")
                stoppedWatching = request == #"{"class":"WATCH","enable":false}"#
                continue
            }
            var sent = client.readLine()
            while stoppedWatching, let reading = sent, reading.hasPrefix(#"{"class":"READING""#) { sent = client.readLine() }
            stoppedWatching = false
            #expect(sent.map(normalized) == normalized(line), "docs/protocol.md shows \(line)")
        }
    }

    /// docs/web.md's history over HTTP: the demo's recording played once (no loop) by
    /// forcescaled with `--log-db`, which makes a log of its three sessions (ids 1 to 3);
    /// then forcescale-web on that log, on a port of its own (the examples' 19385 is put
    /// right in each command, and its key directory for /run/forcescale-web), and the `curl`
    /// commands, each with the read key. Compared exactly but for the times,
    /// which are when the log was made and when the request came: seconds since 1970 (with
    /// their six decimals) and the Date header, and for the log's path an error names (the
    /// test's own); `…` shown stands for the rest of a line.
    @Test func theWebHistoryExamplesPrintWhatTheyShow() throws {
        let blocks = try Self.blocks("web-history")
        try #require(blocks.count == 4, "docs/web.md's four history examples: \(blocks.map(\.place))")
        let directory = try Self.workingDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try DaemonRecordings.demo(in: directory)
        let log = directory.appendingPathComponent("log.sqlite").path
        let daemon = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescaled").path, [
            "--replay", recording, "--socket", directory.appendingPathComponent("sock").path,
            "--state-dir", directory.appendingPathComponent("state").path, "--log-db", log,
        ])
        defer { daemon.kill() }
        var listed = ""
        try waitFor("the demo's three sessions to end in the log", every: 0.2, saw: { "\(listed)\n\(daemon.stderr)" }) {
            let result = try CLI.run(["log", "sessions", "--json", "--db", log])
            // 66 until the daemon's writer has made the file.
            guard result.status == 0 else { return false }
            listed = result.stdout
            return result.stdout.components(separatedBy: #""ended":"#).count - 1 == 3
        }
        daemon.signal(SIGTERM)
        let stopped = daemon.wait()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        #expect(try CLI.run(["log", "sessions", "--json", "--db", log]).stdout.split(separator: "\n").count == 3, "exactly the demo's three")
        let web = try WebUnderTest(socket: directory.appendingPathComponent("sock").path, arguments: ["--log-db", log])
        let session = Session(in: directory, patterns: [
            (#"[0-9]{10}\.[0-9]{6}"#, "SECONDS"),
            (#"^Date: .*$"#, "Date: DATE"),
            (#"^\{"error":"/[^"]*\.sqlite: "#, #"{"error":"LOG: "#),
        ], ellipsis: true)
        for block in blocks {
            for example in block.examples {
                #expect(example.command.hasPrefix("curl ") && example.command.contains("127.0.0.1:19385"), "\(block.place): \(example.command)")
                // The key as the service's reader finds it, from this forcescale-web's key directory.
                #expect(example.command.contains("Authorization: Bearer $(cat /run/forcescale-web/read-key)"), "\(block.place): \(example.command)")
                let command = example.command.replacingOccurrences(of: "127.0.0.1:19385", with: "127.0.0.1:\(web.port)")
                    .replacingOccurrences(of: "/run/forcescale-web/", with: web.keyDirectory.path + "/")
                try session.run(Example(command: command, lines: example.lines))
            }
        }
        #expect(web.child.isRunning)
    }

    /// forcescaled(8)'s protocol by hand: the greeting is the first line a client gets.
    @Test func theGreetingIsWhatItShows() throws {
        let block = try #require(try Self.blocks("greeting").first)
        let example = try #require(block.examples.first)
        #expect(example.command.hasPrefix("nc -U "))
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("letter.events"), directory: directory)
        defer { daemon.cleanUp() }
        let client = try RawClient(path: daemon.socketPath)
        #expect(client.readLine() == example.lines.first)
    }
}

/// docs/weighing.md's examples (and the README's), run against the recordings of
/// docs/examples they were made with: a finger resting on the demo pad with 45 raw units
/// added (finger.events, finger-lifted.events), and bench/calibration's synthetic power-law
/// pad with a 2 € coin, 50 and 100 ml of water and a 250 g object (pad.events). Each
/// command is run as the guide's reader runs it, once the weight is on the pad, on a terminal
/// (script(1)). Which half second of a resting weight a command measures depends on when it
/// runs, so the lines must have the shapes shown (numbers and their signs may differ by the
/// noise), and the weight added by `weigh --tare-first`, whose windows both rest still, must
/// be exactly the one shown.
@Suite struct WeighingGuideTests {
    /// The shape of a line, its numbers and their signs aside.
    /// The line with every run of digits made 0; a raw pressure, a mean printed in its
    /// shortest form (1083, 1082.4, 1082.43), made 0 whole.
    static func shape(_ line: String) -> String {
        line.replacingOccurrences(of: "raw pressure [0-9.]+", with: "raw pressure 0", options: .regularExpression)
            .replacingOccurrences(of: "[-+]?[0-9]+", with: "0", options: .regularExpression)
    }

    /// Runs `forcescale ARGUMENTS --socket SOCKET` on a pseudo-terminal.
    static func onTerminal(_ command: String, socket: String) throws -> [String] {
        try onTerminal(command + " --socket '\(socket)'")
    }

    /// Runs a shell command line on a pseudo-terminal (script(1)), the programs under test
    /// first on PATH, and returns the lines the terminal shows at the end.
    static func onTerminal(_ line: String) throws -> [String] {
        var environment = DocumentedExamplesTests.environment
        environment["TERM"] = "dumb"
        let result = try run("/usr/bin/script", ["-q", "-e", "-c", line, "/dev/null"], environment: environment)
        // What the terminal shows at the end: a line redrawn in place (carriage return,
        // erase to the end) shows only its last text.
        // A terminal ends lines with "\r\n" (one Character to Swift: split after replacing).
        return result.stdout.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n").map { line in
            String(line.split(separator: "\r", omittingEmptySubsequences: false).last ?? "")
                .replacingOccurrences(of: "\u{1B}[K", with: "")
        }.filter { !$0.isEmpty }
    }

    @Test func theGuidesCharacterizationPrintsExactlyWhatItShows() throws {
        let blocks = try DocumentedExamplesTests.blocks("characterize")
        let block = try #require(blocks.first)
        #expect(blocks.count == 1)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for example in block.examples {
            let result = try DocumentedExamplesTests.shell(example.command, in: directory)
            #expect(result.status == 0, "\(example.command): \(result.stdout)")
            let shown = example.lines.joined(separator: "\n").trimmingCharacters(in: .newlines)
            #expect(result.stdout.trimmingCharacters(in: .newlines) == shown, "\(example.command) printed:\n\(result.stdout)")
        }
    }

    @Test(arguments: [("weigh-tare-first", "finger.events"), ("weigh-tare-first-lifted", "finger-lifted.events"), ("weigh-grab", "finger.events")])
    func theWeighingExamplesPrintWhatTheyShow(key: String, recording: String) throws {
        let blocks = try DocumentedExamplesTests.blocks(key)
        try #require(!blocks.isEmpty)
        for block in blocks {
            let example = try #require(block.examples.first)
            #expect(block.examples.count == 1 && example.command == (key == "weigh-grab" ? "forcescale weigh --grab --tare-first" : "forcescale weigh --tare-first"), "\(block.place)")
            let directory = try CLI.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path(recording), directory: directory)
            defer { daemon.cleanUp() }
            try SteadyWeighingTests.TouchFollower(daemon).waitForTouch(1)
            let printed = try Self.onTerminal(example.command, socket: daemon.socketPath)
            let shown = example.lines.filter { !$0.isEmpty }
            #expect(printed.map(Self.shape) == shown.map(Self.shape), "\(block.place): \(example.command) printed:\n\(printed.joined(separator: "\n"))")
            if key != "weigh-tare-first-lifted" { #expect(printed.last == shown.last, "\(block.place): the weight added, exactly: \(printed)") }
        }
    }

    @Test func theGuidesCalibrationExamplesPrintWhatTheyShow() throws {
        let block = try #require(try DocumentedExamplesTests.blocks("calibration").first)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: ExampleRecordingTests.path("pad.events"), directory: directory)
        defer { daemon.cleanUp() }
        let follower = try SteadyWeighingTests.TouchFollower(daemon)
        var touch = 0
        for example in block.examples {
            // Each weight goes on before its command; --show follows the last of them.
            if example.command.hasPrefix("forcescale calibrate --grams") || example.command == "forcescale weigh" {
                touch += 1
                follower.waitForTouch(touch)
            }
            let printed = try Self.onTerminal(example.command, socket: daemon.socketPath)
            let shown = example.lines.filter { !$0.isEmpty }
            #expect(printed.map(Self.shape) == shown.map(Self.shape), "\(example.command) printed:\n\(printed.joined(separator: "\n"))")
        }
        #expect(touch == 4)
    }
}
