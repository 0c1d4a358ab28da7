/// Fires once per press that reaches the threshold, on every frame (never throttled), and
/// re-arms only when force falls clearly below it or the touch lifts, so sensor noise at
/// the threshold cannot fire a burst of peaks.
public struct PeakDetector: Sendable {
    public let threshold: Double
    public let hysteresis: Double
    public private(set) var isArmed = true

    public init(threshold: Double, hysteresis: Double) {
        self.threshold = threshold
        self.hysteresis = hysteresis
    }

    /// - Parameters:
    ///   - force: The frame's force, 0…1.
    ///   - touching: Whether any contact is active.
    /// - Returns: `true` when this frame is a peak.
    public mutating func update(force: Double, touching: Bool) -> Bool {
        guard touching else {
            isArmed = true
            return false
        }
        if isArmed, force >= threshold {
            isArmed = false
            return true
        }
        if !isArmed, force < threshold - hysteresis { isArmed = true }
        return false
    }

    /// Takes up a touch whose history was lost (events dropped by the kernel): this frame
    /// fires nothing, since the crossing, if any, was not seen; a press already at the
    /// threshold counts as having fired, one below it is armed.
    public mutating func resume(force: Double, touching: Bool) {
        isArmed = !touching || force < threshold
    }
}
