// A HID report descriptor read into its fields (HID 1.11, section 6.2.2): which usages each
// report carries, at which bits, over which logical and physical range, in which unit. The
// kernel's hid-core reads the same bytes from a device and makes the evdev axes from them
// (hid-input); the descriptor is readable at
// /sys/class/input/eventN/device/device/report_descriptor. forcescale reads it for what the
// kernel's axis loses: the exact units per gram of a Tip Pressure in grams or newtons, which
// the kernel rounds to an integer (hidinput_calc_abs_res), or leaves at 0 before 6.18.

/// One Input, Output or Feature item of a report descriptor: `count` values of `size` bits.
package struct HIDField: Hashable, Sendable {
    package enum Kind: Hashable, Sendable { case input, output, feature }

    package var kind: Kind
    /// The report ID, 0 when the descriptor declares none (then reports have no ID byte).
    package var reportID: UInt8
    /// Where the first value starts, in bits from the start of the report's data (after the
    /// ID byte, when there is one).
    package var bitOffset: Int
    package var size: Int
    package var count: Int
    /// The usage of each value (32 bits: page << 16 | id). A variable field has one per value
    /// (the last repeated when fewer were declared); an array field lists those it may hold.
    package var usages: [UInt32]
    package var isConstant: Bool
    package var isVariable: Bool
    package var logicalMinimum: Int64
    package var logicalMaximum: Int64
    package var physicalMinimum: Int64
    package var physicalMaximum: Int64
    /// The HID unit code (system and exponents in nibbles) and the unit exponent.
    package var unit: UInt32
    package var unitExponent: Int
    /// The usages of the collections the field is in, outermost first, and a number that is
    /// the same for every field of one collection and different for each collection.
    package var collectionUsages: [UInt32]
    package var collectionIndex: Int

    /// The usage of value `index` of a variable field.
    package func usage(at index: Int) -> UInt32? {
        guard !usages.isEmpty else { return nil }
        return usages[Swift.min(index, usages.count - 1)]
    }
}

/// Why a report descriptor could not be read.
package struct HIDDescriptorError: Error, Hashable, Sendable, CustomStringConvertible {
    package var offset: Int
    package var message: String
    package var description: String { "report descriptor byte \(offset): \(message) (the device's report_descriptor in sysfs may be cut short or not HID)" }
}

/// A parsed report descriptor.
package struct HIDReportDescriptor: Hashable, Sendable {
    package var fields: [HIDField]

    // Usages (page << 16 | id) this project asks about.
    package static let tipPressure: UInt32 = 0x000D_0030
    package static let buttonType: UInt32 = 0x000D_0059
    package static let contactCountMaximum: UInt32 = 0x000D_0055
    /// HID unit codes as the kernel's hid-input names them: grams (SI linear, mass) and
    /// newtons (SI linear, length · mass · time⁻²; strictly the cgs system's dyne, but
    /// devices and the kernel use it for newtons).
    package static let unitGram: UInt32 = 0x0101
    package static let unitNewton: UInt32 = 0xE111

    /// Reads the descriptor's items.
    /// - Throws: `HIDDescriptorError` on an item cut short, an End Collection or Pop with
    ///   nothing open, or a field too large to be a report.
    package init(bytes: [UInt8]) throws(HIDDescriptorError) {
        struct Globals {
            var usagePage: UInt32 = 0
            var logicalMinimum: Int64 = 0
            var logicalMaximum: Int64 = 0
            var physicalMinimum: Int64 = 0
            var physicalMaximum: Int64 = 0
            var unitExponent = 0
            var unit: UInt32 = 0
            var reportSize = 0
            var reportID: UInt8 = 0
            var reportCount = 0
            // The sign of Logical/Physical Maximum depends on the minimum's (as hid-core reads it).
            var rawLogicalMaximum: (value: UInt32, size: Int) = (0, 0)
            var rawPhysicalMaximum: (value: UInt32, size: Int) = (0, 0)
        }
        var globals = Globals()
        var stack: [Globals] = []
        var usages: [UInt32] = []
        var usageMinimum: UInt32?
        var collections: [(usage: UInt32, index: Int)] = []
        var collectionCount = 0
        var offsets: [String: Int] = [:]
        var fields: [HIDField] = []
        var position = 0

        func signed(_ value: UInt32, _ size: Int) -> Int64 {
            switch size {
            case 1: Int64(Int8(truncatingIfNeeded: value))
            case 2: Int64(Int16(truncatingIfNeeded: value))
            case 4: Int64(Int32(bitPattern: value))
            default: 0
            }
        }
        func full(_ usage: UInt32, _ size: Int) -> UInt32 { size == 4 ? usage : globals.usagePage << 16 | usage }

        while position < bytes.count {
            let prefix = bytes[position]
            if prefix == 0xFE {
                // A long item: its size is the next byte; none is defined, so it is skipped.
                guard position + 1 < bytes.count else { throw HIDDescriptorError(offset: position, message: "a long item cut short") }
                position += 3 + Int(bytes[position + 1])
                continue
            }
            let size = [0, 1, 2, 4][Int(prefix & 3)]
            guard position + 1 + size <= bytes.count else {
                throw HIDDescriptorError(offset: position, message: "an item of \(size) bytes cut short")
            }
            var value: UInt32 = 0
            for index in 0..<size { value |= UInt32(bytes[position + 1 + index]) << (8 * index) }
            let tag = prefix >> 4
            switch (prefix >> 2) & 3 {
            case 0:  // Main
                switch tag {
                case 0x8, 0x9, 0xB:
                    let kind: HIDField.Kind = tag == 0x8 ? .input : tag == 0x9 ? .output : .feature
                    let key = "\(kind)-\(globals.reportID)"
                    let bits = globals.reportSize * globals.reportCount
                    // hid-core's limits: 256 bits a value (a 64-bit serial number is common),
                    // and no report beyond its 4096-byte buffer.
                    guard globals.reportSize <= 256, bits <= 8 * 4096 else {
                        throw HIDDescriptorError(offset: position, message: "a field of \(globals.reportCount) × \(globals.reportSize) bits")
                    }
                    var declared = usages
                    if let low = usageMinimum, declared.isEmpty { declared = [low] }
                    fields.append(HIDField(
                        kind: kind, reportID: globals.reportID, bitOffset: offsets[key, default: 0], size: globals.reportSize,
                        count: globals.reportCount, usages: declared, isConstant: value & 1 != 0, isVariable: value & 2 != 0,
                        logicalMinimum: globals.logicalMinimum, logicalMaximum: globals.logicalMaximum,
                        physicalMinimum: globals.physicalMinimum, physicalMaximum: globals.physicalMaximum,
                        unit: globals.unit, unitExponent: globals.unitExponent,
                        collectionUsages: collections.map(\.usage), collectionIndex: collections.last?.index ?? 0))
                    offsets[key, default: 0] += bits
                case 0xA:
                    collectionCount += 1
                    collections.append((usages.first ?? usageMinimum ?? 0, collectionCount))
                case 0xC:
                    guard !collections.isEmpty else { throw HIDDescriptorError(offset: position, message: "End Collection with no collection open") }
                    collections.removeLast()
                default:
                    break
                }
                usages = []
                usageMinimum = nil
            case 1:  // Global
                switch tag {
                case 0x0: globals.usagePage = value
                case 0x1: globals.logicalMinimum = signed(value, size)
                case 0x2: globals.rawLogicalMaximum = (value, size)
                case 0x3: globals.physicalMinimum = signed(value, size)
                case 0x4: globals.rawPhysicalMaximum = (value, size)
                // A 4-bit two's complement (HID 1.11, 6.2.2.7) when it fits a nibble.
                case 0x5: globals.unitExponent = value < 16 ? (value < 8 ? Int(value) : Int(value) - 16) : Int(signed(value, size))
                case 0x6: globals.unit = value
                case 0x7: globals.reportSize = Int(value)
                case 0x8: globals.reportID = UInt8(truncatingIfNeeded: value)
                case 0x9: globals.reportCount = Int(value)
                case 0xA: stack.append(globals)
                case 0xB:
                    guard let top = stack.popLast() else { throw HIDDescriptorError(offset: position, message: "Pop with nothing pushed") }
                    globals = top
                default: break
                }
                globals.logicalMaximum = globals.logicalMinimum < 0
                    ? signed(globals.rawLogicalMaximum.value, globals.rawLogicalMaximum.size) : Int64(globals.rawLogicalMaximum.value)
                globals.physicalMaximum = globals.physicalMinimum < 0
                    ? signed(globals.rawPhysicalMaximum.value, globals.rawPhysicalMaximum.size) : Int64(globals.rawPhysicalMaximum.value)
            case 2:  // Local
                switch tag {
                case 0x0: usages.append(full(value, size))
                case 0x1: usageMinimum = full(value, size)
                case 0x2:
                    if let low = usageMinimum {
                        let high = full(value, size)
                        if high >= low, high - low < 4096 { usages += Array(low...high) }
                        usageMinimum = nil
                    }
                default: break
                }
            default:
                break
            }
            position += 1 + size
        }
        self.fields = fields
    }

    /// The size of each report in bytes, ID byte included, by kind and report ID.
    package func reportLength(_ kind: HIDField.Kind, id: UInt8) -> Int {
        let bits = fields.filter { $0.kind == kind && $0.reportID == id }.map { $0.bitOffset + $0.size * $0.count }.max() ?? 0
        return (bits + 7) / 8 + (id == 0 ? 0 : 1)
    }

    /// The report IDs that have fields of this kind, in order.
    package func reportIDs(_ kind: HIDField.Kind) -> [UInt8] {
        var seen: [UInt8] = []
        for field in fields where field.kind == kind && !seen.contains(field.reportID) { seen.append(field.reportID) }
        return seen
    }

    /// The first input field whose values include `usage`, and that value's index.
    package func input(_ usage: UInt32) -> (field: HIDField, index: Int)? {
        for field in fields where field.kind == .input && field.isVariable && !field.isConstant {
            if let index = field.usages.firstIndex(of: usage), index < field.count { return (field, index) }
        }
        return nil
    }
}

/// What a report descriptor says about a Tip Pressure: its logical range and, when its unit
/// is grams or newtons, the exact units per gram.
package struct HIDPressureUnit: Hashable, Sendable {
    package var logicalMinimum: Int64
    package var logicalMaximum: Int64
    /// `grams` or `newtons`, or nil for another unit or none.
    package var unitName: String?
    /// Logical units per gram from the physical range, the unit and its exponent (a newton
    /// taken as 101.97 g, as hid-input does); nil without a unit of force or mass or with an
    /// empty range.
    package var unitsPerGram: Double?

    /// The first Tip Pressure among the descriptor's input fields.
    package init?(_ descriptor: HIDReportDescriptor) {
        guard let (field, _) = descriptor.input(HIDReportDescriptor.tipPressure) else { return nil }
        logicalMinimum = field.logicalMinimum
        logicalMaximum = field.logicalMaximum
        var physicalMinimum = field.physicalMinimum
        var physicalMaximum = field.physicalMaximum
        // No physical extent declared: the physical range is the logical one (HID 1.11, 6.2.2.7).
        if physicalMinimum == 0, physicalMaximum == 0 {
            physicalMinimum = field.logicalMinimum
            physicalMaximum = field.logicalMaximum
        }
        let gramsPerUnitOfMeasure: Double
        switch field.unit {
        case HIDReportDescriptor.unitGram:
            unitName = "grams"
            gramsPerUnitOfMeasure = 1
        case HIDReportDescriptor.unitNewton:
            unitName = "newtons"
            gramsPerUnitOfMeasure = 101.97
        default:
            unitName = nil
            unitsPerGram = nil
            return
        }
        var scale = 1.0
        for _ in 0..<abs(field.unitExponent) { scale *= 10 }
        if field.unitExponent < 0 { scale = 1 / scale }
        let grams = Double(physicalMaximum - physicalMinimum) * scale * gramsPerUnitOfMeasure
        let logical = Double(field.logicalMaximum - field.logicalMinimum)
        unitsPerGram = grams > 0 && logical > 0 ? logical / grams : nil
    }
}
