/// A point in event time, kept in whole microseconds as the kernel's `struct timeval` has it,
/// so that replayed and live timestamps compare exactly.
public struct EventTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    public init(seconds: Int64, microseconds: Int64) {
        self.microseconds = seconds * 1_000_000 + microseconds
    }

    public static func < (lhs: EventTime, rhs: EventTime) -> Bool { lhs.microseconds < rhs.microseconds }

    /// `self` moved by a duration in microseconds.
    public func adding(microseconds delta: Int64) -> EventTime {
        EventTime(microseconds: microseconds &+ delta)
    }

    /// Seconds with six decimals, as evemu and the protocol write it: `1382570965.747302`.
    public var description: String {
        let magnitude = microseconds.magnitude
        let fraction = String(magnitude % 1_000_000)
        return (microseconds < 0 ? "-" : "") + String(magnitude / 1_000_000) + "."
            + String(repeating: "0", count: 6 - fraction.count) + fraction
    }
}

/// One evdev event: what `libevdev_next_event` returns and what an evemu `E:` line holds.
public struct InputEvent: Hashable, Sendable {
    public var time: EventTime
    public var type: EventType
    public var code: EventCode
    public var value: Int32

    public init(time: EventTime, type: EventType, code: EventCode, value: Int32) {
        self.time = time
        self.type = type
        self.code = code
        self.value = value
    }

    public var isFrameEnd: Bool { type == .synchronization && code == .synReport }
}
