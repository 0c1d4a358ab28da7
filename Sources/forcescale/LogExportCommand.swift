import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScaleLog

/// `forcescale log export`: logged readings as CSV or JSON lines, streamed from the log.
enum LogExportCommand: ParsableCommand {
    static let session = OptionKey<Int?>("session", valueName: "id", help: "Only this session (see 'forcescale log sessions').", parser: .integer)
    static let peaks = OptionKey(flag: "peaks", help: "Export the PEAKs, with their rumbles, instead of the readings.")
    static let format = OptionKey<ReadingExportFormat>("format", valueName: "format", help: "The file format.", parser: .choice, default: .csv)
    static let output = OptionKey<String?>("output", short: "o", valueName: "file", help: "Write to this file instead of standard output.", parser: .text)

    static let configuration = CommandConfiguration(
        name: "export",
        abstract: "Export logged readings as CSV or JSON lines.",
        discussion: """
            Writes the readings of one session (--session), of the sessions from a time on \
            (--since), or of the whole log, in time order, with these columns (or keys): \
            session, device, time (Unix seconds, six decimals), raw, force (0 to 1), grams, \
            contacts, saturated, stable. With --peaks, the PEAKs instead, each with what \
            became of its rumble: session, device, time, raw, grams, rumble (played, \
            failed, unavailable or off; empty where none was tried, as in replays), \
            rumble_latency (seconds from the frame that reached the threshold to the play \
            accepted), rumble_errno (when the play failed). \
            Numbers are written exactly as logged. CSV follows \
            RFC 4180 (a header line, CRLF line ends, quotes where needed). With --output the \
            file is replaced only once the export is complete.
            """,
        options: [session, LogCommand.since, peaks, format, output, LogCommand.database])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let session = command[Self.session].map(Int64.init)
        let since = try LogCommand.since(command)
        if session != nil, since != nil {
            throw command.usageError("Give either --session or --since, not both")
        }
        let format = command[Self.format]
        let outputPath = command[Self.output]
        let peaks = command[Self.peaks]
        return LogCommand.run {
            let database = try LogCommand.open(command)
            defer { database.close() }
            // The sessions first: their device names go on every line, and an unknown
            // session is an error before any output file is made.
            let sessions: [LoggedSession]
            if let session {
                guard let found = try database.session(id: session) else { throw CommandFailure.noSession(session, in: database.path) }
                sessions = [found]
            } else {
                sessions = try database.sessions(since: since)
            }
            let output = try LogOutput(path: outputPath)
            do {
                if peaks {
                    try exportPeaks(from: database, session: session, since: since, sessions: sessions, format: format, to: output)
                } else {
                    try export(from: database, session: session, since: since, sessions: sessions, format: format, to: output)
                }
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
        }
    }

    /// Streams the readings through the exporter in chunks of about 256 KiB.
    static func export(
        from database: LogDatabase, session: Int64?, since: WallTime?, sessions: [LoggedSession],
        format: ReadingExportFormat, to output: LogOutput
    ) throws {
        var exporter = ReadingExporter(format: format, deviceNames: deviceNames(of: sessions))
        var buffer = exporter.header
        let chunk = 256 * 1024
        buffer.reserveCapacity(chunk + 1024)
        let body = { (reading: LoggedReading) throws in
            exporter.append(reading, to: &buffer)
            if buffer.utf8.count >= chunk {
                try output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if let session {
            try database.forEachReading(session: session, body)
        } else {
            try database.forEachReading(since: since ?? WallTime(microseconds: .min), body)
        }
        try output.write(buffer)
    }

    /// The device name of each session, by its id.
    static func deviceNames(of sessions: [LoggedSession]) -> [Int64: String] {
        Dictionary(sessions.map { ($0.id, $0.device.name) }) { first, _ in first }
    }

    /// Writes the PEAKs, which are few beside the readings, in one piece.
    static func exportPeaks(
        from database: LogDatabase, session: Int64?, since: WallTime?, sessions: [LoggedSession],
        format: ReadingExportFormat, to output: LogOutput
    ) throws {
        let exporter = PeakExporter(format: format, deviceNames: deviceNames(of: sessions))
        var text = exporter.header
        let peaks = try session.map { try database.peaks(session: $0) } ?? database.peaks(since: since ?? WallTime(microseconds: .min))
        for peak in peaks { exporter.append(peak, to: &text) }
        try output.write(text)
    }
}
