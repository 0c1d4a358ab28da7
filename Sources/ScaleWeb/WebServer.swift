import Glibc
import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// forcescale-web itself: a client of forcescaled (ScaleClient's reconnecting
/// `ForcescaleClient`) and an HTTP server (`HTTPServer`), on one `EventLoop` and one thread.
///
/// Each READING and PEAK from the daemon goes into the `EventRing` (for `/events`) and the
/// `MetricsState` (for `/metrics`), and wakes the suspended streams; nothing else runs
/// between events except the keep-alive timer, armed only while a stream is open.
package final class WebServer {
    package struct Options {
        var socketPath: String
        var allowControl: Bool
        var release: String
        /// The force log that `/api/sessions` reads (read-only); nil for the default, looked
        /// up at each request (``SessionHistory/path``).
        package var logPath: String?
        /// Events kept for clients that reconnect with `Last-Event-ID` (and for slow ones).
        var ringCapacity = 1024
        /// Seconds between keep-alive comments on an idle stream.
        var keepAliveSeconds = 15.0
        /// Seconds to wait for the daemon's replies (STATUS, DEVICES, TARE).
        var daemonTimeout = 2.0
        package var limits = HTTPServer.Limits()
        /// `/metrics` without a key (`--public-metrics`).
        package var publicMetrics = false
        /// Host names besides the address's own and `localhost` (`--allow-host`).
        package var allowedHosts: [String] = []

        package init(socketPath: String, allowControl: Bool, release: String) {
            self.socketPath = socketPath
            self.allowControl = allowControl
            self.release = release
        }
    }

    let options: Options
    private let loop: EventLoop
    private let client: ForcescaleClient
    private var attachment: ClientLoopAttachment?
    private var http: HTTPServer?
    private var ring: EventRing
    private var metrics: MetricsState
    private var subscribers: [EventStreamSubscriber] = []
    private let keepAliveTimer: DeadlineTimer
    /// Asks for the stream on the loop's next turn after the first connection.
    private let watchTimer: DeadlineTimer
    private var keepAliveArmed = false
    private var isStopping = false
    /// The one answer to "is the daemon up" that `/api/status`, `/metrics` and the stream's
    /// `daemon` events all give: connected, and answering (`unansweredSince` is nil).
    private var daemonUp = false
    /// Since when a request or a probe has had no reply within `daemonTimeout`: the
    /// daemon is connected but does not answer (stopped, or too busy to read).
    private var unansweredSince: Int64?
    /// A probe sent while the daemon seemed up, waiting for any line.
    private var probeSentAt: Int64?
    /// Checks on probes and, while the daemon does not answer, for its first line again.
    private let livenessTimer: DeadlineTimer
    /// Whether the current outage was reported already.
    private var reportedWaiting = false
    private let log: (String) -> Void
    private let history: SessionHistory
    private let keys: WebKeys
    private let access: WebAccess
    private let hosts: WebHostPolicy

    /// Sets up and starts serving on `listener`; the daemon is connected to at once and
    /// again whenever it goes away (with back-off).
    /// - Parameter keys: The keys a request must carry (`WebAccess`), their files written.
    /// - Throws: `HTTPServerError`, or `Errno` for the loop's timers.
    package init(options: Options, keys: WebKeys, listener: InetListener, loop: EventLoop, log: @escaping (String) -> Void) throws {
        self.options = options
        self.loop = loop
        self.log = log
        self.keys = keys
        let address = try? ListenAddress(parsing: listener.address)
        access = WebAccess(readKey: keys.readKey, controlKey: options.allowControl ? keys.controlKey : nil,
                           port: address?.port ?? 0, publicMetrics: options.publicMetrics)
        hosts = WebHostPolicy(listenHost: address?.host ?? "127.0.0.1", names: options.allowedHosts)
        history = SessionHistory(path: options.logPath)
        ring = EventRing(capacity: options.ringCapacity)
        metrics = MetricsState(release: options.release)
        keepAliveTimer = try DeadlineTimer()
        watchTimer = try DeadlineTimer()
        livenessTimer = try DeadlineTimer()
        client = ForcescaleClient(options: .init(socketPath: options.socketPath, timeout: options.daemonTimeout, reconnect: ReconnectPolicy()))
        try loop.watch(keepAliveTimer.descriptor) { [unowned self] in
            keepAliveTimer.acknowledge()
            keepAlive()
        }
        try loop.watch(watchTimer.descriptor) { [unowned self] in
            watchTimer.acknowledge()
            startWatching()
        }
        try loop.watch(livenessTimer.descriptor) { [unowned self] in
            livenessTimer.acknowledge()
            checkLiveness()
        }
        http = try HTTPServer(listener: listener, loop: loop, limits: options.limits, log: { log("libmicrohttpd: \($0)") }) { [unowned self] in
            respond(to: $0)
        }
        client.onConnectionEvent = { [unowned self] event in connectionChanged(event) }
        // WATCH is asked for on the first connection and again after each reconnection.
        attachment = try client.attach(to: loop, onEvent: { [unowned self] in received($0) }, onError: { log("daemon: \($0)") })
    }

    /// Ends every stream, stops the HTTP server and leaves the daemon.
    package func stop() {
        guard !isStopping else { return }
        isStopping = true
        http?.stop(subscribers: subscribers)
        http = nil
        subscribers.removeAll()
        keepAliveTimer.arm(atMicroseconds: nil)
        loop.unwatch(keepAliveTimer.descriptor)
        watchTimer.arm(atMicroseconds: nil)
        loop.unwatch(watchTimer.descriptor)
        livenessTimer.arm(atMicroseconds: nil)
        loop.unwatch(livenessTimer.descriptor)
        attachment?.detach()
        attachment = nil
        client.close()
    }

    // MARK: The daemon

    private func connectionChanged(_ event: ForcescaleClient.ConnectionEvent) {
        switch event {
        case .connected(let release):
            reportedWaiting = false
            log("connected to forcescaled \(release) on \(options.socketPath)")
            keys.socketMayHaveChanged()
            unansweredSince = nil
            probeSentAt = nil
            updateDaemonState()
        case .lost(let error):
            log("lost forcescaled: \(error)")
            updateDaemonState()
        case .retrying(_, let delay, let error):
            // Said once per outage, not on every attempt of a long one.
            if !reportedWaiting {
                reportedWaiting = true
                log("waiting for forcescaled (\(error)); trying again with back-off, first in \(delay) s")
            }
        }
    }

    /// Works out whether the daemon is up now and, when that changed, says so everywhere at
    /// once: the metric, and a `daemon` event to every stream.
    private func updateDaemonState() {
        let up = client.isConnected && unansweredSince == nil
        guard up != daemonUp else { return }
        daemonUp = up
        metrics.daemonUp = up
        publish(.daemon, data: ServerSentEvents.daemonData(up: up))
        // Not from inside the client's own callback (it runs within ForcescaleClient's
        // connection attempt): on the loop's next turn.
        if up, !isWatching { watchTimer.arm(atMicroseconds: MonotonicClock.now()) }
    }

    /// Asks for the stream. On reconnections ForcescaleClient asks again by itself once a
    /// WATCH has succeeded; this is for the first connection.
    private var isWatching = false
    private func startWatching() {
        guard !isWatching, client.isConnected else { return }
        do {
            try client.watch(timeout: options.daemonTimeout)
            isWatching = true
        } catch {
            log("daemon: WATCH failed: \(error)")
        }
        attachment?.flush()
    }

    /// The daemon did not reply in time: it is down for every endpoint until it sends a line
    /// again (the reply it owes, once it runs again), which the timer looks for every second.
    private func markUnanswered(since time: Int64) {
        guard unansweredSince == nil else { return }
        unansweredSince = time
        probeSentAt = nil
        log("forcescaled does not answer (no reply in \(DaemonClient.seconds(options.daemonTimeout)) s); it counts as down until it does")
        updateDaemonState()
        livenessTimer.arm(atMicroseconds: MonotonicClock.now() + 1_000_000)
    }

    /// Whether a line came after the daemon stopped answering, or after the probe.
    private func noteHeard() {
        guard let heard = client.lastHeard else { return }
        if let since = unansweredSince, heard > since {
            unansweredSince = nil
            log("forcescaled answers again")
            updateDaemonState()
        }
        if let sent = probeSentAt, heard > sent { probeSentAt = nil }
    }

    /// The liveness timer: every second while the daemon does not answer, at a probe's
    /// deadline, and when the daemon will have been silent for a keep-alive interval.
    private func checkLiveness() {
        noteHeard()
        guard client.isConnected else { return }
        if unansweredSince != nil {
            livenessTimer.arm(atMicroseconds: MonotonicClock.now() + 1_000_000)
        } else if let sent = probeSentAt {
            markUnanswered(since: sent)
        } else {
            probeIfSilent()
        }
    }

    /// While a stream is open: when the daemon has sent nothing for a keep-alive interval
    /// (an idle device, or a daemon that stopped), a STATUS sent without waiting tells the
    /// two apart; until then, the timer is set for that moment.
    private func probeIfSilent() {
        noteHeard()
        guard daemonUp, probeSentAt == nil, !subscribers.isEmpty, let heard = client.lastHeard else { return }
        let now = MonotonicClock.now()
        let silence = Int64(options.keepAliveSeconds * 1_000_000)
        guard now - heard >= silence else {
            livenessTimer.arm(atMicroseconds: heard + silence)
            return
        }
        probeSentAt = now
        do {
            try client.probe()
        } catch {
            log("daemon: \(error)")
        }
        livenessTimer.arm(atMicroseconds: now + Int64(options.daemonTimeout * 1_000_000))
    }

    /// A request of the daemon, unless it is known not to answer (`nil` then, at once); a
    /// reply that does not come in time makes it down everywhere.
    private func askDaemon<T>(_ request: () throws(DaemonClientError) -> T) -> Result<T, DaemonClientError>? {
        noteHeard()
        guard daemonUp else { return nil }
        let started = MonotonicClock.now()
        defer { attachment?.flush() }
        do {
            return .success(try request())
        } catch {
            if case .timedOut = error { markUnanswered(since: started) }
            return .failure(error)
        }
    }

    private func received(_ event: StreamEvent) {
        noteHeard()
        // The daemon's line as it sent it, with any field a later daemon added.
        let line = String(decoding: event.line, as: UTF8.self)
        switch event.message {
        case .reading(let reading):
            metrics.observe(reading, receivedSeconds: Self.wallSeconds())
            publish(.reading, data: line)
        case .peak(let peak):
            metrics.observe(peak)
            publish(.peak, data: line)
        }
    }

    private func publish(_ kind: StreamEventKind, data: String) {
        ring.append(kind, data: data)
        wakeSubscribers()
    }

    private func wakeSubscribers() {
        subscribers.removeAll { $0.isFinished }
        var woken = false
        for subscriber in subscribers where subscriber.isSuspended {
            subscriber.wake()
            woken = true
        }
        if woken { http?.runSoon() }
        if subscribers.isEmpty, keepAliveArmed {
            keepAliveTimer.arm(atMicroseconds: nil)
            keepAliveArmed = false
        }
    }

    private func keepAlive() {
        keepAliveArmed = false
        subscribers.removeAll { $0.isFinished }
        probeIfSilent()
        for subscriber in subscribers {
            subscriber.cursor.keepAliveDue = true
            subscriber.wake()
        }
        http?.runSoon()
        armKeepAlive()
    }

    private func armKeepAlive() {
        guard !keepAliveArmed, !subscribers.isEmpty else { return }
        keepAliveArmed = true
        keepAliveTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(options.keepAliveSeconds * 1_000_000))
    }

    // MARK: HTTP

    /// The Host check, then the credential (`WebAccess`), then the endpoint.
    private func respond(to request: HTTPRequest) -> HTTPResponse {
        guard hosts.allows(request.header("Host")) else {
            return .error(421, "Misdirected Request: this forcescale-web answers to its address and localhost, not to the name \(UntrustedText.escaped(request.header("Host") ?? "(none)")) (its admin adds names with --allow-host)",
                          path: request.path)
        }
        switch access.decide(method: request.method, path: request.path, queryKey: request.queryArgument("key"),
                             authorization: request.header("Authorization"), cookie: request.header("Cookie")) {
        case .exchange(let location, let cookie):
            return .complete(status: 303, contentType: "text/plain; charset=utf-8", body: Array("See Other: \(location)\n".utf8),
                             headers: [("Location", location), ("Set-Cookie", cookie), ("Cache-Control", "no-store")])
        case .unauthorized(let why):
            if request.path == WebEndpoint.page.rawValue {
                return .complete(status: 401, contentType: "text/html; charset=utf-8", body: Array(DashboardPage.unauthorized.utf8))
            }
            return .error(401, "Unauthorized: \(why)", path: request.path)
        case .serve(let right):
            return route(request, right: right)
        }
    }

    private func route(_ request: HTTPRequest, right: WebAccess.Right) -> HTTPResponse {
        switch RouteDecision.route(method: request.method, path: request.path) {
        case .notFound:
            return .error(404, "Not Found: \(UntrustedText.escaped(request.path)) (the endpoints are /, /page.js, /page.css, /events, /api/status, /api/tare, /api/grab, /api/sessions, /api/sessions/ID and /metrics)",
                          path: request.path)
        case .badRequest(let message):
            return SessionHistory.badRequest(message)
        case .endpoint(.sessions):
            return history.list(before: request.queryArgument("before"), limit: request.queryArgument("limit"))
        case .session(let id, .svg):
            do {
                let plot = try SessionHistory.PlotRequest.parse(layout: request.queryArgument("layout"), started: request.queryArgument("started"))
                return history.session(id: id, .svg, plot: plot)
            } catch {
                return .apiError(400, error.message)
            }
        case .session(let id, let representation):
            return history.session(id: id, representation)
        case .methodNotAllowed(let allow):
            return .error(405, "Method Not Allowed: \(UntrustedText.escaped(request.path)) takes \(allow)", path: request.path, headers: [("Allow", allow)])
        case .endpoint(.page):
            return .complete(status: 200, contentType: "text/html; charset=utf-8", body: Array(DashboardPage.html.utf8))
        case .endpoint(.script):
            return .complete(status: 200, contentType: "text/javascript; charset=utf-8", body: Array(EmbeddedPage.script.utf8))
        case .endpoint(.style):
            return .complete(status: 200, contentType: "text/css; charset=utf-8", body: Array(EmbeddedPage.css.utf8))
        case .endpoint(.events):
            return .stream(subscribe(lastEventID: ServerSentEvents.lastEventID(request.header("Last-Event-ID"))))
        case .endpoint(.status):
            return status(control: options.allowControl && right >= .control)
        case .endpoint(.tare):
            return tare(request, right: right)
        case .endpoint(.grab):
            return grab(request, right: right)
        case .endpoint(.metrics):
            refreshDeviceInfo()
            let format = MetricsFormat.negotiate(accept: request.header("Accept"))
            return .complete(status: 200, contentType: format.contentType, body: Array(metrics.render(format).utf8))
        }
    }

    private func subscribe(lastEventID: UInt64?) -> EventStreamSubscriber {
        let start = ring.resumePoint(lastEventID: lastEventID)
        // The greeting: how long to wait before reconnecting, then where the daemon stands,
        // with an id after everything so far (it is this client's alone).
        let greetingID = ring.takeID()
        // Events missed come first, then the daemon's state as of now.
        noteHeard()
        let introduction = WebStreamEvent(id: greetingID, kind: .daemon, data: ServerSentEvents.daemonData(up: daemonUp))
        let subscriber = EventStreamSubscriber(
            cursor: EventCursor(after: start, preamble: ServerSentEvents.retry, introduction: introduction),
            ring: { [unowned self] in ring }, isStopping: { [unowned self] in isStopping })
        subscribers.append(subscriber)
        armKeepAlive()
        probeIfSilent()
        return subscriber
    }

    /// `{"up":…,"control":…,"status":…}`: `control` says whether this server takes a tare
    /// from this request's credential (`--allow-control` and the control key), so that the
    /// page offers the button only where it works.
    private func status(control allowed: Bool) -> HTTPResponse {
        let control = allowed ? "true" : "false"
        let down = HTTPResponse.json(200, #"{"up":false,"control":"# + control + #","status":null}"#)
        guard case .success(let status)? = askDaemon({ () throws(DaemonClientError) in
            try client.request(.status(), expecting: StatusMessage.self, timeout: options.daemonTimeout)
        }), daemonUp else {
            return down
        }
        // STATUS as the daemon sent it, with any field a later daemon added.
        return .json(200, #"{"up":true,"control":"# + control + #","status":"# + status.text + "}")
    }

    /// How long at most the page's weighing keeps the pad: a page closed mid-weighing holds
    /// it through forcescale-web's connection, which does not go with the page, so the bound
    /// is what gives it back then.
    static let grabSeconds = 60.0

    /// `POST /api/grab[?device=…][&enable=false]`: the daemon's GRAB for the page's "Weigh
    /// what I add", through this server's connection; its reply as the daemon sent it.
    private func grab(_ request: HTTPRequest, right: WebAccess.Right) -> HTTPResponse {
        let enable = request.queryArgument("enable") != "false"
        return control(request, right: right) { () throws(DaemonClientError) in
            try client.request(
                .grab(enable: enable, seconds: enable ? Self.grabSeconds : nil, device: request.queryArgument("device")),
                expecting: GrabMessage.self, timeout: options.daemonTimeout)
        }
    }

    private func tare(_ request: HTTPRequest, right: WebAccess.Right) -> HTTPResponse {
        // The device of the card whose button was pressed; with several devices served, a
        // TARE that names none is refused by the daemon (its ERROR lists them).
        control(request, right: right) { () throws(DaemonClientError) in
            try client.request(.tare(device: request.queryArgument("device")), expecting: TareMessage.self, timeout: options.daemonTimeout)
        }
    }

    /// A request that changes the scale, once `--allow-control`, the control key and the
    /// origin allow it: the daemon's reply line, or why not. Each one is logged, allowed or
    /// refused (`audit`).
    private func control<Reply: DaemonLineMessage>(
        _ request: HTTPRequest, right: WebAccess.Right, _ ask: () throws(DaemonClientError) -> DaemonReply<Reply>
    ) -> HTTPResponse {
        if let refusal = WebControlPolicy.refusal(
            allowControl: options.allowControl, right: right, origin: request.header("Origin"), host: request.header("Host")) {
            audit(request, "refused (403): \(refusal)")
            return .apiError(403, "Forbidden: \(refusal)")
        }
        guard client.isConnected else {
            audit(request, "failed (503): forcescaled is not running")
            return .apiError(503, "forcescaled is not running (start it, or the forcescale service)")
        }
        switch askDaemon(ask) {
        case nil:
            audit(request, "failed (503): forcescaled does not answer")
            return .apiError(503, "forcescaled does not answer (it may be stopped or overloaded; try again)")
        case .success(let reply)?:
            audit(request, "done: \(reply.text)")
            return .json(200, reply.text)
        case .failure(let error)?:
            audit(request, "failed (\(error.isPermissionDenied ? 403 : 502)): \(error.description)")
            return .apiError(error.isPermissionDenied ? 403 : 502, error.description)
        }
    }

    /// One line in the log for a control request: who asked (the peer's address and port),
    /// what (the endpoint, the device, the query), and what came of it; text from the
    /// request escaped.
    private func audit(_ request: HTTPRequest, _ outcome: String) {
        let device = request.queryArgument("device").map { UntrustedText.escaped($0) } ?? "(the only one)"
        let enable = request.path == WebEndpoint.grab.rawValue ? " enable=\(UntrustedText.escaped(request.queryArgument("enable") ?? "true"))" : ""
        log("control: \(request.method) \(UntrustedText.escaped(request.path)) device=\(device)\(enable) from \(request.peer): \(UntrustedText.escaped(outcome))")
    }

    /// Asks the daemon which devices it serves, for `forcescale_device_info`.
    private func refreshDeviceInfo() {
        guard case .success(let status)? = askDaemon({ () throws(DaemonClientError) in try client.status(timeout: options.daemonTimeout) }) else {
            metrics.deviceInfos = []
            return
        }
        let served = status.servedDevices
        guard !served.isEmpty else {
            metrics.deviceInfos = []
            return
        }
        let devices = (try? askDaemon({ () throws(DaemonClientError) in try client.devices(timeout: options.daemonTimeout) })?.get()) ?? []
        metrics.deviceInfos = served.map { served in
            let entry = devices.first { $0.active && SourceDevice.nodeName(of: $0.path) == served.device }
            return MetricsState.DeviceInfo(
                device: served.device, name: entry?.name ?? served.name ?? served.device, id: entry?.id ?? "", model: served.model ?? "")
        }
    }

    private static func wallSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
