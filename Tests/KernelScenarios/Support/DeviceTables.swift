import CEvdev

/// One absolute axis, as in `struct input_absinfo`.
public struct Axis: Sendable {
    public var code: Int32
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32 = 0
    public var flat: Int32 = 0
    public var resolution: Int32 = 0
}

/// A device described declaratively, as libinput's litest does: what `VirtualDevice`
/// creates through uinput.
public struct DeviceTable: Sendable {
    public var name: String
    public var bus: UInt16 = UInt16(BUS_VIRTUAL)
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16 = 1
    public var properties: [Int32] = []
    public var keys: [Int32] = []
    public var axes: [Axis] = []
    /// Relative axes (`REL_X`…), for a mouse.
    public var relativeAxes: [Int32] = []
    public var forceFeedback: [Int32] = []
    public var effectsMax: UInt32 = 0
    /// How long the device side takes to answer an FF upload, in seconds.
    public var uploadDelay: Double = 0
    /// The errno the device side answers FF uploads with; 0 accepts them.
    public var uploadError: Int32 = 0
    /// FF_HAPTIC waveforms (usages of the HID haptics page) the device side refuses with
    /// EINVAL, as hid-haptic does for a waveform the pad does not list.
    public var refusedHapticUsages: Set<UInt16> = []
    /// The kind `forcescale devices` should report.
    public var expectedKind: String
    /// The pressure axis range, for building frames.
    public var pressure: Axis? { axes.first { $0.code == ABS_MT_PRESSURE } ?? axes.first { $0.code == ABS_PRESSURE } }
    public var isMultitouch: Bool { axes.contains { $0.code == ABS_MT_SLOT } }
}

/// The devices of the scenarios. Names are distinct enough that `--device 'forcescale test pad'`
/// matches only the Synaptics-like pad.
public enum Tables {
    /// A Synaptics-like clickpad: single-touch and type-B multitouch axes (2 slots), pressure
    /// 0–255 on both, finger tools, pointer + buttonpad.
    public static let synapticsPad = DeviceTable(
        name: "forcescale test pad", bus: UInt16(BUS_I8042), vendor: 0x0002, product: 0x0007, version: 0x01b1,
        properties: [INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD],
        keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOOL_DOUBLETAP, BTN_TOUCH],
        axes: [
            Axis(code: ABS_X, minimum: 1472, maximum: 5472, resolution: 42),
            Axis(code: ABS_Y, minimum: 1408, maximum: 4448, resolution: 68),
            Axis(code: ABS_PRESSURE, minimum: 0, maximum: 255),
            Axis(code: ABS_MT_SLOT, minimum: 0, maximum: 1),
            Axis(code: ABS_MT_POSITION_X, minimum: 1472, maximum: 5472, resolution: 42),
            Axis(code: ABS_MT_POSITION_Y, minimum: 1408, maximum: 4448, resolution: 68),
            Axis(code: ABS_MT_TRACKING_ID, minimum: 0, maximum: 65535),
            Axis(code: ABS_MT_PRESSURE, minimum: 0, maximum: 255),
        ],
        expectedKind: "touchpad")

    /// A pressure pad (INPUT_PROP_PRESSUREPAD, 0x07): pressure 0–255 at 40 units per gram.
    public static let pressurePad = DeviceTable(
        name: "forcescale pressure pad", vendor: 0x1fc9, product: 0x0001,
        properties: [INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD, INPUT_PROP_PRESSUREPAD],
        keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOUCH],
        axes: [
            Axis(code: ABS_X, minimum: 0, maximum: 4000, resolution: 40),
            Axis(code: ABS_Y, minimum: 0, maximum: 3000, resolution: 40),
            Axis(code: ABS_PRESSURE, minimum: 0, maximum: 255, resolution: 40),
        ],
        expectedKind: "pressure pad")

    public static func pen(maximum: Int32, product: UInt16) -> DeviceTable {
        DeviceTable(
            name: "forcescale pen \(maximum)", bus: UInt16(BUS_USB), vendor: 0x056a, product: product,
            properties: [INPUT_PROP_POINTER],
            keys: [BTN_TOOL_PEN, BTN_TOUCH, BTN_STYLUS],
            axes: [
                Axis(code: ABS_X, minimum: 0, maximum: 44704, resolution: 200),
                Axis(code: ABS_Y, minimum: 0, maximum: 27940, resolution: 200),
                Axis(code: ABS_PRESSURE, minimum: 0, maximum: maximum),
            ],
            expectedKind: "tablet")
    }

    public static let pen2047 = pen(maximum: 2047, product: 0x00b9)
    public static let pen8191 = pen(maximum: 8191, product: 0x0357)

    /// A single-touch pad whose pressure axis has the given range.
    public static func singleTouchPad(_ name: String, pressure: ClosedRange<Int32>, product: UInt16) -> DeviceTable {
        DeviceTable(
            name: name, vendor: 0x1fc9, product: product,
            properties: [INPUT_PROP_POINTER],
            keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOUCH],
            axes: [
                Axis(code: ABS_X, minimum: 0, maximum: 1000),
                Axis(code: ABS_Y, minimum: 0, maximum: 1000),
                Axis(code: ABS_PRESSURE, minimum: pressure.lowerBound, maximum: pressure.upperBound),
            ],
            expectedKind: "touchpad")
    }

    /// The pressure pad with kernel 6.18's FF_HAPTIC, as hid-multitouch makes a haptic
    /// pressure pad (hid-haptic): 16 effect slots, no FF_GAIN, every waveform played.
    public static let hapticPad: DeviceTable = {
        var table = pressurePad
        table.name = "forcescale haptic pad"
        table.product = 0x0030
        table.forceFeedback = [CEVDEV_FF_HAPTIC]
        table.effectsMax = 16
        return table
    }()

    /// The haptic pad without the CLICK waveform: its uploads are refused with EINVAL.
    public static let clicklessHapticPad = variantOfHapticPad("forcescale clickless haptic pad", product: 0x0031) {
        $0.refusedHapticUsages = [0x1003]
    }

    /// The haptic pad that refuses every haptic upload (EINVAL): it lists neither CLICK nor
    /// BUZZ CONTINUOUS.
    public static let silentHapticPad = variantOfHapticPad("forcescale silent haptic pad", product: 0x0032) {
        $0.uploadError = EINVAL
    }

    static func variantOfHapticPad(_ name: String, product: UInt16, _ change: (inout DeviceTable) -> Void) -> DeviceTable {
        var table = hapticPad
        table.name = name
        table.product = product
        change(&table)
        return table
    }

    public static let degeneratePad = singleTouchPad("forcescale degenerate pad 0-0", pressure: 0...0, product: 0x0010)
    public static let narrowPad = singleTouchPad("forcescale narrow pad 0-1", pressure: 0...1, product: 0x0011)

    /// A single-touch pad with rumble: EV_FF with FF_RUMBLE and FF_GAIN, 16 effect slots.
    public static let rumblePad: DeviceTable = {
        var table = singleTouchPad("forcescale rumble pad", pressure: 0...255, product: 0x0020)
        table.forceFeedback = [FF_RUMBLE, FF_GAIN]
        table.effectsMax = 16
        return table
    }()

    /// The rumble pad, but it answers each FF upload 20 ms late (a slow wireless gamepad).
    public static let slowUploadPad = variantOfRumblePad("forcescale slow-upload pad", product: 0x0021) { $0.uploadDelay = 0.020 }

    /// The rumble pad, but it refuses every FF upload (EINVAL), as a driver does for an
    /// effect it cannot play.
    public static let refusingPad = variantOfRumblePad("forcescale refusing pad", product: 0x0022) { $0.uploadError = EINVAL }

    /// The rumble pad without FF_GAIN: an intensity must be scaled into the effect.
    public static let gainlessPad = variantOfRumblePad("forcescale gainless pad", product: 0x0023) { $0.forceFeedback = [FF_RUMBLE] }

    /// The rumble pad under another name and product id, changed by `change`.
    static func variantOfRumblePad(_ name: String, product: UInt16, _ change: (inout DeviceTable) -> Void) -> DeviceTable {
        var table = rumblePad
        table.name = name
        table.product = product
        change(&table)
        return table
    }

    /// Another node of the rumble pad's hardware, without FF and with the same
    /// vendor:product, made before it (a gamepad's touchpad or motion-sensor node, as
    /// hid-sony and hid-playstation make them): a vendor:product query matches both.
    public static let rumbleTwin = singleTouchPad("forcescale rumble pad touch node", pressure: 0...255, product: 0x0020)

    /// A plain USB mouse: relative motion and three buttons, no absolute axis at all. udev
    /// calls it ID_INPUT_MOUSE; it can never weigh.
    public static let mouse = DeviceTable(
        name: "forcescale test mouse", bus: UInt16(BUS_USB), vendor: 0x046d, product: 0xc077,
        keys: [BTN_LEFT, BTN_RIGHT, BTN_MIDDLE],
        relativeAxes: [REL_X, REL_Y, REL_WHEEL],
        expectedKind: "other")

    /// A USB keyboard: the 31 keys from KEY_ESC on (what udev's input_id wants to call a
    /// device ID_INPUT_KEYBOARD) and the rest of a letter block. Nothing of forcescale's may
    /// read it: the daemon's user must not be able to open it.
    public static let keyboard = DeviceTable(
        name: "forcescale test keyboard", bus: UInt16(BUS_USB), vendor: 0x046d, product: 0xc31c,
        keys: Array(Int32(KEY_ESC)...Int32(KEY_SPACE)),
        expectedKind: "other")

    /// A gamepad that rumbles (FF_RUMBLE): udev calls it ID_INPUT_JOYSTICK; `rumble-device`
    /// may name it, so the daemon's user may open it.
    public static let rumblingGamepad = DeviceTable(
        name: "forcescale test gamepad", bus: UInt16(BUS_USB), vendor: 0x045e, product: 0x028e,
        keys: [BTN_SOUTH, BTN_EAST, BTN_NORTH, BTN_WEST, BTN_START, BTN_SELECT, BTN_MODE],
        axes: [Axis(code: ABS_X, minimum: -32768, maximum: 32767), Axis(code: ABS_Y, minimum: -32768, maximum: 32767)],
        forceFeedback: [FF_RUMBLE], effectsMax: 16,
        expectedKind: "other")

    /// A clickpad without any pressure axis (many I2C HID touchpads report none): udev
    /// calls it ID_INPUT_TOUCHPAD, but it cannot weigh.
    public static let pressurelessPad = DeviceTable(
        name: "forcescale pad without pressure", bus: UInt16(BUS_I2C), vendor: 0x04f3, product: 0x3140,
        properties: [INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD],
        keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOOL_DOUBLETAP, BTN_TOUCH],
        axes: [
            Axis(code: ABS_X, minimum: 0, maximum: 3209, resolution: 32),
            Axis(code: ABS_Y, minimum: 0, maximum: 2097, resolution: 32),
            Axis(code: ABS_MT_SLOT, minimum: 0, maximum: 4),
            Axis(code: ABS_MT_POSITION_X, minimum: 0, maximum: 3209, resolution: 32),
            Axis(code: ABS_MT_POSITION_Y, minimum: 0, maximum: 2097, resolution: 32),
            Axis(code: ABS_MT_TRACKING_ID, minimum: 0, maximum: 65535),
        ],
        expectedKind: "touchpad")

    /// A Magic Trackpad 2-like pad whose only pressure axis is ABS_MT_PRESSURE (0–253): the
    /// bit 0x3a of capabilities/abs, high in the bitmask, without ABS_PRESSURE's 0x18.
    public static let multitouchPressurePad = DeviceTable(
        name: "forcescale mt pressure pad", bus: UInt16(BUS_USB), vendor: 0x05ac, product: 0x0265,
        properties: [INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD],
        keys: [BTN_LEFT, BTN_TOOL_FINGER, BTN_TOOL_DOUBLETAP, BTN_TOUCH],
        axes: [
            Axis(code: ABS_X, minimum: -3678, maximum: 3934, resolution: 46),
            Axis(code: ABS_Y, minimum: -2478, maximum: 2587, resolution: 45),
            Axis(code: ABS_MT_SLOT, minimum: 0, maximum: 15),
            Axis(code: ABS_MT_POSITION_X, minimum: -3678, maximum: 3934, resolution: 46),
            Axis(code: ABS_MT_POSITION_Y, minimum: -2478, maximum: 2587, resolution: 45),
            Axis(code: ABS_MT_TRACKING_ID, minimum: 0, maximum: 65535),
            Axis(code: ABS_MT_PRESSURE, minimum: 0, maximum: 253),
        ],
        expectedKind: "touchpad")

    public static let all: [DeviceTable] = [synapticsPad, pressurePad, pen2047, pen8191, degeneratePad, narrowPad, rumbleTwin, rumblePad]
}

/// Frames for a table's device.
extension VirtualDevice {
    /// Touches down (or moves) with `pressure`; for a multitouch pad in slot 0 with tracking id 1.
    /// - Parameter down: Also send the tool and touch buttons (the first frame of a touch).
    @discardableResult
    public func press(_ pressure: Int32, x: Int32 = 2000, down: Bool = false) -> Bool {
        var events: [Event] = []
        if table.isMultitouch {
            if down { events += [.abs(ABS_MT_SLOT, 0), .abs(ABS_MT_TRACKING_ID, 1)] }
            events += [.abs(ABS_MT_POSITION_X, x), .abs(ABS_MT_POSITION_Y, 2000), .abs(ABS_MT_PRESSURE, pressure)]
        }
        events += [.abs(ABS_X, x), .abs(ABS_Y, 2000), .abs(ABS_PRESSURE, pressure)]
        if down {
            events += [.key(BTN_TOUCH, 1)]
            events += [.key(table.keys.contains(BTN_TOOL_PEN) ? BTN_TOOL_PEN : BTN_TOOL_FINGER, 1)]
        }
        return frame(events)
    }

    /// Lifts the touch.
    @discardableResult
    public func release() -> Bool {
        var events: [Event] = []
        if table.isMultitouch { events += [.abs(ABS_MT_SLOT, 0), .abs(ABS_MT_TRACKING_ID, -1)] }
        events += [.abs(ABS_PRESSURE, table.pressure?.minimum ?? 0), .key(BTN_TOUCH, 0)]
        events += [.key(table.keys.contains(BTN_TOOL_PEN) ? BTN_TOOL_PEN : BTN_TOOL_FINGER, 0)]
        return frame(events)
    }
}
