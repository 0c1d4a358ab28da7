import Foundation
import Glibc
import TestWaiting
import Testing

/// The README's runnable examples, run, so that they stay true: each `$ command` of its code
/// blocks and the lines shown after it.
///
/// - Commands that need nothing but the recordings (`replay`, `demo`) must print every line
///   shown, in order (`...` stands for lines left out).
/// - The session against the demo's daemon (`forcescaled --replay … --loop`, then `status`,
///   `weigh`, `tare`) is run on a daemon of its own; since its numbers depend on the moment
///   (uptime, which weight rests), each line must have the shown line's shape: the same text
///   with every number in its place.
@Suite struct DocumentedExamplesTests {
    /// A code block's commands, each with the lines shown after it.
    struct Example {
        var command: String
        var lines: [String]
    }

    /// The examples of every fenced block of a Markdown file that starts with `$ `.
    static func examples(in file: String) throws -> [[Example]] {
        let text = try String(contentsOf: CLI.packageRoot.appendingPathComponent(file), encoding: .utf8)
        var blocks: [[Example]] = []
        var current: [Example]?
        for line in text.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                if let block = current {
                    if !block.isEmpty { blocks.append(block) }
                    current = nil
                } else {
                    current = []
                }
                continue
            }
            guard current != nil else { continue }
            if line.hasPrefix("$ ") {
                current!.append(Example(command: String(line.dropFirst(2)), lines: []))
            } else if !current!.isEmpty {
                current![current!.count - 1].lines.append(line)
            } else {
                // A block that does not start with a command is not a runnable example.
                current = nil
            }
        }
        return blocks
    }

    /// Runs a shell command in the package root with the programs under test first on PATH.
    static func shell(_ command: String) throws -> ProcessResult {
        try run("/bin/sh", ["-c", command], environment: [
            "PATH": CLI.binDirectory.path + ":/usr/local/bin:/usr/bin:/bin", "NO_COLOR": "1",
        ])
    }

    /// The line with every number as `0`: "up 2.0 s" and "up 13.25 s" have one shape.
    static func shape(_ line: String) -> String {
        line.replacingOccurrences(of: "[0-9]+", with: "0", options: .regularExpression)
    }

    @Test func theReadmesReplayAndDemoExamplesPrintWhatTheyShow() throws {
        let offline = try Self.examples(in: "README.md").flatMap { $0 }.filter {
            $0.command.hasPrefix("forcescale replay") || $0.command.hasPrefix("forcescale demo --fast")
        }
        #expect(offline.count >= 3, "the README's replay and demo examples: \(offline.map(\.command))")
        for example in offline {
            let result = try Self.shell("cd '\(CLI.packageRoot.path)' && " + example.command)
            #expect(result.status == 0, "\(example.command): \(result.stderr)")
            var output = result.stdout.components(separatedBy: "\n")[...]
            for shown in example.lines where shown != "..." && !shown.trimmingCharacters(in: .whitespaces).hasPrefix("...") {
                guard let index = output.firstIndex(of: shown) else {
                    Issue.record("\(example.command) did not print \(shown.debugDescription) where the README shows it")
                    break
                }
                output = output[(index + 1)...]
            }
        }
    }

    @Test func theReadmesDaemonSessionPrintsWhatItShows() throws {
        let session = try #require(try Self.examples(in: "README.md").first { $0.contains { $0.command.hasPrefix("forcescaled --replay") } })
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let here = directory.path
        func local(_ text: String) -> String { text.replacingOccurrences(of: "/tmp/demo", with: "\(here)/demo") }
        var daemon: ChildProcess?
        defer { daemon?.kill() }
        for example in session {
            let command = local(example.command)
            let expected = example.lines.map(local)
            if command.hasPrefix("forcescaled ") {
                var arguments = command.dropFirst("forcescaled ".count).components(separatedBy: " ")
                if arguments.last == "&" { arguments.removeLast() }
                daemon = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescaled").path,
                                          arguments + ["--state-dir", "\(here)/state"])
                try waitUntilListening(daemon!, on: "\(here)/demo.sock")
                var logged = daemon!.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }[...]
                var shown = expected[...]
                // The README's daemon finds no configuration file in /etc; a machine with
                // one logs what it holds instead.
                if FileManager.default.fileExists(atPath: "/etc/forcescale/forcescale.conf") {
                    logged = logged.dropFirst()
                    shown = shown.dropFirst()
                }
                #expect(logged.map(Self.shape) == shown.map(Self.shape), "\(command)")
                continue
            }
            let result = try Self.shell(command)
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let printed = result.stdout.components(separatedBy: "\n").dropLast()
            #expect(printed.map(Self.shape) == expected.map(Self.shape), "\(command) printed:\n\(result.stdout)")
        }
        #expect(daemon != nil, "the session starts a daemon")
    }
}

/// docs/weighing.md's examples, run against the recordings they were made with: a finger
/// resting on the demo pad with 45 raw units added (AddedWeightTests' recording), and the
/// bench's synthetic power-law pad with a 2 € coin, 50 and 100 ml of water and a 250 g
/// object (`forcescale-calibration-bench record power-pad-4095 … 3 3 1.5 8.5 50 100 250`).
/// Each command is run as the guide's reader runs it, once the weight is on the pad, on a
/// terminal (script(1)), and must print lines of the shapes shown (numbers and their signs
/// may differ by the noise). `forcescale devices` is left out: it lists this machine's
/// devices (the guide shows virtual copies of real ones in the VM).
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
        let arguments = command.dropFirst("forcescale ".count)
        let line = "'\(CLI.binDirectory.appendingPathComponent("forcescale").path)' \(arguments) --socket '\(socket)'"
        let result = try run("/usr/bin/script", ["-q", "-e", "-c", line, "/dev/null"], environment: ["NO_COLOR": "1", "TERM": "dumb"])
        // What the terminal shows at the end: a line redrawn in place (carriage return,
        // erase to the end) shows only its last text.
        // A terminal ends lines with "\r\n" (one Character to Swift: split after replacing).
        return result.stdout.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n").map { line in
            String(line.split(separator: "\r", omittingEmptySubsequences: false).last ?? "")
                .replacingOccurrences(of: "\u{1B}[K", with: "")
        }.filter { !$0.isEmpty }
    }

    static func blocks(using command: String) throws -> [[DocumentedExamplesTests.Example]] {
        try DocumentedExamplesTests.examples(in: "docs/weighing.md").filter { $0.contains { $0.command.hasPrefix(command) } }
    }

    @Test func theGuidesCharacterizationPrintsExactlyWhatItShows() throws {
        let blocks = try Self.blocks(using: "forcescale characterize")
        let block = try #require(blocks.first)
        #expect(blocks.count == 1)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        for example in block {
            let result = try DocumentedExamplesTests.shell("cd '\(directory.path)' && \(example.command)")
            #expect(result.status == 0, "\(example.command): \(result.stderr)")
            let shown = example.lines.joined(separator: "\n").trimmingCharacters(in: .newlines)
            #expect(result.stdout.trimmingCharacters(in: .newlines) == shown, "\(example.command) printed:\n\(result.stdout)")
        }
    }

    @Test func theGuidesWeighingExamplesPrintWhatTheyShow() throws {
        let blocks = try Self.blocks(using: "forcescale weigh --tare-first")
        #expect(blocks.count == 2, "a weighing and a lifted contact")
        for (block, ending) in zip(blocks, [AddedWeightTests.Ending.settles, .liftedEarly]) {
            let example = try #require(block.first)
            let directory = try CLI.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let recording = try AddedWeightTests.recording("finger", adding: 45, ending: ending, in: directory)
            let daemon = try DaemonUnderTest(recording: recording, directory: directory)
            defer { daemon.cleanUp() }
            try SteadyWeighingTests.TouchFollower(daemon).waitForTouch(1)
            let printed = try Self.onTerminal(example.command, socket: daemon.socketPath)
            let shown = example.lines.filter { !$0.isEmpty }
            #expect(printed.map(Self.shape) == shown.map(Self.shape), "\(example.command) printed:\n\(printed.joined(separator: "\n"))")
            if ending == .settles { #expect(printed.last == shown.last, "the weight added, exactly: \(printed)") }
        }
    }

    @Test func theGuidesCalibrationExamplesPrintWhatTheyShow() throws {
        let block = try #require(try Self.blocks(using: "forcescale calibrate --grams").first)
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("pad.events").path
        let made = try run(CLI.binDirectory.appendingPathComponent("forcescale-calibration-bench").path,
                           ["record", "power-pad-4095", path, "3", "3", "1.5", "8.5", "50", "100", "250"])
        #expect(made.status == 0, "\(made.stderr)")
        let daemon = try DaemonUnderTest(recording: path, directory: directory)
        defer { daemon.cleanUp() }
        let follower = try SteadyWeighingTests.TouchFollower(daemon)
        var touch = 0
        for example in block {
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
