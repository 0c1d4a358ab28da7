import ScaleCore
import ScaleProtocol

/// The formats `forcescale log export` writes logged readings in.
package enum ReadingExportFormat: String, CaseIterable, Sendable {
    /// RFC 4180 comma-separated values with a header line; lines end in CRLF as the RFC says.
    case csv
    /// One JSON object per line, keys in a fixed order, as the protocol writes its lines.
    case jsonl

    /// What goes before the first line: the CSV header line of `columns`, nothing for JSON lines.
    func header(columns: [String]) -> String {
        switch self {
        case .csv: columns.joined(separator: ",") + "\r\n"
        case .jsonl: ""
        }
    }
}

/// Turns logged readings into lines of CSV or JSON lines, appending to a caller's buffer so
/// that a million readings cost no more than a million small appends.
///
/// Every value round-trips: times keep their six decimals exactly as ``WallTime`` prints
/// them, and force and grams are written in the shortest form that parses back to the
/// very same `Double` (`77.0`, `0.2`, `77.03921568627451`), so nothing the log holds is
/// rounded away. Columns and keys, in this order: `session`, `device`, `time`, `raw`,
/// `force`, `grams`, `contacts`, `saturated`, `stable`.
package struct ReadingExporter: Sendable {
    /// The column names, in order; also the JSON keys.
    static let columns = ["session", "device", "time", "raw", "force", "grams", "contacts", "saturated", "stable"]

    let format: ReadingExportFormat
    /// The device field of each session, already encoded for the format (quoted as needed),
    /// because the same few names repeat on every line.
    private var encodedDevices: [Int64: String] = [:]
    private let deviceNames: [Int64: String]

    /// - Parameters:
    ///   - format: CSV or JSON lines.
    ///   - deviceNames: The device name of each session id; a reading of a session missing
    ///     here gets an empty device field (CSV) or none at all (JSON lines).
    package init(format: ReadingExportFormat, deviceNames: [Int64: String]) {
        self.format = format
        self.deviceNames = deviceNames
    }

    /// What goes before the first reading: the CSV header line, nothing for JSON lines.
    package var header: String { format.header(columns: Self.columns) }

    /// Appends one reading as one line.
    /// - Parameters:
    ///   - reading: The reading.
    ///   - text: The buffer the line is appended to.
    package mutating func append(_ reading: LoggedReading, to text: inout String) {
        let device = encodedDevice(of: reading.session)
        switch format {
        case .csv:
            text += String(reading.session)
            text += ","
            text += device
            text += ","
            text += Self.time(reading.time)
            text += ","
            text += String(reading.raw)
            text += ","
            text += Self.number(reading.force) ?? ""
            text += ","
            text += Self.number(reading.grams) ?? ""
            text += ","
            text += String(reading.contacts)
            text += reading.flags.contains(.saturated) ? ",true" : ",false"
            text += reading.flags.contains(.stable) ? ",true\r\n" : ",false\r\n"
        case .jsonl:
            // The keys are fixed and need no escaping, so the line is built in place rather
            // than through JSONLineWriter: the same text (a test pins it) for about half the CPU
            // (1 M readings: 1.9 s of user time instead of 3.5 s, release build).
            text += "{\"session\":"
            text += String(reading.session)
            if !device.isEmpty {
                text += ",\"device\":"
                text += device
            }
            text += ",\"time\":"
            text += Self.time(reading.time)
            text += ",\"raw\":"
            text += String(reading.raw)
            // A value that is not a finite number has no JSON form: left out, never null.
            if let force = Self.number(reading.force) {
                text += ",\"force\":"
                text += force
            }
            if let grams = Self.number(reading.grams) {
                text += ",\"grams\":"
                text += grams
            }
            text += ",\"contacts\":"
            text += String(reading.contacts)
            text += reading.flags.contains(.saturated) ? ",\"saturated\":true" : ",\"saturated\":false"
            text += reading.flags.contains(.stable) ? ",\"stable\":true}\n" : ",\"stable\":false}\n"
        }
    }

    /// `1764500000.000001`: the text of `WallTime.description`, built with fewer
    /// intermediate strings, since an export writes one per reading.
    static func time(_ time: WallTime) -> String {
        let magnitude = time.microseconds.magnitude
        var fraction = magnitude % 1_000_000
        // Six digits, zeros first, as ASCII.
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (48, 48, 48, 48, 48, 48)
        withUnsafeMutableBytes(of: &digits) { bytes in
            for index in stride(from: 5, through: 0, by: -1) {
                bytes[index] = UInt8(48 + fraction % 10)
                fraction /= 10
            }
        }
        let sixDigits = withUnsafeBytes(of: &digits) { String(decoding: $0, as: UTF8.self) }
        return (time.microseconds < 0 ? "-" : "") + String(magnitude / 1_000_000) + "." + sixDigits
    }

    /// The shortest decimal text that parses back to exactly `value`; `nil` for NaN and the
    /// infinities, which neither format can carry.
    static func number(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        // -0.0 is a reading of nothing, not a different value worth a minus sign.
        return value == 0 ? "0.0" : value.description
    }

    private mutating func encodedDevice(of session: Int64) -> String {
        if let encoded = encodedDevices[session] { return encoded }
        let encoded: String
        if let name = deviceNames[session] {
            switch format {
            case .csv: encoded = CSV.textField(name)
            case .jsonl:
                // The writer quotes and escapes; its object is `{"d":"…"}`, and the value is
                // what lies between the first colon and the closing brace.
                var writer = JSONLineWriter()
                writer.add("d", string: name)
                encoded = String(writer.object.dropFirst(5).dropLast())
            }
        } else {
            encoded = ""
        }
        encodedDevices[session] = encoded
        return encoded
    }
}

/// RFC 4180 fields.
enum CSV {
    /// A cell of text from outside (a device's name): neutralised as a spreadsheet formula
    /// (``UntrustedText/spreadsheetSafe(_:)``: `=cmd` becomes `'=cmd`), then quoted as
    /// ``field(_:)`` quotes. Numbers are written as they are, never through here, so that
    /// `-45.4` stays a number.
    static func textField(_ value: String) -> String {
        field(UntrustedText.spreadsheetSafe(value))
    }

    /// A field as RFC 4180 writes it: as it is, unless it holds a comma, a double quote, a
    /// line break or leading/trailing spaces, in which case it is put in double quotes with
    /// each double quote doubled.
    static func field(_ value: String) -> String {
        let needsQuotes = value.utf8.contains { byte in
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
        } || value.first == " " || value.last == " "
        guard needsQuotes else { return value }
        var quoted = "\""
        for character in value {
            if character == "\"" { quoted += "\"\"" } else { quoted.append(character) }
        }
        return quoted + "\""
    }
}
