import ArgumentParsing
import ScaleClient
import ScaleCore
import ScalePOSIX

enum WatchCommand: ParsableCommand {
    static let json = OptionKey(flag: "json", help: "Print the daemon's READING and PEAK lines as they come.")
    static let reconnect = OptionKey(flag: "reconnect", help: "Keep watching across a restart of forcescaled, waiting for it with back-off.")

    static let configuration = CommandConfiguration(
        name: "watch",
        abstract: "Show the daemon's readings live.",
        discussion: """
            Asks forcescaled to WATCH and shows each reading with the same gauge as \
            'read': redrawn in place on a terminal, one line per reading otherwise. PEAKs \
            leave a line behind, and so does each weight when it is lifted. When the daemon \
            serves several devices, each line starts with the name the device gives itself \
            and, in parentheses, its name in the protocol (what --device takes); --device shows \
            one device only. --json passes the daemon's READING and PEAK lines through byte \
            for byte (each names its device). When the daemon goes \
            away, watch ends with status 69; with --reconnect it says on standard error that \
            it is waiting, tries again after 0.1 s, then after twice the wait each time up \
            to 5 s, and goes on watching once forcescaled is back (or first starts). Ctrl-C \
            stops.
            """,
        options: [json, reconnect, PipelineOptions.unit, DaemonConnection.device, DaemonConnection.socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let json = command[Self.json]
        let reconnect = command[Self.reconnect]
        let unit = command[PipelineOptions.unit]
        let device = command[DaemonConnection.device]
        let path = DaemonConnection.socketPath(command[DaemonConnection.socket])
        return DaemonConnection.run {
            let client = ForcescaleClient(options: .init(socketPath: path, reconnect: reconnect ? ReconnectPolicy() : nil))
            client.onConnectionEvent = reportWaiting(on: path)
            let output = OutputChannel.standardOutput
            let gauge = GaugePresenter.forDaemonStream(output: output, unit: unit)
            if reconnect {
                // Asked for on each connection, the first included, which may come later.
                try client.watchWhenConnected(device: device)
            } else {
                try client.watch(device: device)
                // Labelled from the first line when several devices are served; otherwise
                // from the first line of a second device (one may be plugged in later).
                let status = try client.status()
                if device == nil, let served = status.devices {
                    gauge.labelsDevices = served.count > 1
                    for entry in served where !entry.name.isEmpty { gauge.deviceNames[entry.device] = entry.name }
                }
                // Nothing shows until the daemon opens a device: said now, so that an empty
                // screen is not taken for a broken one.
                if status.device == nil, status.devices?.isEmpty ?? true {
                    printDiagnostic("forcescale: forcescaled on \(path) has no pressure device open: its readings show here once it opens one. "
                        + DaemonConnection.demoRoute)
                }
            }
            if !json, output.isTerminal {
                try output.write("Watching forcescaled on \(untrusted: path). Ctrl-C stops.\n")
                try output.flush()
            }
            let loop = try EventLoop()
            var failure: (any Error)?
            var devicesSeen: Set<String> = []
            let show = { (event: StreamEvent) in
                do {
                    if device == nil, !gauge.labelsDevices, let name = event.device, devicesSeen.insert(name).inserted, devicesSeen.count > 1 {
                        gauge.labelsDevices = true
                    }
                    if json {
                        try output.write { $0 += event.line; $0.append(UInt8(ascii: "\n")) }
                        try output.flush()
                    } else {
                        try gauge.show(event)
                    }
                } catch {
                    failure = error
                    loop.stop()
                }
            }
            let attachment = try client.attach(to: loop, onEvent: show) { error in
                failure = error
                loop.stop()
            }
            try loop.runUntilTerminated()
            attachment.detach()
            client.close()
            if !json { try gauge.end() }
            if let failure { throw failure }
        }
    }

    /// One line on standard error when the daemon is lost and retries begin, and one when it
    /// is back: a long outage does not fill the terminal with an attempt per line.
    private static func reportWaiting(on path: String) -> (ForcescaleClient.ConnectionEvent) -> Void {
        var waiting = false
        return { event in
            switch event {
            case .retrying(_, let delay, let error) where !waiting:
                waiting = true
                printDiagnostic("forcescale: waiting for forcescaled (\(error)); trying again in \(DaemonClient.seconds(delay)) s, then less and less often")
            case .connected(let release) where waiting:
                waiting = false
                printDiagnostic("forcescale: watching forcescaled \(release) on \(path) again")
            default:
                break
            }
        }
    }
}
