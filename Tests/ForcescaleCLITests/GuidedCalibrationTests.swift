import Foundation
import Glibc
import Testing

/// `forcescale calibrate --guided` end to end: forcescaled serves a recording of four
/// weights put on a pad one after another, and the guided client runs on a pseudo-terminal
/// (python3's pty module), answering its questions as a person would.
@Suite(.serialized) struct GuidedCalibrationTests {
    /// Raw pressure of each weight on the demo's 0–255 pad: a curve that bends as pads do,
    /// `g = 300·(raw/255)^1.5`, rounded to whole units.
    static let holds: [(grams: Double, raw: Int)] = [(20, 42), (50, 77), (100, 123), (200, 195)]

    /// The demo pad with nothing for 5 s (time for the client to connect and ask), then each
    /// weight for its seconds (2.5 s unless said): put down with an overshoot, resting with a
    /// unit of noise, lifted; 1.2 s between weights; then 40 s of nothing so that the device
    /// stays open to the end.
    static func recording(
        in directory: URL, holds: [(grams: Double, raw: Int, seconds: Double)] = holds.map { ($0.grams, $0.raw, 2.5) }
    ) throws -> String {
        let demo = try String(contentsOfFile: try DaemonRecordings.demo(in: directory), encoding: .utf8)
        var text = demo.split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { !$0.hasPrefix("E:") }.joined(separator: "\n") + "\n"
        func stamp(_ microseconds: Int) -> String {
            "\(microseconds / 1_000_000)." + String(String(microseconds % 1_000_000 + 1_000_000).dropFirst())
        }
        // The replay starts at the first event: an empty frame, so that the lead is kept.
        text += "E: \(stamp(1_000_000)) 0000 0000 0\n"
        var start = 6_000_000
        for hold in holds {
            text += "E: \(stamp(start)) 0001 014a 1\nE: \(stamp(start)) 0001 0145 1\nE: \(stamp(start)) 0003 0000 400\nE: \(stamp(start)) 0003 0001 450\n"
            let frames = Int((hold.seconds * 100).rounded())
            for frame in 0..<frames {
                let time = stamp(start + frame * 10_000)
                let landing = frame < 15 ? Double(frame + 1) / 15 * 1.1 : frame < 30 ? 1.1 - 0.1 * Double(frame - 14) / 15 : 1
                let raw = Int((Double(hold.raw) * landing).rounded()) + [0, 1, 1, 0][frame % 4]
                text += "E: \(time) 0003 0018 \(raw)\nE: \(time) 0000 0000 0\n"
            }
            let release = stamp(start + frames * 10_000)
            text += "E: \(release) 0001 014a 0\nE: \(release) 0001 0145 0\nE: \(release) 0003 0018 0\nE: \(release) 0000 0000 0\n"
            start += frames * 10_000 + 1_200_000
        }
        text += "E: \(stamp(start + 40_000_000)) 0000 0000 0\n"
        let path = directory.appendingPathComponent("holds.events").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Runs `forcescale ARGUMENTS` on a pseudo-terminal and answers: each time the text of
    /// the next step appears in its output, that step's answer is typed with Enter.
    /// - Returns: The exit status and everything it printed.
    static func onTerminal(_ arguments: [String], answering steps: [(expect: String, answer: String)]) throws -> (status: Int32, transcript: String) {
        let driver = """
            import json, os, pty, select, sys, time
            steps = json.loads(sys.argv[1])
            pid, fd = pty.fork()
            if pid == 0:
                os.execv(sys.argv[2], sys.argv[2:])
            seen, done, deadline = b"", 0, time.monotonic() + 100
            while time.monotonic() < deadline:
                ready, _, _ = select.select([fd], [], [], 0.05)
                if ready:
                    try:
                        chunk = os.read(fd, 4096)
                    except OSError:
                        break
                    if not chunk:
                        break
                    seen += chunk
                if done < len(steps) and steps[done][0].encode() in seen.split(b"\\x00")[-1]:
                    os.write(fd, steps[done][1].encode() + b"\\r")
                    seen += b"\\x00"
                    done += 1
            else:
                os.kill(pid, 9)
            _, status = os.waitpid(pid, 0)
            sys.stdout.write(seen.replace(b"\\x00", b"").decode("utf-8", "replace"))
            sys.stdout.write("\\nEXIT %d STEPS %d\\n" % (os.waitstatus_to_exitcode(status), done))
            """
        let steps = try String(data: JSONSerialization.data(withJSONObject: steps.map { [$0.expect, $0.answer] }), encoding: .utf8)!
        let result = try run("/usr/bin/env", ["python3", "-c", driver, steps, CLI.binDirectory.appendingPathComponent("forcescale").path] + arguments,
                             environment: ["PATH": "/usr/local/bin:/usr/bin:/bin:" + (ProcessInfo.processInfo.environment["PATH"] ?? "")],
                             timeout: 150)
        let last = result.stdout.split(separator: "\n").last ?? ""
        let status = last.hasPrefix("EXIT ") ? Int32(last.split(separator: " ")[1]) ?? -1 : -1
        return (status, result.stdout)
    }

    @Test func fourWeightsAreTakenShownAndSavedWhenAgreed() throws {
        let directory = try CLI.temporaryDirectory()
        let daemon = try DaemonUnderTest(recording: try Self.recording(in: directory))
        defer {
            daemon.cleanUp()
            try? FileManager.default.removeItem(at: directory)
        }
        let (status, transcript) = try Self.onTerminal(
            ["calibrate", "--guided", "--weights", "20,50,100,200", "--socket", daemon.socketPath],
            answering: [("[1/4] Put the 20 g", ""), ("[2/4] Put the 50 g", ""), ("[3/4] Put the 100 g", ""), ("[4/4] Put the 200 g", ""),
                        ("Save this calibration", "y")])
        #expect(status == 0, "\(transcript)")
        #expect(transcript.contains("settling ["), "a progress bar while it settles: \(transcript)")
        #expect(transcript.contains("still moving by"), "why it waits while the weight lands: \(transcript)")
        for hold in Self.holds {
            #expect(transcript.contains("took \(Int(hold.grams)) g: raw \(hold.raw)"), "the \(hold.grams) g point at about raw \(hold.raw): \(transcript)")
        }
        #expect(transcript.contains("  curve        "), "the fit is shown: \(transcript)")
        #expect(transcript.contains("leave-one-out"), "each point's residuals are shown: \(transcript)")
        #expect(transcript.contains("Saved: 4 points"), "\(transcript)")
        // No device was named: the prompt says whose calibration it is in words, not "nil".
        #expect(transcript.contains("Save this calibration for the daemon's device (it replaces the curve; the tare stays)? [y/N]"), "\(transcript)")
        #expect(!transcript.contains("nil") && !transcript.contains("Optional("), "\(transcript)")

        let state = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)
        let file = try #require(state.first { $0.hasSuffix(".json") })
        let saved = try String(contentsOfFile: daemon.stateDirectory + "/" + file, encoding: .utf8)
        #expect(saved.components(separatedBy: "\"sd\":").count == 5 && saved.components(separatedBy: "\"n\":").count == 5,
                "every point keeps its spread and count: \(saved)")
        let shown = try forcescale(["calibrate", "--show", "--json", "--socket", daemon.socketPath])
        #expect(shown.stdout.contains("\"points\":4") && shown.stdout.contains("\"model\":") && shown.stdout.contains("\"uncertainty\":"), "\(shown.stdout)")
    }

    @Test func aTypoIsNamedAndNothingIsSavedWhenDeclined() throws {
        let directory = try CLI.temporaryDirectory()
        let daemon = try DaemonUnderTest(recording: try Self.recording(in: directory))
        defer {
            daemon.cleanUp()
            try? FileManager.default.removeItem(at: directory)
        }
        // 200 typed for the 20 g weight: it presses less than 50, 100 and 200 g do.
        let (status, transcript) = try Self.onTerminal(
            ["calibrate", "--guided", "--device", "holds.events", "--socket", daemon.socketPath],
            answering: [("[1] Weight", "200"), ("[2] Weight", "50"), ("[3] Weight", "100"), ("[4] Weight", "200"), ("[5] Weight", ""),
                        ("Leave the 200 g point out?", "y"), ("Save this calibration", "n")])
        #expect(status == 1, "\(transcript)")
        #expect(transcript.contains("The 200 g point (raw 42"), "the typo is named by its weight: \(transcript)")
        #expect(transcript.contains("pressed less than 50 g, 100 g and 200 g"), "\(transcript)")
        #expect(transcript.contains("Nothing was saved"), "\(transcript)")
        // The device as the person named it.
        #expect(transcript.contains("Save this calibration for holds.events (it replaces"), "\(transcript)")
        #expect(!transcript.contains("Optional("), "\(transcript)")
        let shown = try forcescale(["calibrate", "--show", "--json", "--socket", daemon.socketPath])
        #expect(shown.stdout.contains("\"points\":0"), "the calibration is as it was: \(shown.stdout)")
        let state = (try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)) ?? []
        #expect(!state.contains { $0.hasSuffix(".json") }, "no calibration file: \(state)")
    }

    /// A weight lifted before it settled is asked for again, and the next touch gives its
    /// point; the end of input at a weight's prompt stops without measuring anything.
    @Test func aWeightLiftedTooSoonIsAskedForAgain() throws {
        let directory = try CLI.temporaryDirectory()
        let recording = try Self.recording(in: directory, holds: [(20, 42, 0.3), (20, 42, 2.5), (50, 77, 2.5)])
        let daemon = try DaemonUnderTest(recording: recording)
        defer {
            daemon.cleanUp()
            try? FileManager.default.removeItem(at: directory)
        }
        let (status, transcript) = try Self.onTerminal(
            ["calibrate", "--guided", "--weights", "20,50", "--socket", daemon.socketPath],
            answering: [("[1/2] Put the 20 g", ""), ("[1/2] Put again the 20 g", ""), ("[2/2] Put the 50 g", ""),
                        ("Save this calibration", "y")])
        #expect(status == 0, "\(transcript)")
        #expect(transcript.contains("The weight was lifted before it settled: nothing was taken. Try this weight again."), "\(transcript)")
        #expect(transcript.contains("took 20 g: raw 42") && transcript.contains("took 50 g: raw 77"), "\(transcript)")
        #expect(transcript.contains("Saved: 2 points"), "\(transcript)")
    }

    /// The end of input at a weight's prompt stops the calibration: nothing is measured
    /// from whatever is on the pad, nothing is saved.
    @Test func theEndOfInputAtAWeightsPromptStops() throws {
        let directory = try CLI.temporaryDirectory()
        let daemon = try DaemonUnderTest(recording: try Self.recording(in: directory))
        defer {
            daemon.cleanUp()
            try? FileManager.default.removeItem(at: directory)
        }
        let guided = try forcescale(["calibrate", "--guided", "--weights", "20,50", "--socket", daemon.socketPath])
        #expect(guided.status == 1, "\(guided.stdout) \(guided.stderr)")
        #expect(guided.stdout.contains("[1/2] Put the 20 g weight on the pad") && guided.stdout.contains("Nothing was saved"), "\(guided.stdout)")
        #expect(!guided.stdout.contains("took 20 g"), "\(guided.stdout)")
    }
}
