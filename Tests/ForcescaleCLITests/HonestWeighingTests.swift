import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// What forcescale says when it cannot know the weight, through the daemon as a person uses
/// it: a pad pressed to the top of its range gives a lower bound, never a weight; an object
/// that comes as a second contact on a pad that weighs its first is named, with the way out.
@Suite struct HonestWeighingTests {
    /// `weigh` of an object that saturates the demo's 0–255 pad prints the lower bound, says
    /// why on standard error and exits 3; `--json` keeps the READING's number and flag.
    @Test func aSaturatedWeightIsALowerBoundWithAStatusOfItsOwn() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // 700 g on a pad whose top is 400 g: every frame at 255 whatever the noise.
        let recording = try SteadyWeighingTests.recording("coarse-pad-255", ["700"], in: directory)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory, arguments: ["--log"])
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        let follower = try SteadyWeighingTests.TouchFollower(daemon)
        follower.waitForTouch(1)
        let weigh = try forcescale(["weigh", "--timeout", "30"] + socket)
        #expect(weigh.status == 3, "\(weigh.stdout) \(weigh.stderr)")
        #expect(weigh.stdout == "at least 385.0 g (saturated)\n", "\(weigh.stdout)")
        #expect(weigh.stderr.contains("error: the pad was saturated") && weigh.stderr.contains("weigh a lighter object"), "\(weigh.stderr)")
        let json = try forcescale(["weigh", "--json", "--timeout", "30"] + socket)
        #expect(json.status == 3, "\(json.stderr)")
        let reading = try JSONValue.parse(json.stdout.trimmingCharacters(in: .newlines))
        #expect(reading["saturated"]?.boolValue == true && reading.number("grams") == 385, "\(json.stdout)")

        // The force log's session: its stable weight and its peak are lower bounds, marked.
        let logPath = daemon.stateDirectory + "/log.sqlite"
        let ended = try waitForValue("the saturated session to end in the log", every: 0.2) { () -> JSONValue? in
            guard FileManager.default.fileExists(atPath: logPath) else { return nil }
            let listed = try forcescale(["log", "sessions", "--json", "--db", logPath])
            return try listed.stdout.split(separator: "\n").map { try JSONValue.parse(String($0)) }.first { $0["ended"] != nil }
        }
        #expect(ended["stable_saturated"]?.boolValue == true && ended["peak_saturated"]?.boolValue == true, "\(ended)")
        let table = try forcescale(["log", "sessions", "--db", logPath])
        #expect(table.stdout.contains(">=385.0") && table.stdout.contains(">= saturated: the pad was at the top of its range"), "\(table.stdout)")
        let plot = try forcescale(["log", "plot", "--session", String(try #require(ended.number("session").map { Int($0) })), "--output", "-", "--db", logPath])
        #expect(plot.stdout.contains("stable at least 385.0 g (saturated)"), "\(plot.stdout.prefix(400))")
    }

    /// `weigh --tare-first` of an object that takes the pad to its top: what was added is a
    /// lower bound, said so, with status 3; `--json` carries `"saturated":true`.
    @Test func aSaturatedAdditionIsALowerBound() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The contact at raw 40, the object taking it past 255.
        let recording = try AddedWeightTests.recording("saturating", adding: 230, in: directory)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory)
        defer { daemon.cleanUp() }
        try SteadyWeighingTests.TouchFollower(daemon).waitForTouch(1)
        let weigh = try forcescale(["weigh", "--tare-first", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(weigh.status == 3, "\(weigh.stdout) \(weigh.stderr)")
        let words = weigh.stdout.split(separator: " ")
        #expect(weigh.stdout.hasPrefix("at least ") && weigh.stdout.hasSuffix(" g (saturated) added\n") && !weigh.stdout.contains("±"), "\(weigh.stdout)")
        // The contact weighs 40 units (60.4 g), the top 385 g: at least the difference.
        let grams = try #require(words.count > 2 ? Double(words[2]) : nil, "\(weigh.stdout)")
        #expect(abs(grams - (385 - 40 * 385.0 / 255)) < 3, "\(weigh.stdout)")

        try SteadyWeighingTests.TouchFollower(daemon, skippingATouchInProgress: true).waitForTouch(1)
        let json = try forcescale(["weigh", "--tare-first", "--json", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(json.status == 3, "\(json.stderr)")
        let line = try JSONValue.parse(json.stdout.trimmingCharacters(in: .newlines))
        #expect(line["class"]?.stringValue == "ADDED" && line["saturated"]?.boolValue == true && line.number("grams") != nil, "\(json.stdout)")
    }

    /// A Synaptics touchpad (its description from the shared recordings) with a finger
    /// resting at raw 40, then an object coming as a second contact at raw 100 while the first
    /// stays: a pad on a kernel that does not mark it a pressure pad. Weighing the first
    /// contact only, `weigh --tare-first` names the second contact and the ways out instead of
    /// "keep it still"; served with `--contacts sum`, it weighs the object.
    @Test func anObjectThatComesAsASecondContactIsNamed() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try Self.secondContactRecording(in: directory)

        let primary = try DaemonUnderTest(recording: recording, directory: directory.appendingPathComponent("primary"))
        defer { primary.cleanUp() }
        try SteadyWeighingTests.TouchFollower(primary).waitForTouch(1)
        let weigh = try forcescale(["weigh", "--tare-first", "--timeout", "8", "--socket", primary.socketPath])
        #expect(weigh.status == 1, "\(weigh.stdout) \(weigh.stderr)")
        #expect(weigh.stdout.isEmpty)
        let advice = "the pad reports the object as a second contact, and forcescaled weighs only the first contact of second-contact.events: the object is not counted"
        #expect(weigh.stderr.contains("warning: " + advice), "\(weigh.stderr)")
        #expect(weigh.stderr.contains("error: nothing was added to the first contact within 8 s: " + advice), "\(weigh.stderr)")
        #expect(weigh.stderr.contains("--contacts sum") && weigh.stderr.contains("6.18"), "\(weigh.stderr)")
        #expect(!weigh.stderr.contains("keep it still"), "\(weigh.stderr)")

        let summed = try DaemonUnderTest(recording: recording, directory: directory.appendingPathComponent("sum"), arguments: ["--contacts", "sum"])
        defer { summed.cleanUp() }
        try SteadyWeighingTests.TouchFollower(summed).waitForTouch(1)
        let weighed = try forcescale(["weigh", "--tare-first", "--timeout", "30", "--socket", summed.socketPath])
        #expect(weighed.status == 0, "\(weighed.stderr)")
        #expect(!weighed.stderr.contains("second contact"), "\(weighed.stderr)")
        let grams = try #require(Double(weighed.stdout.split(separator: " ").first ?? ""), "\(weighed.stdout)")
        #expect(abs(grams - 100 * 385.0 / 255) < 3, "\(weighed.stdout)")
    }

    /// The recording of that test: 1 s of nothing, the finger at 40 ± 1 for 3 s, then the
    /// object in slot 1 landing over 0.3 s to 100 ± 1 and resting for 12 s beside it; both
    /// lifted, and 1.5 s of nothing. 80 frames a second, as a PS/2 pad.
    static func secondContactRecording(in directory: URL) throws -> String {
        let description = try String(contentsOf: CLI.recordings.appendingPathComponent("touchpads/SynPS2 Synaptics TouchPad.desc"), encoding: .utf8)
        var text = description.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("E:") && !$0.isEmpty }
            .joined(separator: "\n") + "\n"
        let noise = [0, 1, -1, 0, 1, 0, -1, -1, 1, 0, 0, -1]
        var time = 1_000_000
        func event(_ type: String, _ code: String, _ value: Int) { text += "E: \(DaemonRecordings.stamp(time)) \(type) \(code) \(value)\n" }
        func sync() { event("0000", "0000", 0) }
        sync()
        time += 1_000_000
        // The finger: slot 0, BTN_TOUCH and one finger.
        event("0003", "002f", 0); event("0003", "0039", 1); event("0003", "0035", 3000); event("0003", "0036", 3000); event("0003", "003a", 40)
        event("0001", "014a", 1); event("0001", "0145", 1); event("0003", "0000", 3000); event("0003", "0001", 3000); event("0003", "0018", 40)
        sync()
        let period = 12_500, fingerFrames = 240, objectFrames = 960, landing = 24
        for frame in 1..<(fingerFrames + objectFrames) {
            time += period
            let finger = 40 + noise[frame % noise.count]
            event("0003", "002f", 0); event("0003", "003a", finger)
            if frame >= fingerFrames {
                let index = frame - fingerFrames
                let load = index < landing ? Double(index + 1) / Double(landing) : 1
                let object = Int((100 * load).rounded()) + noise[(frame + 5) % noise.count]
                event("0003", "002f", 1)
                if index == 0 {
                    event("0003", "0039", 2); event("0003", "0035", 4000); event("0003", "0036", 2000)
                    event("0001", "0145", 0); event("0001", "014d", 1)
                }
                event("0003", "003a", object)
            }
            event("0003", "0018", finger)
            sync()
        }
        time += period
        event("0003", "002f", 0); event("0003", "0039", -1); event("0003", "002f", 1); event("0003", "0039", -1)
        event("0001", "014a", 0); event("0001", "014d", 0); event("0003", "0018", 0)
        sync()
        time += 1_500_000
        sync()
        let path = directory.appendingPathComponent("second-contact.events").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}
