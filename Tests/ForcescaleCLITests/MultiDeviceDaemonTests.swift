import Foundation
import Glibc
import ScaleProtocol
import TestWaiting
import Testing

/// forcescaled serving several devices at once, through repeated `--replay`: each recording
/// a device of its own, named after its file, with its own pipeline, tare and calibration.
@Suite(.serialized) struct MultiDeviceDaemonTests {
    /// The demo (a pad with weights resting still) and the Intuos (a pen dragged, never
    /// still), served together.
    static func demoAndIntuos() throws -> (DaemonUnderTest, demo: String) {
        let directory = try CLI.temporaryDirectory()
        let demo = try DaemonRecordings.demo(in: directory)
        return (try DaemonUnderTest(recordings: [demo, DaemonRecordings.intuos], directory: directory), "demo.events")
    }

    static let intuos = DaemonRecordings.intuosDeviceName

    /// Reads the stream until readings of every device in `names` came, or fails.
    static func readingsOfEach(_ names: Set<String>, from client: RawClient) -> [String: [JSONValue]] {
        var byDevice: [String: [JSONValue]] = [:]
        while Set(byDevice.keys) != names, byDevice.values.reduce(0, { $0 + $1.count }) < 5000 {
            guard let reading = client.nextReading() else { break }
            byDevice[reading["device"]?.stringValue ?? "(none)", default: []].append(reading)
        }
        return byDevice
    }

    @Test func twoRecordingsAreServedEachUnderItsName() throws {
        let (daemon, demo) = try Self.demoAndIntuos()
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        let byDevice = Self.readingsOfEach([demo, Self.intuos], from: client)
        #expect(Set(byDevice.keys) == [demo, Self.intuos], "readings came from \(byDevice.keys.sorted())")

        // STATUS lists both, and leaves the one-device fields out.
        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        #expect(status["device"] == nil && status["model"] == nil && status["calibration"] == nil)
        let devices = try #require(status["devices"]?.arrayValue)
        #expect(devices.map { $0["device"]?.stringValue } == [demo, Self.intuos])
        #expect(devices.map { $0["name"]?.stringValue } == ["forcescale demo pad (synthetic)", "Wacom Intuos4 6x9"])
        #expect(devices.allSatisfy { $0["model"]?.stringValue == "nominal" && $0.number("dropped_events") == 0 && $0["rumble"] == nil })
        // STATUS of one names it at the top, as with one device served.
        let one = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS","device":"\#(demo)"}"#)))
        #expect(one["device"]?.stringValue == demo && one["calibration"]?.number("points") == 0)
        #expect(one["devices"]?.arrayValue?.count == 1)

        // DEVICES marks both active.
        let listed = try JSONValue.parse(try #require(client.request(#"{"class":"DEVICES"}"#)))
        let entries = try #require(listed["devices"]?.arrayValue)
        #expect(entries.count == 2 && entries.allSatisfy { $0["active"]?.boolValue == true })

        // POLL gives the newest reading and each device's.
        let poll = try JSONValue.parse(try #require(client.request(#"{"class":"POLL"}"#)))
        #expect(Set(try #require(poll["readings"]?.arrayValue).compactMap { $0["device"]?.stringValue }) == [demo, Self.intuos])
        let pollOne = try JSONValue.parse(try #require(client.request(#"{"class":"POLL","device":"\#(Self.intuos)"}"#)))
        #expect(pollOne["reading"]?["device"]?.stringValue == Self.intuos && pollOne["readings"] == nil)
    }

    @Test func recordingsOfTheSameNameAreNumbered() throws {
        let directory = try CLI.temporaryDirectory()
        let demo = try DaemonRecordings.demo(in: directory)
        let other = directory.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        let copy = other.appendingPathComponent("demo.events").path
        try FileManager.default.copyItem(atPath: demo, toPath: copy)
        let daemon = try DaemonUnderTest(recordings: [demo, copy], directory: directory)
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH"}"#) == #"{"class":"WATCH","enable":true}"#)
        #expect(Set(Self.readingsOfEach(["demo.events", "demo.events#2"], from: client).keys) == ["demo.events", "demo.events#2"])
        #expect(daemon.stderr.contains("serving the recording \(copy) as demo.events#2"))
    }

    @Test func changesMustNameTheDeviceAndTheErrorListsThem() throws {
        let (daemon, demo) = try Self.demoAndIntuos()
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        let listing = "2 devices are served (\(demo), \(Self.intuos)): name one with --device (the request's 'device')"
        for (request, name) in [(#"{"class":"TARE"}"#, "TARE"), (#"{"class":"CALIBRATE","grams":20}"#, "CALIBRATE"),
                                (#"{"class":"CALIBRATION","reset":true}"#, "CALIBRATION")] {
            #expect(client.request(request) == #"{"class":"ERROR","message":"\#(listing)","request":"\#(name)"}"#)
        }
        #expect(client.request(#"{"class":"TARE","device":"event7"}"#)
            == #"{"class":"ERROR","message":"no device 'event7' is served (served: \#(demo), \#(Self.intuos))","request":"TARE"}"#)
        #expect(client.request(#"{"class":"WATCH","device":"event7"}"#)
            == #"{"class":"ERROR","message":"no device 'event7' is served (served: \#(demo), \#(Self.intuos))","request":"WATCH"}"#)

        // The command line prints the daemon's error and exits 1; weigh refuses likewise.
        let socket = ["--socket", daemon.socketPath]
        let tare = try forcescale(["tare"] + socket)
        #expect(tare.status == 1 && tare.stderr.contains(listing), "\(tare.status): \(tare.stderr)")
        let calibrate = try forcescale(["calibrate", "--grams", "20"] + socket)
        #expect(calibrate.status == 1 && calibrate.stderr.contains(listing), "\(calibrate.status): \(calibrate.stderr)")
        let guided = try forcescale(["calibrate", "--guided", "--weights", "20"] + socket)
        #expect(guided.status == 1 && guided.stderr.contains(listing), "\(guided.status): \(guided.stderr)")
        let weigh = try forcescale(["weigh"] + socket)
        #expect(weigh.status == 1 && weigh.stderr.contains("forcescaled serves 2 devices (\(demo), \(Self.intuos)): name the one to weigh on with --device"),
                "\(weigh.status): \(weigh.stderr)")
        // status prints every device.
        let status = try forcescale(["status"] + socket)
        #expect(status.status == 0)
        #expect(status.stdout.contains("\n  device      \(demo) (forcescale demo pad (synthetic)), nominal model\n"), "\(status.stdout)")
        #expect(status.stdout.contains("\n  device      \(Self.intuos) (Wacom Intuos4 6x9), nominal model\n"), "\(status.stdout)")
    }

    @Test func tareOneAndTheOtherIsUnchanged() throws {
        let (daemon, demo) = try Self.demoAndIntuos()
        defer { daemon.cleanUp() }
        let client = try daemon.connect()
        #expect(client.request(#"{"class":"WATCH","device":"\#(demo)"}"#) == #"{"class":"WATCH","enable":true,"device":"\#(demo)"}"#)
        // Tare the demo while a weight rests on it (a stable reading with contacts).
        try waitFor("a weight resting on the demo pad", every: 0) {
            guard let reading = client.nextReading() else { return false }
            return reading["stable"]?.boolValue == true && (reading.number("contacts") ?? 0) > 0
        }
        let tare = try forcescale(["tare", "--device", demo, "--json", "--socket", daemon.socketPath])
        #expect(tare.status == 0, "\(tare.stderr)")
        let reply = try JSONValue.parse(tare.stdout.trimmingCharacters(in: .newlines))
        #expect(reply["device"]?.stringValue == demo && (reply.number("grams") ?? 0) > 5, "\(tare.stdout)")

        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        let calibrations = try #require(status["devices"]?.arrayValue).map { $0["calibration"]?.number("tare") }
        #expect(calibrations == [reply.number("grams"), 0])

        // The Intuos's readings are still the nominal weight, untared.
        let other = try daemon.connect()
        #expect(other.request(#"{"class":"WATCH","device":"\#(Self.intuos)"}"#)?.hasPrefix(#"{"class":"WATCH""#) == true)
        var pressed = 0
        while pressed < 5, let reading = other.nextReading() {
            #expect(reading["device"]?.stringValue == Self.intuos, "a watch of one device got \(reading)")
            guard (reading.number("contacts") ?? 0) > 0 else { continue }
            pressed += 1
            let force = try #require(reading.number("force")), grams = try #require(reading.number("grams"))
            #expect(abs(grams - force * 385) <= 0.15, "the Intuos's reading \(reading) after the demo's tare")
        }
        #expect(pressed == 5)
    }

    @Test func calibrateOneAndTheOtherKeepsItsModel() throws {
        let (daemon, demo) = try Self.demoAndIntuos()
        defer { daemon.cleanUp() }
        let calibrate = try forcescale(["calibrate", "--device", demo, "--grams", "100", "--timeout", "30", "--socket", daemon.socketPath])
        #expect(calibrate.status == 0, "\(calibrate.stderr)")
        #expect(calibrate.stdout.hasSuffix(": the curve of \(demo) has 1 point.\n"), "\(calibrate.stdout)")
        let client = try daemon.connect()
        let status = try JSONValue.parse(try #require(client.request(#"{"class":"STATUS"}"#)))
        let devices = try #require(status["devices"]?.arrayValue)
        #expect(devices.map { $0["calibration"]?.number("points") } == [1, 0])
        #expect(devices.map { $0["model"]?.stringValue } == ["calibrated", "nominal"])
        // Each device keeps its own calibration file.
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory).filter { $0.hasSuffix(".json") }
        #expect(files.count == 1 && files[0] != DaemonRecordings.intuosStateFile, "\(files)")
        // The watch of one device shows only its readings; watch labels each device.
        #expect(client.request(#"{"class":"WATCH","device":"\#(Self.intuos)"}"#)?.hasPrefix(#"{"class":"WATCH""#) == true)
        for _ in 0..<20 {
            let reading = try #require(client.nextReading())
            #expect(reading["device"]?.stringValue == Self.intuos && reading["model"]?.stringValue == "nominal")
        }
    }

    @Test func watchLabelsEachDevicesReadings() throws {
        let (daemon, demo) = try Self.demoAndIntuos()
        defer { daemon.cleanUp() }
        let executable = CLI.binDirectory.appendingPathComponent("forcescale").path
        // Each label is the name the device gives itself, as the daemon's STATUS gives it,
        // then the protocol's name for it, which --device takes, in parentheses.
        let observer = try daemon.connect()
        let status = try JSONValue.parse(try #require(observer.request(#"{"class":"STATUS"}"#)))
        var names: [String: String] = [:]
        for entry in try #require(status["devices"]?.arrayValue) {
            if let device = entry["device"]?.stringValue, let name = entry["name"]?.stringValue { names[device] = name }
        }
        let demoLabel = "\(try #require(names[demo])) (\(demo))"
        let intuosLabel = "\(try #require(names[Self.intuos])) (\(Self.intuos))"
        #expect(names[demo] != demo && names[Self.intuos] != Self.intuos, "\(names)")
        let gauge = try ChildProcess(executable, ["watch", "--socket", daemon.socketPath])
        try waitFor("lines of both devices from forcescale watch", every: 0.02, saw: { "\(gauge.stdout.suffix(500)): \(gauge.stderr)" }) {
            let lines = gauge.stdout.split(separator: "\n")
            return lines.contains { $0.hasPrefix(demoLabel + " ") } && lines.contains { $0.hasPrefix(intuosLabel + " ") }
        }
        gauge.signal(SIGINT)
        let gauged = gauge.wait()
        #expect(gauged.exited && gauged.status == 0, "\(gauged.stderr)")
        let lines = gauged.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.hasPrefix(demoLabel + "  ") || $0.hasPrefix(intuosLabel + "  ") }, "\(lines.prefix(5))")

        // With --device, one device's readings and no label.
        let one = try ChildProcess(executable, ["watch", "--json", "--device", Self.intuos, "--socket", daemon.socketPath])
        try waitFor("ten lines from forcescale watch --device", every: 0.02, saw: { "\(one.stdout.suffix(500)): \(one.stderr)" }) {
            one.stdout.split(separator: "\n").count >= 10
        }
        one.signal(SIGINT)
        let watched = one.wait()
        #expect(watched.exited && watched.status == 0, "\(watched.stderr)")
        #expect(watched.stdout.split(separator: "\n").allSatisfy { $0.contains(#""device":"\#(Self.intuos)""#) })
    }
}
