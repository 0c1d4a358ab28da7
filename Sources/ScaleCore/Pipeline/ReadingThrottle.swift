/// Lets at most one reading out per interval of event time without losing the newest:
/// a reading inside the window is held, replaced by newer ones, and goes out when the
/// window ends, stamped with that time (the trailing edge).
public struct ReadingThrottle: Sendable {
    public let interval: Int64
    private var lastEmission: EventTime?
    private var held: Reading?

    public init(interval: Int64) {
        self.interval = interval
    }

    /// When the held reading is due, or `nil` when nothing is held. The live loop arms its
    /// timer for this; replay checks it before each frame.
    public var deadline: EventTime? {
        guard held != nil, let last = lastEmission else { return nil }
        return last.adding(microseconds: interval)
    }

    /// The held reading if its window has ended by `time`, stamped with the window's end.
    public mutating func due(at time: EventTime) -> Reading? {
        guard let deadline, deadline <= time else { return nil }
        return emitHeld(at: deadline)
    }

    /// Offers a frame's reading.
    /// - Returns: The reading when it may go out now; `nil` when it is held instead.
    public mutating func offer(_ reading: Reading) -> Reading? {
        if let last = lastEmission, reading.time.microseconds - last.microseconds < interval {
            held = reading
            return nil
        }
        held = nil
        lastEmission = reading.time
        return reading
    }

    /// A release goes out at once, replaces whatever was held and restarts the window.
    public mutating func release(_ reading: Reading) -> Reading {
        held = nil
        lastEmission = reading.time
        return reading
    }

    /// Rewrites the held reading in place (when the gram model changes under it), so that
    /// what goes out at the window's end is never weighed by a model already replaced.
    public mutating func reviseHeld(_ change: (inout Reading) -> Void) {
        guard var reading = held else { return }
        change(&reading)
        held = reading
    }

    /// The held reading at the end of the input, stamped with its window's end.
    public mutating func drain() -> Reading? {
        guard let deadline else { return nil }
        return emitHeld(at: deadline)
    }

    private mutating func emitHeld(at time: EventTime) -> Reading? {
        guard var reading = held else { return nil }
        held = nil
        reading.time = time
        lastEmission = time
        return reading
    }
}
