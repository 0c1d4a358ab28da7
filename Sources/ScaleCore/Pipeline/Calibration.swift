/// A known weight and the raw pressure it produced, taken while the reading was stable.
public struct CalibrationPoint: Hashable, Sendable, Codable {
    /// Raw pressure in device units: the mean of the readings in the stability window, so
    /// not necessarily whole.
    public var raw: Double
    /// The known weight.
    public var grams: Double
    /// The standard deviation of the raw readings that were averaged, in device units; `nil`
    /// for a point taken from a single reading (as calibrations before fitted curves were) or unknown.
    public var spread: Double?
    /// How many readings were averaged; `nil` when unknown.
    public var count: Int?

    /// The point.
    /// - Parameters:
    ///   - raw: The raw pressure (a mean over the stable window).
    ///   - grams: The known weight.
    ///   - spread: The standard deviation of the readings averaged, if known.
    ///   - count: How many readings were averaged, if known.
    public init(raw: Double, grams: Double, spread: Double? = nil, count: Int? = nil) {
        self.raw = raw
        self.grams = grams
        self.spread = spread
        self.count = count
    }

    /// The heaviest calibration weight or tare accepted, 100 kg: more than any touchpad or
    /// pen tip carries unbroken, and far enough from Double's limits that a curve fitted
    /// through it, a tare subtracted from it or a unit converted from it stays finite.
    public static let maximumGrams = 100_000.0

    /// The largest raw pressure a point may have: the kernel's axis values are 32-bit.
    public static let maximumRaw = Double(Int32.max)

    /// A raw mean as the protocol and the state file keep it, to 0.01.
    public static func hundredths(_ raw: Double) -> Double { (raw * 100).rounded() / 100 }
}

/// A device's calibration: known-weight points, through which a curve is fitted from the
/// origin (the axis minimum weighs nothing; see ``CalibrationFit``), and a tare offset
/// subtracted from every reading.
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
        guard point.grams <= CalibrationPoint.maximumGrams else { throw .tooHeavy(grams: point.grams) }
        // Judged as kept (to 0.01): a point that is stored as the axis minimum is one.
        guard point.raw.isFinite, CalibrationPoint.hundredths(point.raw) > Double(axisMinimum) else {
            throw .noPressure(raw: point.raw, minimum: axisMinimum)
        }
        guard point.raw <= CalibrationPoint.maximumRaw else { throw .rawOutOfRange(raw: point.raw) }
        var updated = points.filter { $0.raw != point.raw }
        updated.append(point)
        updated.sort { $0.raw < $1.raw }
        for (lighter, heavier) in zip(updated, updated.dropFirst()) where heavier.grams <= lighter.grams {
            throw .notRising(lighter: lighter, heavier: heavier)
        }
        points = updated
    }

    /// The curve fitted to the points.
    /// - Parameters:
    ///   - axis: The device's pressure axis, which normalises raw pressure.
    ///   - likely: The family to choose when the points cannot tell (two points).
    /// - Returns: The fit; `nil` when there are no points.
    public func fit(axis: AxisRange, likely: ResponseFamily = .power) -> CalibrationFit? {
        points.isEmpty ? nil : CalibrationFit(points: points, axis: axis, likely: likely)
    }
}

public enum CalibrationError: Error, Equatable, Sendable, CustomStringConvertible {
    case notPositive(grams: Double)
    case noPressure(raw: Double, minimum: Int32)
    case notRising(lighter: CalibrationPoint, heavier: CalibrationPoint)
    case tooHeavy(grams: Double)
    case rawOutOfRange(raw: Double)

    private static func hundredths(_ raw: Double) -> Double { CalibrationPoint.hundredths(raw) }

    public var description: String {
        switch self {
        case .notPositive(let grams):
            return "a calibration weight must be more than 0 g (got \(grams) g)"
        case .noPressure(let raw, let minimum):
            return "the calibration reading (raw \(raw)) is not above the axis minimum \(minimum): nothing was pressing"
        case .tooHeavy(let grams):
            return "a calibration weight of \(grams) g is more than forcescale accepts (\(MassUnit.sentence(grams: CalibrationPoint.maximumGrams)), more than a pad or a pen carries)"
        case .rawOutOfRange(let raw):
            return "the calibration reading (raw \(raw)) is beyond any pressure axis (at most \(Int32.max))"
        case .notRising(let lighter, let heavier):
            return "calibration points must rise: raw \(Self.hundredths(heavier.raw)) gives \(MassUnit.sentence(grams: heavier.grams)) but the smaller raw \(Self.hundredths(lighter.raw)) already gives \(MassUnit.sentence(grams: lighter.grams)); this point was not kept and the earlier ones stay: check that the weight is the one you said, and measure it again"
        }
    }
}
