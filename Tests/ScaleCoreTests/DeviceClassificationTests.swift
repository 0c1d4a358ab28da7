import Testing
@testable import ScaleCore

/// Devices declared the way litest declares them: properties, key codes and absinfo.
enum ClassificationDevice {
    static func describe(
        _ name: String,
        vendor: UInt16 = 0, product: UInt16 = 0,
        properties: [InputProperty] = [],
        keys: [EventCode] = [],
        axes: [EventCode: AxisRange]
    ) -> DeviceDescription {
        DeviceDescription(
            name: name,
            identity: DeviceIdentity(bus: 0x03, vendor: vendor, product: product, version: 1),
            properties: BitSet(properties.map { Int($0.rawValue) }),
            supportedCodes: keys.isEmpty ? [:] : [.key: BitSet(keys.map { Int($0.rawValue) })],
            axes: axes)
    }

    static let position: [EventCode: AxisRange] = [
        .absX: AxisRange(minimum: 0, maximum: 4000),
        .absY: AxisRange(minimum: 0, maximum: 3000),
    ]
    static let multitouchPosition: [EventCode: AxisRange] = [
        .absMTSlot: AxisRange(minimum: 0, maximum: 4),
        .absMTTrackingID: AxisRange(minimum: 0, maximum: 65535),
        .absMTPositionX: AxisRange(minimum: 0, maximum: 4000),
        .absMTPositionY: AxisRange(minimum: 0, maximum: 3000),
    ]

    static let synaptics = describe(
        "SynPS/2 Synaptics TouchPad", vendor: 0x0002, product: 0x0007,
        properties: [.pointer, .buttonPad],
        keys: [.btnToolFinger, .btnTouch],
        axes: position.merging(multitouchPosition) { $1 }.merging([
            .absPressure: AxisRange(minimum: 0, maximum: 255),
            .absMTPressure: AxisRange(minimum: 0, maximum: 255),
        ]) { $1 })

    static let pressurePad = describe(
        "Haptic Pressure Pad", vendor: 0x06cb, product: 0xcef0,
        properties: [.pointer, .buttonPad, .pressurePad],
        keys: [.btnToolFinger, .btnTouch],
        axes: position.merging(multitouchPosition) { $1 }.merging([
            .absPressure: AxisRange(minimum: 0, maximum: 255, resolution: 40),
            .absMTPressure: AxisRange(minimum: 0, maximum: 255, resolution: 40),
        ]) { $1 })

    static func pen(_ name: String, maximumPressure: Int32, product: UInt16, direct: Bool = false) -> DeviceDescription {
        describe(
            name, vendor: 0x056a, product: product,
            properties: direct ? [.direct] : [],
            keys: [.btnToolPen, .btnToolRubber, .btnTouch, .btnStylus],
            axes: position.merging([.absPressure: AxisRange(minimum: 0, maximum: maximumPressure)]) { $1 })
    }

    static let intuos = pen("Wacom Intuos4 6x9 Pen", maximumPressure: 2047, product: 0x00b9)
    static let intuosPro = pen("Wacom Intuos Pro M Pen", maximumPressure: 8191, product: 0x0357)
    static let cintiq = pen("Wacom Cintiq 13HD Pen", maximumPressure: 2047, product: 0x0304, direct: true)

    static let touchscreen = describe(
        "ELAN Touchscreen", vendor: 0x04f3, product: 0x2494,
        properties: [.direct],
        keys: [.btnTouch],
        axes: position.merging(multitouchPosition) { $1 }.merging([
            .absMTPressure: AxisRange(minimum: 0, maximum: 255),
        ]) { $1 })

    static let mouse = describe("Logitech USB Optical Mouse", vendor: 0x046d, product: 0xc077, axes: [:])

    static let degenerate = describe(
        "Broken Pad", properties: [.pointer],
        keys: [.btnToolFinger, .btnTouch],
        axes: position.merging([.absPressure: AxisRange(minimum: 0, maximum: 0)]) { $1 })
}

/// Kind, ranking and `--device` queries, grouped so `--filter DeviceClassification` runs them all.
@Suite struct DeviceClassificationTests {}

extension DeviceClassificationTests {
    @Suite struct Kind {
        typealias D = ClassificationDevice

        @Test(arguments: [
            (D.synaptics, DeviceKind.touchpad),
            (D.pressurePad, .pressurePad),
            (D.intuos, .tablet),
            (D.intuosPro, .tablet),
            (D.cintiq, .tablet),
            (D.touchscreen, .touchscreen),
            (D.mouse, .other),
            (D.degenerate, .touchpad),
        ])
        func kindOf(_ device: DeviceDescription, _ expected: DeviceKind) {
            #expect(device.kind == expected, "\(device.name)")
        }

        @Test func canWeigh() {
            #expect(D.synaptics.canWeigh)
            #expect(D.pressurePad.canWeigh)
            #expect(D.intuos.canWeigh)
            #expect(D.cintiq.canWeigh)
            #expect(D.touchscreen.canWeigh)
            #expect(!D.mouse.canWeigh)
            #expect(!D.degenerate.canWeigh)
        }

        @Test func pressureAxesListMultitouchFirst() {
            let axes = D.synaptics.pressureAxes
            #expect(axes.map(\.code) == [.absMTPressure, .absPressure])
            #expect(axes.map(\.range.maximum) == [255, 255])
            #expect(D.intuosPro.pressureAxes.map(\.code) == [.absPressure])
            #expect(D.intuosPro.pressureAxes.first?.range.maximum == 8191)
            #expect(D.mouse.pressureAxes.isEmpty)
            // Degenerate ranges are listed as declared; canWeigh is what rejects them.
            #expect(D.degenerate.pressureAxes.map(\.code) == [.absPressure])
        }

        @Test func multitouchWithoutFingerToolAndNotDirectIsATouchpad() {
            let pad = ClassificationDevice.describe("Apple Touchpad", axes: ClassificationDevice.multitouchPosition)
            #expect(pad.kind == .touchpad)
        }

        @Test func directWithFingerToolIsATouchscreenNotATouchpad() {
            let screen = ClassificationDevice.describe(
                "Finger Screen", properties: [.direct], keys: [.btnToolFinger, .btnTouch], axes: ClassificationDevice.position)
            #expect(screen.kind == .touchscreen)
        }

        @Test func eraserOrStylusButtonAloneMakesATablet() {
            let eraser = ClassificationDevice.describe("Eraser", keys: [.btnToolRubber], axes: ClassificationDevice.position)
            #expect(eraser.kind == .tablet)
            let stylus = ClassificationDevice.describe("Stylus", properties: [.direct], keys: [.btnStylus, .btnTouch], axes: ClassificationDevice.position)
            #expect(stylus.kind == .tablet)
        }

        @Test func pressurePadPropertyWinsOverEverythingElse() {
            var pad = ClassificationDevice.intuos
            pad.properties.insert(Int(InputProperty.pressurePad.rawValue))
            #expect(pad.kind == .pressurePad)
        }

        @Test func displayNamesAreTheRawValues() {
            #expect(DeviceKind.allCases.map(\.rawValue) == ["pressure pad", "tablet", "touchpad", "touchscreen", "other"])
        }

        @Test func penCodesMatchTheKernel() {
            #expect(EventCode.btnToolRubber.rawValue == 0x141)
            #expect(EventCode.btnStylus.rawValue == 0x14b)
        }
    }

    @Suite struct Ranking {
        typealias D = ClassificationDevice

        func candidate(_ number: Int, _ description: DeviceDescription, links: [String] = []) -> DeviceCandidate {
            DeviceCandidate(path: "/dev/input/event\(number)", description: description, links: links)
        }

        @Test func pressurePadFirstThenTabletsByRangeThenTouchpadThenTouchscreen() {
            let candidates = [
                candidate(0, D.mouse),
                candidate(3, D.touchscreen),
                candidate(4, D.synaptics),
                candidate(5, D.degenerate),
                candidate(11, D.intuos),
                candidate(12, D.intuosPro),
                candidate(15, D.pressurePad),
            ]
            let ranked = DeviceRanking.ranked(candidates).map(\.path)
            #expect(ranked == [
                "/dev/input/event15",  // pressure pad
                "/dev/input/event12",  // tablet, 0–8191
                "/dev/input/event11",  // tablet, 0–2047
                "/dev/input/event4",   // touchpad
                "/dev/input/event3",   // touchscreen
            ])
        }

        @Test func tiesGoByNaturalPathOrder() {
            // Same kind, same range: event2 before event10, though "event10" < "event2" as text.
            let candidates = [candidate(10, D.cintiq), candidate(2, D.intuos), candidate(1, D.intuosPro)]
            #expect(DeviceRanking.ranked(candidates).map(\.path) == [
                "/dev/input/event1", "/dev/input/event2", "/dev/input/event10",
            ])
        }

        @Test func nothingThatCannotWeighIsRanked() {
            #expect(DeviceRanking.ranked([candidate(0, D.mouse), candidate(1, D.degenerate)]).isEmpty)
            #expect(DeviceRanking.ranked([]).isEmpty)
        }

        @Test func naturalOrder() {
            let precedes = DeviceRanking.naturalOrderPrecedes
            #expect(precedes("event2", "event10"))
            #expect(!precedes("event10", "event2"))
            #expect(precedes("/dev/input/event9", "/dev/input/event10"))
            #expect(precedes("a", "b"))
            #expect(precedes("event", "event1"))
            #expect(!precedes("event1", "event1"))
            #expect(precedes("event99999999999999999999", "event100000000000000000000"))
            // Leading zeros tie numerically; the order stays total.
            #expect(precedes("event02", "event2") != precedes("event2", "event02"))
        }
    }

    @Suite struct Query {
        typealias D = ClassificationDevice

        let cintiq = DeviceCandidate(
            path: "/dev/input/event7", description: D.cintiq,
            links: ["/dev/input/by-id/usb-Wacom_Co._Ltd._Cintiq_13HD-event-stylus", "/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-stylus"])
        let synaptics = DeviceCandidate(path: "/dev/input/event5", description: D.synaptics)

        @Test func pathsMatchTheNodeOrAnyLink() {
            let byNode = DeviceQuery("/dev/input/event7")
            #expect(byNode.criterion == .path("/dev/input/event7"))
            #expect(byNode.matches(cintiq))
            #expect(!byNode.matches(synaptics))

            let byLink = DeviceQuery("/dev/input/by-id/usb-Wacom_Co._Ltd._Cintiq_13HD-event-stylus")
            #expect(byLink.matches(cintiq))
            #expect(!byLink.matches(synaptics))
            // A path with colons is still a path.
            #expect(DeviceQuery("/dev/input/by-path/pci-0000:00:14.0-usb-0:2:1.0-event-stylus").matches(cintiq))
            #expect(!DeviceQuery("/dev/input/event70").matches(cintiq))
        }

        @Test func vendorProductInHex() {
            let query = DeviceQuery("056a:0304")
            #expect(query.criterion == .vendorProduct(vendor: 0x056a, product: 0x0304))
            #expect(query.matches(cintiq))
            #expect(!query.matches(synaptics))
            #expect(DeviceQuery("56A:304") == query)
            #expect(DeviceQuery("2:7").matches(synaptics))
        }

        @Test func anythingElseIsANameSubstringIgnoringCase() {
            #expect(DeviceQuery("wacom").criterion == .nameContaining("wacom"))
            #expect(DeviceQuery("wacom").matches(cintiq))
            #expect(DeviceQuery("CINTIQ 13").matches(cintiq))
            #expect(!DeviceQuery("wacom").matches(synaptics))
            #expect(DeviceQuery("synaptics touchpad").matches(synaptics))
        }

        @Test(arguments: ["12:34:56", "056a:", ":0304", "0056a:0304", "056g:0304", "+56a:0304", "056a-0304", "0003:056a:0304", "１２:34"])
        func notExactlyTwoShortHexPartsIsAName(_ text: String) {
            #expect(DeviceQuery(text).criterion == .nameContaining(text))
        }

        @Test func descriptionsForMessages() {
            #expect(DeviceQuery("/dev/input/event7").description == "path /dev/input/event7")
            #expect(DeviceQuery("56A:304").description == "vendor:product 056a:0304")
            #expect(DeviceQuery("wacom").description == "name containing 'wacom'")
            #expect("\(DeviceQuery("12:34:56"))" == "name containing '12:34:56'")
        }
    }
}
