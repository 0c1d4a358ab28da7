import ScaleCore
import ScaleProtocol

/// Logged sessions as a person reads them (a table) and as a program reads them (JSON
/// lines), for `forcescale log sessions`.
package enum SessionText {
    /// The table's columns, in order.
    static let columns = ["ID", "DEVICE", "START", "DURATION", "PEAK G", "STABLE G", "READINGS"]

    /// A table with a header and one row per session, columns padded to line up; numbers
    /// are right-aligned. A session without a stable weight shows `-`, one still open shows
    /// `open` for its duration. When any PEAK tried a rumble, a last column, RUMBLES, says
    /// what became of each session's (``RumbleText/sessionSummary(_:)``). A saturated peak or
    /// stable weight is a lower bound, shown `>=384.6` and explained under the table. A
    /// device's name is written as ``UntrustedText`` escapes it.
    /// - Parameters:
    ///   - sessions: The sessions, in the order to show them.
    ///   - peaks: The PEAKs of each session by its id.
    ///   - localTime: The start of a session as local time text (the caller knows the zone).
    /// - Returns: The table, each line ending in a newline.
    package static func table(_ sessions: [LoggedSession], peaks: [Int64: [LoggedPeak]] = [:], localTime: (WallTime) -> String) -> String {
        let showsRumbles = peaks.values.contains { $0.contains { $0.rumble != nil } }
        let columns = showsRumbles ? columns + ["RUMBLES"] : columns
        let rows = sessions.map { session in
            let rumbles = showsRumbles ? [RumbleText.sessionSummary((peaks[session.id] ?? []).compactMap(\.rumble))] : []
            return [
                String(session.id),
                UntrustedText.escaped(session.device.name),
                localTime(session.started),
                session.ended.map { duration(Double($0.microseconds - session.started.microseconds) / 1e6) } ?? "open",
                (session.peakSaturated ? ">=" : "") + fixed(session.peakGrams, decimals: 1),
                session.stableGrams.map { (session.stableSaturated ? ">=" : "") + fixed($0, decimals: 1) } ?? "-",
                String(session.readingCount),
            ] + rumbles
        }
        let rightAligned: Set<Int> = [0, 3, 4, 5, 6]
        var widths = columns.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = Swift.max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            let padded = cells.enumerated().map { index, cell in
                pad(cell, widths[index], left: rightAligned.contains(index))
            }
            // No trailing spaces after the last column.
            return String(padded.joined(separator: "  ").reversed().drop { $0 == " " }.reversed()) + "\n"
        }
        let note = sessions.contains { $0.peakSaturated || $0.stableSaturated }
            ? [">= saturated: the pad was at the top of its range, so the object weighed at least that, maybe far more\n"] : []
        return ([line(columns)] + rows.map(line) + note).joined()
    }

    /// One JSON object for a session, keys in this order: `session`, `device`, `device_key`,
    /// `started`, `ended` (absent while open), `duration`, `peak_grams`, `stable_grams`
    /// (absent when nothing was stable), `readings`, `model`, `peak_saturated` and
    /// `stable_saturated` (`true`, present only when that weight was saturated: a lower
    /// bound), and `peaks` when it has any:
    /// one object per PEAK with `time`, `raw`, `grams` and its rumble's `rumble`,
    /// `rumble_latency` and `rumble_errno` as `log export --peaks` writes them. Times are
    /// Unix seconds with six decimals; grams keep every digit the log has.
    package static func jsonLine(_ session: LoggedSession, peaks: [LoggedPeak] = []) -> String {
        var json = JSONLineWriter()
        json.add("session", literal: String(session.id))
        json.add("device", string: session.device.name)
        json.add("device_key", string: session.device.key)
        json.add("started", literal: session.started.description)
        json.add("ended", literal: session.ended?.description)
        json.add("duration", literal: session.ended.map { WallTime(microseconds: $0.microseconds - session.started.microseconds).description })
        json.add("peak_grams", literal: ReadingExporter.number(session.peakGrams))
        json.add("stable_grams", literal: session.stableGrams.flatMap(ReadingExporter.number))
        json.add("readings", integer: session.readingCount)
        json.add("model", string: session.model.rawValue)
        if session.peakSaturated { json.add("peak_saturated", bool: true) }
        if session.stableSaturated, session.stableGrams != nil { json.add("stable_saturated", bool: true) }
        json.add("peaks", objects: peaks.isEmpty ? nil : peaks.map { peak in
            var object = JSONLineWriter()
            object.add("time", literal: peak.time.description)
            object.add("raw", integer: Int(peak.raw))
            object.add("grams", literal: ReadingExporter.number(peak.grams))
            object.add("rumble", string: peak.rumble?.name)
            object.add("rumble_latency", literal: peak.rumble?.latencyMicroseconds.map { WallTime(microseconds: $0).description })
            object.add("rumble_errno", literal: peak.rumble?.errno.map { String($0) })
            return object
        })
        return json.line
    }

    /// A duration the way people say it: `0.8 s`, `42.5 s`, `5 min 12 s`, `3 h 05 min`,
    /// `2 d 4 h`.
    package static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        if seconds < 60 { return fixed(Swift.max(0, seconds), decimals: 1) + " s" }
        let whole = Int(seconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        if whole < 3600 { return "\(whole / 60) min \(two(whole % 60)) s" }
        if whole < 86400 { return "\(whole / 3600) h \(two(whole % 3600 / 60)) min" }
        return "\(whole / 86400) d \(whole % 86400 / 3600) h"
    }

    /// `1 reading`, `420 readings`.
    package static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}
