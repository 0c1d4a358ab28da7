/// What one frame (the events up to a `SYN_REPORT`) says about pressure.
public struct FrameSample: Hashable, Sendable {
    public var time: EventTime
    /// Active contacts; 0 means nothing touches (a release).
    public var contacts: Int
    /// The frame's pressure in device units, combined as the contact mode says.
    public var raw: Int32

    public init(time: EventTime, contacts: Int, raw: Int32) {
        self.time = time
        self.contacts = contacts
        self.raw = raw
    }
}

/// Follows touches through the event stream and reduces each frame to one pressure value.
public struct ContactTracker: Sendable {
    public let source: PressureSource
    public let mode: ContactMode

    // Multitouch state, one entry per slot.
    private var trackingIDs: [Int32]
    private var pressures: [Int32]
    /// When each slot's contact went down, as a counter: the smallest active one is the oldest.
    private var touchDownOrder: [UInt64]
    private var nextTouchDown: UInt64 = 0
    /// The slot that ABS_MT_* events apply to; nil after an out-of-range ABS_MT_SLOT.
    private var currentSlot: Int? = 0

    // Single-touch state.
    private var pressure: Int32
    private var touchButtonDown = false

    /// After `SYN_DROPPED` the kernel's rule is to discard everything up to and including
    /// the next `SYN_REPORT`.
    private var discardingUntilReport = false

    public init(source: PressureSource, mode: ContactMode) {
        self.source = source
        self.mode = mode
        let slots: Int
        if case .multitouch(_, let count) = source { slots = count } else { slots = 0 }
        trackingIDs = Array(repeating: -1, count: slots)
        pressures = Array(repeating: source.axis.minimum, count: slots)
        touchDownOrder = Array(repeating: 0, count: slots)
        pressure = source.axis.minimum
    }

    /// Stops discarding after a `SYN_DROPPED`: libevdev follows it with events that rebuild
    /// the device's state, and those are to be read, not thrown away.
    public mutating func acceptResynchronizedState() {
        discardingUntilReport = false
    }

    /// Takes one event.
    /// - Returns: The frame's sample when the event ends a frame, otherwise `nil`.
    public mutating func consume(_ event: InputEvent) -> FrameSample? {
        switch event.type {
        case .synchronization:
            if event.code == .synDropped {
                discardingUntilReport = true
                return nil
            }
            guard event.code == .synReport else { return nil }
            if discardingUntilReport {
                discardingUntilReport = false
                return nil
            }
            return sample(at: event.time)
        case _ where discardingUntilReport:
            return nil
        case .absolute:
            absolute(event.code, event.value)
        case .key where event.code == .btnTouch:
            touchButtonDown = event.value != 0
        default:
            break
        }
        return nil
    }

    private mutating func absolute(_ code: EventCode, _ value: Int32) {
        switch source {
        case .singleTouch:
            if code == .absPressure { pressure = value }
        case .multitouch:
            switch code {
            case .absMTSlot:
                currentSlot = value >= 0 && Int(value) < trackingIDs.count ? Int(value) : nil
            case .absMTTrackingID:
                guard let slot = currentSlot else { return }
                // A new id in a slot is a new contact even without a -1 in between.
                if value >= 0, trackingIDs[slot] != value {
                    touchDownOrder[slot] = nextTouchDown
                    nextTouchDown += 1
                }
                trackingIDs[slot] = value < 0 ? -1 : value
            case .absMTPressure:
                guard let slot = currentSlot else { return }
                pressures[slot] = value
            default:
                break
            }
        }
    }

    private func sample(at time: EventTime) -> FrameSample {
        let minimum = source.axis.minimum
        switch source {
        case .singleTouch(_, let hasTouchButton):
            let touching = hasTouchButton ? touchButtonDown : pressure > minimum
            return FrameSample(time: time, contacts: touching ? 1 : 0, raw: touching ? pressure : minimum)
        case .multitouch:
            var contacts = 0
            var oldestOrder = UInt64.max
            var primary = minimum
            var strongest = Int32.min
            var excessSum: Int64 = 0
            for slot in trackingIDs.indices where trackingIDs[slot] >= 0 {
                contacts += 1
                let value = pressures[slot]
                if touchDownOrder[slot] < oldestOrder {
                    oldestOrder = touchDownOrder[slot]
                    primary = value
                }
                strongest = Swift.max(strongest, value)
                excessSum += Swift.max(0, Int64(value) - Int64(minimum))
            }
            guard contacts > 0 else { return FrameSample(time: time, contacts: 0, raw: minimum) }
            let raw: Int32
            switch mode {
            case .primary: raw = primary
            case .max: raw = strongest
            case .sum: raw = Int32(clamping: Int64(minimum) + excessSum)
            }
            return FrameSample(time: time, contacts: contacts, raw: raw)
        }
    }
}
