@testable import ScaleCore
import ScaleProtocol
import Testing
@testable import ScaleDisplay

/// A strict RFC 4180 reader written for the test, independent of the writer: records end in
/// CRLF, a field in double quotes may hold commas, CRLFs and doubled quotes.
enum CSVReader {
    struct Malformed: Error, CustomStringConvertible { var description: String }

    static func records(_ text: String) throws -> [[String]] {
        var records: [[String]] = []
        var record: [String] = []
        var field = ""
        var quoted = false
        var afterQuote = false
        var scalars = Array(text.unicodeScalars)[...]
        while let scalar = scalars.popFirst() {
            if quoted {
                if scalar == "\"" {
                    if scalars.first == "\"" { scalars.removeFirst(); field.unicodeScalars.append("\"") } else { quoted = false; afterQuote = true }
                } else {
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard field.isEmpty, !afterQuote else { throw Malformed(description: "a quote inside an unquoted field: \(field)") }
                quoted = true
            case ",":
                record.append(field); field = ""; afterQuote = false
            case "\r":
                guard scalars.popFirst() == "\n" else { throw Malformed(description: "CR without LF") }
                record.append(field); field = ""; afterQuote = false
                records.append(record); record = []
            case "\n":
                throw Malformed(description: "a bare LF ends a record; RFC 4180 wants CRLF")
            default:
                guard !afterQuote else { throw Malformed(description: "text after a closing quote") }
                field.unicodeScalars.append(scalar)
            }
        }
        guard !quoted else { throw Malformed(description: "an unterminated quoted field") }
        guard field.isEmpty, record.isEmpty else { throw Malformed(description: "the last record does not end in CRLF") }
        return records
    }
}

/// Readings that make an export work: awkward doubles, negative grams (below a tare),
/// every flag combination, big raw values, times before and after the epoch's second edge.
enum ExportSamples {
    static let devices: [Int64: String] = [
        1: "Wacom Intuos4 6x9 Pen",
        2: #"Tom's "pad", rev 2"#,
        3: "line\r\nbreak & <tags> é 🙂",
    ]

    static let readings: [LoggedReading] = [
        LoggedReading(session: 1, time: WallTime(microseconds: 1_764_500_000_000_001), raw: 0, force: 0, grams: 0, contacts: 1, flags: []),
        LoggedReading(session: 1, time: WallTime(microseconds: 1_764_500_000_010_000), raw: 51, force: 0.2, grams: 77.0, contacts: 1, flags: [.stable]),
        LoggedReading(session: 1, time: WallTime(microseconds: 1_764_500_000_020_000), raw: 2047, force: 1, grams: 385, contacts: 2, flags: [.saturated]),
        LoggedReading(session: 2, time: WallTime(microseconds: 1_764_500_001_000_000), raw: 7, force: 0.1 + 0.2, grams: 77.03921568627451, contacts: 1, flags: [.saturated, .stable]),
        LoggedReading(session: 2, time: WallTime(microseconds: 1_764_500_001_999_999), raw: Int32.max, force: 1e-7, grams: -12.75, contacts: 0, flags: []),
        LoggedReading(session: 3, time: WallTime(microseconds: 999_999), raw: -5, force: 0.999_999_999_999, grams: 123_456_789.123, contacts: 10, flags: [.stable]),
        // A session whose device the caller does not know.
        LoggedReading(session: 9, time: WallTime(microseconds: 5_000_000), raw: 1, force: 0.5, grams: 1.5, contacts: 1, flags: []),
    ]

    static func export(_ format: ReadingExportFormat) -> String {
        var exporter = ReadingExporter(format: format, deviceNames: devices)
        var text = exporter.header
        for reading in readings { exporter.append(reading, to: &text) }
        return text
    }
}

@Suite struct ReadingExportTests {
    @Test func csvHasTheHeaderAndOneRecordPerReading() throws {
        let records = try CSVReader.records(ExportSamples.export(.csv))
        #expect(records.first == ["session", "device", "time", "raw", "force", "grams", "contacts", "saturated", "stable"])
        #expect(records.count == ExportSamples.readings.count + 1)
        #expect(records.allSatisfy { $0.count == 9 })
    }

    @Test func csvParsesBackToExactlyTheSameValues() throws {
        let records = try CSVReader.records(ExportSamples.export(.csv)).dropFirst()
        for (record, reading) in zip(records, ExportSamples.readings) {
            let back = LoggedReading(
                session: try #require(Int64(record[0])),
                time: try #require(Self.wallTime(record[2])),
                raw: try #require(Int32(record[3])),
                force: try #require(Double(record[4])),
                grams: try #require(Double(record[5])),
                contacts: try #require(Int(record[6])),
                flags: Self.flags(saturated: record[7] == "true", stable: record[8] == "true"))
            #expect(back == reading)
            #expect(record[1] == (ExportSamples.devices[reading.session] ?? ""))
            #expect(["true", "false"].contains(record[7]) && ["true", "false"].contains(record[8]))
        }
    }

    @Test func csvTimesHaveSixDecimalsAsTheProtocolWritesThem() throws {
        let records = try CSVReader.records(ExportSamples.export(.csv)).dropFirst()
        #expect(records.map { $0[2] }.prefix(2) == ["1764500000.000001", "1764500000.010000"])
        #expect(Array(records)[5][2] == "0.999999")
    }

    @Test func csvQuotesOnlyWhatNeedsIt() {
        #expect(CSV.field("plain pad") == "plain pad")
        #expect(CSV.field("a,b") == #""a,b""#)
        #expect(CSV.field(#"say "hi""#) == #""say ""hi""""#)
        #expect(CSV.field("two\r\nlines") == "\"two\r\nlines\"")
        #expect(CSV.field(" padded") == "\" padded\"")
        #expect(CSV.field("") == "")
    }

    @Test func jsonLinesParseBackToExactlyTheSameValues() throws {
        let lines = ExportSamples.export(.jsonl).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == ExportSamples.readings.count + 1 && lines.last == "", "one line per reading, each ending in a newline")
        for (line, reading) in zip(lines, ExportSamples.readings) {
            let json = try JSONValue.parse(line)
            // The time is a JSON number; its text is read digit by digit, as a Double would round it.
            #expect(json["time"]?.numberValue != nil)
            let time = try #require(Self.wallTime(Self.member("time", of: String(line))))
            let back = LoggedReading(
                session: Int64(try #require(json["session"]?.numberValue)),
                time: time,
                raw: Int32(try #require(json["raw"]?.numberValue)),
                force: try #require(json["force"]?.numberValue),
                grams: try #require(json["grams"]?.numberValue),
                contacts: Int(try #require(json["contacts"]?.numberValue)),
                flags: Self.flags(saturated: try #require(json["saturated"]?.boolValue as Bool?), stable: try #require(json["stable"]?.boolValue as Bool?)))
            #expect(back == reading)
            #expect(json["device"]?.stringValue == ExportSamples.devices[reading.session])
        }
    }

    @Test func jsonLinesKeepTheColumnOrder() {
        let first = ExportSamples.export(.jsonl).split(separator: "\n").first.map(String.init)
        #expect(first == #"{"session":1,"device":"Wacom Intuos4 6x9 Pen","time":1764500000.000001,"raw":0,"force":0.0,"grams":0.0,"contacts":1,"saturated":false,"stable":false}"#)
    }

    @Test func valuesThatAreNotNumbersAreLeftOutNotInvented() throws {
        let reading = LoggedReading(session: 1, time: WallTime(microseconds: 1), raw: 1, force: .nan, grams: .infinity, contacts: 1, flags: [])
        var csv = ReadingExporter(format: .csv, deviceNames: [:])
        var text = ""
        csv.append(reading, to: &text)
        #expect(text == "1,,0.000001,1,,,1,false,false\r\n")
        var jsonl = ReadingExporter(format: .jsonl, deviceNames: [:])
        text = ""
        jsonl.append(reading, to: &text)
        let json = try JSONValue.parse(text.dropLast())
        #expect(json["force"] == nil && json["grams"] == nil && json["device"] == nil)
        #expect(json["raw"]?.numberValue == 1)
    }

    @Test func timesAreWrittenAsWallTimePrintsThem() {
        var generator = SplitMix64(seed: 4)
        let samples: [Int64] = [0, 1, 999_999, 1_000_000, -1, -999_999, -1_000_001, 1_764_500_000_000_001, .max, .min + 1]
            + (0..<1000).map { _ in Int64(bitPattern: generator.next()) >> Int64(generator.next() % 40) }
        for microseconds in samples {
            let time = WallTime(microseconds: microseconds)
            #expect(ReadingExporter.time(time) == time.description)
        }
    }

    @Test func negativeZeroIsWrittenAsZero() {
        #expect(ReadingExporter.number(-0.0) == "0.0")
        #expect(ReadingExporter.number(-1.5) == "-1.5")
    }

    static func flags(saturated: Bool, stable: Bool) -> ReadingFlags {
        var flags: ReadingFlags = []
        if saturated { flags.insert(.saturated) }
        if stable { flags.insert(.stable) }
        return flags
    }

    /// `seconds.micros` text to a WallTime, digit by digit (a Double would round).
    static func wallTime(_ text: String) -> WallTime? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 6, let seconds = Int64(parts[0]), let micros = Int64(parts[1]) else { return nil }
        return WallTime(microseconds: seconds * 1_000_000 + micros)
    }

    /// A number member's text as written, so a time can be read without a Double's rounding.
    static func member(_ key: String, of line: String) -> String {
        guard let start = line.range(of: "\"\(key)\":") else { return "" }
        return String(line[start.upperBound...].prefix { $0 != "," && $0 != "}" })
    }
}
