import Foundation
import ScaleClient
@testable import ScaleMQTT
import ScaleOptions
import ScaleProtocol
import Testing

@Suite struct BrokerAddressTests {
    @Test func hostPortAndBracketedIPv6() {
        #expect(BrokerAddress("localhost") == BrokerAddress(host: "localhost", port: 1883))
        #expect(BrokerAddress("broker.lan:8883") == BrokerAddress(host: "broker.lan", port: 8883))
        #expect(BrokerAddress("[::1]:1884") == BrokerAddress(host: "::1", port: 1884))
        #expect(BrokerAddress("[::1]") == BrokerAddress(host: "::1", port: 1883))
        // A bare IPv6 address has no port: its colons are the address's.
        #expect(BrokerAddress("fe80::1") == BrokerAddress(host: "fe80::1", port: 1883))
        #expect(BrokerAddress("[::1]:1884")?.description == "[::1]:1884")
    }

    @Test(arguments: ["", ":1883", "host:0", "host:65536", "host:port", "[::1", "[::1]x", "two words"])
    func refusesWhatIsNoAddress(_ text: String) {
        #expect(BrokerAddress(text) == nil)
    }
}

@Suite struct MQTTTopicsTests {
    let topics = MQTTTopics(prefix: "forcescale", discoveryPrefix: "homeassistant", host: "Kitchen.lan", device: "0003:056a:00b9")

    @Test func topicsLiveUnderPrefixHostAndDevice() {
        #expect(topics.deviceBase == "forcescale/kitchen.lan/0003-056a-00b9")
        #expect(topics.weight == "forcescale/kitchen.lan/0003-056a-00b9/weight")
        #expect(topics.peak == "forcescale/kitchen.lan/0003-056a-00b9/peak")
        #expect(topics.availability == "forcescale/kitchen.lan/availability")
        #expect(topics.weightConfig == "homeassistant/sensor/forcescale_kitchen_lan_0003-056a-00b9/weight/config")
        #expect(topics.homeAssistantStatus == "homeassistant/status")
    }

    /// How served devices are named for their topics: by id, so that a device plugged in
    /// again keeps them; with its name when another device the daemon lists shares the id;
    /// with its node too when that would still be a served device's.
    @Test func servedDevicesAreNamedByIdThenNameThenNode() {
        let pen = DevicesMessage.Device(path: "/dev/input/event5", name: "Wacom Intuos4 6x9 Pen", id: "0003:056a:00b9", active: true)
        let touch = DevicesMessage.Device(path: "/dev/input/event6", name: "Wacom Intuos4 6x9 Finger", id: "0003:056a:00b9", active: true)
        let pad = DevicesMessage.Device(path: "/dev/input/event9", name: "SynPS/2 Synaptics TouchPad", id: "0011:0002:0007", active: true)
        let listed = [pen, touch, pad]
        func named(_ node: String, taken: Set<String> = []) -> DiscoveredDevice {
            DiscoveredDevice(served: StatusMessage.Served(device: node), listed: listed, taken: taken)
        }
        #expect(named("event9") == DiscoveredDevice(name: "SynPS/2 Synaptics TouchPad", identifier: "0011:0002:0007"))
        #expect(named("event5") == DiscoveredDevice(name: "Wacom Intuos4 6x9 Pen", identifier: "0003:056a:00b9-Wacom Intuos4 6x9 Pen"))
        #expect(MQTTTopics.segment(named("event6").identifier) == "0003-056a-00b9-wacom-intuos4-6x9-finger")
        // Two pads of one model and name: the second served adds its node.
        let twin = DevicesMessage.Device(path: "/dev/input/event10", name: "SynPS/2 Synaptics TouchPad", id: "0011:0002:0007", active: true)
        let first = DiscoveredDevice(served: StatusMessage.Served(device: "event9"), listed: listed + [twin], taken: [])
        let second = DiscoveredDevice(served: StatusMessage.Served(device: "event10"), listed: listed + [twin], taken: [MQTTTopics.segment(first.identifier)])
        #expect(MQTTTopics.segment(first.identifier) == "0011-0002-0007-synps-2-synaptics-touchpad")
        #expect(MQTTTopics.segment(second.identifier) == "0011-0002-0007-synps-2-synaptics-touchpad-event10")
        // A recording DEVICES does not list: its name on the wire, and STATUS's name for it.
        #expect(DiscoveredDevice(served: StatusMessage.Served(device: "pen.evemu#2", name: "Pen"), listed: listed, taken: [])
                == DiscoveredDevice(name: "Pen", identifier: "pen.evemu#2"))
    }

    @Test func segmentsNeverCarryWildcardsOrSlashes() {
        #expect(MQTTTopics.segment("Wacom Intuos4 6x9.stylus-drag.events") == "wacom-intuos4-6x9.stylus-drag.events")
        #expect(MQTTTopics.segment("a/b+c#d") == "a-b-c-d")
        #expect(MQTTTopics.segment("///") == "scale")
        #expect(MQTTTopics.segment("") == "scale")
    }

    @Test func prefixesAreChecked() {
        #expect(MQTTTopics.isValidPrefix("forcescale"))
        #expect(MQTTTopics.isValidPrefix("lab/scales"))
        for bad in ["", "/forcescale", "forcescale/", "a//b", "a/+/b", "a/#", "two words"] {
            #expect(!MQTTTopics.isValidPrefix(bad), "\(bad)")
        }
    }

    /// The keys Home Assistant's MQTT discovery needs for each entity, in JSON that parses.
    @Test func discoveryConfigsAreWhatHomeAssistantReads() throws {
        let device = DiscoveredDevice(name: "Wacom Intuos4 6x9", identifier: "0003:056a:00b9", daemonRelease: "0.1.0")
        let configs = HomeAssistantDiscovery.configs(topics: topics, device: device, release: "0.1.0")
        #expect(configs.map(\.topic) == topics.configTopics)
        var objects: [[String: Any]] = []
        for config in configs {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(config.payload.utf8)) as? [String: Any])
            objects.append(object)
            #expect(object["unique_id"] is String)
            #expect(object["state_topic"] is String)
            let availability = try #require(object["availability"] as? [[String: Any]])
            #expect(availability.compactMap { $0["topic"] as? String } == [topics.availability, topics.deviceAvailability])
            let block = try #require(object["device"] as? [String: Any])
            #expect(block["name"] as? String == "Wacom Intuos4 6x9")
            #expect(block["identifiers"] as? [String] == [topics.nodeID])
        }
        let weight = objects[0]
        #expect(weight["device_class"] as? String == "weight")
        #expect(weight["unit_of_measurement"] as? String == "g")
        #expect(weight["state_class"] as? String == "measurement")
        #expect(weight["state_topic"] as? String == topics.weight)
        #expect(objects[1]["state_topic"] as? String == topics.loaded)
        #expect(objects[2]["event_types"] as? [String] == ["peak"])
        // The saturated problem sensor reads the weight's own payload.
        #expect(objects[3]["state_topic"] as? String == topics.weight)
        #expect(objects[3]["device_class"] as? String == "problem")
        #expect(configs[3].topic.hasPrefix("homeassistant/binary_sensor/"))
        // Unique ids differ: Home Assistant keeps one entity per id.
        #expect(Set(objects.compactMap { $0["unique_id"] as? String }).count == 4)
    }

    @Test func theDefaultClientIDFitsEveryBroker() {
        #expect(MQTTBridge.defaultClientID(host: "kitchen") == "forcescale-kitchen")
        #expect(MQTTBridge.defaultClientID(host: "a-very-long-host-name-indeed").count == 23)
    }
}

@Suite struct MQTTConfigurationTests {
    @Test func theFileSetsEachKeyInForcescaleConfsSyntax() throws {
        var configuration = MQTTConfiguration()
        try configuration.parse("""
            # the broker on the lab's server
            broker = lab.example:8883   # TLS
            prefix = "lab/scales"
            username = scale
            password-file = /etc/forcescale/mqtt.password
            live-interval-ms = 250
            """, path: "mqtt.conf")
        #expect(configuration.broker == BrokerAddress(host: "lab.example", port: 8883))
        #expect(configuration.prefix == "lab/scales")
        #expect(configuration.username == "scale")
        #expect(configuration.passwordFile == "/etc/forcescale/mqtt.password")
        #expect(configuration.liveIntervalMilliseconds == 250)
        #expect(configuration.discoveryPrefix == "homeassistant")
    }

    @Test func everyProblemIsReportedWithItsLine() {
        var configuration = MQTTConfiguration()
        do {
            try configuration.parse("brokr = x\nprefix = a/#\nlive-interval-ms = -1\nbroker = h\nbroker = h2\npasword-file = /p\n", path: "/etc/forcescale/mqtt.conf")
            Issue.record("a broken file was taken")
        } catch {
            #expect(error.lines == [
                "/etc/forcescale/mqtt.conf:1: unknown key 'brokr' (did you mean 'broker'?); the keys are " + Setting.spelledOut(MQTTSetting.all.map(\.name)),
                "/etc/forcescale/mqtt.conf:2: bad value 'a/#' for 'prefix': it takes \(MQTTSetting.prefix.accepted)",
                "/etc/forcescale/mqtt.conf:3: bad value '-1' for 'live-interval-ms': it takes a whole number of milliseconds from 0 to 86400000 (0 publishes no live readings)",
                "/etc/forcescale/mqtt.conf:5: 'broker' is set twice (first on line 4); keep one",
                "/etc/forcescale/mqtt.conf:6: unknown key 'pasword-file' (did you mean 'password-file'?); the keys are " + Setting.spelledOut(MQTTSetting.all.map(\.name)),
            ])
        }
    }

    @Test func aClientIDMustBeOneEveryBrokerTakes() {
        var configuration = MQTTConfiguration()
        #expect(throws: MQTTSettingError.self) { try configuration.set(MQTTSetting.clientID, from: "has space") }
        #expect(throws: MQTTSettingError.self) { try configuration.set(MQTTSetting.clientID, from: String(repeating: "x", count: 24)) }
        #expect(throws: Never.self) { try configuration.set(MQTTSetting.clientID, from: "scale-1") }
    }

    /// etc/mqtt.conf, installed as /etc/forcescale/mqtt.conf: it reads without error, and
    /// each key is there, commented out, with its default where it has one value.
    @Test func theShippedFileListsEveryKey() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("etc/mqtt.conf").path
        var configuration = MQTTConfiguration()
        #expect(try configuration.load(path: path, mustExist: true))
        #expect(configuration == MQTTConfiguration(), "every line is commented out")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for setting in MQTTSetting.all {
            #expect(text.contains("\n#\(setting.name) = "), "etc/mqtt.conf does not show '\(setting.name)'")
            if let value = setting.defaultValue {
                #expect(text.contains("\n#\(setting.name) = \(value)\n"), "etc/mqtt.conf does not give '\(setting.name)' its default \(value)")
            }
            // Uncommented, each line is a value the key takes.
            let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("#\(setting.name) = ") })
            var check = MQTTConfiguration()
            #expect(throws: Never.self) { try check.parse(String(line.dropFirst()), path: "etc/mqtt.conf") }
        }
    }

    @Test func aMissingDefaultFileIsNoError() throws {
        var configuration = MQTTConfiguration()
        #expect(try configuration.load(path: "/nonexistent/mqtt.conf", mustExist: false) == false)
        #expect(throws: MQTTConfigurationError.self) { try configuration.load(path: "/nonexistent/mqtt.conf", mustExist: true) }
    }
}
