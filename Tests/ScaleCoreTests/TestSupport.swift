@testable import ScaleCore

/// Devices described the way libinput's litest declares them: absinfo tables.
enum TestDevice {
    static func singleTouch(min: Int32 = 0, max: Int32 = 255, resolution: Int32 = 0, touchButton: Bool = true, name: String = "test pad") -> DeviceDescription {
        DeviceDescription(
            name: name,
            supportedCodes: touchButton ? [.key: BitSet([Int(EventCode.btnTouch.rawValue)])] : [:],
            axes: [
                .absX: AxisRange(minimum: 0, maximum: 1000),
                .absPressure: AxisRange(minimum: min, maximum: max, resolution: resolution),
            ])
    }

    static func multitouch(slots: Int32 = 5, min: Int32 = 0, max: Int32 = 255, resolution: Int32 = 0) -> DeviceDescription {
        DeviceDescription(
            name: "test mt pad",
            supportedCodes: [.key: BitSet([Int(EventCode.btnTouch.rawValue)])],
            axes: [
                .absPressure: AxisRange(minimum: min, maximum: max),
                .absMTSlot: AxisRange(minimum: 0, maximum: slots - 1),
                .absMTTrackingID: AxisRange(minimum: 0, maximum: 65535),
                .absMTPressure: AxisRange(minimum: min, maximum: max, resolution: resolution),
            ])
    }
}

/// Builds event streams frame by frame, times in milliseconds.
struct EventScript {
    private(set) var events: [InputEvent] = []

    @discardableResult
    mutating func frame(at milliseconds: Double, _ changes: [(EventType, EventCode, Int32)]) -> Self {
        let time = EventTime(microseconds: Int64((milliseconds * 1000).rounded()))
        for (type, code, value) in changes { events.append(InputEvent(time: time, type: type, code: code, value: value)) }
        events.append(InputEvent(time: time, type: .synchronization, code: .synReport, value: 0))
        return self
    }

    /// A single-touch press: BTN_TOUCH down with a pressure.
    mutating func press(at ms: Double, _ pressure: Int32) { frame(at: ms, [(.key, .btnTouch, 1), (.absolute, .absPressure, pressure)]) }
    mutating func pressure(at ms: Double, _ pressure: Int32) { frame(at: ms, [(.absolute, .absPressure, pressure)]) }
    mutating func lift(at ms: Double) { frame(at: ms, [(.key, .btnTouch, 0), (.absolute, .absPressure, 0)]) }
}

extension ScalePipeline {
    /// Runs events through and returns everything emitted, including the final drain.
    mutating func run(_ events: [InputEvent], finish: Bool = true) -> [ScaleOutput] {
        var output: [ScaleOutput] = []
        for event in events { process(event, into: &output) }
        if finish { self.finish(into: &output) }
        return output
    }
}

extension [ScaleOutput] {
    var readings: [Reading] { compactMap { if case .reading(let r) = $0 { r } else { nil } } }
    var peaks: [Peak] { compactMap { if case .peak(let p) = $0 { p } else { nil } } }
}

func ms(_ value: Double) -> EventTime { EventTime(microseconds: Int64((value * 1000).rounded())) }
