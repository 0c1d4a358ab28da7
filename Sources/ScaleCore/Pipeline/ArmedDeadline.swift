/// What the live loop's one-shot throttle timer is armed for, kept beside the pipeline so
/// that the timer costs as few system calls as the deadlines allow: it is re-armed only when
/// the pipeline's next deadline changes (once per throttle window while a touch streams, not
/// once per frame), and when it fires, the deadline it was armed for is the time that has
/// come, so no clock is read (on a clocksource without a vDSO path, such as a VM's HPET,
/// every clock read is a system call).
///
/// With a slack, the timer rings that long after the deadline, like sd-event's accuracy
/// window: a reading is held only while frames come faster than the throttle's interval, so
/// while the touch keeps streaming the device's next frame comes within one interval of the
/// deadline and lets the held reading out on its own wake-up (`ScalePipeline.process`
/// advances to each frame's time first). The timer then never rings while a touch streams;
/// it is there for a stream that stops (the kernel sends nothing while the pressure stays
/// the same), whose last reading goes out at most `slack` after its window's end. Either way
/// it goes out stamped with the window's end, in the same order as in a replay: only when it
/// goes out changes, not what.
public struct ArmedDeadline: Sendable, Equatable {
    /// What the timer must be told.
    public enum Setting: Sendable, Equatable {
        /// Ring at this time: the deadline plus the slack.
        case arm(EventTime)
        case disarm
    }

    /// How long after a deadline the timer rings, in microseconds.
    public let slack: Int64
    /// The deadline the timer is armed for (it rings `slack` later); `nil` while it is not
    /// armed.
    public private(set) var deadline: EventTime?

    /// - Parameter slack: How long after each deadline the timer rings, in microseconds:
    ///   the throttle's interval for a live device; 0 rings at the deadline itself.
    public init(slack: Int64 = 0) {
        self.slack = max(slack, 0)
    }

    /// Follows the pipeline's next deadline.
    /// - Parameter next: `ScalePipeline.nextDeadline` after the latest events.
    /// - Returns: What to set the timer to, or `nil` when it is already right.
    public mutating func follow(_ next: EventTime?) -> Setting? {
        guard next != deadline else { return nil }
        deadline = next
        guard let next else { return .disarm }
        return .arm(next.adding(microseconds: slack))
    }

    /// The timer was read after epoll said it was readable.
    /// - Parameter expirations: What reading the timer gave: how many times it expired since
    ///   it was last read or armed. 0 when a re-arm in the same batch of ready descriptors
    ///   (the device handled first) cancelled the expiry that woke the loop.
    /// - Returns: The deadline, a time that has surely come, to advance the pipeline to (its
    ///   held reading was due then, and goes out stamped with it, as at any later time); `nil`
    ///   when nothing fired. The timer is then disarmed (it is one-shot).
    public mutating func fired(expirations: UInt64) -> EventTime? {
        guard expirations > 0, let due = deadline else { return nil }
        deadline = nil
        return due
    }

    /// The owner disarmed the timer itself (the device closed).
    public mutating func disarmed() { deadline = nil }
}
