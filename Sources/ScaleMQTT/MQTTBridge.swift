import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// forcescale-mqtt's work: forcescaled's stream in (through `ForcescaleClient`, which
/// reconnects by itself), MQTT out (through `MQTTConnection`), both on one `EventLoop`.
///
/// What goes where (docs/mqtt.md), for each device the daemon serves: the settled weight
/// and "something on the scale" as retained state, each PEAK as an event, live readings
/// when asked for, the device's availability and Home Assistant's discovery configs; and
/// the availability of the bridge itself (with a last will). Retained state is published
/// with QoS 1 and published again on every connection to the broker, so that a broker that
/// restarted without its store gets it all back.
package final class MQTTBridge {
    /// What the bridge needs besides its settings.
    package struct Options {
        var configuration: MQTTConfiguration
        /// This host's name, for topics and the default client id.
        var host: String
        /// The password read from `--password-file`.
        var password: String?
        /// forcescale-mqtt's release, for the discovery configs' `origin`.
        var release: String
        /// How often to ask the daemon which devices it serves: the protocol has no event for
        /// a device that goes away, so the bridge asks (a STATUS is one short line).
        var deviceCheckInterval: Double = 10

        package init(configuration: MQTTConfiguration, host: String, password: String?, release: String) {
            self.configuration = configuration
            self.host = host
            self.password = password
            self.release = release
        }
    }

    /// Why the bridge stopped by itself.
    package enum Failure: Error, CustomStringConvertible {
        /// The broker refused the user name or password: retrying cannot help.
        case authentication(broker: BrokerAddress, refusal: ConnectionRefusal, username: String?)

        package var description: String {
            switch self {
            case .authentication(let broker, let refusal, let username):
                let who = username.map { "user '\($0)'" } ?? "no user name"
                return "the broker \(broker) refused the connection: \(refusal) (with \(who); check --username and --password-file, or the broker's password file and ACLs)"
            }
        }
    }

    let options: Options
    /// The failure that stopped the loop, if one did.
    package private(set) var failure: Failure?

    private let loop: EventLoop
    private let log: (Int, String) -> Void
    private let connection: MQTTConnection
    private let client: ForcescaleClient
    private var attachment: ClientLoopAttachment?
    /// Asks the daemon for its devices: just after connecting, every
    /// `deviceCheckInterval` while connected, and when a reading names a device not yet
    /// published.
    private let deviceTimer: DeadlineTimer

    /// The devices published, by the daemon's name for each (READING's `device`: `event5`,
    /// `pen.evemu`): those it serves now, and those it served before (offline).
    private var devices: [String: PublishedDevice] = [:]
    private var daemonConnected = false
    private var isWatching = false
    /// When a line named a device not yet published, and the daemon was asked about it.
    private var askedAboutUnknownAt: Int64?
    /// Whether the outage in progress was reported: once per outage, not per attempt.
    private var brokerOutageReported = false
    private var daemonOutageReported = false
    private var brokerEverConnected = false

    /// The bridge's availability topic, which the last will names: `<prefix>/<host>/availability`.
    static func availabilityTopic(prefix: String, host: String) -> String {
        "\(prefix)/\(MQTTTopics.segment(host))/availability"
    }

    /// Makes the bridge; `start()` connects.
    /// - Parameters:
    ///   - log: Gets a syslog priority (3 error … 7 debug) and a message.
    /// - Throws: `MosquittoError` for options libmosquitto refuses, `Errno` for timers.
    package init(options: Options, loop: EventLoop, log: @escaping (Int, String) -> Void) throws {
        self.options = options
        self.loop = loop
        self.log = log
        let configuration = options.configuration
        var connectionOptions = MQTTConnection.Options(
            broker: configuration.broker,
            clientID: configuration.clientID ?? Self.defaultClientID(host: options.host))
        connectionOptions.username = configuration.username
        connectionOptions.password = options.password
        connectionOptions.caFile = configuration.caFile
        connectionOptions.will = (Self.availabilityTopic(prefix: configuration.prefix, host: options.host), "offline")
        connection = try MQTTConnection(options: connectionOptions, loop: loop)
        var clientOptions = ForcescaleClient.Options(reconnect: ReconnectPolicy())
        if let socket = configuration.socketPath { clientOptions.socketPath = socket }
        client = ForcescaleClient(options: clientOptions)
        deviceTimer = try DeadlineTimer()
        connection.onEvent = { [unowned self] in brokerEvent($0) }
        client.onConnectionEvent = { [unowned self] in daemonEvent($0) }
        try loop.watch(deviceTimer.descriptor) { [unowned self] in
            deviceTimer.acknowledge()
            checkDevice()
        }
    }

    deinit {
        attachment?.detach()
        loop.unwatch(deviceTimer.descriptor)
    }

    /// `forcescale-<host>`, cut to the 23 characters every broker must accept.
    static func defaultClientID(host: String) -> String {
        let id = "forcescale-" + String(MQTTTopics.segment(host).filter { $0.isLetter || $0.isNumber || $0 == "-" })
        return String(id.prefix(23))
    }

    /// Connects to the broker and the daemon; each retries by itself.
    /// - Throws: `Errno` when the daemon's socket cannot be watched.
    package func start() throws {
        connection.start()
        attachment = try client.attach(to: loop, onEvent: { [unowned self] in streamEvent($0) }, onError: { [unowned self] error in
            log(3, "forcescaled on \(client.options.socketPath): \(error)")
        })
    }

    /// Says `offline` for each device and the bridge, and disconnects cleanly.
    package func stop() {
        if connection.isConnected {
            for device in devices.values { connection.publish(device.topics.deviceAvailability, "offline", qos: 1, retain: true) }
            connection.publish(Self.availabilityTopic(prefix: options.configuration.prefix, host: options.host), "offline", qos: 1, retain: true)
        }
        connection.stop()
        attachment?.detach()
        client.close()
    }

    // MARK: - The broker

    private func brokerEvent(_ event: MQTTConnection.Event) {
        switch event {
        case .connected:
            log(brokerOutageReported || !brokerEverConnected ? 5 : 6, "connected to the broker \(options.configuration.broker)" + (brokerOutageReported && brokerEverConnected ? " again" : ""))
            brokerOutageReported = false
            brokerEverConnected = true
            publishEverything()
        case .refused(let refusal):
            if refusal.isAuthentication {
                failure = .authentication(broker: options.configuration.broker, refusal: refusal, username: options.configuration.username)
                loop.stop()
            } else if !brokerOutageReported {
                log(4, "the broker \(options.configuration.broker) refused the connection: \(refusal); trying again")
                brokerOutageReported = true
            }
        case .retrying(_, let delay, let reason):
            guard !brokerOutageReported else { return }
            brokerOutageReported = true
            let what = brokerEverConnected ? "lost the broker \(options.configuration.broker)" : "cannot reach the broker \(options.configuration.broker)"
            log(4, "\(what): \(reason); trying again with back-off (first in \(formatDelay(delay)) s, at most every \(formatDelay(connection.options.reconnect.maximumDelay)) s)")
        case .message(let topic, let payload):
            if topic == homeAssistantStatus, String(decoding: payload, as: UTF8.self) == "online" {
                // Home Assistant restarted: it may have lost what it knew.
                log(7, "Home Assistant is online: sending the discovery configs again")
                for device in sortedDevices { publishDiscovery(device) }
            }
        }
    }

    /// What a new connection to the broker must carry: the bridge is online, and for each
    /// device the discovery configs, its availability and the retained state.
    private func publishEverything() {
        connection.publish(Self.availabilityTopic(prefix: options.configuration.prefix, host: options.host), "online", qos: 1, retain: true)
        connection.subscribe(homeAssistantStatus)
        for device in sortedDevices {
            let topics = device.topics
            publishDiscovery(device)
            connection.publish(topics.deviceAvailability, device.available ? "online" : "offline", qos: 1, retain: true)
            if let lastWeight = device.lastWeight { connection.publish(topics.weight, lastWeight, qos: 1, retain: true) }
            if let loaded = device.loaded { connection.publish(topics.loaded, loaded ? "ON" : "OFF", qos: 1, retain: true) }
        }
    }

    /// Where Home Assistant says `online` when it (re)starts.
    private var homeAssistantStatus: String { MQTTTopics.homeAssistantStatus(discoveryPrefix: options.configuration.discoveryPrefix) }

    /// The devices in the order of their names, so that what is published is in one order.
    private var sortedDevices: [PublishedDevice] { devices.keys.sorted().map { devices[$0]! } }

    private func publishDiscovery(_ device: PublishedDevice) {
        for config in HomeAssistantDiscovery.configs(topics: device.topics, device: device.discovered, release: options.release) {
            connection.publish(config.topic, config.payload, qos: 1, retain: true)
        }
    }

    // MARK: - The daemon

    private func daemonEvent(_ event: ForcescaleClient.ConnectionEvent) {
        switch event {
        case .connected(let release):
            log(daemonOutageReported ? 5 : 6, "connected to forcescaled \(release) on \(client.options.socketPath)" + (daemonOutageReported ? " again" : ""))
            daemonOutageReported = false
            daemonConnected = true
            for device in devices.values { device.discovered.daemonRelease = release }
            // Requests wait for their replies: not from inside the client's own step.
            deviceTimer.arm(atMicroseconds: MonotonicClock.now())
        case .lost(let error):
            daemonConnected = false
            deviceTimer.arm(atMicroseconds: nil)
            for device in devices.values { setAvailable(device, false) }
            if !daemonOutageReported {
                log(4, "lost forcescaled: \(error); trying again with back-off")
                daemonOutageReported = true
            }
        case .retrying(_, _, let error):
            guard !daemonOutageReported else { return }
            daemonOutageReported = true
            log(4, "cannot reach forcescaled: \(error); trying again with back-off")
        }
    }

    /// Asks which devices the daemon serves, takes up those that are new or back (topics,
    /// discovery), says `offline` for those it no longer serves, and starts the WATCH (of
    /// every device) the first time.
    private func checkDevice() {
        guard daemonConnected else { return }
        defer {
            if daemonConnected {
                deviceTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(options.deviceCheckInterval * 1_000_000))
            }
            attachment?.flush()
        }
        do {
            let status = try client.status()
            let served = status.servedDevices
            if served.isEmpty, devices.values.contains(where: \.available) {
                log(4, "forcescaled reads no device now: the device is offline")
            }
            let servedNodes = Set(served.map(\.device))
            let new = served.filter { devices[$0.device] == nil }
            if !new.isEmpty {
                let listed = try client.devices()
                var taken = Set(devices.filter { servedNodes.contains($0.key) }.map(\.value.topics.device))
                for entry in new {
                    var device = DiscoveredDevice(served: entry, listed: listed, taken: taken)
                    device.daemonRelease = status.release
                    taken.insert(MQTTTopics.segment(device.identifier))
                    adopt(node: entry.device, device: device)
                }
            }
            if !isWatching {
                try client.watch()
                isWatching = true
            }
            for (node, device) in devices.sorted(by: { $0.key < $1.key }) {
                if !served.isEmpty, device.available, !servedNodes.contains(node) {
                    log(4, "forcescaled no longer serves \(node): \(device.discovered.name) is offline")
                }
                setAvailable(device, servedNodes.contains(node))
            }
        } catch {
            log(4, "forcescaled on \(client.options.socketPath): \(error)")
        }
    }

    /// Takes up a device: its topics (from its id, stable across replugging), discovery.
    /// A device plugged in again under another node takes over its topics and state.
    private func adopt(node: String, device: DiscoveredDevice) {
        let topics = MQTTTopics(
            prefix: options.configuration.prefix, discoveryPrefix: options.configuration.discoveryPrefix,
            host: options.host, device: device.identifier)
        let published: PublishedDevice
        if let (oldNode, replugged) = devices.first(where: { $0.value.topics == topics }) {
            devices[oldNode] = nil
            published = replugged
            published.discovered = device
        } else {
            published = PublishedDevice(topics: topics, discovered: device)
        }
        log(6, "publishing \(device.name) (\(node)) under \(topics.deviceBase)")
        devices[node] = published
        publishDiscovery(published)
    }

    private func setAvailable(_ device: PublishedDevice, _ available: Bool) {
        guard available != device.available else { return }
        device.available = available
        connection.publish(device.topics.deviceAvailability, available ? "online" : "offline", qos: 1, retain: true)
    }

    // MARK: - The stream

    private func streamEvent(_ event: StreamEvent) {
        switch event.message {
        case .reading(let reading):
            guard let device = published(reading.device) else { return }
            setAvailable(device, true)
            let topics = device.topics
            let payload = Self.payload(of: reading)
            let isLoaded = reading.contacts > 0
            let settled = reading.isSettledWeight
            let released = !isLoaded && device.loaded == true
            if isLoaded != device.loaded {
                device.loaded = isLoaded
                connection.publish(topics.loaded, isLoaded ? "ON" : "OFF", qos: 1, retain: true)
            }
            if settled && !device.wasSettled || released {
                // A weight that came to rest, or the release: the scale's new value.
                device.lastWeight = payload
                connection.publish(topics.weight, payload, qos: 1, retain: true)
            }
            device.wasSettled = settled
            let interval = Int64(options.configuration.liveIntervalMilliseconds) * 1000
            if interval > 0 {
                let now = MonotonicClock.now()
                if device.lastLive == .min || now - device.lastLive >= interval {
                    device.lastLive = now
                    connection.publish(topics.reading, payload, qos: 0, retain: false)
                }
            }
        case .peak(let peak):
            guard let device = published(peak.device) else { return }
            var line = peak.line
            if line.hasSuffix("\n") { line.removeLast() }
            connection.publish(device.topics.peak, line, qos: 1, retain: false)
        }
    }

    /// The device a reading or PEAK names; `nil` until it is published, and then the
    /// daemon is asked about it at once (a device plugged in, or served, since the last
    /// check). An older daemon's line without a device is its one device's.
    private func published(_ node: String?) -> PublishedDevice? {
        if let node, let device = devices[node] { return device }
        if node == nil, devices.count == 1 { return devices.first!.value }
        // At most once a second: a device that STATUS does not name yet is not asked about
        // at every reading.
        let now = MonotonicClock.now()
        if askedAboutUnknownAt.map({ now - $0 >= 1_000_000 }) ?? true {
            askedAboutUnknownAt = now
            deviceTimer.arm(atMicroseconds: now)
        }
        return nil
    }

    /// The payload of a reading on the weight and reading topics (their Home Assistant
    /// attributes): the READING object, with `calibration_note` saying in words when it is
    /// past the heaviest calibration weight, and `saturation_note` when it is saturated (a
    /// lower bound: "at least 384.8 g (saturated)").
    static func payload(of reading: ReadingMessage) -> String {
        var json = reading.json
        json.add("calibration_note", string: reading.beyondCalibrationText)
        json.add("saturation_note", string: reading.saturated ? ReadingMessage.lowerBoundText(MassUnit.sentence(grams: reading.shownGrams)) : nil)
        return json.object
    }

    private func formatDelay(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// What the bridge keeps of one device it publishes.
private final class PublishedDevice {
    let topics: MQTTTopics
    var discovered: DiscoveredDevice
    /// Whether the daemon serves it now (its availability topic says so).
    var available = false
    /// The last settled weight's payload, published again on each connection.
    var lastWeight: String?
    /// Whether something is on it; `nil` before the first reading.
    var loaded: Bool?
    var wasSettled = false
    var lastLive: Int64 = .min

    init(topics: MQTTTopics, discovered: DiscoveredDevice) {
        self.topics = topics
        self.discovered = discovered
    }
}
