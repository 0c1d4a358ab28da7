import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// forcescale-mqtt's work: forcescaled's stream in (through `ForcescaleClient`, which
/// reconnects by itself), MQTT out (through `MQTTConnection`), both on one `EventLoop`.
///
/// What goes where (docs/mqtt.md): the settled weight and "something on the scale" as
/// retained state, each PEAK as an event, live readings when asked for, availability of
/// the bridge (with a last will) and of the device, and Home Assistant's discovery
/// configs. Retained state is published with QoS 1 and published again on every
/// connection to the broker, so that a broker that restarted without its store gets it
/// all back.
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
        /// How often to ask the daemon which device it reads: the protocol has no event for
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
    /// Asks the daemon for its device: just after connecting, and every
    /// `deviceCheckInterval` while connected.
    private let deviceTimer: DeadlineTimer

    private var topics: MQTTTopics?
    private var device: DiscoveredDevice?
    /// The daemon's node name of the device the topics are for (`event5`).
    private var deviceNodeName: String?
    private var daemonConnected = false
    private var deviceAvailable = false
    private var isWatching = false
    /// The last settled weight's payload, published again on each connection.
    private var lastWeight: String?
    /// Whether something is on the scale; `nil` before the first reading.
    private var loaded: Bool?
    private var wasSettled = false
    private var lastLive: Int64 = .min
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

    /// Says `offline` for the device and the bridge, and disconnects cleanly.
    package func stop() {
        if let topics, connection.isConnected {
            connection.publish(topics.deviceAvailability, "offline", qos: 1, retain: true)
        }
        if connection.isConnected {
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
            if let topics, topic == topics.homeAssistantStatus, String(decoding: payload, as: UTF8.self) == "online" {
                // Home Assistant restarted: it may have lost what it knew.
                log(7, "Home Assistant is online: sending the discovery configs again")
                publishDiscovery()
            }
        }
    }

    /// What a new connection to the broker must carry: the bridge is online, the discovery
    /// configs, the device's availability and the retained state.
    private func publishEverything() {
        connection.publish(Self.availabilityTopic(prefix: options.configuration.prefix, host: options.host), "online", qos: 1, retain: true)
        connection.subscribe("\(options.configuration.discoveryPrefix)/status")
        guard let topics else { return }
        publishDiscovery()
        connection.publish(topics.deviceAvailability, deviceAvailable ? "online" : "offline", qos: 1, retain: true)
        if let lastWeight { connection.publish(topics.weight, lastWeight, qos: 1, retain: true) }
        if let loaded { connection.publish(topics.loaded, loaded ? "ON" : "OFF", qos: 1, retain: true) }
    }

    private func publishDiscovery() {
        guard let topics, let device else { return }
        for config in HomeAssistantDiscovery.configs(topics: topics, device: device, release: options.release) {
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
            device?.daemonRelease = release
            // Requests wait for their replies: not from inside the client's own step.
            deviceTimer.arm(atMicroseconds: MonotonicClock.now())
        case .lost(let error):
            daemonConnected = false
            deviceTimer.arm(atMicroseconds: nil)
            setDeviceAvailable(false)
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

    /// Asks which device the daemon reads, takes it up (topics, discovery) when it is new
    /// or back, and starts the WATCH the first time.
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
            guard let node = status.device else {
                if deviceAvailable { log(4, "forcescaled reads no device now: the device is offline") }
                setDeviceAvailable(false)
                return
            }
            if node != deviceNodeName || topics == nil {
                let entry = try client.devices().first { $0.active }
                let name = entry?.name ?? node
                let identifier = entry?.id ?? node
                adopt(node: node, device: DiscoveredDevice(name: name, identifier: identifier, daemonRelease: status.release))
            }
            if !isWatching {
                try client.watch()
                isWatching = true
            }
            setDeviceAvailable(true)
        } catch {
            log(4, "forcescaled on \(client.options.socketPath): \(error)")
        }
    }

    /// Takes up a device: its topics (from its id, stable across replugging), discovery.
    private func adopt(node: String, device: DiscoveredDevice) {
        let newTopics = MQTTTopics(
            prefix: options.configuration.prefix, discoveryPrefix: options.configuration.discoveryPrefix,
            host: options.host, device: device.identifier)
        if let topics, topics != newTopics, connection.isConnected {
            connection.publish(topics.deviceAvailability, "offline", qos: 1, retain: true)
        }
        if topics != newTopics {
            lastWeight = nil
            loaded = nil
            wasSettled = false
            deviceAvailable = false
        }
        log(6, "publishing \(device.name) (\(node)) under \(newTopics.deviceBase)")
        topics = newTopics
        self.device = device
        deviceNodeName = node
        publishDiscovery()
    }

    private func setDeviceAvailable(_ available: Bool) {
        guard available != deviceAvailable else { return }
        deviceAvailable = available
        guard let topics else { return }
        connection.publish(topics.deviceAvailability, available ? "online" : "offline", qos: 1, retain: true)
    }

    // MARK: - The stream

    private func streamEvent(_ event: StreamEvent) {
        guard let topics else { return }
        switch event.message {
        case .reading(let reading):
            if let node = reading.device, node != deviceNodeName {
                // Another device (replugged under a new node, say): find out what it is.
                deviceTimer.arm(atMicroseconds: MonotonicClock.now())
            }
            setDeviceAvailable(true)
            let payload = Self.payload(of: reading)
            let isLoaded = reading.contacts > 0
            let settled = reading.isSettledWeight
            let released = !isLoaded && loaded == true
            if isLoaded != loaded {
                loaded = isLoaded
                connection.publish(topics.loaded, isLoaded ? "ON" : "OFF", qos: 1, retain: true)
            }
            if settled && !wasSettled || released {
                // A weight that came to rest, or the release: the scale's new value.
                lastWeight = payload
                connection.publish(topics.weight, payload, qos: 1, retain: true)
            }
            wasSettled = settled
            let interval = Int64(options.configuration.liveIntervalMilliseconds) * 1000
            if interval > 0 {
                let now = MonotonicClock.now()
                if lastLive == .min || now - lastLive >= interval {
                    lastLive = now
                    connection.publish(topics.reading, payload, qos: 0, retain: false)
                }
            }
        case .peak(let peak):
            var line = peak.line
            if line.hasSuffix("\n") { line.removeLast() }
            connection.publish(topics.peak, line, qos: 1, retain: false)
        }
    }

    /// The payload of a reading on the weight and reading topics (their Home Assistant
    /// attributes): the READING object, with `calibration_note` saying in words when it is
    /// past the heaviest calibration weight.
    static func payload(of reading: ReadingMessage) -> String {
        var json = reading.json
        json.add("calibration_note", string: reading.beyondCalibrationText)
        return json.object
    }

    private func formatDelay(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
