/// A plot's grid, axes, tick labels and axis names, as every plot of forcescale draws them.
/// - Parameter zeroLine: Also a line across at y = 0 (values go below it).
func drawFrame(
    _ svg: inout SVGWriter, layout: ForcePlot.Layout, xAxis: some PlotScale, yAxis: some PlotScale, x: (Double) -> Double, y: (Double) -> Double,
    xLabel: String, yLabel: String, zeroLine: Bool
) {
    svg.open("g", ["class": "grid", "stroke": ForcePlot.Palette.grid, "stroke-width": "1"])
    for tick in yAxis.ticks {
        svg.element("line", ["x1": coordinate(layout.left), "y1": coordinate(y(tick)), "x2": coordinate(layout.right), "y2": coordinate(y(tick))])
    }
    for tick in xAxis.ticks {
        svg.element("line", ["x1": coordinate(x(tick)), "y1": coordinate(layout.top), "x2": coordinate(x(tick)), "y2": coordinate(layout.bottom)])
    }
    svg.close("g")
    // The axes themselves, and the zero line.
    svg.open("g", ["class": "axes", "stroke": ForcePlot.Palette.axis, "stroke-width": "1.5"])
    svg.element("line", ["x1": coordinate(layout.left), "y1": coordinate(layout.top), "x2": coordinate(layout.left), "y2": coordinate(layout.bottom)])
    svg.element("line", ["x1": coordinate(layout.left), "y1": coordinate(layout.bottom), "x2": coordinate(layout.right), "y2": coordinate(layout.bottom)])
    if zeroLine {
        svg.element("line", ["x1": coordinate(layout.left), "y1": coordinate(y(0)), "x2": coordinate(layout.right), "y2": coordinate(y(0))])
    }
    svg.close("g")
    svg.open("g", ["font-size": "12"])
    for tick in xAxis.ticks {
        svg.element("text", ["class": "x-tick", "x": coordinate(x(tick)), "y": coordinate(layout.bottom + 18), "text-anchor": "middle"],
                    text: xAxis.label(tick))
    }
    for tick in yAxis.ticks {
        svg.element("text", ["class": "y-tick", "x": coordinate(layout.left - 8), "y": coordinate(y(tick) + 4), "text-anchor": "end"],
                    text: yAxis.label(tick))
    }
    svg.close("g")
    svg.element("text", ["class": "x-label", "x": coordinate((layout.left + layout.right) / 2), "y": coordinate(Double(layout.height) - 14),
                         "font-size": "13", "text-anchor": "middle"],
                text: xLabel)
    let middle = (layout.top + layout.bottom) / 2
    svg.element("text", ["class": "y-label", "x": "18", "y": coordinate(middle), "font-size": "13", "text-anchor": "middle",
                         "transform": "rotate(-90 18 \(coordinate(middle)))"],
                text: yLabel)
}
