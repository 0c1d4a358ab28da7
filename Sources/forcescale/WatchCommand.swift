import ArgumentParsing
import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol

enum WatchCommand {
    static let declaration = Command(
        name: "watch",
        abstract: "Show the daemon's readings live.",
        discussion: """
            Asks forcescaled to WATCH and shows each reading with the same gauge as \
            'read': redrawn in place on a terminal, one line per reading otherwise. PEAKs \
            leave a line behind, and so does each weight when it is lifted. --json passes \
            the daemon's READING and PEAK lines through unchanged. Ctrl-C stops.
            """,
        options: [
            Option(long: "json", help: "Print the daemon's READING and PEAK lines as they come."),
            Option(long: "unit", valueName: "unit", help: "Unit of the gauge; JSON always carries grams.", defaultValue: "g", allowedValues: MassUnit.allCases.map(\.rawValue)),
            DaemonConnection.socketOption,
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let json = command.flag("json")
        let unit = MassUnit(rawValue: command.string("unit") ?? "g") ?? .grams
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(command)
            let output = OutputChannel.standardOutput
            let gauge = GaugePresenter.forDaemonStream(output: output, unit: unit)
            let show: (ReceivedLine) throws -> Void = { line in
                guard line.isStream else { return }
                if json {
                    try output.write(line.text + "\n")
                    try output.flush()
                } else {
                    try gauge.show(line)
                }
            }
            _ = try client.request(.watch(enable: true, device: nil), expecting: WatchMessage.self, onStream: show)
            if !json, output.isTerminal {
                try output.write("Watching forcescaled on \(client.path). Ctrl-C stops.\n")
                try output.flush()
            }
            // Lines that came with the reply are already read: the loop would not wake for them.
            for line in try client.readAvailable() { try show(line) }
            let loop = try EventLoop()
            var failure: (any Error)?
            try loop.watch(client.descriptor) {
                do {
                    for line in try client.readAvailable() { try show(line) }
                } catch {
                    failure = error
                    loop.stop()
                }
            }
            try loop.runUntilTerminated()
            loop.unwatch(client.descriptor)
            if !json { try gauge.end() }
            if let failure { throw failure }
        }
    }
}
