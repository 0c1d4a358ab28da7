import ScalePOSIX

/// `forcescale-mqtt --remove-discovery`: empties (with an empty retained message, which
/// Home Assistant takes as "remove the entity") every discovery config this host's
/// forcescale-mqtt left, for any device it ever published, without asking the daemon.
///
/// It subscribes to the discovery configs, then to a topic of its own and publishes one
/// message there: the broker handles one client's packets in order, so the retained configs
/// that the first subscription brings arrive before that message comes back, and its
/// arrival means that all of them were seen. No waiting for a guessed time.
package final class DiscoveryRemoval {
    private let connection: MQTTConnection
    private let loop: EventLoop
    private let log: (Int, String) -> Void
    private let discoveryPrefix: String
    /// `forcescale_<host>_`: the node ids this host's configs have.
    private let nodePrefix: String
    private let markerTopic: String
    /// The config topics emptied.
    package private(set) var removed: [String] = []
    package private(set) var failure: MQTTBridge.Failure?
    package private(set) var isDone = false

    package init(options: MQTTBridge.Options, loop: EventLoop, log: @escaping (Int, String) -> Void) throws {
        let configuration = options.configuration
        // An id of its own: with the running service's id, the broker would push the service
        // out (and publish its last will) while this runs.
        let serviceID = configuration.clientID ?? MQTTBridge.defaultClientID(host: options.host)
        var connectionOptions = MQTTConnection.Options(broker: configuration.broker, clientID: String(serviceID.prefix(20)) + "-rm")
        connectionOptions.username = configuration.username
        connectionOptions.password = options.password
        connectionOptions.caFile = configuration.caFile
        connection = try MQTTConnection(options: connectionOptions, loop: loop)
        self.loop = loop
        self.log = log
        discoveryPrefix = configuration.discoveryPrefix
        let sample = MQTTTopics(prefix: configuration.prefix, discoveryPrefix: discoveryPrefix, host: options.host, device: "x")
        nodePrefix = String(sample.nodeID.dropLast(1))
        markerTopic = "\(sample.base)/remove-discovery"
        connection.onEvent = { [unowned self] in handle($0) }
    }

    package func start() { connection.start() }

    /// Disconnects after what is queued is written.
    package func stop() { connection.stop() }

    private func handle(_ event: MQTTConnection.Event) {
        switch event {
        case .connected:
            connection.subscribe("\(discoveryPrefix)/+/+/+/config")
            connection.subscribe(markerTopic)
            connection.publish(markerTopic, "done", qos: 1, retain: false)
        case .refused(let refusal):
            if refusal.isAuthentication {
                failure = .authentication(broker: connection.options.broker, refusal: refusal, username: connection.options.username)
                loop.stop()
            }
        case .retrying(_, _, let reason):
            log(4, "cannot reach the broker \(connection.options.broker): \(reason); trying again")
        case .message(let topic, let payload):
            if topic == markerTopic {
                isDone = true
                loop.stop()
                return
            }
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard levels.count >= 4, !payload.isEmpty, levels[levels.count - 3].hasPrefix(nodePrefix) else { return }
            connection.publish(topic, "", qos: 1, retain: true)
            removed.append(topic)
            log(7, "removed \(topic)")
        }
    }
}
