import Foundation
import Glibc
import TestWaiting
import Testing

// forcescale-mqtt against real parts: Debian's mosquitto broker, started here on a free
// loopback port with a configuration file of its own, forcescaled serving the demo
// recording in a loop, and mosquitto_sub as the reader (scripts/setup installs mosquitto
// and mosquitto-clients for `make test`). Every wait is for a message or an exit, with a
// deadline.

/// A mosquitto broker on 127.0.0.1 and a port nobody used a moment ago.
final class MQTTBroker {
    let directory: URL
    let port: Int
    let configuration: URL
    private(set) var child: ChildProcess?

    /// - Parameter users: User names and passwords for a password file
    ///   (`mosquitto_passwd`); anonymous clients are refused when there are any.
    /// - Parameter tls: The CA, certificate and key to serve TLS with, or nothing for plain TCP.
    init(directory: URL, users: [String: String] = [:], tls: (ca: String, certificate: String, key: String)? = nil) throws {
        self.directory = directory
        port = try freeLoopbackPort()
        configuration = directory.appendingPathComponent("mosquitto.conf")
        var text = """
            listener \(port) 127.0.0.1
            # Nothing kept across a restart: what is retained after one was sent again.
            persistence false
            log_dest stderr
            # As root, stay root (the test's files are root's); ignored otherwise.
            user root

            """
        if let tls {
            text += "cafile \(tls.ca)\ncertfile \(tls.certificate)\nkeyfile \(tls.key)\n"
        }
        if users.isEmpty {
            text += "allow_anonymous true\n"
        } else {
            let passwords = directory.appendingPathComponent("passwords")
            for (index, (user, password)) in users.sorted(by: { $0.key < $1.key }).enumerated() {
                let made = try run("/usr/bin/mosquitto_passwd", (index == 0 ? ["-c"] : []) + ["-b", passwords.path, user, password])
                #expect(made.status == 0, "mosquitto_passwd: \(made.stderr)")
            }
            text += "allow_anonymous false\npassword_file \(passwords.path)\n"
        }
        try text.write(to: configuration, atomically: true, encoding: .utf8)
        try start()
    }

    deinit { child?.kill() }

    var address: String { "127.0.0.1:\(port)" }

    /// Starts the broker and waits until it accepts connections.
    func start() throws {
        let started = try ChildProcess("/usr/sbin/mosquitto", ["-c", configuration.path])
        child = started
        try waitFor("mosquitto to listen on port \(port)", saw: { "its stderr: \(started.stderr.suffix(1000))" }) {
            guard started.isRunning else { throw DaemonTestError(description: "mosquitto exited at start: \(started.wait().stderr)") }
            return Self.accepts(port: port)
        }
    }

    /// Stops it and waits for it to exit: SIGKILL, the harsher stop (clients get no
    /// goodbye, only a reset connection). Under the test runner mosquitto did not act on
    /// SIGTERM within 30 s, which forcescaled, taking signals by signalfd, does.
    func stop() {
        child?.kill()
        child = nil
    }

    static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// One message as mosquitto_sub printed it (`-F '%r %t %p'`).
struct ReceivedMessage: CustomStringConvertible {
    var retained: Bool
    var topic: String
    var payload: String

    var description: String { "\(retained ? "retained " : "")\(topic) \(payload.prefix(120))" }

    /// The payload as a JSON object.
    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(payload.utf8)) as? [String: Any] }
}

/// mosquitto_sub on every topic, its messages read from its output file.
final class MQTTSubscriber {
    let child: ChildProcess

    init(broker: MQTTBroker, topics: [String] = ["#"], user: (String, String)? = nil, caFile: String? = nil) throws {
        var arguments = ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-F", "%r %t %p"]
        if let caFile { arguments += ["--cafile", caFile] }
        for topic in topics { arguments += ["-t", topic] }
        if let user { arguments += ["-u", user.0, "-P", user.1] }
        // Line-buffered: mosquitto_sub writes through stdio, which buffers 4 KiB for a file.
        child = try ChildProcess("/usr/bin/stdbuf", ["-oL", "/usr/bin/mosquitto_sub"] + arguments)
    }

    deinit { child.kill() }

    /// Everything received so far (a payload is one line: the protocol's JSON has no
    /// newline), without a line still being written.
    var messages: [ReceivedMessage] {
        let output = child.stdout
        // The last piece is empty after a whole line, or a line not yet finished.
        let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        return lines.compactMap { line in
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2 else { return nil }
            return ReceivedMessage(retained: parts[0] == "1", topic: String(parts[1]), payload: parts.count > 2 ? String(parts[2]) : "")
        }
    }

    func saw() -> String {
        let all = messages
        return "\(all.count) messages, the last ones: " + all.suffix(12).map(\.description).joined(separator: " | ") + "; stderr: \(child.stderr.suffix(300))"
    }

    /// Waits for a message that `matches`, and returns it.
    @discardableResult
    func waitFor(_ what: String, within seconds: Double = patience, _ matches: (ReceivedMessage) -> Bool) throws -> ReceivedMessage {
        try waitForValue(what, within: seconds, every: 0.02, saw: saw) { messages.first(where: matches) }
    }
}

/// forcescale-mqtt, started on the broker and daemon given.
func startMQTTBridge(broker: MQTTBroker, daemon: DaemonUnderTest, arguments: [String] = []) throws -> ChildProcess {
    try ChildProcess(
        CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path,
        ["--broker", broker.address, "--socket", daemon.socketPath, "--config", "/dev/null"] + arguments)
}

/// The weights (`w`, on the settled value and on the release) and peaks that forcescale-mqtt
/// must publish for a recording, worked out from `forcescale replay --json` of it (the
/// same pipeline and defaults as the daemon's), as (kind, raw, grams).
func expectedWeightsAndPeaks(of recording: String) throws -> [String] {
    let replay = try forcescale(["replay", "--json", recording])
    #expect(replay.status == 0, "forcescale replay: \(replay.stderr)")
    var result: [String] = []
    var wasSettled = false
    var loaded: Bool?
    for line in replay.stdout.split(separator: "\n") {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else { continue }
        let raw = object["raw"] as? Int ?? -1, grams = object["grams"] as? Double ?? -1
        if object["class"] as? String == "PEAK" {
            result.append("peak \(raw) \(grams)")
            continue
        }
        let isLoaded = (object["contacts"] as? Int ?? 0) > 0
        let settled = object["stable"] as? Bool == true && isLoaded
        if settled && !wasSettled || !isLoaded && loaded == true { result.append("weight \(raw) \(grams)") }
        loaded = isLoaded
        wasSettled = settled
    }
    return result
}

/// A weight or peak message as `expectedWeightsAndPeaks` writes them.
func summary(_ message: ReceivedMessage) -> String? {
    let kind = message.topic.hasSuffix("/weight") ? "weight" : message.topic.hasSuffix("/peak") ? "peak" : nil
    guard let kind, let json = message.json else { return nil }
    return "\(kind) \(json["raw"] as? Int ?? -1) \(json["grams"] as? Double ?? -1)"
}

@Suite(.serialized) struct MQTTTests {
    /// A discovery config's `value_template` rendered by Jinja2 (Debian's python3-jinja2, the
    /// engine Home Assistant uses) with each payload as `value_json`, beside what the state
    /// should be: the payload's `settled_grams`, or its `grams` when it has none.
    static func render(_ template: String, for payloads: [String]) throws -> [(state: String, expected: String)] {
        let script = """
            import json, sys, jinja2
            template = jinja2.Environment().from_string(sys.argv[2])
            for line in open(sys.argv[1]):
                value = json.loads(line)
                print(template.render(value_json=value) + "\\t" + str(value.get("settled_grams", value["grams"])))
            """
        let result = try python(script, input: payloads.joined(separator: "\n") + "\n", arguments: [template])
        #expect(result.status == 0, "jinja2: \(result.stderr)")
        return result.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
        }
    }

    /// The discovery configs come retained with what Home Assistant needs; the weights and
    /// peaks come in the recording's order; SIGKILL leaves `offline` by the last will.
    @Test func discoveryWeightsPeaksInOrderAndTheLastWill() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MQTTBroker(directory: directory)
        let recording = try DaemonRecordings.demo(in: directory)
        let expected = try expectedWeightsAndPeaks(of: recording)
        #expect(expected.contains { $0.hasPrefix("peak") } && expected.filter { $0.hasPrefix("weight") }.count >= 4, "the demo changed: \(expected)")
        let daemon = try DaemonUnderTest(recording: recording)
        defer { daemon.cleanUp() }
        let live = try MQTTSubscriber(broker: broker)
        let bridge = try startMQTTBridge(broker: broker, daemon: daemon)
        defer { bridge.kill() }

        // Retained discovery, for a subscriber that comes after it was sent.
        try live.waitFor("the weight sensor's discovery config") { $0.topic.hasSuffix("/weight/config") }
        let late = try MQTTSubscriber(broker: broker, topics: ["homeassistant/#"])
        var weightTemplate: String?
        var saturatedTemplate: String?
        for component in ["sensor", "binary_sensor", "event"] {
            let config = try late.waitFor("a retained \(component) config") { $0.retained && $0.topic.hasPrefix("homeassistant/\(component)/") && $0.topic.hasSuffix("/config") }
            let json = try #require(config.json, "not JSON: \(config.payload)")
            for key in ["name", "unique_id", "state_topic", "availability", "device"] {
                #expect(json[key] != nil, "\(config.topic) has no '\(key)': \(config.payload)")
            }
            let device = try #require(json["device"] as? [String: Any])
            #expect(device["identifiers"] is [String] && device["name"] is String, "\(config.payload)")
            if component == "sensor" {
                #expect(json["device_class"] as? String == "weight")
                #expect(json["unit_of_measurement"] as? String == "g")
                #expect(json["state_class"] as? String == "measurement")
                weightTemplate = json["value_template"] as? String
            }
            if component == "event" { #expect(json["event_types"] as? [String] == ["peak"]) }
        }
        let saturatedConfig = try late.waitFor("the retained saturated sensor's config") { $0.retained && $0.topic.hasSuffix("/saturated/config") }
        let saturatedJSON = try #require(saturatedConfig.json, "not JSON: \(saturatedConfig.payload)")
        #expect(saturatedJSON["device_class"] as? String == "problem" && (saturatedJSON["state_topic"] as? String)?.hasSuffix("/weight") == true,
                "\(saturatedConfig.payload)")
        saturatedTemplate = saturatedJSON["value_template"] as? String

        // Home Assistant announcing itself gets the configs again (live, not retained).
        let configsBefore = live.messages.filter { $0.topic.hasSuffix("/weight/config") }.count
        let announced = try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", "homeassistant/status", "-m", "online"])
        #expect(announced.status == 0, "mosquitto_pub: \(announced.stderr)")
        try waitFor("the discovery configs again after homeassistant/status online", saw: live.saw) {
            live.messages.filter { $0.topic.hasSuffix("/weight/config") }.count > configsBefore
        }

        // A whole pass of the recording, in order, starting wherever the bridge came in:
        // the sequence read must be a stretch of the recording's, gone round.
        let needed = expected.count + 2
        let seen = try waitForValue("\(needed) weights and peaks", within: 3 * patience, every: 0.05, saw: live.saw) { () -> [String]? in
            let messages = live.messages.filter { !$0.retained }.compactMap(summary)
            return messages.count >= needed ? messages : nil
        }
        let cycle = expected + expected + expected
        let found = (0..<expected.count).contains { start in Array(cycle[start..<(start + needed)]) == Array(seen.prefix(needed)) }
        #expect(found, "published \(seen), expected a stretch of the loop \(expected)")
        // Every payload is the protocol's line.
        for message in live.messages where message.topic.hasSuffix("/weight") || message.topic.hasSuffix("/peak") {
            let json = try #require(message.json, "not JSON: \(message)")
            #expect(json["class"] as? String == (message.topic.hasSuffix("/peak") ? "PEAK" : "READING"))
        }
        // The weight sensor's state, as Home Assistant's Jinja renders its value_template: the
        // settled weight of a weight at rest, the grams (0) of a release.
        let weights = live.messages.filter { $0.topic.hasSuffix("/weight") }
        let rendered = try Self.render(try #require(weightTemplate), for: weights.map(\.payload))
        #expect(rendered.count == weights.count && rendered.allSatisfy { $0.state == $0.expected }, "\(rendered)")
        #expect(weights.contains { $0.json?["settled_grams"] != nil } && weights.contains { $0.json?["contacts"] as? Int == 0 })
        // The saturated sensor, rendered the same way: off for the demo's weights (none rests
        // at the top), on for a saturated weight's payload as the bridge writes it.
        // (MQTTPayloadTests holds the bridge to writing this payload.)
        let saturatedWeight = #"{"class":"READING","device":"pad.events","time":5.000000,"raw":255,"force":1.0,"grams":385.0,"saturated":true,"contacts":1,"stable":true,"model":"nominal","settled_grams":384.8,"saturation_note":"at least 384.8 g (saturated)"}"#
        let states = try Self.render(try #require(saturatedTemplate), for: weights.map(\.payload) + [saturatedWeight]).map(\.state)
        #expect(states == Array(repeating: "OFF", count: weights.count) + ["ON"], "\(states)")
        #expect(live.messages.contains { $0.topic.hasSuffix("/loaded") && $0.payload == "ON" })
        #expect(!live.messages.contains { $0.topic.hasSuffix("/reading") }, "live readings are off by default")

        // SIGKILL: no goodbye, so the broker publishes the last will.
        let availability = try #require(live.messages.first { $0.topic.split(separator: "/").count == 3 && $0.topic.hasSuffix("/availability") }?.topic)
        #expect(live.messages.contains { $0.topic == availability && $0.payload == "online" })
        bridge.signal(SIGKILL)
        try live.waitFor("'offline' on \(availability) by the last will") { $0.topic == availability && $0.payload == "offline" }
        // And retained for whoever asks later.
        let later = try MQTTSubscriber(broker: broker, topics: [availability])
        try later.waitFor("the retained 'offline'") { $0.retained && $0.payload == "offline" }

        // --remove-discovery empties the configs; Home Assistant removes the entities.
        let removal = try run(CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path,
                              ["--remove-discovery", "--broker", broker.address, "--config", "/dev/null"])
        #expect(removal.status == 0, "forcescale-mqtt --remove-discovery: \(removal.stderr)")
        #expect(removal.stderr.contains("removed 4 discovery configs"), "\(removal.stderr)")
        for suffix in ["/weight/config", "/loaded/config", "/peak/config", "/saturated/config"] {
            try live.waitFor("an empty \(suffix)") { $0.topic.hasSuffix(suffix) && $0.payload.isEmpty }
        }
        // Nothing retained is left under homeassistant/: a new subscriber gets only the
        // marker published after it subscribed (the broker keeps one client's order).
        let after = try MQTTSubscriber(broker: broker, topics: ["homeassistant/#", "test/marker"])
        try waitFor("mosquitto_sub to subscribe", saw: after.saw) {
            _ = try run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", String(broker.port), "-q", "1", "-t", "test/marker", "-m", "here"])
            return after.messages.contains { $0.topic == "test/marker" }
        }
        let beforeMarker = after.messages.prefix { $0.topic != "test/marker" }
        #expect(beforeMarker.isEmpty, "still retained: \(beforeMarker)")
    }

    /// The broker is down at the start, then stops and starts again (without a store)
    /// mid-stream: forcescale-mqtt says so once per outage, reconnects, and everything
    /// retained is there again; weights go on. Then the daemon restarts.
    @Test func aBrokerRestartLosesNothingRetained() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MQTTBroker(directory: directory)
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory))
        defer { daemon.cleanUp() }
        // The broker is not there yet when forcescale-mqtt starts.
        broker.stop()
        let bridge = try startMQTTBridge(broker: broker, daemon: daemon, arguments: ["--live-interval-ms", "200"])
        defer { bridge.kill() }
        try waitFor("forcescale-mqtt to say it cannot reach the broker", saw: { bridge.stderr }) { bridge.stderr.contains("cannot reach the broker") }
        try broker.start()
        try waitFor("forcescale-mqtt to connect once the broker is up", saw: { bridge.stderr }) { bridge.stderr.contains("connected to the broker \(broker.address)") }
        #expect(bridge.stderr.components(separatedBy: "cannot reach the broker").count == 2, "one message for the outage: \(bridge.stderr)")
        let before = try MQTTSubscriber(broker: broker)
        try before.waitFor("a settled weight", within: 2 * patience) { $0.topic.hasSuffix("/weight") && ($0.json?["contacts"] as? Int ?? 0) > 0 }
        try before.waitFor("a live reading") { $0.topic.hasSuffix("/reading") }
        let retainedTopics = Set(before.messages.filter { $0.retained || $0.topic.hasSuffix("/config") || $0.topic.hasSuffix("availability") || $0.topic.hasSuffix("/weight") || $0.topic.hasSuffix("/loaded") }.map(\.topic))

        broker.stop()
        try waitFor("forcescale-mqtt to say it lost the broker", saw: { bridge.stderr }) { bridge.stderr.contains("lost the broker") }
        try broker.start()
        try waitFor("forcescale-mqtt to connect again", saw: { bridge.stderr }) { bridge.stderr.contains("connected to the broker \(broker.address) again") }
        // Published again: a subscriber that comes meanwhile may get some of them live...
        let after = try MQTTSubscriber(broker: broker)
        for topic in retainedTopics {
            try after.waitFor("\(topic) after the restart") { $0.topic == topic && !$0.payload.isEmpty }
        }
        // ...and once it has them all, the broker keeps them all retained.
        let stored = try MQTTSubscriber(broker: broker)
        for topic in retainedTopics {
            try stored.waitFor("\(topic) retained after the restart") { $0.retained && $0.topic == topic && !$0.payload.isEmpty }
        }
        #expect(stored.messages.contains { $0.retained && $0.topic.hasSuffix("availability") && $0.payload == "online" })
        // Weights go on after the restart.
        try after.waitFor("a settled weight after the restart", within: 2 * patience) { !$0.retained && $0.topic.hasSuffix("/weight") }
        // One message for the outage, however many attempts it took.
        #expect(bridge.stderr.components(separatedBy: "lost the broker").count == 2, "\(bridge.stderr)")

        // The daemon restarts: the device is offline meanwhile, online again after.
        let deviceAvailability = try #require(after.messages.first { $0.topic.split(separator: "/").count == 4 && $0.topic.hasSuffix("/availability") }?.topic)
        _ = daemon.stop()
        try after.waitFor("the device offline while forcescaled is away") { $0.topic == deviceAvailability && $0.payload == "offline" }
        try daemon.restart()
        let offlineAt = after.messages.lastIndex { $0.topic == deviceAvailability && $0.payload == "offline" } ?? 0
        try waitFor("the device online again", saw: after.saw) {
            after.messages.dropFirst(offlineAt + 1).contains { $0.topic == deviceAvailability && $0.payload == "online" }
        }
        #expect(bridge.stderr.components(separatedBy: "lost forcescaled").count == 2, "\(bridge.stderr)")

        // SIGTERM: offline said by forcescale-mqtt itself, then a clean exit.
        bridge.signal(SIGTERM)
        let ended = bridge.wait()
        #expect(ended.exited && ended.status == 0, "\(ended.stderr)")
        try after.waitFor("'offline' at the end") { $0.topic.split(separator: "/").count == 3 && $0.topic.hasSuffix("/availability") && $0.payload == "offline" }
    }

    /// A password file logs in; a wrong password is a clear error and exit status 77.
    @Test func aPasswordFileAndAWrongPassword() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MQTTBroker(directory: directory, users: ["scale": "right horse battery", "reader": "reader"])
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory))
        defer { daemon.cleanUp() }
        let good = directory.appendingPathComponent("good.password")
        let bad = directory.appendingPathComponent("bad.password")
        try "right horse battery\n".write(to: good, atomically: true, encoding: .utf8)
        try "wrong\n".write(to: bad, atomically: true, encoding: .utf8)

        let reader = try MQTTSubscriber(broker: broker, user: ("reader", "reader"))
        let bridge = try startMQTTBridge(broker: broker, daemon: daemon, arguments: ["--username", "scale", "--password-file", good.path])
        defer { bridge.kill() }
        try reader.waitFor("forcescale-mqtt online with the password file") { $0.topic.hasSuffix("/availability") && $0.payload == "online" }
        bridge.signal(SIGTERM)
        #expect(bridge.wait().status == 0)

        let refused = try run(CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path,
                              ["--broker", broker.address, "--socket", daemon.socketPath, "--config", "/dev/null",
                               "--username", "scale", "--password-file", bad.path])
        #expect(refused.exited && refused.status == 77, "status \(refused.status): \(refused.stderr)")
        #expect(refused.stderr.contains("refused the connection: Connection Refused: not authorised"), "\(refused.stderr)")
        #expect(refused.stderr.contains("--password-file"), "\(refused.stderr)")

        let missing = try run(CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path,
                              ["--broker", broker.address, "--config", "/dev/null", "--username", "scale", "--password-file", directory.appendingPathComponent("none").path])
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("none: no such file"), "\(missing.stderr)")
    }

    /// A device that goes away (a recording that ends, as an unplugged device does: STATUS
    /// names no device) is `offline` at the next check, with the bridge still `online`.
    @Test func aDeviceThatGoesAwayIsOffline() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MQTTBroker(directory: directory)
        // Pressed for 3 s, then the recording ends (no --loop).
        let recording = try DaemonRecordings.presses(in: directory, name: "short", [(start: 1, seconds: 3)])
        let socket = directory.appendingPathComponent("sock").path
        let daemon = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescaled").path,
                                      ["--replay", recording, "--socket", socket, "--state-dir", directory.appendingPathComponent("state").path])
        defer { daemon.kill() }
        try waitUntilListening(daemon, on: socket)
        let reader = try MQTTSubscriber(broker: broker, topics: ["forcescale/#"])
        let bridge = try ChildProcess(CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path,
                                      ["--broker", broker.address, "--socket", socket, "--config", "/dev/null"])
        defer { bridge.kill() }
        let online = try reader.waitFor("the device online") { $0.topic.split(separator: "/").count == 4 && $0.topic.hasSuffix("/availability") && $0.payload == "online" }
        // STATUS is asked every 10 s: a deadline of three checks.
        try reader.waitFor("the device offline once the recording ended", within: patience) { $0.topic == online.topic && $0.payload == "offline" }
        #expect(!reader.messages.contains { $0.topic.split(separator: "/").count == 3 && $0.payload == "offline" }, "the bridge itself stays online")
        #expect(bridge.stderr.contains("reads no device"), "\(bridge.stderr)")
    }

    /// Several devices (issue 28): forcescaled serves a pen, then is started again serving a
    /// touchpad as well (a device that appears later), then the touchpad alone (the pen goes
    /// away). Each device gets its own topics and discovery configs, its weights are its own
    /// device's readings, and one that goes away is `offline` with its configs kept, as for
    /// one device (only `--remove-discovery` removes configs).
    @Test func everyDeviceIsPublishedAndAnnounced() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let broker = try MQTTBroker(directory: directory)
        // Held at 151.0 g and 90.6 g by the nominal model: a weight on the wrong device's
        // topic shows.
        let pen = try DaemonRecordings.dashboardPress(in: directory, name: "pen.events", held: 100, deviceName: "Test tablet Pen")
        let pad = try DaemonRecordings.dashboardPress(in: directory, name: "pad.events", held: 60, deviceName: "Test Touchpad")
        let reader = try MQTTSubscriber(broker: broker)
        var daemon = try DaemonUnderTest(recording: pen)
        defer { daemon.cleanUp() }
        let bridge = try startMQTTBridge(broker: broker, daemon: daemon)
        defer { bridge.kill() }

        // The two share the demo's id (0006:0000:0000). The pen, alone at first, has topics
        // of the id; the touchpad, which the daemon lists beside it, adds its name. (Live
        // devices that share an id, a tablet's pen and touch, are both listed from the
        // start, and both add their names.)
        let availability = try reader.waitFor("the bridge online") { $0.topic.split(separator: "/").count == 3 && $0.topic.hasSuffix("/availability") }
        let host = String(availability.topic.split(separator: "/")[1])
        let segments = ["pen.events": "0006-0000-0000", "pad.events": "0006-0000-0000-test-touchpad"]
        func base(_ device: String) -> String { "forcescale/\(host)/\(segments[device]!)" }
        func node(_ device: String) -> String { "forcescale_\(host)_\(segments[device]!)" }
        func settled(_ device: String) -> (ReceivedMessage) -> Bool {
            // The held press's weight, not the saturated hold's (385.0 g on both).
            { $0.topic == base(device) + "/weight" && $0.json?["stable"] as? Bool == true && $0.json?["saturated"] as? Bool == false }
        }
        try reader.waitFor("the pen's weight config") { $0.topic == "homeassistant/sensor/\(node("pen.events"))/weight/config" }
        let penWeight = try reader.waitFor("the pen's settled weight", settled("pen.events"))
        #expect(penWeight.json?["device"] as? String == "pen.events" && penWeight.json?["settled_grams"] as? Double == 151.0, "\(penWeight)")

        // The touchpad appears.
        let stopped = daemon.stop()
        #expect(stopped.exited && stopped.status == 0, "\(stopped.stderr)")
        daemon = try DaemonUnderTest(recording: pen, directory: daemon.directory, arguments: ["--replay", pad])
        for object in ["sensor/\(node("pad.events"))/weight", "binary_sensor/\(node("pad.events"))/loaded", "event/\(node("pad.events"))/peak"] {
            let config = try reader.waitFor("the touchpad's \(object) config") { $0.topic == "homeassistant/\(object)/config" }
            let json = try #require(config.json, "not JSON: \(config)")
            #expect((json["state_topic"] as? String)?.hasPrefix(base("pad.events") + "/") == true, "\(config)")
            #expect((json["device"] as? [String: Any])?["name"] as? String == "Test Touchpad", "\(config)")
        }
        try reader.waitFor("the touchpad online") { $0.topic == base("pad.events") + "/availability" && $0.payload == "online" }
        let padWeight = try reader.waitFor("the touchpad's settled weight", settled("pad.events"))
        #expect(padWeight.json?["device"] as? String == "pad.events" && padWeight.json?["settled_grams"] as? Double == 90.6, "\(padWeight)")
        let penAgain = reader.messages.count
        try waitFor("the pen's weights going on beside the touchpad's", saw: reader.saw) {
            reader.messages.dropFirst(penAgain).contains(where: settled("pen.events"))
        }
        // Every weight and peak on a device's topics is that device's.
        for message in reader.messages where message.topic.hasSuffix("/weight") || message.topic.hasSuffix("/peak") {
            let device = try #require(segments.first { message.topic.hasPrefix(base($0.key) + "/") }?.key, "\(message)")
            #expect(message.json?["device"] as? String == device, "\(message)")
            if message.json?["stable"] as? Bool == true, message.json?["saturated"] as? Bool == false, message.topic.hasSuffix("/weight") {
                #expect(message.json?["settled_grams"] as? Double == (device == "pen.events" ? 151.0 : 90.6), "\(message)")
            }
        }

        // The pen goes away: offline, its configs kept.
        let restarted = daemon.stop()
        #expect(restarted.exited && restarted.status == 0, "\(restarted.stderr)")
        daemon = try DaemonUnderTest(recording: pad, directory: daemon.directory)
        let offlineFrom = reader.messages.count
        try waitFor("the touchpad online and the pen offline", saw: reader.saw) {
            let after = reader.messages.dropFirst(offlineFrom)
            return after.contains { $0.topic == base("pad.events") + "/availability" && $0.payload == "online" }
                && reader.messages.last { $0.topic == base("pen.events") + "/availability" }?.payload == "offline"
                && after.contains(where: settled("pad.events"))
        }
        #expect(!reader.messages.contains { $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config") && $0.payload.isEmpty },
                "no config is removed")
        let retained = try MQTTSubscriber(broker: broker, topics: ["homeassistant/+/\(node("pen.events"))/+/config"])
        try waitFor("the pen's four configs still retained", saw: retained.saw) { retained.messages.filter { $0.retained && !$0.payload.isEmpty }.count == 4 }
    }

    /// TLS with a CA file: the broker's certificate (made here with openssl, for
    /// 127.0.0.1) is checked; another CA's is refused, said once, and retried.
    @Test func tlsWithACAFile() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String) -> String { directory.appendingPathComponent(name).path }
        let openssl = "/usr/bin/openssl"
        for (key, certificate, name) in [("ca.key", "ca.pem", "forcescale test CA"), ("other.key", "other.pem", "another CA")] {
            let made = try run(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", file(key), "-out", file(certificate), "-days", "2", "-subj", "/CN=\(name)"])
            #expect(made.status == 0, "openssl req: \(made.stderr)")
        }
        let request = try run(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=127.0.0.1"])
        #expect(request.status == 0, "openssl req: \(request.stderr)")
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: file("server.ext"), atomically: true, encoding: .utf8)
        let signed = try run(openssl, ["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial",
                                       "-out", file("server.pem"), "-days", "2", "-extfile", file("server.ext")])
        #expect(signed.status == 0, "openssl x509: \(signed.stderr)")

        let broker = try MQTTBroker(directory: directory, tls: (file("ca.pem"), file("server.pem"), file("server.key")))
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.demo(in: directory))
        defer { daemon.cleanUp() }
        let reader = try MQTTSubscriber(broker: broker, topics: ["forcescale/#"], caFile: file("ca.pem"))
        let bridge = try startMQTTBridge(broker: broker, daemon: daemon, arguments: ["--cafile", file("ca.pem")])
        defer { bridge.kill() }
        try reader.waitFor("forcescale-mqtt online over TLS") { $0.topic.hasSuffix("/availability") && $0.payload == "online" }
        try reader.waitFor("a weight over TLS", within: 2 * patience) { $0.topic.hasSuffix("/weight") }
        bridge.signal(SIGTERM)
        #expect(bridge.wait().status == 0)

        let wrong = try startMQTTBridge(broker: broker, daemon: daemon, arguments: ["--cafile", file("other.pem")])
        defer { wrong.kill() }
        try waitFor("forcescale-mqtt to refuse the broker's certificate", saw: { wrong.stderr }) { wrong.stderr.contains("A TLS error occurred") }
        #expect(wrong.stderr.contains("check --cafile"), "\(wrong.stderr)")
        #expect(wrong.isRunning, "a TLS failure is retried, not fatal")
    }

    /// The configuration file's mistakes are named by line, with exit status 78 as
    /// forcescaled's; a bad option is a usage error.
    @Test func configurationAndUsageErrors() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("mqtt.conf")
        try "broker = localhost:99999\nprefx = x\n".write(to: file, atomically: true, encoding: .utf8)
        let program = CLI.binDirectory.appendingPathComponent("forcescale-mqtt").path
        let broken = try run(program, ["--config", file.path])
        #expect(broken.status == 78)
        #expect(broken.stderr.contains("\(file.path):1: bad value 'localhost:99999' for 'broker'"), "\(broken.stderr)")
        #expect(broken.stderr.contains("\(file.path):2: unknown key 'prefx' (did you mean 'prefix'?)"), "\(broken.stderr)")
        let usage = try run(program, ["--config", "/dev/null", "--prefix", "a/#"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("--prefix"), "\(usage.stderr)")
    }
}
