import ArgumentParsing
import Glibc
import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleWeb

/// forcescale-web's command line.
enum ForcescaleWeb: ParsableCommand {
    static let release = Release.version

    static let socket = OptionKey<String?>(
        "socket", valueName: "path",
        help: "forcescaled's socket. (default: \(DaemonClient.systemSocketPath) when it exists, else $XDG_RUNTIME_DIR/\(DaemonClient.userSocketName))",
        parser: .text)
    static let listen = OptionKey<ListenAddress?>(
        "listen", valueName: "addr:port",
        help: "Where to serve HTTP: 127.0.0.1:PORT, [::1]:PORT, 0.0.0.0:PORT for every address; port 0 picks a free one. (default: \(ListenAddress.default))",
        parser: ValueParser { text throws(InvalidValue) in
            do throws(ListenAddressError) {
                return try ListenAddress(parsing: text)
            } catch {
                // Its own words name the option and the value: `--listen x: give an address and a port: …`.
                throw .message(error.description)
            }
        })
    static let allowControl = OptionKey(
        flag: "allow-control",
        help: "Let those who hold the control key tare the scale and take the pad for a weighing from the dashboard (POST /api/tare, /api/grab from the page's own origin).")
    static let keyDirectory = OptionKey<String?>(
        "key-dir", valueName: "dir",
        help: "Where to write the access keys (read-key, control-key), made anew at each start. (default: $RUNTIME_DIRECTORY, else $XDG_RUNTIME_DIR/forcescale-web)",
        parser: .text)
    static let controlGroup = OptionKey<String?>(
        "control-group", valueName: "name",
        help: "The group that may read the control key, when forcescale-web is in it; else only its own user may. (default: \(defaultControlGroup))",
        parser: .text)
    static let allowHost = OptionKey<[String]>(
        repeating: "allow-host", valueName: "name",
        help: "A host name requests may use besides the listening address, localhost, 127.0.0.1 and [::1] (a scraper's name for this machine); repeat for more.",
        parser: .text)
    static let publicMetrics = OptionKey(
        flag: "public-metrics",
        help: "Serve /metrics without a key (for a Prometheus without the read key).")
    static let defaultControlGroup = "forcescale-control"
    static let logDatabase = OptionKey<String?>(
        "log-db", valueName: "path",
        help: "The force log whose sessions the History view and /api/sessions show, read-only. (default, looked up at each request: /var/lib/forcescale/log.sqlite when it exists, else $XDG_STATE_HOME/forcescale/log.sqlite, else the system one)",
        parser: .text)

    static let configuration = CommandConfiguration(
        name: "forcescale-web",
        abstract: "The scale in a browser, and Prometheus metrics, from forcescaled.",
        discussion: """
            A client of forcescaled's Unix socket that serves, over HTTP: a live dashboard at /, \
            the stream of readings and peaks as Server-Sent Events at /events, the daemon's \
            status at /api/status, the force log's sessions (when forcescaled logs) at \
            /api/sessions with their readings as CSV or JSON lines and their plots, and metrics \
            for Prometheus at /metrics (the text format, or OpenMetrics when asked). POST \
            /api/tare tares the scale and POST /api/grab takes the pad for the page's weighing \
            (60 s at most), only with --allow-control and only from the dashboard's own page. When the daemon goes away the pages say so \
            and forcescale-web connects again by itself.

            Every request needs a key, made anew at each start and written into --key-dir: \
            read-key, readable by the group of forcescaled's socket, and with --allow-control \
            control-key, readable by --control-group. forcescale-web-open opens the page with \
            it; curl and Prometheus send it as Authorization: Bearer. Requests that name \
            another host than this server's address, localhost or an --allow-host name get 421.

            It listens on loopback only unless --listen names another address. Started by \
            systemd with a listening socket (LISTEN_FDS), it serves that socket and ignores \
            --listen. SIGINT and SIGTERM stop it. See forcescale-web(1).
            """,
        options: [socket, listen, allowControl, keyDirectory, controlGroup, allowHost, publicMetrics, logDatabase],
        version: release)
}

func say(_ message: String) {
    writeToStandardError("forcescale-web: \(message)\n")
}

extension ForcescaleWeb {
    /// Serves HTTP until a signal stops it.
    static func run(_ command: ParsedCommand) throws -> Int32 {
        let listen = command[Self.listen] ?? .default
        let socketPath = command[Self.socket] ?? DaemonClient.defaultSocketPath()

        let listener: InetListener
        do {
            let inherited = try InheritedSockets.take()
            if let first = inherited.first {
                if inherited.count > 1 { say("using the first of \(inherited.count) sockets from the service manager") }
                listener = try InetListener(adopting: first)
                if command.wasGiven(Self.listen) { say("serving the service manager's socket \(listener.address); --listen is ignored") }
            } else {
                listener = try InetListener(host: listen.host, port: listen.port)
            }
        } catch let error as InheritedSocketsError {
            say("\(error)")
            return ExitStatus.unavailable
        } catch let error as SocketError {
            say("\(error)")
            if case .system(_, let system) = error, system.errno == .permissionDenied { return ExitStatus.noPermission }
            return ExitStatus.unavailable
        }

        let keyDirectory: String
        if let given = command[Self.keyDirectory] {
            keyDirectory = given
        } else if let runtime = Environment.value("RUNTIME_DIRECTORY")?.split(separator: ":").first {
            // systemd's RuntimeDirectory= (several are separated by colons).
            keyDirectory = String(runtime)
        } else if let base = Environment.value("XDG_RUNTIME_DIR"), !base.isEmpty {
            keyDirectory = base + "/forcescale-web"
            do {
                try SecretFile.makePrivateDirectory(keyDirectory)
            } catch {
                say("cannot make the key directory: \(error)")
                return ExitStatus.cannotCreate
            }
        } else {
            say("no directory for the access keys: give --key-dir DIR (neither RUNTIME_DIRECTORY nor XDG_RUNTIME_DIR is set)")
            return ExitStatus.usage
        }
        let keys: WebKeys
        do {
            keys = try WebKeys(
                directory: keyDirectory, allowControl: command[Self.allowControl],
                controlGroup: command[Self.controlGroup] ?? defaultControlGroup, socketPath: socketPath, log: say)
        } catch {
            say("cannot write the access keys: \(error)")
            return ExitStatus.cannotCreate
        }
        defer { keys.remove() }

        let loop = try EventLoop()
        var options = WebServer.Options(socketPath: socketPath, allowControl: command[Self.allowControl], release: release)
        options.limits = HTTPServer.Limits()
        options.logPath = command[Self.logDatabase]
        options.publicMetrics = command[Self.publicMetrics]
        options.allowedHosts = command[Self.allowHost]
        let server: WebServer
        do {
            server = try WebServer(options: options, keys: keys, listener: listener, loop: loop, log: say)
        } catch {
            say("\(error)")
            return ExitStatus.osError
        }
        // The address as bound (the port the kernel chose for port 0): what to open, and what
        // tests and `make run` read.
        say("listening on http://\(listener.address)/")
        if command[Self.publicMetrics] {
            say("serving /metrics without a key (--public-metrics): anyone who can reach \(listener.address) reads the metrics")
        }
        _ = try loop.runUntilTerminated()
        server.stop()
        return 0
    }
}

Signals.ignoreBrokenPipe()

runMain(ForcescaleWeb.self)
