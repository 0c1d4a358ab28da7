import ScaleCore

/// The SVG plot of a characterized pen, in the style of `log plot`: force in grams across on
/// a logarithmic axis (the few grams where a pen starts to register, which an artist feels
/// most, get as much room as the hundreds), logical pressure in % of the range up; each
/// weight pressing (filled circles) and releasing (open squares), the response through
/// them, the IAF marked with its ± (a band at least 6 px wide, its ± written beside it), and
/// the response the exported pressure curve gives (dashed: straight where it works). The
/// legend wraps to a second row rather than run past the picture's edge.
extension PenReport {
    package var svg: String {
        var layout = ForcePlot.Layout(width: 800, height: 470, left: 76, right: 776, top: 92, bottom: 400)
        let entries = ["pressing", "releasing", "response", "with the exported curve", "IAF ± uncertainty", "not registered"]
        let legendRows = ForcePlot.legendRows(entries, in: layout.legendSpan, gap: 16)
        layout.top += Double(legendRows.count - 1) * ForcePlot.legendRowHeight
        let weights = pen.points.map(\.grams) + pen.unregistered + pen.unmeasured
        let heaviest = weights.max() ?? 1
        let lightest = (weights + [pen.activation.grams - pen.activation.uncertainty]).filter { $0 > 0 }.min() ?? 1
        let gramAxis = LogPlotAxis(covering: lightest, heaviest)
        let percentAxis = PlotAxis(covering: 0, 100, ticks: 5)
        func x(_ grams: Double) -> Double { gramAxis.position(of: grams, from: layout.left, to: layout.right) }
        func y(_ percent: Double) -> Double { percentAxis.position(of: percent, from: layout.bottom, to: layout.top) }
        typealias Palette = ForcePlot.Palette

        var svg = SVGWriter(width: layout.width, height: layout.height)
        svg.element("rect", ["width": "\(layout.width)", "height": "\(layout.height)", "fill": Palette.background])
        svg.open("g", ["font-family": "DejaVu Sans, Verdana, Arial, sans-serif", "fill": Palette.text])
        svg.element("text", ["class": "title", "x": coordinate(layout.left), "y": "26", "font-size": "17", "font-weight": "bold"],
                    text: "Pen response of \(ForcePlot.shortened(device, to: 44))")
        let hysteresis = pen.hysteresisPercent.map { " · hysteresis \(fixed($0, decimals: 2)) %" } ?? ""
        svg.element("text", ["class": "subtitle", "x": coordinate(layout.left), "y": "47", "font-size": "13", "fill": Palette.secondaryText],
                    text: "IAF \(Self.grams(pen.activation.grams)) ± \(Self.grams(pen.activation.uncertainty)) · \(pen.points.count) weights registered\(hysteresis)")

        drawFrame(&svg, layout: layout, xAxis: gramAxis, yAxis: percentAxis, x: x, y: y,
                  xLabel: "force on the tip (g, logarithmic)", yLabel: "logical pressure (% of the range)", zeroLine: false)

        // The IAF: a band for its ± (at least 6 px, so that a small ± is still seen) and a
        // line at the estimate, labelled with both.
        let activation = pen.activation
        let bandLow = x(activation.grams - activation.uncertainty), bandHigh = x(activation.grams + activation.uncertainty)
        let bandWidth = Swift.max(6, bandHigh - bandLow)
        let bandX = Swift.max(layout.left, Swift.min((bandLow + bandHigh - bandWidth) / 2, layout.right - bandWidth))
        svg.element("rect", ["class": "iaf-band", "x": coordinate(bandX), "y": coordinate(layout.top),
                             "width": coordinate(bandWidth),
                             "height": coordinate(layout.bottom - layout.top), "fill": Palette.peak, "fill-opacity": "0.18"])
        svg.element("line", ["class": "iaf", "x1": coordinate(x(activation.grams)), "y1": coordinate(layout.top), "x2": coordinate(x(activation.grams)),
                             "y2": coordinate(layout.bottom), "stroke": Palette.peak, "stroke-width": "1.5", "stroke-dasharray": "4 3"])
        let iafLabel = "IAF \(Self.grams(activation.grams)) ± \(Self.grams(activation.uncertainty))"
        let labelX = Swift.min(bandX + bandWidth + 5, layout.right - ForcePlot.textWidth(iafLabel, size: 12) * 1.1)
        svg.element("text", ["class": "iaf-label", "x": coordinate(labelX), "y": coordinate(layout.top + 14), "font-size": "12",
                             "fill": Palette.peak, "font-weight": "bold", "stroke": Palette.background, "stroke-width": "4", "paint-order": "stroke"],
                    text: iafLabel)

        // The response through the weights, and what the exported curve makes of it.
        let steps = 120
        let top = pen.grams(atFraction: pen.reach)
        var response: [String] = []
        var linearised: [String] = []
        for step in 0...steps {
            let grams = activation.grams + (top - activation.grams) * Double(step) / Double(steps)
            let fraction = pen.fraction(atGrams: grams)
            response.append(coordinate(x(grams)) + "," + coordinate(y(fraction * 100)))
            if let output = settings.curve.output(at: fraction) {
                linearised.append(coordinate(x(grams)) + "," + coordinate(y(output * 100)))
            }
        }
        svg.element("polyline", ["class": "response", "points": response.joined(separator: " "), "fill": "none", "stroke": Palette.line, "stroke-width": "2"])
        svg.element("polyline", ["class": "linearised", "points": linearised.joined(separator: " "), "fill": "none", "stroke": Palette.stable,
                                 "stroke-width": "2", "stroke-dasharray": "7 4"])
        for point in pen.points {
            svg.element("circle", ["class": "pressing", "cx": coordinate(x(point.grams)), "cy": coordinate(y(point.fraction * 100)), "r": "4", "fill": Palette.line])
            if let releasing = point.releasingFraction {
                svg.element("rect", ["class": "releasing", "x": coordinate(x(point.grams) - 4), "y": coordinate(y(releasing * 100) - 4), "width": "8", "height": "8",
                                     "fill": Palette.background, "stroke": Palette.maximum, "stroke-width": "2"])
            }
        }
        for grams in pen.unregistered {
            svg.element("circle", ["class": "unregistered", "cx": coordinate(x(grams)), "cy": coordinate(y(0)), "r": "4",
                                   "fill": Palette.background, "stroke": Palette.secondaryText, "stroke-width": "1.5"])
        }

        // The legend, each entry with its own shape, on as many rows as it needs.
        svg.open("g", ["class": "legend", "font-size": "12"])
        for (row, placed) in legendRows.enumerated() {
            let middle = 70 + Double(row) * ForcePlot.legendRowHeight
            let cy = coordinate(middle)
            for (index, cursor) in placed {
                let entry = entries[index]
                let mark = cursor + 12
                switch entry {
                case "pressing": svg.element("circle", ["cx": coordinate(mark), "cy": cy, "r": "4", "fill": Palette.line])
                case "releasing": svg.element("rect", ["x": coordinate(mark - 4), "y": coordinate(middle - 4), "width": "8", "height": "8", "fill": Palette.background, "stroke": Palette.maximum, "stroke-width": "2"])
                case "response": svg.element("line", ["x1": coordinate(cursor), "y1": cy, "x2": coordinate(cursor + 24), "y2": cy, "stroke": Palette.line, "stroke-width": "2"])
                case "with the exported curve": svg.element("line", ["x1": coordinate(cursor), "y1": cy, "x2": coordinate(cursor + 24), "y2": cy, "stroke": Palette.stable, "stroke-width": "2", "stroke-dasharray": "7 4"])
                case "IAF ± uncertainty": svg.element("rect", ["x": coordinate(cursor), "y": coordinate(middle - 6), "width": "24", "height": "12", "fill": Palette.peak, "fill-opacity": "0.25"])
                default: svg.element("circle", ["cx": coordinate(mark), "cy": cy, "r": "4", "fill": Palette.background, "stroke": Palette.secondaryText, "stroke-width": "1.5"])
                }
                svg.element("text", ["x": coordinate(cursor + 30), "y": coordinate(middle + 4)], text: entry)
            }
        }
        svg.close("g")
        svg.close("g")
        return svg.document
    }
}
