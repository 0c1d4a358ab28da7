/// Where a device's force comes from, chosen from its description.
public enum PressureSource: Hashable, Sendable {
    /// `ABS_MT_PRESSURE` per slot (type B multitouch).
    case multitouch(axis: AxisRange, slotCount: Int)
    /// `ABS_PRESSURE`, active while `BTN_TOUCH` is down, or while raw > min on devices
    /// without `BTN_TOUCH`.
    case singleTouch(axis: AxisRange, hasTouchButton: Bool)

    /// The kernel allows 64 slots at most in practice; a larger range means a broken
    /// description, and allocating for it would be the bug.
    public static let maximumSlotCount = 64

    public var axis: AxisRange {
        switch self {
        case .multitouch(let axis, _), .singleTouch(let axis, _): return axis
        }
    }

    public var axisCode: EventCode {
        switch self {
        case .multitouch: return .absMTPressure
        case .singleTouch: return .absPressure
        }
    }

    /// Which axis the force is read from and how, in words: `ABS_MT_PRESSURE, the sum of the
    /// contacts`.
    /// - Parameter mode: How several contacts make the frame's pressure.
    public func summary(contacts mode: ContactMode) -> String {
        switch self {
        case .singleTouch: "ABS_PRESSURE"
        case .multitouch:
            switch mode {
            case .primary: "ABS_MT_PRESSURE, the first contact"
            case .sum: "ABS_MT_PRESSURE, the sum of the contacts"
            case .max: "ABS_MT_PRESSURE, the hardest contact"
            }
        }
    }

    /// Picks the pressure source of a device.
    /// - Parameter device: The device's description.
    /// - Returns: Per-slot pressure when the device has `ABS_MT_PRESSURE` and slots,
    ///   otherwise `ABS_PRESSURE`.
    /// - Throws: `DeviceSetupError` when there is no pressure axis or its range is unusable.
    public static func select(for device: DeviceDescription) throws(DeviceSetupError) -> PressureSource {
        if let axis = device.axes[.absMTPressure], let slots = device.axes[.absMTSlot] {
            try checkRange(axis, code: .absMTPressure, device: device)
            guard slots.minimum == 0, slots.maximum >= 0, slots.maximum < Int32(maximumSlotCount) else {
                throw .implausibleSlots(device: device.name, minimum: slots.minimum, maximum: slots.maximum)
            }
            return .multitouch(axis: axis, slotCount: Int(slots.maximum) + 1)
        }
        if let axis = device.axes[.absPressure] {
            try checkRange(axis, code: .absPressure, device: device)
            return .singleTouch(axis: axis, hasTouchButton: device.supports(.key, .btnTouch))
        }
        throw .noPressureAxis(device: device.name)
    }

    private static func checkRange(_ axis: AxisRange, code: EventCode, device: DeviceDescription) throws(DeviceSetupError) {
        guard axis.maximum > axis.minimum else {
            throw .degenerateRange(device: device.name, axis: code.absoluteAxisName, minimum: axis.minimum, maximum: axis.maximum)
        }
    }
}

/// A device that cannot be used as a scale, with what the user can do about it.
public enum DeviceSetupError: Error, Equatable, Sendable, CustomStringConvertible {
    case noPressureAxis(device: String)
    case degenerateRange(device: String, axis: String, minimum: Int32, maximum: Int32)
    case implausibleSlots(device: String, minimum: Int32, maximum: Int32)

    public var description: String {
        switch self {
        case .noPressureAxis(let device):
            return "'\(device)' has no pressure axis (neither ABS_MT_PRESSURE nor ABS_PRESSURE), so it cannot weigh; use a touchpad or pen tablet that reports pressure"
        case .degenerateRange(let device, let axis, let minimum, let maximum):
            return "'\(device)': \(axis) range \(minimum)..\(maximum) is degenerate (the maximum must be greater than the minimum), so force cannot be measured on it; the driver or the recording reports no usable pressure"
        case .implausibleSlots(let device, let minimum, let maximum):
            return "'\(device)': ABS_MT_SLOT range \(minimum)..\(maximum) is not a usable slot range (expected 0..N with N below \(PressureSource.maximumSlotCount)); the description is broken"
        }
    }
}
