/// Which conversion produced a reading's grams; every reading names it.
public enum GramModelKind: String, Sendable, CaseIterable {
    /// A per-device curve fitted to points taken with known weights.
    case calibrated
    /// The driver's pressure resolution, which the kernel documents as units per gram.
    case physical
    /// Force times 385 g, the full scale of the classic iPhone 3D Touch scale.
    case nominal
}

/// Converts pressure to grams by the best model the device allows: calibrated, then
/// physical, then nominal. A tare offset applies to every model.
public struct GramModel: Hashable, Sendable {
    /// The full scale of the original iPhone scale at 100% force.
    public static let nominalFullScale = 385.0

    public let kind: GramModelKind
    public let axis: AxisRange
    public let calibration: Calibration
    /// The curve fitted to the calibration's points; `nil` without points.
    public let fit: CalibrationFit?
    /// The calibration's heaviest point; `nil` without points.
    private let heaviest: CalibrationPoint?

    /// The model for an axis and a calibration; the curve is fitted here, once.
    /// - Parameters:
    ///   - axis: The pressure axis.
    ///   - calibration: The device's calibration and tare.
    ///   - likely: The response family to choose when the points cannot tell (two points):
    ///     ``ResponseFamily/likely(for:)`` of the device's kind.
    public init(axis: AxisRange, calibration: Calibration = .none, likely: ResponseFamily = .power) {
        self.axis = axis
        self.calibration = calibration
        fit = calibration.fit(axis: axis, likely: likely)
        heaviest = calibration.points.last
        if calibration.hasCurve {
            kind = .calibrated
        } else if axis.resolution > 0 {
            kind = .physical
        } else {
            kind = .nominal
        }
    }

    /// Grams for a frame, after tare.
    /// - Parameters:
    ///   - raw: The frame's raw pressure.
    ///   - force: The same pressure normalised to 0…1.
    public func grams(raw: Int32, force: Double) -> Double {
        grams(pressure: Double(raw), force: force)
    }

    /// Grams for a pressure between the sensor's steps, the mean of a steady window, after
    /// tare.
    public func grams(meanRaw: Double) -> Double {
        grams(pressure: meanRaw, force: ForceScale(axis: axis).force(pressure: meanRaw))
    }

    /// Pressure past the axis maximum weighs what the maximum does: the sensor says nothing
    /// beyond its top, so a saturated reading's grams are the model's top (nominal 385 g,
    /// the physical range, the calibrated curve at the maximum), a lower bound.
    private func grams(pressure unclamped: Double, force: Double) -> Double {
        let pressure = Swift.min(unclamped, Double(axis.maximum))
        let untared: Double
        switch kind {
        case .calibrated:
            untared = fit?.grams(raw: pressure) ?? 0
        case .physical:
            untared = Swift.max(0, pressure - Double(axis.minimum)) / Double(axis.resolution)
        case .nominal:
            untared = force * Self.nominalFullScale
        }
        return untared - calibration.tareGrams
    }

    /// The most the device can weigh, after tare: the model's grams at the axis maximum. A
    /// reading there is saturated, and its weight a lower bound.
    public var fullScale: Double {
        grams(pressure: Double(axis.maximum), force: 1)
    }

    /// The heaviest calibration weight when `raw` presses past it by more than a unit (the
    /// reading's grams are then the curve's bounded extrapolation); `nil` otherwise.
    public func beyondCalibration(raw: Double) -> Double? {
        guard let heaviest, raw > heaviest.raw + 1 else { return nil }
        return heaviest.grams
    }
}
