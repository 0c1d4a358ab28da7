import ArgumentParsing
import ScaleCore
import ScalePOSIX
import ScaleProtocol

enum TareCommand: ParsableCommand {
    static let json = OptionKey(flag: "json", help: "Print the daemon's TARE reply line.")

    static let configuration = CommandConfiguration(
        name: "tare",
        abstract: "Take the weight on the pad now as zero.",
        discussion: """
            Asks forcescaled to TARE: whatever rests on the pad now (a bowl, say) weighs \
            zero from here on, for every client, and the daemon keeps the tare with the \
            device's calibration. With nothing on the pad the tare is cleared. When the \
            daemon serves several devices, --device names the one to tare (without it the \
            daemon's error lists them and tare exits with status 1). Needs root or \
            membership of the daemon's group.
            """,
        options: [json, DaemonConnection.device, DaemonConnection.socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        DaemonConnection.run {
            let client = try DaemonConnection.connect(command[DaemonConnection.socket])
            let reply = try client.request(.tare(device: command[DaemonConnection.device]), expecting: TareMessage.self)
            let output = OutputChannel.standardOutput
            if command[Self.json] {
                try output.write(reply.text + "\n")
            } else {
                let grams = reply.message.grams
                let device = reply.message.device.map { " of \(untrusted: $0)" } ?? ""
                try output.write(grams == 0
                    ? "Tare\(device) cleared: nothing was on the pad.\n"
                    : "Tare\(device) set to \(MassUnit.grams.format(grams: grams)): readings now leave it out.\n")
            }
            try output.flush()
        }
    }
}
