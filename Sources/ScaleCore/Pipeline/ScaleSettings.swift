/// How the frame's pressure is taken when several fingers touch.
public enum ContactMode: String, CaseIterable, Sendable {
    /// The oldest active contact, as the kernel's pointer emulation picks it.
    case primary
    /// All active contacts together: their pressures above the axis minimum are added.
    case sum
    /// The contact pressing hardest.
    case max

    /// The mode a device is weighed with when none is chosen. On a pressure pad, the sum: it
    /// measures force at every contact, and an object weighed on it rests beside the finger
    /// that makes a capacitive pad sense it, so what the pad carries is the total (the
    /// quantity a haptic pad's own ABS_PRESSURE reports, which hid-multitouch sums over the
    /// contacts there). Elsewhere the primary contact: pressure there is a contact's size or
    /// a pen tip's, not a force that adds up.
    /// - Parameter device: The device's description.
    public static func `default`(for device: DeviceDescription) -> ContactMode {
        device.kind == .pressurePad ? .sum : .primary
    }
}

/// The tunable rules of the pipeline. Durations are microseconds of event time.
public struct ScaleSettings: Hashable, Sendable {
    /// At most one reading per this interval; 0 lets every frame through.
    public var throttleInterval: Int64 = 10_000
    /// Force (0…1) at which a PEAK fires. 1.0 is saturation, as the original iPhone scale did.
    public var peakThreshold: Double = 1.0
    /// How far force must fall below the threshold before another PEAK can fire.
    public var peakHysteresis: Double = 0.05
    /// How several contacts make the frame's pressure; `nil`: the device's default
    /// (``ContactMode/default(for:)``).
    public var contactMode: ContactMode?
    /// How long a touch must have lasted, and the span of time looked back over, for a
    /// reading to be stable.
    public var stabilityWindow: Int64 = 500_000
    /// The largest spread of grams within the window that still counts as stable.
    public var stabilitySpan: Double = 2.0

    public init() {}

    /// Checks that the settings make sense together.
    /// - Throws: `SettingsError` naming the setting and the accepted values.
    public func validate() throws(SettingsError) {
        guard throttleInterval >= 0 else { throw SettingsError("The throttle interval must be 0 or more") }
        guard peakThreshold > 0, peakThreshold <= 1 else {
            throw SettingsError("The peak threshold must be greater than 0 and at most 1 (it is a force fraction)")
        }
        guard peakHysteresis >= 0, peakHysteresis <= peakThreshold else {
            throw SettingsError("The peak hysteresis must be between 0 and the threshold (\(peakThreshold))")
        }
        guard stabilityWindow > 0 else { throw SettingsError("The stability window must be greater than 0") }
        guard stabilitySpan >= 0, stabilitySpan.isFinite else { throw SettingsError("The stability span must be 0 or more grams") }
    }
}

public struct SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
