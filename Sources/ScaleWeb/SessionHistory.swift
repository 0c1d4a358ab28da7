import ScaleCore
import ScaleDisplay
import ScaleLog
import ScalePOSIX
import ScaleProtocol

/// The force log over HTTP: `/api/sessions` and `/api/sessions/ID…` (docs/web.md,
/// "History"), read from the file forcescaled writes.
///
/// The log is opened read-only for each request and closed after it (or after its download),
/// never written: SQLite's WAL readers see the transactions committed when their read
/// starts and never wait for the daemon's writer, so the log can be read while it grows.
/// Sessions and summaries are the very text `forcescale log sessions --json` writes
/// (`SessionText.jsonLine`), exports the text of `forcescale log export` (`ReadingExporter`,
/// sent in pieces as the client takes them) and plots `forcescale log plot`'s (`ForcePlot`).
package final class SessionHistory {
    /// Sessions on a page when the request does not say.
    static let defaultPageSize = 20
    /// The most sessions on a page.
    static let largestPageSize = 200
    /// Readings read from the log per piece of an export: about 80 KiB of CSV.
    static let readingsPerPiece = 1000
    /// The page cache of each connection to the log, in KiB: forcescale-web's memory stays
    /// small while a long session is read (SQLite's default is 2 MiB per connection).
    static let cacheKibibytes = 256

    /// The log `--log-db` names; nil for the default.
    let configuredPath: String?

    init(path: String?) {
        configuredPath = path
    }

    /// The log to read now: the one named, or the one `forcescale log` reads by default, the
    /// system daemon's when it is there, else the one this user's daemon would write. The
    /// default is looked up at each request, so that a log the daemon makes after
    /// forcescale-web started (the service is started by its socket, often before the
    /// daemon) is found.
    var path: String {
        configuredPath ?? StateDirectory.clientPath(of: LogDatabase.defaultFileName)
    }

    /// `GET /api/sessions?before=ID&limit=N`.
    func list(before: String?, limit: String?) -> HTTPResponse {
        let pageSize: Int
        if let limit {
            guard let value = Int(limit), (1...Self.largestPageSize).contains(value) else {
                return .apiError(400, "limit must be a number from 1 to \(Self.largestPageSize), not '\(limit)'")
            }
            pageSize = value
        } else {
            pageSize = Self.defaultPageSize
        }
        var cursor: Int64?
        if let before {
            guard let value = Int64(before), value > 0 else {
                return .apiError(400, "before must be a session id (a positive number), not '\(before)': give the next_before of the previous page")
            }
            cursor = value
        }
        return reading { database throws(LogDatabaseError) in
            // One more than asked for says whether there is a next page.
            var sessions = try database.sessions(before: cursor, limit: pageSize + 1)
            let more = sessions.count > pageSize
            if more { sessions.removeLast() }
            var text = #"{"sessions":["#
            for (index, session) in sessions.enumerated() {
                if index > 0 { text += "," }
                text += Self.object(session, peaks: try database.peaks(session: session.id))
            }
            text += "]"
            if more, let last = sessions.last { text += #","next_before":"# + String(last.id) }
            return .json(200, text + "}")
        }
    }

    /// How the page asks for a session's plot (`.svg?layout=narrow&started=none`): the
    /// narrow layout for a phone, and without the start's time, which the page writes in its
    /// reader's locale beside it. Without them the plot is `forcescale log plot`'s.
    package struct PlotRequest: Sendable, Hashable {
        var layout = ForcePlot.Layout.standard
        var showsStart = true

        /// From the query's `layout` (`standard`, `narrow`) and `started` (`shown`, `none`).
        /// - Throws: What is wrong with a value, for a 400.
        static func parse(layout: String?, started: String?) throws(PlotRequestError) -> PlotRequest {
            var request = PlotRequest()
            switch layout {
            case nil, "standard": break
            case "narrow": request.layout = .narrow
            case let other?: throw PlotRequestError(message: "layout must be standard or narrow, not '\(other)'")
            }
            switch started {
            case nil, "shown": break
            case "none": request.showsStart = false
            case let other?: throw PlotRequestError(message: "started must be shown or none, not '\(other)'")
            }
            return request
        }
    }

    /// A plot's query argument that is not one of its values.
    package struct PlotRequestError: Error, Sendable {
        let message: String
    }

    /// `GET /api/sessions/ID`, `.csv`, `.json`, `.svg`.
    ///
    /// The summary and the plot are made on one snapshot of the log, a row at a time: the
    /// stable weights as runs go by, the plot decimated to two points per pixel column as
    /// the readings come (a session still open too, from its readings' times read first),
    /// so that neither holds the session in memory, whatever its length.
    func session(id: Int64, _ representation: SessionRepresentation, plot plotRequest: PlotRequest = PlotRequest()) -> HTTPResponse {
        let path = self.path
        let database: LogDatabase
        do {
            database = try open(path)
        } catch {
            return Self.answer(error)
        }
        var keepOpen = false
        defer { if !keepOpen { database.close() } }
        do {
            switch representation {
            case .summary:
                return try database.snapshot { () throws -> HTTPResponse in
                    guard let session = try database.session(id: id) else { return Self.missing(id, path) }
                    return .json(200, try summary(session, in: database))
                }
            case .svg:
                guard let plot = try database.plot(session: id, start: {
                    ForcePlot(session: $0, startedText: plotRequest.showsStart ? LocalTime.text($0.started, offset: true) : nil, peaks: $1,
                              readingTimes: $2, layout: plotRequest.layout)
                }, add: { $0.add($1) }) else {
                    return Self.missing(id, path)
                }
                return .complete(status: 200, contentType: "image/svg+xml; charset=utf-8", body: Array(plot.render().utf8),
                                 headers: [("Cache-Control", "no-store")])
            case .csv, .json:
                // No snapshot: the export is read a piece at a time while the client takes
                // it, and a read transaction held that long would keep the daemon's
                // checkpoint from passing it; the session's count of readings bounds it.
                guard let session = try database.session(id: id) else { return Self.missing(id, path) }
                let format: ReadingExportFormat = representation == .csv ? .csv : .jsonl
                keepOpen = true
                return .pieces(
                    contentType: format == .csv ? "text/csv; charset=utf-8; header=present" : "application/x-ndjson; charset=utf-8",
                    body: Self.export(session, format: format, from: database),
                    headers: [
                        ("Content-Disposition", "attachment; filename=\"session-\(id).\(format == .csv ? "csv" : "jsonl")\""),
                        ("Cache-Control", "no-store"),
                    ])
            }
        } catch {
            return Self.answer(error)
        }
    }

    private static func missing(_ id: Int64, _ path: String) -> HTTPResponse {
        .apiError(404, "\(path): the log has no session \(id) (/api/sessions lists them)")
    }

    // MARK: - The answers

    /// The session as `forcescale log sessions --json` writes it, with its PEAKs.
    private static func object(_ session: LoggedSession, peaks: [LoggedPeak]) -> String {
        String(SessionText.jsonLine(session, peaks: peaks).dropLast())
    }

    /// `{"session":{…},"stable_weights":[…]}`: each stable weight is a run of stable
    /// readings with a contact, from its first reading's time to its last, with the mean of
    /// their grams to 0.1 g (the daemon's settled weight is the mean over its window), and
    /// `"saturated":true` when a reading of the run was (its weight is then a lower bound).
    private func summary(_ session: LoggedSession, in database: LogDatabase) throws -> String {
        var weights: [JSONLineWriter] = []
        var run: (from: WallTime, to: WallTime, sum: Double, count: Int, saturated: Bool)?
        func endRun() {
            guard let finished = run else { return }
            var weight = JSONLineWriter()
            weight.add("from", literal: finished.from.description)
            weight.add("to", literal: finished.to.description)
            weight.add("grams", number: finished.sum / Double(finished.count), decimals: 1)
            weight.add("readings", integer: finished.count)
            if finished.saturated { weight.add("saturated", bool: true) }
            weights.append(weight)
            run = nil
        }
        try database.forEachReading(session: session.id) { reading in
            guard reading.flags.contains(.stable), reading.contacts > 0, reading.grams.isFinite else { return endRun() }
            let saturated = reading.flags.contains(.saturated)
            if let current = run {
                run = (current.from, reading.time, current.sum + reading.grams, current.count + 1, current.saturated || saturated)
            } else {
                run = (reading.time, reading.time, reading.grams, 1, saturated)
            }
        }
        endRun()
        var text = #"{"session":"# + Self.object(session, peaks: try database.peaks(session: session.id))
        text += #","stable_weights":["# + weights.map(\.object).joined(separator: ",") + "]}"
        return text
    }

    /// The session's readings as `forcescale log export --session ID` writes them, read a
    /// piece at a time as the client takes them. The readings are those the session had when
    /// the request came (its count then), so a session still being written exports as the
    /// command would have at that moment.
    private static func export(_ session: LoggedSession, format: ReadingExportFormat, from database: LogDatabase) -> StreamedBody {
        var exporter = ReadingExporter(format: format, deviceNames: [session.id: session.device.name])
        var pending = Array(exporter.header.utf8)
        var sent = 0
        var next = 0
        let end = session.readingCount
        var failed = false
        return StreamedBody(
            produce: { buffer in
                if sent == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    sent = 0
                    guard next < end, !failed else { return failed ? -1 : 0 }
                    var text = ""
                    var count = 0
                    do {
                        try database.forEachReading(session: session.id, first: next, count: min(readingsPerPiece, end - next)) { reading in
                            exporter.append(reading, to: &text)
                            count += 1
                        }
                    } catch {
                        // The log went away or broke mid-export: the response is cut short
                        // (the client sees the connection end without the last chunk).
                        failed = true
                        return -1
                    }
                    // Rows gone (retention removed the session meanwhile): the export ends.
                    next = count == 0 ? end : next + count
                    pending.append(contentsOf: text.utf8)
                    if pending.isEmpty { return 0 }
                }
                let count = min(buffer.count, pending.count - sent)
                pending.withUnsafeBytes { bytes in
                    buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + sent, byteCount: count)
                }
                sent += count
                return count
            },
            finish: { database.close() })
    }

    // MARK: - Opening the log

    private func reading(_ body: (LogDatabase) throws(LogDatabaseError) -> HTTPResponse) -> HTTPResponse {
        let path = self.path
        do {
            let database = try open(path)
            defer { database.close() }
            return try body(database)
        } catch {
            return Self.answer(error)
        }
    }

    private func open(_ path: String) throws(LogDatabaseError) -> LogDatabase {
        let database = try LogDatabase.open(path: path, readOnly: true)
        do {
            try database.limitCache(kibibytes: Self.cacheKibibytes)
        } catch {
            database.close()
            throw error
        }
        return database
    }

    private static let switchOn = "logging is off by default: start forcescaled with --log (or --log-db PATH, or log = on in forcescale.conf); "
        + "or give forcescale-web the log's path with --log-db"

    /// What a failure to read the log answers: 404 for a log that is not there (saying how to
    /// switch logging on), 500 for the rest, each naming the file and what to do.
    private static func answer(_ error: any Error) -> HTTPResponse {
        guard let error = error as? LogDatabaseError else { return .apiError(500, "\(error)") }
        switch error {
        case .missing(let path):
            return .apiError(404, "\(path): no force log there (" + switchOn + ")", logMissing: true)
        // SQLITE_CANTOPEN: there, but not readable by this user (or its directory is not).
        case .sqlite(let failure) where failure.primary == 14:
            return .apiError(500, "\(failure.path): cannot be opened (\(failure.message)); the user forcescale-web runs as must be able to read it "
                              + "and its directory (the system's log is the forcescale group's)")
        default:
            return .apiError(500, error.description)
        }
    }

    /// A 400 for a malformed session path.
    static func badRequest(_ message: String) -> HTTPResponse { .apiError(400, message) }
}
