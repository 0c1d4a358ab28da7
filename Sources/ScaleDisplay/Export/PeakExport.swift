import ScaleCore
import ScaleProtocol

/// Turns logged PEAKs into lines of CSV or JSON lines (`forcescale log export --peaks`),
/// each with what became of its rumble. Columns and keys, in this order: `session`,
/// `device`, `time`, `raw`, `grams`, `rumble` (`played`, `failed`, `unavailable`, `off`;
/// empty, or no key, where none was tried), `rumble_latency` (seconds, six decimals, when
/// it played), `rumble_errno` (when it failed). Times and numbers are written as
/// ``ReadingExporter`` writes them.
package struct PeakExporter: Sendable {
    /// The column names, in order; also the JSON keys.
    package static let columns = ["session", "device", "time", "raw", "grams", "rumble", "rumble_latency", "rumble_errno"]

    package let format: ReadingExportFormat
    private let deviceNames: [Int64: String]

    /// - Parameters:
    ///   - format: CSV or JSON lines.
    ///   - deviceNames: The device name of each session id, as for ``ReadingExporter``.
    package init(format: ReadingExportFormat, deviceNames: [Int64: String]) {
        self.format = format
        self.deviceNames = deviceNames
    }

    /// What goes before the first PEAK: the CSV header line, nothing for JSON lines.
    package var header: String { format.header(columns: Self.columns) }

    /// Appends one PEAK as one line.
    package func append(_ peak: LoggedPeak, to text: inout String) {
        let latency = peak.rumble?.latencyMicroseconds.map { WallTime(microseconds: $0).description }
        let errno = peak.rumble?.errno.map { String($0) }
        switch format {
        case .csv:
            let fields = [
                String(peak.session), CSV.textField(deviceNames[peak.session] ?? ""), ReadingExporter.time(peak.time), String(peak.raw),
                ReadingExporter.number(peak.grams) ?? "", peak.rumble?.name ?? "", latency ?? "", errno ?? "",
            ]
            text += fields.joined(separator: ",") + "\r\n"
        case .jsonl:
            var json = JSONLineWriter()
            json.add("session", literal: String(peak.session))
            json.add("device", string: deviceNames[peak.session])
            json.add("time", literal: ReadingExporter.time(peak.time))
            json.add("raw", integer: Int(peak.raw))
            json.add("grams", literal: ReadingExporter.number(peak.grams))
            json.add("rumble", string: peak.rumble?.name)
            json.add("rumble_latency", literal: latency)
            json.add("rumble_errno", literal: errno)
            text += json.line
        }
    }
}
