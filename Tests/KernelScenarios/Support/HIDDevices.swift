/// HID devices for uhid, described by their report descriptors as the HID specification and
/// Microsoft's Precision Touchpad and pen guidelines lay them out (usages, units and report
/// layouts are facts of those documents; the bytes are written here). Each comes with the
/// reports its driver asks for and a way to build its input reports.
public enum HIDDevices {
    // MARK: A Precision Touchpad that is a pressure pad

    /// The pressure pad's touch report: report ID 1, two fingers, scan time, contact count,
    /// the button.
    public static let pressurePadTouchReport: UInt8 = 1
    /// Tip Pressure: 0–4000 over 0–1000 g, so 4 units per gram from kernel 6.18 (hid-input
    /// computes the resolution from the HID unit, grams here).
    public static let pressurePadMaximum = 4000
    public static let pressurePadUnitsPerGram = 4

    /// A Precision Touchpad (digitizer Touch Pad, Windows 8 style: the 0xFF00/0xC5
    /// certification blob makes hid-multitouch treat it as one) whose fingers report Tip
    /// Pressure in grams, and whose Button Type feature is 1, a pressure pad
    /// (hid-multitouch gives it INPUT_PROP_PRESSUREPAD from 6.19 on).
    public static let pressurePad = UHIDDevice.Description(
        name: "forcescale PTP pressure pad", bus: 0x18, vendor: 0x1209, product: 0xf5c1,
        reportDescriptor: pressurePadDescriptor,
        featureReports: [
            // Contact Count Maximum 2 (low nibble), Button Type 1: pressure pad (high nibble).
            2: [2, 0x12],
            // The certification blob: its content is not checked by the driver.
            3: [3] + [UInt8](repeating: 0, count: 256),
            // Input Mode (3: touchpad) and Selective Reporting, as the driver sets them.
            4: [4, 3],
            5: [5, 3],
        ])

    static let pressurePadDescriptor: [UInt8] = {
        var d: [UInt8] = [0x05, 0x0D, 0x09, 0x05, 0xA1, 0x01, 0x85, pressurePadTouchReport]
        for _ in 0..<2 {
            d += [0x09, 0x22, 0xA1, 0x02]                                   // Finger
            d += [0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x01]
            d += [0x09, 0x47, 0x81, 0x02, 0x09, 0x42, 0x81, 0x02]           // Confidence, Tip Switch
            d += [0x75, 0x06, 0x25, 0x3F, 0x09, 0x51, 0x81, 0x02]           // Contact Identifier
            d += [0x05, 0x01, 0x15, 0x00, 0x26, 0xFF, 0x0F, 0x75, 0x10, 0x95, 0x01]
            d += [0x55, 0x0E, 0x65, 0x11, 0x35, 0x00, 0x46, 0xB0, 0x04, 0x09, 0x30, 0x81, 0x02]  // X: 12.00 cm
            d += [0x46, 0x20, 0x03, 0x09, 0x31, 0x81, 0x02]                 // Y: 8.00 cm
            d += [0x05, 0x0D, 0x55, 0x00, 0x66, 0x01, 0x01, 0x35, 0x00, 0x46, 0xE8, 0x03]  // grams, 0–1000
            d += [0x26, 0xA0, 0x0F, 0x09, 0x30, 0x81, 0x02]                 // Tip Pressure 0–4000
            d += [0x65, 0x00, 0x45, 0x00, 0xC0]
        }
        d += [0x05, 0x0D, 0x55, 0x0C, 0x66, 0x01, 0x10, 0x47, 0xFF, 0xFF, 0x00, 0x00, 0x27, 0xFF, 0xFF, 0x00, 0x00]
        d += [0x75, 0x10, 0x95, 0x01, 0x09, 0x56, 0x81, 0x02]               // Scan Time (100 µs)
        d += [0x65, 0x00, 0x55, 0x00, 0x45, 0x00, 0x09, 0x54, 0x25, 0x7F, 0x75, 0x08, 0x81, 0x02]  // Contact Count
        d += [0x05, 0x09, 0x09, 0x01, 0x25, 0x01, 0x75, 0x01, 0x95, 0x01, 0x81, 0x02, 0x95, 0x07, 0x81, 0x03]  // Button 1
        d += [0x05, 0x0D, 0x85, 0x02, 0x09, 0x55, 0x09, 0x59, 0x75, 0x04, 0x95, 0x02, 0x25, 0x0F, 0xB1, 0x02]  // max contacts, button type
        d += [0x06, 0x00, 0xFF, 0x85, 0x03, 0x09, 0xC5, 0x15, 0x00, 0x26, 0xFF, 0x00, 0x75, 0x08, 0x96, 0x00, 0x01, 0xB1, 0x02]
        d += [0xC0]
        // The configuration collection: Input Mode, Surface and Button switches.
        d += [0x05, 0x0D, 0x09, 0x0E, 0xA1, 0x01, 0x85, 0x04, 0x09, 0x22, 0xA1, 0x02, 0x09, 0x52, 0x15, 0x00, 0x25, 0x0A]
        d += [0x75, 0x08, 0x95, 0x01, 0xB1, 0x02, 0xC0]
        d += [0x09, 0x22, 0xA1, 0x00, 0x85, 0x05, 0x09, 0x57, 0x09, 0x58, 0x75, 0x01, 0x95, 0x02, 0x25, 0x01, 0xB1, 0x02]
        d += [0x95, 0x06, 0xB1, 0x03, 0xC0, 0xC0]
        return d
    }()

    /// One finger of a pressure-pad report.
    public struct Finger: Sendable {
        public var id: UInt8
        public var touching: Bool
        public var x: UInt16
        public var y: UInt16
        public var pressure: UInt16

        public init(id: UInt8, touching: Bool, x: UInt16 = 2000, y: UInt16 = 1300, pressure: UInt16) {
            self.id = id
            self.touching = touching
            self.x = x
            self.y = y
            self.pressure = pressure
        }
    }

    /// A touch report of the pressure pad: the fingers given (at most 2; a lifted finger is
    /// sent once with its tip switch off), the scan time, the button.
    public static func pressurePadReport(_ fingers: [Finger], scanTime: UInt16, button: Bool = false) -> [UInt8] {
        var report: [UInt8] = [pressurePadTouchReport]
        for index in 0..<2 {
            if index < fingers.count {
                let finger = fingers[index]
                report += [(finger.touching ? 0x03 : 0x01) | finger.id << 2]
                report += le(finger.x) + le(finger.y) + le(finger.touching ? finger.pressure : 0)
            } else {
                report += [UInt8](repeating: 0, count: 7)
            }
        }
        report += le(scanTime) + [UInt8(fingers.count), button ? 1 : 0]
        return report
    }

    // MARK: A pen tablet through the wacom driver

    public static let penReport: UInt8 = 2
    public static let penPressureMaximum = 2047

    /// A pen digitizer with Wacom's vendor id and a product id of none of its tables: the
    /// wacom driver takes it as a generic HID pen (HID_GROUP_WACOM). Tip Switch, Barrel
    /// Switch, Eraser, Invert, In Range; X 0–32767 over 21.60 cm, Y 0–20479 over 13.50 cm;
    /// Tip Pressure 0–2047.
    public static let wacomPen = UHIDDevice.Description(
        name: "forcescale Wacom-generic pen", bus: 0x03, vendor: 0x056a, product: 0x5c01,
        reportDescriptor: [
            0x05, 0x0D, 0x09, 0x02, 0xA1, 0x01, 0x85, penReport,
            0x09, 0x20, 0xA1, 0x00,
            0x09, 0x42, 0x09, 0x44, 0x09, 0x45, 0x09, 0x3C, 0x09, 0x32,
            0x15, 0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x05, 0x81, 0x02, 0x95, 0x03, 0x81, 0x03,
            0x05, 0x01, 0x75, 0x10, 0x95, 0x01, 0x55, 0x0E, 0x65, 0x11, 0x35, 0x00,
            0x26, 0xFF, 0x7F, 0x46, 0x70, 0x08, 0x09, 0x30, 0x81, 0x02,
            0x26, 0xFF, 0x4F, 0x46, 0x46, 0x05, 0x09, 0x31, 0x81, 0x02,
            0x05, 0x0D, 0x55, 0x00, 0x65, 0x00, 0x45, 0x00, 0x26, 0xFF, 0x07, 0x09, 0x30, 0x81, 0x02,
            0xC0, 0xC0,
        ])

    /// A pen report: in range, touching (tip switch) with `pressure`, at x, y.
    public static func penReport(inRange: Bool, touching: Bool, pressure: UInt16, x: UInt16 = 16000, y: UInt16 = 10000) -> [UInt8] {
        let bits: UInt8 = (touching ? 0x01 : 0) | (inRange ? 0x10 : 0)
        return [penReport, bits] + le(x) + le(y) + le(touching ? pressure : 0)
    }

    // MARK: Apple's Magic Trackpad 2 over Bluetooth

    /// The Magic Trackpad 2 as hid-magicmouse takes it over Bluetooth (vendor 0x004c,
    /// product 0x0265). The driver reads its touches from report 0x31, which it registers
    /// itself, once its SET_REPORT of feature 0xF1 switched the pad to multitouch; the
    /// descriptor needs only something hid-input maps (a mouse's buttons here: its relative
    /// axes are ignored on this pad).
    public static let magicTrackpad2 = UHIDDevice.Description(
        name: "forcescale Magic Trackpad 2", bus: 0x05, vendor: 0x004c, product: 0x0265,
        reportDescriptor: [
            0x05, 0x01, 0x09, 0x02, 0xA1, 0x01, 0x85, 0x02, 0x09, 0x01, 0xA1, 0x00,
            0x05, 0x09, 0x19, 0x01, 0x29, 0x03, 0x15, 0x00, 0x25, 0x01, 0x95, 0x03, 0x75, 0x01, 0x81, 0x02,
            0x95, 0x01, 0x75, 0x05, 0x81, 0x03,
            0x05, 0x01, 0x09, 0x30, 0x09, 0x31, 0x15, 0x81, 0x25, 0x7F, 0x75, 0x08, 0x95, 0x02, 0x81, 0x06,
            0xC0, 0xC0,
        ])
    public static let magicTrackpad2PressureMaximum = 253

    /// A touch report 0x31: 4 bytes (report id, clicks, a timestamp), then 9 bytes a touch:
    /// X (13 bits), Y (13 bits), the state (0x80 in bits 6–7 of byte 3: touching), touch
    /// major and minor, size, pressure (0–253), the contact id (low 4 bits of byte 8) and
    /// the orientation (its high 3 bits; 4 is upright).
    public static func magicTrackpad2Report(_ touches: [(id: UInt8, x: Int16, pressure: UInt8)], click: Bool = false) -> [UInt8] {
        var report: [UInt8] = [0x31, click ? 1 : 0, 0, 0]
        for touch in touches {
            let x = UInt16(bitPattern: touch.x) & 0x1FFF
            report += [UInt8(x & 0xFF), UInt8(x >> 8), 0, 0x80, 40, 30, 20, touch.pressure, (touch.id & 0x0F) | 4 << 5]
        }
        return report
    }

    static func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
}
