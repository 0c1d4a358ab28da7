/// One point of a plotted series: seconds since the session started, and grams.
struct PlotPoint: Hashable, Sendable {
    var seconds: Double
    var grams: Double

    init(seconds: Double, grams: Double) {
        self.seconds = seconds
        self.grams = grams
    }
}

/// Thins a long series down to what a plot can show: per pixel column it keeps the lowest
/// and the highest point (in their time order), so a one-reading spike, a peak, survives
/// however many readings share its column, and a session of a million readings becomes at
/// most two points per column.
struct PlotDecimator: Sendable {
    /// The time span the columns divide, in seconds since the start.
    let span: ClosedRange<Double>
    /// How many columns: the plot's width in pixels.
    let columns: Int

    private var lowest: [PlotPoint?]
    private var highest: [PlotPoint?]
    /// The order in which points arrived, to keep each column's two in time order even if
    /// readings came out of order.
    private var lowestIndex: [Int]
    private var highestIndex: [Int]
    private var count = 0

    /// - Parameters:
    ///   - span: The seconds the plot's time axis covers; points outside go to the first or
    ///     the last column.
    ///   - columns: The number of pixel columns (at least 1).
    init(span: ClosedRange<Double>, columns: Int) {
        self.span = span
        self.columns = Swift.max(1, columns)
        lowest = Array(repeating: nil, count: self.columns)
        highest = Array(repeating: nil, count: self.columns)
        lowestIndex = Array(repeating: 0, count: self.columns)
        highestIndex = Array(repeating: 0, count: self.columns)
    }

    /// Takes one point; points whose grams are not a number are left out.
    mutating func add(_ point: PlotPoint) {
        guard point.grams.isFinite, point.seconds.isFinite else { return }
        let width = span.upperBound - span.lowerBound
        let fraction = width > 0 ? (point.seconds - span.lowerBound) / width : 0
        let column = Swift.min(columns - 1, Swift.max(0, Int(fraction * Double(columns))))
        count += 1
        // Strictly lower/higher: the first of equal values stays, so a flat run keeps its start.
        if lowest[column].map({ point.grams < $0.grams }) ?? true {
            lowest[column] = point
            lowestIndex[column] = count
        }
        if highest[column].map({ point.grams > $0.grams }) ?? true {
            highest[column] = point
            highestIndex[column] = count
        }
    }

    /// The kept points in time order: one or two per column that received any.
    var points: [PlotPoint] {
        var result: [PlotPoint] = []
        result.reserveCapacity(columns * 2)
        for column in 0..<columns {
            guard let low = lowest[column], let high = highest[column] else { continue }
            if lowestIndex[column] == highestIndex[column] {
                result.append(low)
            } else if (low.seconds, lowestIndex[column]) < (high.seconds, highestIndex[column]) {
                result.append(low)
                result.append(high)
            } else {
                result.append(high)
                result.append(low)
            }
        }
        return result
    }
}
