import ScaleClient
import ScaleCore
import ScaleProtocol

/// The topics of one host and its device, and Home Assistant's discovery configs for them
/// (docs/mqtt.md). Pure: names and payloads in, names and payloads out.
struct MQTTTopics: Hashable, Sendable {
    /// `<prefix>/<host>`: the bridge's own topics.
    let base: String
    /// `<prefix>/<host>/<device>`: the device's topics.
    let deviceBase: String
    let discoveryPrefix: String
    /// The host and device as they appear in topics and ids (`MQTTTopics.segment`).
    let host: String
    let device: String

    /// - Parameters:
    ///   - prefix: `--prefix`.
    ///   - discoveryPrefix: `--discovery-prefix`.
    ///   - host: The host's name, made a topic segment here.
    ///   - device: The device's stable name (its id, or its name), made a segment here.
    init(prefix: String, discoveryPrefix: String, host: String, device: String) {
        self.host = Self.segment(host)
        self.device = Self.segment(device)
        self.discoveryPrefix = discoveryPrefix
        base = "\(prefix)/\(self.host)"
        deviceBase = "\(base)/\(self.device)"
    }

    /// `online`/`offline` of forcescale-mqtt itself, retained; the last will says `offline`.
    var availability: String { "\(base)/availability" }
    /// `online`/`offline` of the device: online while the daemon serves it.
    var deviceAvailability: String { "\(deviceBase)/availability" }
    /// The last settled weight (a READING line, retained).
    var weight: String { "\(deviceBase)/weight" }
    /// `ON` while something is on the scale, `OFF` once it is empty (retained).
    var loaded: String { "\(deviceBase)/loaded" }
    /// Each PEAK line (not retained).
    var peak: String { "\(deviceBase)/peak" }
    /// Live READING lines, rate-limited (not retained).
    var reading: String { "\(deviceBase)/reading" }
    /// Where Home Assistant says `online` when it (re)starts.
    var homeAssistantStatus: String { Self.homeAssistantStatus(discoveryPrefix: discoveryPrefix) }

    /// `<discovery>/status`, which does not depend on any device.
    static func homeAssistantStatus(discoveryPrefix: String) -> String { "\(discoveryPrefix)/status" }

    /// `forcescale_<host>_<device>`: the discovery node id, and the stem of unique ids.
    var nodeID: String { "forcescale_\(Self.identifier(host))_\(Self.identifier(device))" }

    /// The discovery config topics: `<discovery>/<component>/<node>/<object>/config`.
    var weightConfig: String { "\(discoveryPrefix)/sensor/\(nodeID)/weight/config" }
    var loadedConfig: String { "\(discoveryPrefix)/binary_sensor/\(nodeID)/loaded/config" }
    var peakConfig: String { "\(discoveryPrefix)/event/\(nodeID)/peak/config" }
    var saturatedConfig: String { "\(discoveryPrefix)/binary_sensor/\(nodeID)/saturated/config" }
    var configTopics: [String] { [weightConfig, loadedConfig, peakConfig, saturatedConfig] }

    /// A name made fit for one topic level: no `/`, `+`, `#`, blanks or control
    /// characters (they become `-`), lower case, never empty.
    static func segment(_ name: String) -> String {
        var result = ""
        for scalar in name.lowercased().unicodeScalars {
            let keep = scalar.isASCII && (("a"..."z").contains(Character(scalar)) || ("0"..."9").contains(Character(scalar)) || "-_.".unicodeScalars.contains(scalar))
            if keep {
                result.unicodeScalars.append(scalar)
            } else if !result.hasSuffix("-") {
                result += "-"
            }
        }
        let trimmed = result.trimmingCharacters("-.")
        return trimmed.isEmpty ? "scale" : String(trimmed.prefix(64))
    }

    /// Home Assistant's node and object ids take `[a-zA-Z0-9_-]` only.
    static func identifier(_ segment: String) -> String {
        String(segment.map { $0 == "." ? "_" : $0 })
    }

    /// Whether a prefix can lead topics: not empty, no wildcards, no `/` at either end, no
    /// empty level, no blanks or control characters.
    static func isValidPrefix(_ prefix: String) -> Bool {
        !prefix.isEmpty && !prefix.hasPrefix("/") && !prefix.hasSuffix("/") && !prefix.contains("//")
            && !prefix.unicodeScalars.contains { $0 == "+" || $0 == "#" || $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }
}

extension String {
    fileprivate func trimmingCharacters(_ set: String) -> Substring {
        let start = firstIndex { !set.contains($0) } ?? endIndex
        let end = lastIndex { !set.contains($0) }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}

/// What Home Assistant is told about the device in each config's `device` block.
struct DiscoveredDevice: Hashable, Sendable {
    /// The device's name (`Wacom Intuos4 6x9`).
    var name: String
    /// Its stable id (`0003:056a:00b9`), or the name when it has none.
    var identifier: String
    /// forcescaled's release, for `sw_version`.
    var daemonRelease: String?

    init(name: String, identifier: String, daemonRelease: String? = nil) {
        self.name = name
        self.identifier = identifier
        self.daemonRelease = daemonRelease
    }

    /// A device the daemon serves, named for its topics.
    ///
    /// The bus:vendor:product id keeps a device's topics when it is plugged in again under
    /// another node. A device that shares its id with another entry of DEVICES (a tablet's
    /// pen and its touch, two pads of one model) adds its name; one whose topics would still
    /// be those of a device served already adds its node name too. A device DEVICES does
    /// not list as served (a recording an older daemon replays) is named by its node.
    /// - Parameters:
    ///   - served: The device, as STATUS names it.
    ///   - listed: DEVICES's entries.
    ///   - taken: The topic segments (`MQTTTopics.device`) of the devices served already.
    init(served: StatusMessage.Served, listed: [DevicesMessage.Device], taken: Set<String>) {
        let entry = listed.first { $0.active && SourceDevice.nodeName(of: $0.path) == served.device }
        name = entry?.name ?? served.name ?? served.device
        var identifier = entry?.id ?? served.device
        if let entry, listed.contains(where: { $0.id == entry.id && $0.path != entry.path }) { identifier += "-" + name }
        if taken.contains(MQTTTopics.segment(identifier)) { identifier += "-" + served.device }
        self.identifier = identifier
    }
}

/// Home Assistant MQTT discovery: the retained config of each entity.
enum HomeAssistantDiscovery {
    /// Each config topic with its payload (one JSON object, no newline).
    /// - Parameters:
    ///   - topics: The host's and device's topics.
    ///   - device: The device block's contents.
    ///   - release: forcescale-mqtt's release, for the `origin` block.
    static func configs(topics: MQTTTopics, device: DiscoveredDevice, release: String) -> [(topic: String, payload: String)] {
        func common(_ object: String, name: String) -> JSONLineWriter {
            var config = JSONLineWriter()
            config.add("name", string: name)
            config.add("unique_id", string: "\(topics.nodeID)_\(object)")
            config.add("object_id", string: "\(topics.nodeID)_\(object)")
            // Both must say online: forcescale-mqtt (its last will says offline) and the
            // device (offline while the daemon or the device is gone).
            var bridge = JSONLineWriter()
            bridge.add("topic", string: topics.availability)
            var ofDevice = JSONLineWriter()
            ofDevice.add("topic", string: topics.deviceAvailability)
            config.add("availability", objects: [bridge, ofDevice])
            config.add("availability_mode", string: "all")
            config.add("payload_available", string: "online")
            config.add("payload_not_available", string: "offline")
            var block = JSONLineWriter()
            block.add("identifiers", strings: [topics.nodeID])
            block.add("name", string: device.name)
            block.add("manufacturer", string: "forcescale")
            block.add("model", string: device.identifier)
            block.add("sw_version", string: device.daemonRelease)
            config.add("device", object: block)
            var origin = JSONLineWriter()
            origin.add("name", string: "forcescale-mqtt")
            origin.add("sw_version", string: release)
            config.add("origin", object: origin)
            return config
        }
        var weight = common("weight", name: "Weight")
        weight.add("state_topic", string: topics.weight)
        // The settled weight (protocol 1.3); a release, and an older daemon, carry only grams.
        weight.add("value_template", string: "{{ value_json.settled_grams | default(value_json.grams) }}")
        weight.add("json_attributes_topic", string: topics.weight)
        weight.add("device_class", string: "weight")
        weight.add("unit_of_measurement", string: "g")
        weight.add("state_class", string: "measurement")
        weight.add("suggested_display_precision", integer: 1)

        var loaded = common("loaded", name: "Loaded")
        loaded.add("state_topic", string: topics.loaded)
        loaded.add("payload_on", string: "ON")
        loaded.add("payload_off", string: "OFF")
        loaded.add("device_class", string: "occupancy")

        var peak = common("peak", name: "Peak")
        peak.add("state_topic", string: topics.peak)
        peak.add("event_types", strings: ["peak"])
        // Home Assistant's event entity wants an `event_type` in the payload; the payload is
        // the protocol's PEAK line, so the template makes one from it.
        peak.add("value_template", string: #"{{ {"event_type": "peak", "grams": value_json.grams, "raw": value_json.raw, "time": value_json.time} | to_json }}"#)

        // A saturated weight is a lower bound: the weight sensor's number cannot say so, so a
        // problem sensor beside it does, from the same payload (its `saturation_note`
        // attribute says it in words).
        var saturated = common("saturated", name: "Saturated")
        saturated.add("state_topic", string: topics.weight)
        saturated.add("value_template", string: "{{ 'ON' if value_json.saturated else 'OFF' }}")
        saturated.add("payload_on", string: "ON")
        saturated.add("payload_off", string: "OFF")
        saturated.add("device_class", string: "problem")

        return [(topics.weightConfig, weight.object), (topics.loadedConfig, loaded.object), (topics.peakConfig, peak.object),
                (topics.saturatedConfig, saturated.object)]
    }
}
