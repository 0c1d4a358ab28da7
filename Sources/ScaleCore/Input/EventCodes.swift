/// The type of an input event, as in `struct input_event.type`.
public struct EventType: RawRepresentable, Hashable, Sendable, Comparable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The corresponding C constant is `EV_SYN`.
    public static let synchronization = EventType(rawValue: 0x00)
    /// The corresponding C constant is `EV_KEY`.
    public static let key = EventType(rawValue: 0x01)
    /// The corresponding C constant is `EV_REL`.
    public static let relative = EventType(rawValue: 0x02)
    /// The corresponding C constant is `EV_ABS`.
    public static let absolute = EventType(rawValue: 0x03)
    /// The corresponding C constant is `EV_MSC`.
    public static let miscellaneous = EventType(rawValue: 0x04)
    /// The corresponding C constant is `EV_FF`.
    public static let forceFeedback = EventType(rawValue: 0x15)
    /// The corresponding C constant is `EV_MAX`.
    public static let maximum = EventType(rawValue: 0x1f)

    public static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The code of an input event. Codes are only meaningful together with their type, so the
/// constants below are named after their type (`absPressure` is an `EV_ABS` code).
public struct EventCode: RawRepresentable, Hashable, Sendable, Comparable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The corresponding C constant is `SYN_REPORT`.
    public static let synReport = EventCode(rawValue: 0)
    /// The corresponding C constant is `SYN_DROPPED`.
    public static let synDropped = EventCode(rawValue: 3)

    /// The corresponding C constant is `ABS_X`.
    public static let absX = EventCode(rawValue: 0x00)
    /// The corresponding C constant is `ABS_Y`.
    public static let absY = EventCode(rawValue: 0x01)
    /// The corresponding C constant is `ABS_PRESSURE`.
    public static let absPressure = EventCode(rawValue: 0x18)
    /// The corresponding C constant is `ABS_MT_SLOT`.
    public static let absMTSlot = EventCode(rawValue: 0x2f)
    /// The corresponding C constant is `ABS_MT_POSITION_X`.
    public static let absMTPositionX = EventCode(rawValue: 0x35)
    /// The corresponding C constant is `ABS_MT_POSITION_Y`.
    public static let absMTPositionY = EventCode(rawValue: 0x36)
    /// The corresponding C constant is `ABS_MT_TRACKING_ID`.
    public static let absMTTrackingID = EventCode(rawValue: 0x39)
    /// The corresponding C constant is `ABS_MT_PRESSURE`.
    public static let absMTPressure = EventCode(rawValue: 0x3a)
    /// The corresponding C constant is `ABS_MAX`.
    public static let absMaximum = EventCode(rawValue: 0x3f)

    /// The corresponding C constant is `BTN_TOOL_PEN`.
    public static let btnToolPen = EventCode(rawValue: 0x140)
    /// The corresponding C constant is `BTN_TOOL_FINGER`.
    public static let btnToolFinger = EventCode(rawValue: 0x145)
    /// The corresponding C constant is `BTN_TOUCH`.
    public static let btnTouch = EventCode(rawValue: 0x14a)
    /// The corresponding C constant is `KEY_MAX`.
    public static let keyMaximum = EventCode(rawValue: 0x2ff)

    public static func < (lhs: EventCode, rhs: EventCode) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The kernel's name of an `EV_ABS` code, for messages (`ABS_MT_PRESSURE`).
    public var absoluteAxisName: String {
        switch self {
        case .absX: return "ABS_X"
        case .absY: return "ABS_Y"
        case .absPressure: return "ABS_PRESSURE"
        case .absMTSlot: return "ABS_MT_SLOT"
        case .absMTPositionX: return "ABS_MT_POSITION_X"
        case .absMTPositionY: return "ABS_MT_POSITION_Y"
        case .absMTTrackingID: return "ABS_MT_TRACKING_ID"
        case .absMTPressure: return "ABS_MT_PRESSURE"
        default: return "ABS_0x" + String(rawValue, radix: 16)
        }
    }
}

/// An input property bit, as in `INPUT_PROP_*`.
public struct InputProperty: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The corresponding C constant is `INPUT_PROP_POINTER`.
    public static let pointer = InputProperty(rawValue: 0x00)
    /// The corresponding C constant is `INPUT_PROP_DIRECT`.
    public static let direct = InputProperty(rawValue: 0x01)
    /// The corresponding C constant is `INPUT_PROP_BUTTONPAD`.
    public static let buttonPad = InputProperty(rawValue: 0x02)
    /// The corresponding C constant is `INPUT_PROP_PRESSUREPAD` (kernel 6.18; earlier
    /// `INPUT_PROP_HAPTIC_TOUCHPAD`). Older headers lack it, hence the literal.
    public static let pressurePad = InputProperty(rawValue: 0x07)
    /// The corresponding C constant is `INPUT_PROP_MAX`.
    public static let maximum = InputProperty(rawValue: 0x1f)
}
