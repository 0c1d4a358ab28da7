import Foundation
import Testing

/// Every shared recording replayed by the real binary, compared with a reviewed golden file
/// (gpsd's .log/.chk way) and checked against what the raw file itself says.
@Suite struct GoldenReplayTests {
    /// The replayable recordings: single files, and the events halves of split pairs (whose
    /// .desc is found beside them). Description-only files are checked separately.
    static let recordings = [
        "touchpads/CyPS2 Cypress Trackpad.two_finger_press.events",
        "touchpads/CyPS2 Cypress Trackpad.three_finger_press.events",
        "touchpads/bcm5974.three-finger-click.events",
        "touchpads/SynPS2 Synaptics TouchPad.events",
        "touchpads/AlpsPS2-ALPS-DualPoint-TouchPad.events",
        "tablets/Wacom Cintiq 13HD.events",
        "tablets/Wacom Cintiq 12WX.events",
        "tablets/Wacom Intuos4 6x9.stylus-drag.events",
    ]
    static let descriptionsOnly = ["touchpads/Logitech Rechargeable Touchpad T650.desc"]

    static func goldenURL(_ recording: String) -> URL {
        CLI.goldenDirectory.appendingPathComponent(recording.replacingOccurrences(of: "/", with: "__") + ".jsonl")
    }

    @Test func everySharedRecordingIsCovered() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: CLI.recordings.path)
            .filter { $0.hasSuffix(".events") || $0.hasSuffix(".desc") }
        #expect(!files.isEmpty, "no recordings at \(CLI.recordings.path); set FORCESCALE_RECORDINGS")
        let pairedDescriptions = Set(Self.recordings.compactMap { recording -> String? in
            let stem = recording.split(separator: ".").first.map(String.init) ?? recording
            return files.contains(stem + ".desc") ? stem + ".desc" : nil
        })
        for file in files {
            #expect(Self.recordings.contains(file) || Self.descriptionsOnly.contains(file) || pairedDescriptions.contains(file),
                    "\(file) has no golden test")
        }
    }

    @Test(arguments: recordings)
    func replayMatchesGolden(recording: String) throws {
        let result = try CLI.run(["replay", "--json", CLI.recordings.appendingPathComponent(recording).path])
        #expect(result.status == 0, "\(result.stderr)")
        let golden = Self.goldenURL(recording)
        if ProcessInfo.processInfo.environment["FORCESCALE_UPDATE_GOLDEN"] == "1" {
            try result.stdout.write(to: golden, atomically: true, encoding: .utf8)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(result.stdout == expected, "replay of \(recording) differs from \(golden.lastPathComponent); if the change is intended, regenerate with FORCESCALE_UPDATE_GOLDEN=1 and review the diff")
    }

    /// The definition of done, checked on the output against the raw file.
    @Test(arguments: recordings)
    func replayKeepsTheRules(recording: String) throws {
        let url = CLI.recordings.appendingPathComponent(recording)
        let oracle = try Self.oracle(for: url)
        let result = try CLI.run(["replay", "--json", url.path])
        let messages = try result.stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        let readings = messages.filter { $0["class"] as? String == "READING" }
        let peaks = messages.filter { $0["class"] as? String == "PEAK" }
        #expect(!readings.isEmpty)

        var lastTime: Double?
        var touch: [(time: Double, raw: Int)] = []
        for reading in readings {
            let raw = reading["raw"] as! Int, contacts = reading["contacts"] as! Int
            let time = reading["time"] as! Double, grams = reading["grams"] as! Double
            let settled = reading["settled_grams"] as? Double
            #expect((settled != nil) == (reading["stable"] as! Bool), "\(recording) at \(time): settled grams exactly when stable")
            if contacts == 0 {
                #expect(grams == 0 && raw == oracle.minimum)
                lastTime = nil
                touch = []
                continue
            }
            // Grams are the model applied to raw.
            #expect(grams == oracle.expectedGrams(raw: raw), "\(recording) at \(time): raw \(raw)")
            // A settled weight is that of a mean of the stability window's pressure: within
            // what the touch's readings of the last 500 ms span, a raw unit either way (frames
            // between readings are not seen here).
            touch.append((time, raw))
            if let settled {
                let recent = touch.filter { $0.time >= time - 0.5 - 1e-7 }.map(\.raw)
                let low = oracle.expectedGrams(raw: recent.min()! - 1), high = oracle.expectedGrams(raw: recent.max()! + 1)
                #expect(settled >= low && settled <= high, "\(recording) at \(time): settled \(settled) g outside \(low)…\(high) g")
            }
            #expect(reading["saturated"] as! Bool == (raw >= oracle.maximum))
            // At least 10 ms between the readings of one touch (times have 6 decimals; allow float slack).
            if let lastTime { #expect(time - lastTime >= 0.010 - 1e-7, "\(recording): gap at \(time)") }
            lastTime = time
        }
        // A zero reading at every release.
        #expect(readings.filter { $0["contacts"] as! Int == 0 }.count == oracle.releases)
        // Peaks only at the maximum, and only in recordings that reach it.
        #expect(peaks.allSatisfy { ($0["raw"] as! Int) >= oracle.maximum })
        #expect(peaks.isEmpty == !oracle.reachesMaximum)
    }

    /// With every frame let through, each PEAK sits exactly on the first frame of a press
    /// that reaches the maximum after being re-armed (below 95 % or lifted).
    @Test(arguments: recordings)
    func peaksSitExactlyWhereRawReachesMaximum(recording: String) throws {
        let url = CLI.recordings.appendingPathComponent(recording)
        let oracle = try Self.oracle(for: url)
        let result = try CLI.run(["replay", "--json", "--interval-ms", "0", url.path])
        var armed = true
        var expectedPeakTimes: [String] = []
        var peakTimes: [String] = []
        for line in result.stdout.split(separator: "\n") {
            let fields = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let time = String(line.split(separator: "\"time\":")[1].prefix { $0 != "," })
            if fields["class"] as? String == "PEAK" { peakTimes.append(time); continue }
            let raw = fields["raw"] as! Int
            let force = Double(raw - oracle.minimum) / Double(oracle.maximum - oracle.minimum)
            if fields["contacts"] as! Int == 0 || force < 0.95 { armed = true }
            if armed, fields["contacts"] as! Int > 0, raw >= oracle.maximum {
                expectedPeakTimes.append(time)
                armed = false
            }
        }
        #expect(peakTimes == expectedPeakTimes)
    }

    @Test func splitPairGivenExplicitlyEqualsTheFoundPair() throws {
        let events = CLI.recordings.appendingPathComponent("touchpads/SynPS2 Synaptics TouchPad.events").path
        let description = CLI.recordings.appendingPathComponent("touchpads/SynPS2 Synaptics TouchPad.desc").path
        let found = try CLI.run(["replay", "--json", events])
        let explicit = try CLI.run(["replay", "--json", description, events])
        #expect(explicit.status == 0)
        #expect(explicit.stdout == found.stdout)
    }

    /// A description alone has nothing to replay, and says so (status 65) rather than
    /// printing the device's header as if it had played.
    @Test(arguments: descriptionsOnly)
    func descriptionAloneIsRefusedForHavingNoEvents(recording: String) throws {
        let path = CLI.recordings.appendingPathComponent(recording).path
        let result = try CLI.run(["replay", path])
        #expect(result.status == 65)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "error: \(path): a device description without any event, so there is nothing to replay; give the events file beside it too: forcescale replay '\(path)' EVENTS-FILE\n")
    }

    static func oracle(for url: URL) throws -> RecordingOracle {
        let events = try String(contentsOf: url, encoding: .utf8)
        let path = url.path
        let stem = String(path[..<(path.range(of: ".", options: .backwards, range: path.range(of: "/", options: .backwards)!.upperBound..<path.endIndex)!.lowerBound)])
        var description = events
        for candidate in [stem + ".desc", String(stem.split(separator: ".").first ?? "") + ".desc"] where FileManager.default.fileExists(atPath: candidate) {
            description = try String(contentsOfFile: candidate, encoding: .utf8)
        }
        return RecordingOracle(description: description, events: events)
    }
}
