import ScaleCore
import ScaleProtocol

/// How the gauge may draw: block characters need a UTF-8 terminal, colour needs a terminal
/// and no `NO_COLOR`. Colour only ever repeats what the words already say.
package struct GaugeStyle: Hashable, Sendable {
    var unicode: Bool
    var color: Bool
    /// Width of the bar in character cells.
    var barWidth: Int

    package init(unicode: Bool, color: Bool, barWidth: Int = 24) {
        self.unicode = unicode
        self.color = color
        self.barWidth = barWidth
    }

    package static let plain = GaugeStyle(unicode: false, color: false)
}

/// Renders readings and peaks as one line of text each: time since the start, force in
/// percent (`100%+` when saturated), the weight in the chosen unit, a bar that grows with
/// force like the original's circle, and words for the state.
///
/// It draws the protocol's READING and PEAK, whether they came from the daemon or from a
/// pipeline in this process, so that a reading of a model this build does not know is
/// drawn as it is and named.
package struct Gauge: Sendable {
    let style: GaugeStyle
    let unit: MassUnit
    /// Times are shown relative to this, so a recording from 2012 starts at 0.000 s.
    let origin: EventTime

    package init(style: GaugeStyle, unit: MassUnit, origin: EventTime) {
        self.style = style
        self.unit = unit
        self.origin = origin
    }

    package func line(for reading: ReadingMessage) -> String {
        // Rounded down, so "100%" never shows for a press that has not saturated.
        let percent = reading.saturated ? "100%+" : pad(String(Int((reading.force * 100).rounded(.down))) + "%", 5)
        var words: [String] = []
        if reading.contacts == 0 { words.append("lifted") }
        if reading.contacts > 1 { words.append("\(reading.contacts) contacts") }
        if reading.stable { words.append("stable") }
        if let drift = reading.driftText(unit: unit) { words.append(drift) }
        // A saturated weight is a lower bound: "at least", never a bare weight.
        if reading.saturated { words.append(ReadingMessage.lowerBoundText(unit.format(grams: reading.shownGrams))) }
        if let beyond = reading.beyondCalibrationText { words.append(beyond) }
        let bar = paint(bar(reading.force), reading.saturated ? .red : reading.stable ? .green : .yellow)
        let state = words.isEmpty ? "" : "  " + words.joined(separator: ", ")
        // A model a later daemon added: its grams are the daemon's, not a known model's.
        let model = reading.model.kind == nil ? "  \(untrusted: reading.model.rawValue) model" : ""
        // A stable reading shows its settled weight, the stability window's mean.
        return "\(time(reading.time))  \(percent)  \(weight(reading.shownGrams, atLeast: reading.saturated))  \(bar)\(state)\(model)"
    }

    /// - Parameters:
    ///   - peak: The PEAK.
    ///   - saturated: Whether its frame was at the top of the range: its weight is then a
    ///     lower bound, shown `≥385.0 g` as every other saturated weight.
    package func line(for peak: PeakMessage, saturated: Bool = false) -> String {
        "\(time(peak.time))  " + paint("PEAK", .boldRed) + "   \(weight(peak.grams, atLeast: saturated))  raw \(peak.raw) reached the peak threshold"
    }

    /// The line left behind when a weight is lifted: what it weighed, if it settled.
    package func liftLine(at time: EventTime, lastStable: ReadingMessage?) -> String {
        let summary = lastStable.map {
            $0.saturated ? "weighed " + ReadingMessage.lowerBoundText(unit.format(grams: $0.shownGrams)) : "weighed \(unit.format(grams: $0.shownGrams)) (stable)"
        } ?? "lifted before the weight settled"
        return "\(self.time(time))  \(summary)"
    }

    /// `12.345 s`, right-aligned so that columns line up for the first few minutes.
    func time(_ time: EventTime) -> String {
        let elapsed = time.microseconds - origin.microseconds
        let milliseconds = (elapsed + (elapsed >= 0 ? 500 : -500)) / 1000
        let sign = milliseconds < 0 ? "-" : ""
        let magnitude = milliseconds.magnitude
        let fraction = String(magnitude % 1000)
        let text = sign + String(magnitude / 1000) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
        return pad(text, 8) + " s"
    }

    /// `179.7 g` in the column the gauge keeps for it; `≥384.8 g` (`>=384.8 g` without
    /// Unicode) for a lower bound.
    func weight(_ grams: Double, atLeast: Bool = false) -> String {
        let bound = atLeast ? (style.unicode ? "≥" : ">=") : ""
        return pad(bound + fixed(unit.fromGrams(grams), decimals: unit.displayDecimals), 9) + " " + pad(unit.rawValue, 2, left: false)
    }

    func bar(_ force: Double) -> String {
        let cells = style.barWidth
        let clamped = Swift.min(1, Swift.max(0, force))
        if style.unicode {
            // Eighth blocks give the bar eight steps per cell.
            let eighths = Int((clamped * Double(cells * 8)).rounded())
            let partials = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"]
            var text = String(repeating: "█", count: eighths / 8) + partials[eighths % 8]
            text += String(repeating: " ", count: cells - eighths / 8 - (eighths % 8 == 0 ? 0 : 1))
            return "▕" + text + "▏"
        }
        let filled = Int((clamped * Double(cells)).rounded())
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: cells - filled) + "]"
    }

    enum Color: String {
        case red = "31", green = "32", yellow = "33", boldRed = "1;31"
    }

    func paint(_ text: String, _ color: Color) -> String {
        style.color ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }
}

extension MassUnit {
    /// `179.7 g`, `0.1797 kg`: a weight in a sentence, as the gauge and the commands write it.
    package func format(grams: Double) -> String {
        fixed(fromGrams(grams), decimals: displayDecimals) + " " + rawValue
    }

    /// `-6.0 g/s`, `-0.0060 kg/s`: a weight's trend, negative when falling.
    package func format(gramsPerSecond: Double) -> String {
        format(grams: gramsPerSecond) + "/s"
    }
}

extension ReadingMessage {
    /// "drifting -6.0 g/s" in the unit the person chose: how every client says that a
    /// weight has not stopped moving, where a settled one says "stable". `nil` without a
    /// drift.
    package func driftText(unit: MassUnit) -> String? {
        drift.map { "drifting " + unit.format(gramsPerSecond: $0) }
    }
}

/// `value` with exactly `decimals` decimals, rounded half away from zero.
package func fixed(_ value: Double, decimals: Int) -> String {
    var scale: Int64 = 1
    for _ in 0..<decimals { scale *= 10 }
    // Beyond what a whole number of steps can hold (a broken calibration, say), show the
    // number as it is rather than trap on the conversion.
    guard value.isFinite, (value * Double(scale)).magnitude < 9e15 else { return value.description }
    let scaled = Int64((value * Double(scale)).rounded())
    let sign = scaled < 0 ? "-" : ""
    let magnitude = scaled.magnitude
    guard decimals > 0 else { return sign + String(magnitude) }
    let fraction = String(magnitude % UInt64(scale))
    return sign + String(magnitude / UInt64(scale)) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
}

func pad(_ text: String, _ width: Int, left: Bool = true) -> String {
    let padding = String(repeating: " ", count: Swift.max(0, width - text.count))
    return left ? padding + text : text + padding
}
