import ScaleCore
import ScaleProtocol

/// One logged session drawn as an SVG chart: grams against seconds since the session
/// started, with labelled axes on nice ticks, every PEAK marked with its grams, the
/// heaviest reading and the stable weight marked, a title and a legend.
///
/// Meant to be read at a glance on a screen or a printout: dark lines on white, each mark
/// with its own shape (triangle, circle, dashes) and words beside it, so nothing depends on
/// telling colours apart. Feed the readings in time order with ``add(_:)``; a session of any
/// length keeps at most two points per pixel column (see ``PlotDecimator``), as they come
/// when the time they span is known beforehand: an ended session's, or, for one still open,
/// the earliest and latest times of its readings (`readingTimes`).
package struct ForcePlot: Sendable {
    /// Where the plot area sits in the picture, in pixels.
    package struct Layout: Hashable, Sendable {
        var width: Int
        var height: Int
        /// The plot area: left and right edges (x), top and bottom edges (y).
        var left: Double
        var right: Double
        var top: Double
        var bottom: Double
        /// Made for a narrow screen: the title names the session alone, the device and the
        /// details follow on lines of their own, and fewer time ticks.
        var isNarrow: Bool

        init(width: Int, height: Int, left: Double, right: Double, top: Double, bottom: Double, isNarrow: Bool = false) {
            self.width = width
            self.height = height
            self.left = left
            self.right = right
            self.top = top
            self.bottom = bottom
            self.isNarrow = isNarrow
        }

        /// 800 × 450: room for the title, the legend, the tick labels and the axis names.
        package static let standard = Layout(width: 800, height: 450, left: 76, right: 776, top: 86, bottom: 388)

        /// 360 × 500, for a phone: drawn at least 330 CSS px wide (350 in the page at 390 px),
        /// its 12 px labels stay at least 11 px. The plot area's top moves down by a row for
        /// each row the legend wraps to, and by one for the start's line when it is shown.
        package static let narrow = Layout(width: 360, height: 500, left: 60, right: 344, top: 126, bottom: 438, isNarrow: true)

        /// Where the legend's rows may run: from the plot's left edge to 12 px from the
        /// picture's right edge (from 12 px in a narrow picture, where the room is short).
        var legendSpan: ClosedRange<Double> {
            (isNarrow ? 12 : left)...(Double(width) - 12)
        }

        /// One decimation column per pixel of the plot area.
        var columns: Int { Int((right - left).rounded()) }
    }

    let session: LoggedSession
    let startedText: String?
    let peaks: [LoggedPeak]
    let layout: Layout

    /// Decimated as the readings come when the span is known (the session's end, or the
    /// times of its readings); kept whole until rendering when it is not (a session still
    /// open, its readings' times not given), because the columns need the span.
    private var decimator: PlotDecimator?
    private var pending: [PlotPoint] = []
    private var readingCount = 0
    private var heaviest: PlotPoint?
    /// Whether the heaviest reading was saturated: its label is then a lower bound.
    private var heaviestSaturated = false
    private var lightest: Double?
    private var lastSeconds = 0.0
    /// Below 0 only for a reading stamped before its session's start (a clock step).
    private var firstSeconds = 0.0

    /// - Parameters:
    ///   - session: The session: its device, id, start, end, stable weight.
    ///   - startedText: The session's start as the reader should see it (local time,
    ///     formatted by the caller, which knows the time zone); nil leaves it out of the
    ///     picture, for a page that writes the start itself in its reader's locale.
    ///   - peaks: The session's PEAKs.
    ///   - readingTimes: For a session still open, the earliest and the latest time of the
    ///     readings that will be added (those with a finite weight), so that they are
    ///     decimated as they come instead of held until rendering; the picture is the same
    ///     either way. Not needed for an ended session, whose span its end gives.
    ///   - layout: The picture's size and plot area.
    package init(session: LoggedSession, startedText: String?, peaks: [LoggedPeak], readingTimes: ClosedRange<WallTime>? = nil, layout: Layout = .standard) {
        self.session = session
        self.startedText = startedText
        self.peaks = peaks
        self.layout = layout
        if let ended = session.ended {
            let duration = Swift.max(0, Self.seconds(from: session.started, to: ended))
            decimator = PlotDecimator(span: 0...duration, columns: layout.columns)
        } else if let readingTimes {
            // The span the columns would be made of at rendering: from the start (or the
            // earliest reading, stamped before it by a clock step) to the latest reading.
            let first = Swift.min(0, Self.seconds(from: session.started, to: readingTimes.lowerBound))
            let last = Swift.max(0, Self.seconds(from: session.started, to: readingTimes.upperBound))
            decimator = PlotDecimator(span: first...Swift.max(last, first), columns: layout.columns)
        }
    }

    /// Takes the next reading of the session.
    package mutating func add(_ reading: LoggedReading) {
        let point = PlotPoint(seconds: Self.seconds(from: session.started, to: reading.time), grams: reading.grams)
        guard point.grams.isFinite else { return }
        readingCount += 1
        lastSeconds = Swift.max(lastSeconds, point.seconds)
        firstSeconds = Swift.min(firstSeconds, point.seconds)
        if heaviest.map({ point.grams > $0.grams }) ?? true {
            heaviest = point
            heaviestSaturated = reading.flags.contains(.saturated)
        }
        lightest = Swift.min(lightest ?? point.grams, point.grams)
        if decimator != nil { decimator!.add(point) } else { pending.append(point) }
    }

    /// The axes the picture uses: seconds across, grams up.
    var axes: (time: PlotAxis, grams: PlotAxis) {
        let duration = Swift.max(session.ended.map { Self.seconds(from: session.started, to: $0) } ?? 0, lastSeconds)
        let time = PlotAxis(covering: firstSeconds, duration, ticks: layout.isNarrow ? 4 : 8)
        var high = heaviest?.grams ?? session.peakGrams
        var low = Swift.min(0, lightest ?? 0)
        for peak in peaks where peak.grams.isFinite { high = Swift.max(high, peak.grams) }
        if let stable = session.stableGrams, stable.isFinite {
            high = Swift.max(high, stable)
            low = Swift.min(low, stable)
        }
        // Headroom above the highest mark for its label.
        let headroom = (high - low) * 0.12
        return (time, PlotAxis(covering: low, high + headroom, ticks: 6))
    }

    /// The SVG document.
    package func render() -> String {
        let (timeAxis, gramAxis) = axes
        let legend = legendItems
        let rows = Self.legendRows(legend.map(\.label), in: layout.legendSpan, gap: 22)
        // The plot area starts below the header's last line and the legend's last row.
        var layout = layout
        layout.top += Double(rows.count - 1) * Self.legendRowHeight + narrowStartLine
        func x(_ seconds: Double) -> Double { timeAxis.position(of: seconds, from: layout.left, to: layout.right) }
        func y(_ grams: Double) -> Double { gramAxis.position(of: grams, from: layout.bottom, to: layout.top) }

        var svg = SVGWriter(width: layout.width, height: layout.height)
        svg.element("rect", ["width": "\(layout.width)", "height": "\(layout.height)", "fill": Palette.background])
        svg.open("g", ["font-family": "DejaVu Sans, Verdana, Arial, sans-serif", "fill": Palette.text])

        // Title: which session of which device, and when.
        if layout.isNarrow {
            // The session, then its device and its details each on a line of their own.
            let room = Double(layout.width) - 24
            svg.element("text", ["class": "title", "x": "12", "y": "26", "font-size": "17", "font-weight": "bold"], text: "Session \(session.id)")
            svg.element("text", ["class": "device", "x": "12", "y": "47", "font-size": "13"],
                        text: "on " + Self.shortened(session.device.name, to: Swift.max(8, Int(room / (13 * 0.62)) - 3)))
            if let startedText {
                svg.element("text", ["class": "started", "x": "12", "y": "66", "font-size": "13", "fill": Palette.secondaryText], text: "started \(startedText)")
            }
            svg.element("text", ["class": "subtitle", "x": "12", "y": coordinate(66 + narrowStartLine), "font-size": "13", "fill": Palette.secondaryText],
                        text: subtitle(withStart: false))
        } else {
            svg.element("text", ["class": "title", "x": coordinate(layout.left), "y": "26", "font-size": "17", "font-weight": "bold"],
                        text: "Session \(session.id) on \(Self.shortened(session.device.name, to: 48))")
            svg.element("text", ["class": "subtitle", "x": coordinate(layout.left), "y": "47", "font-size": "13", "fill": Palette.secondaryText],
                        text: subtitle())
        }

        drawFrame(&svg, layout: layout, xAxis: timeAxis, yAxis: gramAxis, x: x, y: y,
                  xLabel: "time since the session started (s)", yLabel: "weight (g)", zeroLine: gramAxis.lower < 0)

        // The readings.
        let points = decimatedPoints(timeAxis: timeAxis)
        if !points.isEmpty {
            let coordinates = points.map { coordinate(x($0.seconds)) + "," + coordinate(y($0.grams)) }.joined(separator: " ")
            svg.element("polyline", ["class": "grams", "points": coordinates, "fill": "none", "stroke": Palette.line,
                                     "stroke-width": "2", "stroke-linejoin": "round", "stroke-linecap": "round"])
        }
        if points.count == 1, let only = points.first {
            // A line through one point draws nothing: show the point itself.
            svg.element("circle", ["class": "grams-dot", "cx": coordinate(x(only.seconds)), "cy": coordinate(y(only.grams)), "r": "4", "fill": Palette.line])
        }

        // The stable weight: a dashed line across, over the readings (it usually runs along
        // them), labelled at its right end.
        if let stable = session.stableGrams, stable.isFinite {
            let lineY = y(stable)
            // Above the line, unless the zero line runs just there (a stable weight a little
            // below zero, after a tare): then below it, where nothing crosses the text.
            let zeroY = gramAxis.lower < 0 ? y(0) : .infinity
            let labelY = (lineY - 20...lineY).contains(zeroY) ? lineY + 17 : lineY - 6
            svg.element("line", ["class": "stable", "x1": coordinate(layout.left), "y1": coordinate(lineY), "x2": coordinate(layout.right), "y2": coordinate(lineY),
                                 "stroke": Palette.stable, "stroke-width": "2", "stroke-dasharray": "8 5"])
            svg.element("text", ["class": "stable-label", "x": coordinate(layout.right - 4), "y": coordinate(labelY), "font-size": "13",
                                 "text-anchor": "end", "fill": Palette.stable, "stroke": Palette.background,
                                 "stroke-width": "4", "paint-order": "stroke", "font-weight": "bold"],
                        text: "stable " + (session.stableSaturated ? ReadingMessage.lowerBoundText(Self.grams(stable)) : Self.grams(stable)))
        }

        // PEAKs: a triangle pointing down at the peak, its grams above. A label that would
        // run into the one before it is left out; the marker stays.
        var labelEnd = -Double.infinity
        var unlabelled = 0
        for peak in peaks.sorted(by: { $0.time < $1.time }) where peak.grams.isFinite {
            let px = x(Self.seconds(from: session.started, to: peak.time))
            let py = y(peak.grams)
            svg.element("path", ["class": "peak", "transform": "translate(\(coordinate(px)),\(coordinate(py)))", "d": Palette.peakTriangle,
                                 "fill": Palette.peak, "stroke": Palette.background, "stroke-width": "1"])
            let label = Self.grams(peak.grams)
            let width = Self.textWidth(label, size: 12)
            let anchorX = Swift.min(Swift.max(px, layout.left + width / 2), layout.right - width / 2)
            if anchorX - width / 2 > labelEnd + 4 {
                svg.element("text", ["class": "peak-label", "x": coordinate(anchorX), "y": coordinate(py - 15), "font-size": "12",
                                     "text-anchor": "middle", "fill": Palette.peak, "stroke": Palette.background,
                                     "stroke-width": "4", "paint-order": "stroke", "font-weight": "bold"],
                            text: label)
                labelEnd = anchorX + width / 2
            } else {
                unlabelled += 1
            }
        }

        // The heaviest reading, unless a PEAK mark already sits on it.
        if let heaviest, readingCount > 1 {
            let hx = x(heaviest.seconds), hy = y(heaviest.grams)
            if legend.contains(.maximum) {
                svg.element("circle", ["class": "maximum", "cx": coordinate(hx), "cy": coordinate(hy), "r": "6", "fill": Palette.background,
                                       "stroke": Palette.maximum, "stroke-width": "2.5"])
                let label = "max " + (heaviestSaturated ? ReadingMessage.lowerBoundText(Self.grams(heaviest.grams)) : Self.grams(heaviest.grams))
                let width = Self.textWidth(label, size: 12)
                let anchorX = Swift.min(Swift.max(hx, layout.left + width / 2), layout.right - width / 2)
                svg.element("text", ["class": "maximum-label", "x": coordinate(anchorX), "y": coordinate(hy - 13), "font-size": "12",
                                     "text-anchor": "middle", "fill": Palette.maximum, "stroke": Palette.background,
                                     "stroke-width": "4", "paint-order": "stroke", "font-weight": "bold"],
                            text: label)
            }
        }

        // A word where there is little or nothing to draw.
        var notes: [String] = []
        if readingCount == 0 { notes.append("No readings were logged in this session.") }
        if readingCount == 1, let heaviest { notes.append("One reading only: \(Self.grams(heaviest.grams)) at \(fixed(heaviest.seconds, decimals: 3)) s.") }
        if unlabelled > 0 { notes.append("\(unlabelled) PEAK label\(unlabelled == 1 ? "" : "s") left out where PEAKs crowd.") }
        for (index, note) in notes.enumerated() {
            svg.element("text", ["class": "note", "x": coordinate((layout.left + layout.right) / 2), "y": coordinate((layout.top + layout.bottom) / 2 + Double(index) * 20),
                                 "font-size": layout.isNarrow ? "12" : "14", "text-anchor": "middle", "fill": Palette.secondaryText],
                        text: note)
        }

        drawLegend(&svg, legend, rows: rows)
        svg.close("g")
        return svg.document
    }

    // MARK: - Parts

    /// A narrow picture's start has a line of its own, 19 px, below its device's.
    private var narrowStartLine: Double {
        layout.isNarrow && startedText != nil ? Self.legendRowHeight : 0
    }

    private func subtitle(withStart: Bool = true) -> String {
        var parts = withStart ? startedText.map { ["started \($0)"] } ?? [] : []
        if let ended = session.ended {
            parts.append(SessionText.duration(Self.seconds(from: session.started, to: ended)))
        } else {
            parts.append("still open")
        }
        parts.append(SessionText.count(readingCount, "reading"))
        parts.append("\(session.model.rawValue) model")
        return parts.joined(separator: " · ")
    }

    private func decimatedPoints(timeAxis: PlotAxis) -> [PlotPoint] {
        if let decimator { return decimator.points }
        var late = PlotDecimator(span: firstSeconds...Swift.max(lastSeconds, firstSeconds), columns: layout.columns)
        for point in pending { late.add(point) }
        return late.points
    }

    private enum LegendItem {
        case line, peak, maximum, stable

        var label: String {
            switch self {
            case .line: return "each reading"
            case .peak: return "PEAK (threshold reached)"
            case .maximum: return "heaviest reading"
            case .stable: return "stable weight"
            }
        }
    }

    /// Whether a PEAK's mark sits on the heaviest reading (within 6 px both ways), which then
    /// gets no mark of its own; decided in the plot area as the layout gives it, before the
    /// legend's rows move its top, since the legend's rows depend on the answer.
    private func heaviestCovered(x: (Double) -> Double, y: (Double) -> Double) -> Bool {
        guard let heaviest else { return false }
        let hx = x(heaviest.seconds), hy = y(heaviest.grams)
        return peaks.contains { peak in
            (x(Self.seconds(from: session.started, to: peak.time)) - hx).magnitude < 6 && (y(peak.grams) - hy).magnitude < 6
        }
    }

    /// What the legend names: the readings' line always, then each kind of mark drawn.
    private var legendItems: [LegendItem] {
        var items: [LegendItem] = [.line]
        if let stable = session.stableGrams, stable.isFinite { items.append(.stable) }
        if peaks.contains(where: { $0.grams.isFinite }) { items.append(.peak) }
        if heaviest != nil, readingCount > 1 {
            let (timeAxis, gramAxis) = axes
            let layout = layout
            let covered = heaviestCovered(x: { timeAxis.position(of: $0, from: layout.left, to: layout.right) },
                                          y: { gramAxis.position(of: $0, from: layout.bottom, to: layout.top) })
            if !covered { items.append(.maximum) }
        }
        return items
    }

    /// Rows of a legend apart.
    static let legendRowHeight = 19.0

    /// Where each legend entry (a 24 px mark, 6 px, its label, `gap`) starts: across a row
    /// while it fits within `span`, then on the next row. Returns the rows, each a list of
    /// (entry's index, its x).
    static func legendRows(_ labels: [String], in span: ClosedRange<Double>, gap: Double) -> [[(index: Int, x: Double)]] {
        var rows: [[(index: Int, x: Double)]] = [[]]
        var cursor = span.lowerBound
        for (index, label) in labels.enumerated() {
            let width = 30 + textWidth(label, size: 12)
            if cursor + width > span.upperBound, !rows[rows.count - 1].isEmpty {
                rows.append([])
                cursor = span.lowerBound
            }
            rows[rows.count - 1].append((index, cursor))
            cursor += width + gap
        }
        return rows
    }

    private func drawLegend(_ svg: inout SVGWriter, _ items: [LegendItem], rows: [[(index: Int, x: Double)]]) {
        // Below the subtitle: a line lower in a narrow picture, whose header has three.
        let firstBaseline = layout.isNarrow ? 89.0 + narrowStartLine : 70.0
        svg.open("g", ["class": "legend", "font-size": "12"])
        for (row, entries) in rows.enumerated() {
            for (index, cursor) in entries {
                drawLegendEntry(&svg, items[index], at: cursor, baseline: firstBaseline + Double(row) * Self.legendRowHeight)
            }
        }
        svg.close("g")
    }

    private func drawLegendEntry(_ svg: inout SVGWriter, _ item: LegendItem, at cursor: Double, baseline: Double) {
        let label = item.label
        switch item {
        case .line:
            svg.element("line", ["x1": coordinate(cursor), "y1": coordinate(baseline - 4), "x2": coordinate(cursor + 24), "y2": coordinate(baseline - 4),
                                 "stroke": Palette.line, "stroke-width": "2.5"])
        case .peak:
            svg.element("path", ["transform": "translate(\(coordinate(cursor + 12)),\(coordinate(baseline + 1)))", "d": Palette.peakTriangle,
                                 "fill": Palette.peak])
        case .maximum:
            svg.element("circle", ["cx": coordinate(cursor + 12), "cy": coordinate(baseline - 4), "r": "5", "fill": Palette.background,
                                   "stroke": Palette.maximum, "stroke-width": "2.5"])
        case .stable:
            svg.element("line", ["x1": coordinate(cursor), "y1": coordinate(baseline - 4), "x2": coordinate(cursor + 24), "y2": coordinate(baseline - 4),
                                 "stroke": Palette.stable, "stroke-width": "2", "stroke-dasharray": "6 4"])
        }
        svg.element("text", ["x": coordinate(cursor + 30), "y": coordinate(baseline)], text: label)
    }

    // MARK: - Helpers

    /// Colours with strong contrast on white; each also has its own shape and words.
    enum Palette {
        static let background = "#ffffff"
        static let text = "#1a1a1a"
        static let secondaryText = "#4d4d4d"
        static let grid = "#e3e3e3"
        static let axis = "#333333"
        static let line = "#1f4e9c"
        static let peak = "#c0281b"
        static let maximum = "#a35200"
        static let stable = "#17753a"
        /// A triangle pointing down whose tip is the origin, so a translate puts it on a peak.
        static let peakTriangle = "M 0 0 L -7 -11 L 7 -11 Z"
    }

    static func seconds(from start: WallTime, to time: WallTime) -> Double {
        Double(time.microseconds - start.microseconds) / 1e6
    }

    static func grams(_ value: Double) -> String { fixed(value, decimals: 1) + " g" }

    /// About how wide a text is in DejaVu Sans, a wide face (an average glyph of these
    /// labels is ~0.6 em; a little more is assumed so that neighbours never touch).
    static func textWidth(_ text: String, size: Double) -> Double {
        Double(text.count) * size * 0.62
    }

    static func shortened(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}

/// Coordinates with at most one decimal: a tenth of a pixel is finer than any screen.
func coordinate(_ value: Double) -> String {
    fixed(value, decimals: 1)
}
