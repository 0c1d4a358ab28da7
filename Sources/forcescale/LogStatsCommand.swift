import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScaleLog
import ScalePOSIX
import ScaleProtocol

/// `forcescale log stats`: what the log holds and what it costs on disk.
enum LogStatsCommand: ParsableCommand {
    static let json = OptionKey(flag: "json", help: "Print one JSON object.")

    static let configuration = CommandConfiguration(
        name: "stats",
        abstract: "Show what the force log holds and its size on disk.",
        discussion: """
            The log's file, schema version, the numbers of devices, sessions, readings and \
            PEAKs, the time of the first and the last reading (local time), the size of the \
            file and of its write-ahead log, and the bytes per reading.
            """,
        options: [json, LogCommand.database])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        LogCommand.run {
            let database = try LogCommand.open(command)
            defer { database.close() }
            let statistics = try database.statistics()
            let output = OutputChannel.standardOutput
            try output.write(command[Self.json] ? json(statistics) : text(statistics))
            try output.flush()
        }
    }

    static func text(_ statistics: LogStatistics) -> String {
        var lines = ["force log \(untrusted: statistics.path) (schema \(statistics.schemaVersion))"]
        func add(_ label: String, _ value: String) { lines.append("  " + label.padding(12) + value) }
        add("devices", String(statistics.devices))
        add("sessions", String(statistics.sessions))
        add("readings", String(statistics.readings))
        add("peaks", String(statistics.peaks))
        if let first = statistics.first, let last = statistics.last {
            add("from", LocalTime.text(first, offset: true))
            add("to", LocalTime.text(last, offset: true) + " (" + SessionText.duration(Double(last.microseconds - first.microseconds) / 1e6) + ")")
        } else {
            add("from", "- (nothing logged yet)")
        }
        let total = statistics.fileBytes + statistics.walBytes
        add("size", bytes(total) + " (file \(bytes(statistics.fileBytes)), write-ahead log \(bytes(statistics.walBytes)), "
            + "\(statistics.freelistPages) of \(statistics.pageCount) pages free)")
        if statistics.readings > 0 {
            // The pages in use as this reader sees them (the file and the write-ahead log
            // together), not the file's size: before a checkpoint the file holds little.
            let used = Double(statistics.pageCount - statistics.freelistPages) * Double(statistics.pageSize)
            add("per reading", fixed(used / Double(statistics.readings), decimals: 1) + " bytes (pages in use / readings)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func json(_ statistics: LogStatistics) -> String {
        var json = JSONLineWriter()
        json.add("path", string: statistics.path)
        json.add("schema", integer: statistics.schemaVersion)
        json.add("devices", integer: statistics.devices)
        json.add("sessions", integer: statistics.sessions)
        json.add("readings", integer: statistics.readings)
        json.add("peaks", integer: statistics.peaks)
        json.add("first", literal: statistics.first?.description)
        json.add("last", literal: statistics.last?.description)
        json.add("file_bytes", integer: Int(statistics.fileBytes))
        json.add("wal_bytes", integer: Int(statistics.walBytes))
        json.add("page_size", integer: statistics.pageSize)
        json.add("page_count", integer: statistics.pageCount)
        json.add("freelist_pages", integer: statistics.freelistPages)
        return json.line
    }

    /// `512 B`, `12.3 KiB`, `4.5 MiB`, `1.2 GiB`.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 { value /= 1024; unit += 1 }
        return unit == 0 ? "\(count) B" : fixed(value, decimals: 1) + " " + units[unit]
    }
}
