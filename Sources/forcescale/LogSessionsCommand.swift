import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScalePOSIX

/// `forcescale log sessions`: the logged touches, oldest first.
enum LogSessionsCommand: ParsableCommand {
    static let device = OptionKey<String?>(
        "device", valueName: "device", help: "Only sessions of devices whose name or key contains this (ignoring case).", parser: .text)
    static let json = OptionKey(flag: "json", help: "Print one JSON object per session.")

    static let configuration = CommandConfiguration(
        name: "sessions",
        abstract: "List the logged sessions (one per touch).",
        discussion: """
            One line per session, oldest first: its id, the device, when it started (local \
            time), how long it lasted ('open' while the touch is still on), the heaviest \
            reading, the last stable weight ('-' if none) and the number of readings; when \
            PEAKs tried rumbles, what became of them (played with the longest latency, \
            failed, unavailable, off). With --json each session lists its PEAKs with \
            their rumbles.
            """,
        options: [LogCommand.since, device, json, LogCommand.database])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let since = try LogCommand.since(command)
        return LogCommand.run {
            let database = try LogCommand.open(command)
            defer { database.close() }
            let sessions = try database.sessions(since: since, device: command[Self.device])
            let wanted = Set(sessions.map(\.id))
            let peaks = Dictionary(grouping: try database.peaks(since: sessions.map(\.started).min() ?? WallTime(microseconds: .max))
                .filter { wanted.contains($0.session) }, by: \.session)
            let output = OutputChannel.standardOutput
            if command[Self.json] {
                for session in sessions { try output.write(SessionText.jsonLine(session, peaks: peaks[session.id] ?? [])) }
            } else if sessions.isEmpty {
                try output.write(emptyText(command, since: since) + "\n")
            } else {
                try output.write(SessionText.table(sessions, peaks: peaks) { LocalTime.text($0) })
            }
            try output.flush()
        }
    }

    /// Why nothing is listed, in the filter's words.
    static func emptyText(_ command: ParsedCommand, since: WallTime?) -> String {
        var filters: [String] = []
        if let since { filters.append("since \(LocalTime.text(since, offset: true))") }
        if let device = command[Self.device] { filters.append("of a device matching '\(untrusted: device)'") }
        return "No sessions" + (filters.isEmpty ? " in the log yet." : " " + filters.joined(separator: " ") + ".")
    }
}
