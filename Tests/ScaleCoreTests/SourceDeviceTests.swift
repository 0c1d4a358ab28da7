import Testing

@testable import ScaleCore

/// `SourceDevice` keeps its fields in a shared box; it must still behave as a plain value.
struct SourceDeviceTests {
    static let pad = DeviceDescription(name: "Pad", axes: [.absPressure: AxisRange(minimum: 0, maximum: 255)])
    static let pen = DeviceDescription(name: "Pen", axes: [.absPressure: AxisRange(minimum: 0, maximum: 2047)])

    @Test func theNodeNameFollowsThePath() {
        var device = SourceDevice(path: "/dev/input/event5", description: Self.pad)
        #expect(device.nodeName == "event5")
        let before = device
        device.path = "/tmp/recordings/pen.events"
        #expect(device.nodeName == "pen.events")
        #expect(before.path == "/dev/input/event5" && before.nodeName == "event5", "a copy keeps its own fields")
        #expect(SourceDevice(path: "pen.events", description: Self.pad).nodeName == "pen.events")
    }

    @Test func equalityAndHashFollowTheFieldsNotTheBox() {
        let one = SourceDevice(path: "/dev/input/event5", description: Self.pad)
        let same = SourceDevice(path: "/dev/input/event5", description: Self.pad)
        #expect(one == same && one.hashValue == same.hashValue)
        #expect(one != SourceDevice(path: "/dev/input/event6", description: Self.pad))
        #expect(one != SourceDevice(path: "/dev/input/event5", description: Self.pen))
        var changed = one
        changed.description = Self.pen
        #expect(changed != one && changed.description.name == "Pen" && one.description.name == "Pad")
        #expect(Set([one, same, changed]).count == 2)
    }
}
