/// A known weight and the raw pressure it produced, taken while the reading was stable.
public struct CalibrationPoint: Hashable, Sendable, Codable {
    /// Raw pressure in device units (an average, so not necessarily whole).
    public var raw: Double
    public var grams: Double

    public init(raw: Double, grams: Double) {
        self.raw = raw
        self.grams = grams
    }
}

/// A device's calibration: a curve of known-weight points, piecewise linear through the
/// origin (the axis minimum weighs nothing), and a tare offset subtracted from every reading.
public struct Calibration: Hashable, Sendable, Codable {
    public private(set) var points: [CalibrationPoint]
    public var tareGrams: Double

    public static let none = Calibration()

    public init() {
        points = []
        tareGrams = 0
    }

    /// - Throws: `CalibrationError` when the points do not form a rising curve.
    public init(points: [CalibrationPoint], tareGrams: Double = 0, axisMinimum: Int32 = 0) throws(CalibrationError) {
        self.init()
        self.tareGrams = tareGrams
        for point in points { try add(point, axisMinimum: axisMinimum) }
    }

    public var hasCurve: Bool { !points.isEmpty }

    /// Adds a point, replacing an earlier one at the same raw value.
    /// - Throws: `CalibrationError` when the point weighs nothing, sits at or below the axis
    ///   minimum, or would make the curve fall (heavier weights must press harder).
    public mutating func add(_ point: CalibrationPoint, axisMinimum: Int32) throws(CalibrationError) {
        guard point.grams > 0, point.grams.isFinite else { throw .notPositive(grams: point.grams) }
        guard point.raw > Double(axisMinimum), point.raw.isFinite else {
            throw .noPressure(raw: point.raw, minimum: axisMinimum)
        }
        var updated = points.filter { $0.raw != point.raw }
        updated.append(point)
        updated.sort { $0.raw < $1.raw }
        for (lighter, heavier) in zip(updated, updated.dropFirst()) where heavier.grams <= lighter.grams {
            throw .notRising(lighter: lighter, heavier: heavier)
        }
        points = updated
    }

    /// Grams for a raw pressure by the curve, before tare.
    /// - Parameters:
    ///   - raw: Raw pressure.
    ///   - axisMinimum: The raw value that weighs nothing.
    /// - Returns: The interpolated grams; beyond the last point the last segment's slope
    ///   continues. `nil` when there is no curve.
    public func curveGrams(raw: Double, axisMinimum: Int32) -> Double? {
        guard !points.isEmpty else { return nil }
        let minimum = Double(axisMinimum)
        // Knot 0 is the origin; knot i is points[i - 1], measured above the axis minimum.
        func knot(_ index: Int) -> (excess: Double, grams: Double) {
            index == 0 ? (0, 0) : (points[index - 1].raw - minimum, points[index - 1].grams)
        }
        let excess = Swift.max(0, raw - minimum)
        // The segment that holds `excess`, or the last one, whose slope then continues.
        var upper = 1
        while upper < points.count, excess > knot(upper).excess { upper += 1 }
        let (x0, y0) = knot(upper - 1)
        let (x1, y1) = knot(upper)
        return y0 + (excess - x0) * (y1 - y0) / (x1 - x0)
    }
}

public enum CalibrationError: Error, Equatable, Sendable, CustomStringConvertible {
    case notPositive(grams: Double)
    case noPressure(raw: Double, minimum: Int32)
    case notRising(lighter: CalibrationPoint, heavier: CalibrationPoint)

    public var description: String {
        switch self {
        case .notPositive(let grams):
            return "a calibration weight must be more than 0 g (got \(grams) g)"
        case .noPressure(let raw, let minimum):
            return "the calibration reading (raw \(raw)) is not above the axis minimum \(minimum): nothing was pressing"
        case .notRising(let lighter, let heavier):
            return "calibration points must rise: raw \(heavier.raw) gives \(heavier.grams) g but the smaller raw \(lighter.raw) already gives \(lighter.grams) g; reset the calibration and weigh again"
        }
    }
}
