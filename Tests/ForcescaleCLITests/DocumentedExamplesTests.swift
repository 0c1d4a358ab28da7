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
