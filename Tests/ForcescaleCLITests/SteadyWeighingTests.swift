import Foundation
import Glibc
import ScaleCore
import ScaleProtocol
import TestWaiting
import Testing

/// Weighing and calibrating through the daemon as a person does it, on synthetic devices with
/// the noise real sensors make (at least a raw unit): recordings of known weights put on and
/// lifted off (`forcescale-calibration-bench record`: a 10 % landing overshoot, Gaussian
/// noise, quantised), served by forcescaled, driven with `forcescale weigh` and `forcescale
/// calibrate --grams`, one weight at a time.
@Suite struct SteadyWeighingTests {
    /// Writes a recording of `device` with the weights (`"G"` or `"G@SECONDS"`) in turn: 2 s
    /// of nothing, then each weight for `hold` seconds with `gap` seconds between.
    static func recording(_ device: String, _ weights: [String], hold: Double = 3, gap: Double = 1.5, in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("\(device).events").path
        let made = try run(CLI.binDirectory.appendingPathComponent("forcescale-calibration-bench").path,
                           ["record", device, path, "7", String(hold), String(gap)] + weights)
        #expect(made.status == 0, "forcescale-calibration-bench record: \(made.stderr)")
        return path
    }

    /// Follows a WATCH until touch number `number` (counted from 1 since `watcher` began
    /// watching) has begun.
    final class TouchFollower {
        let watcher: RawClient
        private(set) var touches = 0
        private var down = false

        /// - Parameter skippingATouchInProgress: Count only touches that begin after a
        ///   release, so that one already on the pad is not taken for a new one.
        init(_ daemon: DaemonUnderTest, skippingATouchInProgress: Bool = false) throws {
            down = skippingATouchInProgress
            watcher = try daemon.connect()
            #expect(watcher.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        }

        func waitForTouch(_ number: Int, sourceLocation: SourceLocation = #_sourceLocation) {
            while touches < number {
                guard let reading = watcher.nextReading(sourceLocation: sourceLocation) else { return }
                let contacts = reading.number("contacts") ?? 0
                if contacts > 0, !down { touches += 1 }
                down = contacts > 0
            }
        }
    }

    /// A resting object is weighed on noisy 0–255, 0–1023 and 0–8191 devices, where a
    /// spread of 2 g would never settle on the first.
    @Test(arguments: [("coarse-pad-255", 120.0), ("power-pen-1023", 150.0), ("log-pen-8191", 150.0)])
    func aRestingObjectIsWeighedOnNoisyDevices(device: String, grams: Double) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let daemon = try DaemonUnderTest(recording: try Self.recording(device, [String(grams)], hold: 8, in: directory), directory: directory)
        defer { daemon.cleanUp() }
        let follower = try TouchFollower(daemon)
        follower.waitForTouch(1)
        let weigh = try forcescale(["weigh", "--json", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(weigh.status == 0, "\(device): \(weigh.stderr)")
        let reading = try JSONValue.parse(weigh.stdout.trimmingCharacters(in: .newlines))
        #expect(reading["stable"]?.boolValue == true && (reading.number("contacts") ?? 0) > 0)
        // The nominal model's grams of the weight's exact raw value, give or take four
        // standard deviations of a single reading.
        let exact = try #require(Self.exactRaw(device: device, grams: grams))
        let raw = try #require(reading.number("raw"))
        #expect(abs(raw - exact.raw) <= 4 * exact.noise + 1, "\(device): raw \(raw) for \(exact.raw)")
    }

    /// `forcescale calibrate --grams G`, one weight after another as a person would (the
    /// weight put on, then the command run), in any order, on devices whose response is
    /// not their kind's usual family: each point is the weight that was on the pad, and
    /// the curve weighs a fourth object within 1 % of 385 g.
    @Test(arguments: [
        ("power-pen-1023", [20.0, 57, 180]), ("power-pen-1023", [180.0, 57, 20]), ("power-pen-1023", [57.0, 180, 20]),
        ("log-pad-1023", [20.0, 57, 180]), ("log-pad-1023", [180.0, 57, 20]), ("log-pad-1023", [57.0, 180, 20]),
    ])
    func calibrationTakesEachWeightInAnyOrder(device: String, order: [Double]) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let test = 100.0
        let recording = try Self.recording(device, (order + [test]).map { String($0) }, in: directory)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory)
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        let follower = try TouchFollower(daemon)
        for (index, grams) in order.enumerated() {
            follower.waitForTouch(index + 1)
            let stored = try forcescale(["calibrate", "--grams", DaemonFormat.plain(grams), "--timeout", "30"] + socket)
            #expect(stored.status == 0, "\(device) \(order): \(grams) g: \(stored.stderr)")
            #expect(stored.stdout.contains("Stored \(DaemonFormat.plain(grams)) g at raw pressure "), "\(stored.stdout)")
        }
        let shown = try JSONValue.parse(try forcescale(["calibrate", "--show", "--json"] + socket).stdout.trimmingCharacters(in: .newlines))
        let points = shown["curve"]?.arrayValue ?? []
        #expect(points.count == 3, "\(device) \(order): \(shown)")
        for point in points {
            let grams = try #require(point.number("grams"))
            let exact = try #require(Self.exactRaw(device: device, grams: grams))
            let raw = try #require(point.number("raw"))
            #expect(abs(raw - exact.raw) <= exact.noise + 1, "\(device) \(order): the \(grams) g point is raw \(raw), the weight's is \(exact.raw)")
        }
        follower.waitForTouch(order.count + 1)
        let weigh = try forcescale(["weigh", "--json", "--timeout", "30"] + socket)
        let reading = try JSONValue.parse(weigh.stdout.trimmingCharacters(in: .newlines))
        let weighed = try #require(reading.number("grams"), "\(weigh.stdout) \(weigh.stderr)")
        #expect(abs(weighed - test) <= 3.85, "\(device) \(order): \(weighed) g for \(test) g (\(shown))")
    }

    /// A weight lifted before it settles ends `calibrate` with the daemon's ERROR and status
    /// 1, and the next object is not taken for it.
    @Test func aWeightLiftedBeforeItSettlesIsNotStored() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try Self.recording("power-pen-1023", ["180@0.3", "20"], in: directory)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory)
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        let follower = try TouchFollower(daemon)
        follower.waitForTouch(1)
        let refused = try forcescale(["calibrate", "--grams", "180", "--timeout", "30"] + socket)
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("the weight was lifted before it settled: nothing was stored; put the 180 g weight on again"), "\(refused.stderr)")
        // The 20 g object rests after it: still no point.
        follower.waitForTouch(2)
        let shown = try forcescale(["weigh", "--timeout", "30"] + socket)
        #expect(shown.status == 0)
        let calibration = try JSONValue.parse(try forcescale(["calibrate", "--show", "--json"] + socket).stdout.trimmingCharacters(in: .newlines))
        #expect(calibration.number("points") == 0 && calibration["curve"]?.arrayValue?.isEmpty == true, "\(calibration)")
    }

    /// A weight past the heaviest calibration weight: READING says so, and `weigh` says it
    /// in words with an uncertainty grown by the square of how far past.
    @Test func aWeightPastTheHeaviestCalibrationWeightSaysSo() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = try Self.recording("power-pen-1023", ["20", "57", "300@6"], in: directory)
        let daemon = try DaemonUnderTest(recording: recording, directory: directory)
        defer { daemon.cleanUp() }
        let socket = ["--socket", daemon.socketPath]
        let follower = try TouchFollower(daemon)
        for (index, grams) in [20, 57].enumerated() {
            follower.waitForTouch(index + 1)
            let stored = try forcescale(["calibrate", "--grams", String(grams), "--timeout", "30"] + socket)
            #expect(stored.status == 0, "\(stored.stderr)")
        }
        let shown = try JSONValue.parse(try forcescale(["calibrate", "--show", "--json"] + socket).stdout.trimmingCharacters(in: .newlines))
        let uncertainty = try #require(shown.number("uncertainty"), "\(shown)")
        follower.waitForTouch(3)
        let json = try forcescale(["weigh", "--json", "--timeout", "30"] + socket)
        let reading = try JSONValue.parse(json.stdout.trimmingCharacters(in: .newlines))
        #expect(reading.number("beyond_calibration") == 57, "\(json.stdout)")
        let weigh = try forcescale(["weigh", "--timeout", "30"] + socket)
        #expect(weigh.status == 0, "\(weigh.stderr)")
        let words = weigh.stdout.components(separatedBy: " ")
        let grams = try #require(Double(words.first ?? ""), "\(weigh.stdout)")
        let quoted = String(format: "%.1f", uncertainty * (grams / 57) * (grams / 57))
        #expect(weigh.stdout.hasSuffix(" g ± \(quoted) g (beyond the heaviest calibration weight, 57 g)\n"), "\(weigh.stdout) (U \(uncertainty))")
    }

    /// The exact raw pressure of a weight on the bench's synthetic devices, and their noise.
    static func exactRaw(device: String, grams: Double) -> (raw: Double, noise: Double)? {
        switch device {
        case "coarse-pad-255": (255 * pow(grams / 400, 1 / 1.3), 1)
        case "power-pen-1023": (1023 * pow(grams / 450, 1 / 1.6), 2)
        case "log-pad-1023": (1023 * log1p(grams / 30) / log1p(450 / 30), 1)
        case "log-pen-8191": (8191 * log1p(grams / 40) / log1p(500 / 40), 3)
        default: nil
        }
    }
}

private enum DaemonFormat {
    static func plain(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
}
