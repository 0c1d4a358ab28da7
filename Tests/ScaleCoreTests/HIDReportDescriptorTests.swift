import Testing
@testable import ScaleCore

@Suite struct HIDReportDescriptorTests {
    static func bytes(_ hex: String) -> [UInt8] { hex.split(separator: " ").map { UInt8($0, radix: 16)! } }

    /// The Asus 0486:0185 touchscreen of the kernel's HID selftests (test_multitouch.py,
    /// TestAsus_computers_0486_0185): two fingers in report 1, each with Tip Switch, In Range,
    /// Confidence, Tip Pressure 0–255 (no unit), Contact Id, X and Y.
    static let asus = bytes("""
        05 0d 09 04 a1 01 85 01 09 22 a1 02 09 42 15 00 25 01 95 01 75 01 81 02 09 32 81 02 09 47 81 02 \
        75 05 81 03 09 30 26 ff 00 75 08 81 02 09 51 25 02 81 02 26 96 0d 05 01 75 10 55 0d 65 33 09 30 \
        35 00 46 fd 1d 81 02 09 31 46 60 11 81 02 c0 09 22 a1 02 05 0d 35 00 45 00 55 00 65 00 09 42 25 \
        01 75 01 81 02 09 32 81 02 09 47 81 02 75 05 81 03 09 30 26 ff 00 75 08 81 02 09 51 25 02 81 02 \
        26 96 0d 05 01 75 10 55 0d 65 33 09 30 46 fd 1d 81 02 09 31 46 60 11 81 02 c0 35 00 45 00 55 00 \
        65 00 05 0d 09 54 75 08 25 02 81 02 85 08 09 55 b1 02 c0
        """)

    @Test func readsTheFieldsOfAMultitouchReport() throws {
        let descriptor = try HIDReportDescriptor(bytes: Self.asus)
        let (pressure, index) = try #require(descriptor.input(HIDReportDescriptor.tipPressure))
        #expect(index == 0)
        #expect(pressure.reportID == 1)
        #expect(pressure.bitOffset == 8)   // after Tip Switch, In Range, Confidence and 5 bits of padding
        #expect(pressure.size == 8 && pressure.logicalMinimum == 0 && pressure.logicalMaximum == 255)
        #expect(pressure.collectionUsages == [0x000D_0004, 0x000D_0022])
        let x = try #require(descriptor.input(0x0001_0030)).field
        #expect(x.bitOffset == 24 && x.size == 16 && x.logicalMaximum == 3478 && x.physicalMaximum == 7677)
        #expect(x.unit == 0x33 && x.unitExponent == -3)
        // Two fingers of 7 bytes, then Contact Count: 15 bytes and the ID.
        #expect(descriptor.reportLength(.input, id: 1) == 16)
        #expect(descriptor.reportIDs(.feature) == [8])
        let contactMax = try #require(descriptor.fields.first { $0.kind == .feature })
        #expect(contactMax.usages == [HIDReportDescriptor.contactCountMaximum] && contactMax.logicalMaximum == 2)
        // The second finger is a collection of its own.
        let fingers = Set(descriptor.fields.filter { $0.usages.contains(HIDReportDescriptor.tipPressure) }.map(\.collectionIndex))
        #expect(fingers.count == 2)
        #expect(HIDPressureUnit(descriptor)?.unitsPerGram == nil)
    }

    /// A Tip Pressure of 0–4000 over 0–1000 g: 4 units per gram, as hid-input computes it
    /// from 6.18 on.
    @Test func gramsGiveUnitsPerGram() throws {
        let descriptor = try HIDReportDescriptor(bytes: Self.bytes(
            "05 0d 09 05 a1 01 85 01 09 22 a1 02 55 00 66 01 01 35 00 46 e8 03 15 00 26 a0 0f 75 10 95 01 09 30 81 02 c0 c0"))
        let unit = try #require(HIDPressureUnit(descriptor))
        #expect(unit.unitName == "grams" && unit.unitsPerGram == 4)
    }

    /// A real Wacom that states its Tip Pressure in newtons: the W9013 2d1f:0095 pen digitizer
    /// of the PineNote, as hid-decode read it from /dev/hidraw0 (WeraPea/pinenote-usb-tablet,
    /// main.c, commit 22e19bd). Four pen reports (2, 9, 26, 27), each with a Tip Pressure
    /// 0–4095; those of reports 26 and 27 state a physical 0–4016 in unit 0xE111 with a unit
    /// exponent of +2, those of reports 2 and 9 no unit.
    static let wacomW9013 = bytes("""
        05 0d 09 02 a1 01 85 02 09 20 a1 00 09 42 09 44 09 45 09 3c 09 5a 09 32 15 00 25 01 75 01 95 06 \
        81 02 95 02 81 03 05 01 09 30 26 e6 51 46 e6 51 65 11 55 0d 75 10 95 01 81 02 09 31 26 6d 3d 46 \
        6d 3d 81 02 45 00 65 00 55 00 05 0d 09 30 26 ff 0f 81 02 06 00 ff 09 04 75 08 26 ff 00 46 ff 00 \
        65 11 55 0e 81 02 05 0d 09 3d 75 10 16 d8 dc 26 28 23 36 d8 dc 46 28 23 65 14 81 02 09 3e 81 02 \
        65 00 55 00 15 00 35 00 45 00 05 01 09 32 75 10 16 01 ff 25 00 36 01 ff 45 00 65 11 55 0e 81 02 \
        15 00 35 00 65 00 55 00 c0 09 00 75 08 26 ff 00 b1 12 85 03 09 00 95 12 b1 12 85 04 09 00 b1 02 \
        85 05 09 00 95 04 b1 02 85 06 09 00 95 24 b1 02 85 16 09 00 15 00 26 ff 00 95 06 b1 02 85 17 09 \
        00 95 0c b1 02 85 19 09 00 95 01 b1 02 c0 06 00 ff 09 00 a1 01 85 09 05 0d 09 20 a1 00 09 42 09 \
        44 09 45 09 3c 09 00 09 32 15 00 25 01 75 01 95 06 81 02 95 02 81 03 05 01 09 30 26 e6 51 46 e6 \
        51 65 11 55 0d 75 10 95 01 81 02 09 31 26 6d 3d 46 6d 3d 81 02 45 00 65 00 55 00 05 0d 09 30 26 \
        ff 0f 81 02 06 00 ff 09 04 75 08 26 ff 00 46 ff 00 65 11 55 0e 81 02 05 0d 09 3d 75 10 16 d8 dc \
        26 28 23 36 d8 dc 46 28 23 65 14 81 02 09 3e 81 02 65 00 55 00 15 00 35 00 45 00 c0 09 00 75 08 \
        95 03 26 ff 00 b1 12 c0 06 00 ff 09 02 a1 01 85 07 09 00 96 09 01 b1 02 85 08 09 00 95 03 81 02 \
        09 00 b1 02 85 0e 09 00 96 0a 01 b1 02 c0 05 0d 09 02 a1 01 85 1a 09 20 a1 00 09 42 09 44 09 45 \
        09 3c 09 5a 09 32 15 00 25 01 75 01 95 06 81 02 09 38 25 03 75 02 95 01 81 02 05 01 09 30 26 e6 \
        51 46 e6 51 65 11 55 0d 75 10 95 01 81 02 09 31 26 6d 3d 46 6d 3d 81 02 05 0d 09 30 26 ff 0f 46 \
        b0 0f 66 11 e1 55 02 81 02 06 00 ff 09 04 75 08 26 ff 00 46 ff 00 65 11 55 0e 81 02 05 0d 09 3d \
        75 10 16 d8 dc 26 28 23 36 d8 dc 46 28 23 65 14 81 02 09 3e 81 02 65 00 55 00 15 00 35 00 45 00 \
        05 01 09 32 75 10 95 01 16 01 ff 25 00 36 01 ff 45 00 65 11 55 0e 81 02 15 00 35 00 65 00 55 00 \
        c0 c0 06 00 ff 09 00 a1 01 85 1b 05 0d 09 20 a1 00 09 42 09 44 09 45 09 3c 09 00 09 32 15 00 25 \
        01 75 01 95 06 81 02 09 38 25 03 75 02 95 01 81 02 05 01 09 30 26 e6 51 46 e6 51 65 11 55 0d 75 \
        10 95 01 81 02 09 31 26 6d 3d 46 6d 3d 81 02 45 00 65 00 55 00 05 0d 09 30 26 ff 0f 46 b0 0f 66 \
        11 e1 55 02 81 02 06 00 ff 09 04 75 08 26 ff 00 46 ff 00 65 11 55 0e 81 02 05 0d 09 3d 75 10 16 \
        d8 dc 26 28 23 36 d8 dc 46 28 23 65 14 81 02 09 3e 81 02 65 00 55 00 15 00 35 00 45 00 05 01 09 \
        32 75 10 95 01 16 01 ff 25 00 36 01 ff 45 00 65 11 55 0e 81 02 15 00 35 00 65 00 55 00 c0 c0
        """)

    @Test func theW9013StatesNewtonsOnlyInItsLaterPenReports() throws {
        let descriptor = try HIDReportDescriptor(bytes: Self.wacomW9013)
        let pressures = descriptor.fields.filter { $0.kind == .input && $0.usages.contains(HIDReportDescriptor.tipPressure) }
        #expect(pressures.map(\.reportID) == [2, 9, 26, 27])
        #expect(pressures.allSatisfy { $0.logicalMinimum == 0 && $0.logicalMaximum == 4095 })
        #expect(pressures.map(\.unit) == [0, 0, HIDReportDescriptor.unitNewton, HIDReportDescriptor.unitNewton])
        #expect(pressures.filter { $0.reportID >= 26 }.allSatisfy { $0.unitExponent == 2 && $0.physicalMinimum == 0 && $0.physicalMaximum == 4016 })
        // HIDPressureUnit reads the first Tip Pressure, report 2's, which states no unit: read
        // whole, this descriptor gives no units per gram.
        let unit = try #require(HIDPressureUnit(descriptor))
        #expect(unit.unitName == nil && unit.unitsPerGram == nil)
    }

    /// Newtons with a unit exponent of +2, on the W9013's Pen application of report 26 alone
    /// (its bytes 430–609, a whole top-level collection): 0–4095 over a physical 0–4016 × 10²
    /// of the unit, taken as newtons at 101.97 g. The kernel's integer formula (6.18 on) rounds
    /// that ratio to resolution 0; the descriptor has it. (In HID's own SI linear system the
    /// unit is g·cm·s⁻², a dyne, which would make the full scale 4.016 N, about 410 g: see
    /// docs/weighing.md.)
    @Test func newtonsWithAPositiveExponentKeepTheRatioTheKernelRoundsAway() throws {
        let descriptor = try HIDReportDescriptor(bytes: Array(Self.wacomW9013[430..<610]))
        let unit = try #require(HIDPressureUnit(descriptor))
        #expect(unit.unitName == "newtons")
        let expected = 4095.0 / (4016 * 100 * 101.97)
        #expect(abs((unit.unitsPerGram ?? 0) - expected) < 1e-12)
        #expect((unit.unitsPerGram ?? 0) < 0.5)   // so rounding to an integer gives 0
    }

    @Test func unitExponentIsAFourBitTwosComplement() throws {
        let descriptor = try HIDReportDescriptor(bytes: Self.bytes("05 01 09 30 55 0e 65 11 15 00 25 7f 75 08 95 01 81 02"))
        #expect(descriptor.fields.first?.unitExponent == -2)
        #expect(descriptor.fields.first?.reportID == 0)
        #expect(descriptor.reportLength(.input, id: 0) == 1)
    }

    /// A 64-bit value (the Elan 04f3:2a49 pen's serial number) is a field like any other;
    /// hid-core refuses only values over 256 bits.
    @Test func valuesWiderThan32BitsAreFieldsAndTheHugeAreErrors() throws {
        let wide = try HIDReportDescriptor(bytes: Self.bytes("05 0d 09 5b 75 40 95 01 81 02 09 30 75 08 81 02"))
        #expect(wide.fields.map(\.bitOffset) == [0, 64])
        #expect(wide.reportLength(.input, id: 0) == 9)
        #expect(throws: HIDDescriptorError.self) { try HIDReportDescriptor(bytes: Self.bytes("05 0d 09 5b 76 01 01 95 01 81 02")) }
    }

    @Test func aNegativeMinimumMakesTheMaximumSigned() throws {
        let descriptor = try HIDReportDescriptor(bytes: Self.bytes("05 01 09 30 15 81 25 7f 75 08 95 01 81 06"))
        #expect(descriptor.fields.first?.logicalMinimum == -127)
        #expect(descriptor.fields.first?.logicalMaximum == 127)
    }

    @Test(arguments: ["26 ff", "c0", "b4"])
    func brokenDescriptorsAreErrorsNotCrashes(hex: String) {
        #expect(throws: HIDDescriptorError.self) { try HIDReportDescriptor(bytes: Self.bytes(hex)) }
    }
}
