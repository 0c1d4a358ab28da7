import ScaleCore

/// A device from the kernel's HID selftests, made through uhid from its report descriptor
/// alone: the layout of its reports is read from the descriptor (ScaleCore's
/// `HIDReportDescriptor`), so one contact or pen tip can be put at any logical pressure, and
/// the driver's GET_REPORT requests are answered from the feature reports the descriptor
/// declares, as the selftests' devices answer them: Contact Max at its logical maximum, Input
/// Mode and everything else (the certification blob among it) zero.
public struct KernelHIDDevice: Sendable {
    public var name: String
    /// The selftest class the descriptor and identity come from (for a device from elsewhere, a
    /// label naming it: the checks are reported under it).
    public var selftestClass: String
    public var bus: UInt16
    public var vendor: UInt32
    public var product: UInt32
    public var bytes: [UInt8]
    /// The descriptor laid out, and the Tip Pressure the scenario presses with (its field and
    /// value index); nil when the descriptor does not parse or has no usable Tip Pressure.
    package var parsed: (layout: HIDReportDescriptor, pressure: (field: HIDField, index: Int))?
    /// Why `parsed` is nil: a mistake in the test data, which fails this device's checks
    /// (scenario w) and nothing else.
    public var problem: String?

    /// - Parameters:
    ///   - pen: Press with the Tip Pressure of a Stylus collection (a device that is a
    ///     touchscreen and a pen: the selftest tests its pen); otherwise with the first one.
    ///   - report: Press with the first Tip Pressure of this input report (a device whose
    ///     selftest sends its touches in a report other than the first with a Tip Pressure).
    public init(name: String, selftestClass: String, bus: UInt16, vendor: UInt32, product: UInt32, pen: Bool = false, report: UInt8? = nil, descriptor: [String]) {
        self.name = name
        self.selftestClass = selftestClass
        self.bus = bus
        self.vendor = vendor
        self.product = product
        var bytes: [UInt8] = []
        for (position, text) in descriptor.joined(separator: " ").split(separator: " ").enumerated() {
            guard let byte = UInt8(text, radix: 16) else {
                problem = "descriptor byte \(position) is \"\(text)\", not two hex digits"
                self.bytes = bytes
                return
            }
            bytes.append(byte)
        }
        self.bytes = bytes
        let layout: HIDReportDescriptor
        do { layout = try HIDReportDescriptor(bytes: bytes) } catch {
            problem = "\(error)"
            return
        }
        let candidates = layout.fields.filter { $0.kind == .input && $0.isVariable && !$0.isConstant
            && (report == nil || $0.reportID == report)
            && (!pen || $0.collectionUsages.map(Self.equivalent).contains(Self.stylus)) }
        for field in candidates {
            if let index = field.usages.map(Self.equivalent).firstIndex(of: HIDReportDescriptor.tipPressure), index < field.count {
                parsed = (layout, (field, index))
                return
            }
        }
        problem = "no Tip Pressure in an input field\(pen ? " of a Stylus collection" : "")\(report.map { " of report \($0)" } ?? "")"
    }

    /// A usage of Wacom's vendor page 0xFF0D as the digitizer usage it stands for (the wacom
    /// driver's wacom_equivalent_usage: Tip Pressure 0xFF0D0030 is 0x000D0030); others as they are.
    static func equivalent(_ usage: UInt32) -> UInt32 {
        usage >> 16 == 0xFF0D ? 0x000D_0000 | usage & 0xFFFF : usage
    }

    var layout: HIDReportDescriptor { parsed!.layout }
    var pressure: (field: HIDField, index: Int) { parsed!.pressure }

    /// The logical range of its Tip Pressure, which the kernel gives the evdev axis.
    public var pressureRange: ClosedRange<Int64> { pressure.field.logicalMinimum...pressure.field.logicalMaximum }

    /// Whether the pressure is a pen's (its collection is a Stylus), not a finger's.
    public var isPen: Bool { pressure.field.collectionUsages.map(Self.equivalent).contains(Self.stylus) }
    static let stylus: UInt32 = 0x000D_0020

    /// What uhid needs to make it, with the feature reports the driver may ask for.
    public var uhid: UHIDDevice.Description {
        var features: [UInt8: [UInt8]] = [:]
        for id in layout.reportIDs(.feature) {
            var report = [UInt8](repeating: 0, count: layout.reportLength(.feature, id: id))
            if id != 0 { report[0] = id }
            for field in layout.fields where field.kind == .feature && field.reportID == id && field.isVariable {
                for index in 0..<field.count where field.usage(at: index) == HIDReportDescriptor.contactCountMaximum {
                    Self.put(field.logicalMaximum, field: field, index: index, in: &report)
                }
            }
            features[id] = report
        }
        return UHIDDevice.Description(name: name, bus: bus, vendor: vendor, product: product, reportDescriptor: bytes, featureReports: features)
    }

    /// The input report of one contact (for a pen, its tip) at `pressure`: touching or lifted,
    /// in range or not, in the middle of the surface; every other contact of the report empty.
    public func report(pressure value: Int64, touching: Bool, inRange: Bool, scanTime: Int64) -> [UInt8] {
        let id = pressure.field.reportID
        var report = [UInt8](repeating: 0, count: layout.reportLength(.input, id: id))
        if id != 0 { report[0] = id }
        let contact = pressure.field.collectionIndex
        let contacts = layout.fields.filter { $0.kind == .input && $0.reportID == id && $0.usages.contains(0x000D_0051) }.map(\.collectionIndex).filter { $0 != contact }
        for field in layout.fields where field.kind == .input && field.reportID == id && field.isVariable && !field.isConstant {
            for index in 0..<field.count {
                guard let usage = field.usage(at: index).map(Self.equivalent) else { continue }
                let mine = field.collectionIndex == contact
                let middle = (field.logicalMinimum + field.logicalMaximum) / 2
                let chosen: Int64?
                switch usage {
                case 0x000D_0042 where mine: chosen = touching ? 1 : 0                  // Tip Switch
                case 0x000D_0032 where mine: chosen = inRange ? 1 : 0                   // In Range
                case 0x000D_0036 where mine: chosen = inRange ? 1 : 0                   // Wacom's In Proximity (sense)
                // A tool's serial number and type, in range: the wacom driver holds back a
                // pen's events until both are known (wacom_wac_pen_serial_enforce, for a
                // descriptor with a serial number). Serial 1, type 0x822 (a Pro Pen 2, a
                // BTN_TOOL_PEN), as test_wacom_generic.py's TestPTHX60_Pen sends.
                case 0x000D_005B where mine: chosen = inRange ? 1 : 0                   // Transducer Serial Number
                case 0x000D_0077 where mine: chosen = inRange ? min(field.logicalMaximum, 0x822) : 0  // Wacom's Tool Type
                case 0x000D_0047 where mine: chosen = 1                                 // Confidence
                case 0x000D_0030 where mine: chosen = touching ? value : field.logicalMinimum  // Tip Pressure
                case 0x0001_0030 where mine, 0x0001_0031 where mine: chosen = middle     // X, Y
                case 0x000D_0048 where mine, 0x000D_0049 where mine: chosen = middle    // Width, Height
                // Contact Id 1 for the touch: some devices count from 1 (hid-multitouch's
                // SLOT_IS_CONTACTID_MINUS_ONE, the Asus 0486:0185), and no driver takes 1 as
                // "no contact". An empty contact's differs from it: a driver that reads past
                // Contact Count must not take it for the same contact lifting.
                case 0x000D_0051 where mine: chosen = min(field.logicalMaximum, 1)
                case 0x000D_0051: chosen = min(field.logicalMaximum, Int64(contacts.firstIndex(of: field.collectionIndex) ?? 0) + 2)
                case 0x000D_0054: chosen = isPen ? nil : 1                              // Contact Count
                case 0x000D_0056: chosen = scanTime % (field.logicalMaximum + 1)        // Scan Time
                default: chosen = nil
                }
                if let chosen { Self.put(chosen, field: field, index: index, in: &report) }
            }
        }
        return report
    }

    /// Writes value `index` of a field, least significant bit first (HID's bit order).
    static func put(_ value: Int64, field: HIDField, index: Int, in report: inout [UInt8]) {
        let start = (report.count > 0 && field.reportID != 0 ? 8 : 0) + field.bitOffset + index * field.size
        let bits = UInt64(bitPattern: value)
        for bit in 0..<field.size {
            let at = start + bit
            guard at / 8 < report.count else { return }
            if bits >> UInt64(bit) & 1 == 1 { report[at / 8] |= 1 << UInt8(at % 8) } else { report[at / 8] &= ~(1 << UInt8(at % 8)) }
        }
    }
}
