import Foundation

/// What a recording says, read independently of forcescale's own parser and pipeline, so
/// that replay output is checked against the raw file rather than against itself.
struct RecordingOracle {
    var minimum = 0
    var maximum = 0
    var resolution = 0
    /// Releases: the frame where the last contact ends (BTN_TOUCH up on single-touch
    /// devices, the last tracking id ending on multitouch ones).
    var releases = 0
    /// Whether any pressure value on the axis reaches the maximum.
    var reachesMaximum = false

    init(description: String, events: String) {
        var axes: [String: [Int]] = [:]
        var keyRows: [[UInt8]] = []
        for line in description.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "A:", fields.count >= 6 { axes[String(fields[1])] = fields[2...].compactMap { Int($0) } }
            if fields.first == "B:", fields.count > 1, fields[1] == "01" { keyRows.append(fields.dropFirst(2).compactMap { UInt8($0, radix: 16) }) }
        }
        // BTN_TOUCH is key 330: byte 41 of the key mask (row 5, byte 1), bit 2.
        let hasTouchButton = keyRows.count > 5 && keyRows[5].count > 1 && keyRows[5][1] & 0x04 != 0
        let multitouch = axes["3a"] != nil && axes["2f"] != nil
        let axisCode = multitouch ? "003a" : "0018"
        let axis = axes[multitouch ? "3a" : "18"]!
        minimum = axis[0]
        maximum = axis[1]
        resolution = axis.count > 4 ? axis[4] : 0

        var slot = 0
        var trackingIDs: [Int: Int] = [:]
        var touchButton = false
        var pressure = minimum
        var wasActive = false
        for line in events.split(separator: "\n") where line.hasPrefix("E:") {
            let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 5, let value = Int(fields[4]) else { continue }
            switch (fields[2], fields[3]) {
            case ("0003", Substring(axisCode)): if value >= maximum { reachesMaximum = true }; pressure = value
            case ("0003", "002f"): slot = value
            case ("0003", "0039"): trackingIDs[slot] = value
            case ("0001", "014a"): touchButton = value != 0
            case ("0000", "0000"):
                let active = multitouch ? trackingIDs.values.contains { $0 >= 0 } : hasTouchButton ? touchButton : pressure > minimum
                if wasActive, !active { releases += 1 }
                wasActive = active
            default: break
            }
        }
    }

    /// Grams the nominal or physical model gives for a raw value, to a tenth.
    func expectedGrams(raw: Int) -> Double {
        let grams: Double
        if resolution > 0 {
            grams = Double(max(0, raw - minimum)) / Double(resolution)
        } else {
            grams = min(1, max(0, Double(raw - minimum) / Double(maximum - minimum))) * 385
        }
        return (grams * 10).rounded() / 10
    }
}
