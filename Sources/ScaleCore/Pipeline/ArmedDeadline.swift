/// What the live loop's one-shot throttle timer is armed for, kept beside the pipeline so
/// that the timer costs as few system calls as the deadlines allow: it is re-armed only when
/// the pipeline's next deadline changes (once per throttle window while a touch streams, not
/// once per frame), and when it fires, the deadline it was armed for is the time that has
/// come, so no clock is read (on a clocksource without a vDSO path, such as a VM's HPET,
/// every clock read is a system call).
public struct ArmedDeadline: Sendable, Equatable {
    /// What the timer must be told.
    public enum Setting: Sendable, Equatable {
        case arm(EventTime)
        case disarm
    }

    /// The deadline the timer is armed for; `nil` while it is not armed.
    public private(set) var deadline: EventTime?

    public init() {}

    /// Follows the pipeline's next deadline.
    /// - Parameter next: `ScalePipeline.nextDeadline` after the latest events.
    /// - Returns: What to set the timer to, or `nil` when it is already right.
    public mutating func follow(_ next: EventTime?) -> Setting? {
        guard next != deadline else { return nil }
        deadline = next
        return next.map(Setting.arm) ?? .disarm
    }

    /// The timer was read after epoll said it was readable.
    /// - Parameter expirations: What reading the timer gave: how many times it expired since
    ///   it was last read or armed. 0 when a re-arm in the same batch of ready descriptors
    ///   (the device handled first) cancelled the expiry that woke the loop.
    /// - Returns: The time that has surely come, to advance the pipeline to (its held
    ///   reading was due then, and goes out stamped with it, as at any later time); `nil`
    ///   when nothing fired. The timer is then disarmed (it is one-shot).
    public mutating func fired(expirations: UInt64) -> EventTime? {
        guard expirations > 0, let due = deadline else { return nil }
        deadline = nil
        return due
    }

    /// The owner disarmed the timer itself (the device closed).
    public mutating func disarmed() { deadline = nil }
}
