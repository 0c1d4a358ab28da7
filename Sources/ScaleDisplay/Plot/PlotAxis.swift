import Glibc

/// A linear axis with "nice" ticks: steps of 1, 2, 2.5 or 5 times a power of ten, bounds
/// on whole steps, labels with just the decimals the step needs (`0`, `2.5`, `0.25`).
struct PlotAxis: Hashable, Sendable {
    /// The value at the start of the axis (a whole number of steps).
    let lower: Double
    /// The value at the end of the axis (a whole number of steps).
    let upper: Double
    /// The distance between two ticks.
    let step: Double
    /// Decimals that show every tick exactly.
    let decimals: Int

    /// An axis that covers `low...high` with about `ticks` intervals.
    /// - Parameters:
    ///   - low: The smallest value to show.
    ///   - high: The largest value to show; a range of zero width is widened around it.
    ///   - ticks: About how many intervals between ticks (at least 1).
    init(covering low: Double, _ high: Double, ticks: Int = 6) {
        var low = low.isFinite ? low : 0
        var high = high.isFinite ? high : 1
        if low > high { swap(&low, &high) }
        if high - low < 1e-9 {
            // One value, or none: a window around it that still starts at 0 for 0.
            let half = Swift.max(low.magnitude * 0.1, 0.5)
            high = low == 0 ? 1 : low + half
            low = low == 0 ? 0 : low - half
        }
        let (step, decimals) = Self.niceStep(for: (high - low) / Double(Swift.max(1, ticks)))
        self.step = step
        self.decimals = decimals
        // A value a hair past a whole step (rounding noise) does not earn a whole extra step.
        lower = (low / step + 1e-9).rounded(.down) * step
        upper = (high / step - 1e-9).rounded(.up) * step
    }

    /// The tick values from ``lower`` to ``upper``.
    var ticks: [Double] {
        let count = Int(((upper - lower) / step).rounded())
        return (0...count).map { index in
            let value = lower + Double(index) * step
            // Multiples of 0.1 are not exact in binary; the label rounds, and 0 stays 0.
            return value.magnitude < step * 1e-9 ? 0 : value
        }
    }

    /// A tick's label, with the axis's decimals.
    func label(_ value: Double) -> String {
        fixed(value, decimals: decimals)
    }

    /// Where `value` falls between `start` (at ``lower``) and `end` (at ``upper``).
    func position(of value: Double, from start: Double, to end: Double) -> Double {
        start + (value - lower) / (upper - lower) * (end - start)
    }

    /// The smallest nice step at least `rough`, and the decimals it needs.
    static func niceStep(for rough: Double) -> (step: Double, decimals: Int) {
        let rough = rough > 0 && rough.isFinite ? rough : 1
        // The power of ten at or below `rough`, by repeated steps: exact for the range
        // plots meet (1e-6 to 1e9), and no math library for a pure module.
        var magnitude = 1.0
        var exponent = 0
        while magnitude * 10 <= rough { magnitude *= 10; exponent += 1 }
        while magnitude > rough { magnitude /= 10; exponent -= 1 }
        let residual = rough / magnitude
        switch residual {
        case ...1.000_001: return (magnitude, Swift.max(0, -exponent))
        case ...2.000_001: return (2 * magnitude, Swift.max(0, -exponent))
        case ...2.500_001: return (2.5 * magnitude, Swift.max(0, 1 - exponent))
        case ...5.000_001: return (5 * magnitude, Swift.max(0, -exponent))
        default: return (10 * magnitude, Swift.max(0, -exponent - 1))
        }
    }
}

/// What a plot's frame needs of an axis: its ticks and their labels.
protocol PlotScale {
    /// The tick values, from the start of the axis to its end.
    var ticks: [Double] { get }
    /// A tick's label.
    func label(_ value: Double) -> String
}

extension PlotAxis: PlotScale {}

/// A logarithmic axis, for values that matter across decades (a pen's few grams at the tip
/// beside its hundreds): bounds on powers of ten, ticks at 1, 2 and 5 times each, each
/// decade as long as the next.
struct LogPlotAxis: Hashable, Sendable, PlotScale {
    /// The power of ten at the start of the axis.
    let lower: Double
    /// The power of ten at the end of the axis.
    let upper: Double

    /// An axis from the power of ten at or below `low` to the one at or above `high`.
    /// - Parameters:
    ///   - low: The smallest value to show, above 0 (a value at or below 0 is taken as 1).
    ///   - high: The largest value to show; at least one decade is shown.
    init(covering low: Double, _ high: Double) {
        let low = low > 0 && low.isFinite ? low : 1
        let high = high.isFinite ? Swift.max(high, low) : low
        lower = pow(10, (log10(low) + 1e-9).rounded(.down))
        upper = Swift.max(pow(10, (log10(high) - 1e-9).rounded(.up)), lower * 10)
    }

    var ticks: [Double] {
        var ticks: [Double] = []
        var decade = lower
        while decade <= upper * (1 + 1e-9) {
            for multiple in [1.0, 2, 5] where decade * multiple <= upper * (1 + 1e-9) {
                ticks.append(decade * multiple)
            }
            decade *= 10
        }
        return ticks
    }

    /// `0.5`, `2`, `1000`: just the decimals a tick below 1 needs.
    func label(_ value: Double) -> String {
        var decimals = 0
        var scaled = value
        while decimals < 6, (scaled - scaled.rounded()).magnitude > 1e-6 * Swift.max(1, scaled) {
            scaled *= 10
            decimals += 1
        }
        return fixed(value, decimals: decimals)
    }

    /// Where `value` falls between `start` (at ``lower``) and `end` (at ``upper``); a value
    /// below the axis (0 g, where a weight did not register) at its start.
    func position(of value: Double, from start: Double, to end: Double) -> Double {
        let clamped = Swift.max(value, lower)
        return start + (log10(clamped) - log10(lower)) / (log10(upper) - log10(lower)) * (end - start)
    }
}
