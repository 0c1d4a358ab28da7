/// Maps raw pressure onto force 0…1 over the axis range. The range is checked when the
/// pressure source is chosen, so `maximum > minimum` holds here.
public struct ForceScale: Hashable, Sendable {
    public let axis: AxisRange
    private let span: Double

    public init(axis: AxisRange) {
        precondition(axis.maximum > axis.minimum, "PressureSource.select rejects degenerate ranges")
        self.axis = axis
        span = Double(axis.maximum) - Double(axis.minimum)
    }

    /// `clamp((raw - min) / (max - min), 0, 1)`.
    public func force(raw: Int32) -> Double {
        force(pressure: Double(raw))
    }

    /// The same for a pressure between the sensor's steps (a window's mean).
    public func force(pressure: Double) -> Double {
        Swift.min(1, Swift.max(0, (pressure - Double(axis.minimum)) / span))
    }

    /// At or beyond the top of the range: "100%+" in the original iPhone scale.
    public func isSaturated(raw: Int32) -> Bool { raw >= axis.maximum }

    /// Pressure above the axis minimum, never negative.
    public func excess(raw: Int32) -> Double {
        Swift.max(0, Double(raw) - Double(axis.minimum))
    }
}
