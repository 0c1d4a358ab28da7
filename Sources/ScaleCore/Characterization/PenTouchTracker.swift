/// One weight as a pen measured it: the steady pressure once the weight rested on the tip
/// after landing (pressing), and, when the person then pressed further and let go, the steady
/// pressure it came back to (releasing). The two differ by the pen's hysteresis.
public struct PenTouch: Hashable, Sendable {
    /// The first steady window after the landing; `nil` when the touch never rested before
    /// a push or before it was lifted.
    public var pressing: SettledPressure?
    /// The steady window after a push and its release; `nil` when none was made.
    public var releasing: SettledPressure?
    /// Whether the pressing window reached the top of the axis: the weight is at or past
    /// the pen's full scale.
    public var saturated: Bool
    /// The pen read nothing steady until it was pushed, or read only while pushed: the
    /// weight alone did not register (the push did, and hysteresis may have held it).
    public var pushedBeforeRest: Bool

    public init(pressing: SettledPressure?, releasing: SettledPressure? = nil, saturated: Bool = false, pushedBeforeRest: Bool = false) {
        self.pressing = pressing
        self.releasing = releasing
        self.saturated = saturated
        self.pushedBeforeRest = pushedBeforeRest
    }
}

/// Follows the readings of a pen carrying weights one touch at a time, and takes from each
/// touch its pressing and releasing pressure (``PenTouch``). The same rules serve a recording
/// and a live pen: it is fed (time, raw, touching) and never reads a clock.
///
/// - Pressing: the first window of the touch that is steady for the sensor throughout
///   (``StabilityDetector``'s `steadyThroughout`): a landing's overshoot and its sinking tail
///   are over by then.
/// - A touch pushed before it first held steady has no pressing pressure: the first steady
///   window after a push is a releasing one (hysteresis holds it higher, and can keep a
///   weight below the activation force registered). A push here is more than
///   ``pushedBeforeRest`` of event time spent above that window by a push's height; a
///   landing's overshoot is over sooner.
/// - The kernel sends nothing while a value stays, so a weight resting without noise (or
///   held at the top of the range) arrives as one reading and then silence. The time until
///   the next reading (or ``advance(to:)``) is that value held: it is fed to the stability
///   rules every ``heldStep``, as the pen would have reported it.
/// - A touch ends when the pen has read nothing for ``liftGap`` of event time: a weight that
///   barely registers reads 0 now and then through its noise (the pen reports no touch for a
///   frame), and those frames are part of the same resting weight. They count in its windows
///   as 0, what the pen reported.
/// - Releasing: after pressing was taken, the pressure must first rise above it by a push
///   (``pushFraction`` of the axis or as much again as it reads, at least ``pushMinimum``
///   raw units), then come back down
///   at least halfway and hold steady throughout a window again. A touch that is pushed and
///   held high gives no releasing pressure; nor does one lifted before it settled back.
public struct PenTouchTracker: Sendable {
    /// What a reading changed.
    public enum Event: Hashable, Sendable {
        /// The weight rests, steady: its pressing pressure.
        case pressing(SettledPressure)
        /// The weight rests again after a push: its releasing pressure.
        case releasing(SettledPressure)
        /// The touch ended. `nil` for a blip that read for less than the stability window (a
        /// landing that barely registered): not a weight placed.
        case ended(PenTouch?)
    }

    /// How far a push must rise above the pressing pressure, as a fraction of the axis.
    public static let pushFraction = 0.03
    /// The least rise a push needs, in raw units.
    public static let pushMinimum = 8.0

    /// How long a touch may stay a push's height above its first steady window before it, and
    /// that window still count as pressing (microseconds).
    public static let pushedBeforeRest: Int64 = 300_000
    /// The most readings kept from before a touch's first steady window.
    static let preRestLimit = 4096

    /// How often a held value is fed to the stability rules while nothing arrives.
    public static let heldStep: Int64 = 50_000

    /// How long the pen must read nothing for a touch to end, in microseconds.
    public static let liftGap: Int64 = 250_000

    public let axis: ClosedRange<Int32>
    private var detector: StabilityDetector
    private var touching = false
    /// When the pen last began reading nothing during a touch.
    private var silentSince: Int64?
    private var pressing: SettledPressure?
    private var saturated = false
    private var releasing: SettledPressure?
    private var highestSincePressing: Int32 = 0
    /// The readings of the touch before pressing was taken, oldest first (at most
    /// ``preRestLimit``), to tell a push from a landing.
    private var preRest: [(time: Int64, raw: Int32)] = []
    /// The touch was pushed before it held steady: no pressing pressure can come from it.
    private var pushedFirst = false
    /// When the touch first and last read something: it is a weight placed once those are a
    /// stability window apart.
    private var firstRead: Int64?
    private var lastRead: Int64 = 0
    /// The highest raw the touch read.
    private var highest: Int32 = 0
    /// The last reading given, which the pen holds until the next.
    private var held: (time: Int64, raw: Int32)?

    /// - Parameters:
    ///   - axis: The pressure axis's range.
    ///   - fuzz: The axis's fuzz.
    ///   - window: The stability window in microseconds (half a second, as everywhere else).
    public init(axis: ClosedRange<Int32>, fuzz: Int32 = 0, window: Int64 = 500_000) {
        self.axis = axis
        detector = StabilityDetector(window: window, fuzz: fuzz, axisSpan: Int32(clamping: Int64(axis.upperBound) - Int64(axis.lowerBound)))
    }

    /// Whether a touch is in progress.
    public var isTouching: Bool { touching }

    /// Adds a reading.
    /// - Parameters:
    ///   - time: The reading's event time.
    ///   - raw: Its raw pressure.
    ///   - touching: Whether the pen touches (a contact down); a pressure at the axis minimum
    ///     counts as no touch too.
    /// - Returns: What the reading changed, oldest first (the held value's time comes first).
    public mutating func add(time: EventTime, raw: Int32, touching contact: Bool) -> [Event] {
        let events = advance(to: time)
        let reads = contact && raw > axis.lowerBound
        guard reads else {
            held = nil
            guard touching else { return events }
            if silentSince == nil { silentSince = time.microseconds }
            return events + [update(time: time, raw: axis.lowerBound)].compactMap { $0 }
        }
        silentSince = nil
        if firstRead == nil { firstRead = time.microseconds }
        lastRead = time.microseconds
        highest = Swift.max(highest, raw)
        held = (time.microseconds, raw)
        return events + [update(time: time, raw: raw)].compactMap { $0 }
    }

    /// Lets time pass without a reading: the pen holds its last one (see the type's comment),
    /// or a touch silent for ``liftGap`` ends.
    /// - Returns: What that changed, oldest first.
    public mutating func advance(to time: EventTime) -> [Event] {
        if touching, let silent = silentSince, time.microseconds - silent >= Self.liftGap { return [endTouch()] }
        guard touching, let last = held, time.microseconds > last.time + Self.heldStep else { return [] }
        var events: [Event] = []
        // Only the last two windows matter to the rules; older held steps change nothing.
        var step = Swift.max(last.time + Self.heldStep, time.microseconds - 2 * detector.window)
        while step < time.microseconds {
            lastRead = step
            if let event = update(time: EventTime(microseconds: step), raw: last.raw) { events.append(event) }
            step += Self.heldStep
        }
        held = (step - Self.heldStep, last.raw)
        return events
    }

    /// Ends a touch still in progress when the input ends.
    public mutating func finish() -> Event? {
        touching ? endTouch() : nil
    }

    private mutating func update(time: EventTime, raw: Int32) -> Event? {
        if !touching {
            touching = true
            detector.reset()
        }
        if pressing == nil, !pushedFirst {
            if preRest.count == Self.preRestLimit { preRest.removeFirst(Self.preRestLimit / 2) }
            preRest.append((time.microseconds, raw))
        }
        guard let window = detector.update(time: time, raw: raw) else { return nil }
        guard let pressed = pressing else {
            guard window.steadyThroughout, !pushedFirst else { return nil }
            if timeAbove(window.pressure.mean + pushHeight(above: window.pressure.mean)) >= Self.pushedBeforeRest {
                pushedFirst = true
                preRest = []
                return nil
            }
            preRest = []
            pressing = window.pressure
            saturated = window.highest >= axis.upperBound
            highestSincePressing = raw
            return .pressing(window.pressure)
        }
        guard releasing == nil else { return nil }
        highestSincePressing = Swift.max(highestSincePressing, raw)
        let push = Double(highestSincePressing) - pressed.mean
        guard push >= pushHeight(above: pressed.mean), window.steadyThroughout,
              window.pressure.mean <= pressed.mean + push / 2 else { return nil }
        releasing = window.pressure
        return .releasing(window.pressure)
    }

    /// How far above a resting pressure a push reaches at least: ``pushFraction`` of the
    /// range, or as much again as the rest reads where that is less (where a pen's response
    /// starts flat, a push adds little), and never less than ``pushMinimum``.
    private func pushHeight(above resting: Double) -> Double {
        let span = Double(Int64(axis.upperBound) - Int64(axis.lowerBound))
        return Swift.max(Self.pushMinimum, Swift.min(Self.pushFraction * span, resting - Double(axis.lowerBound)))
    }

    /// The event time the kept readings spent above `level`.
    private func timeAbove(_ level: Double) -> Int64 {
        var total: Int64 = 0
        for (reading, next) in zip(preRest, preRest.dropFirst()) where Double(reading.raw) > level {
            total += next.time - reading.time
        }
        return total
    }

    private mutating func endTouch() -> Event {
        var touch: PenTouch?
        if let first = firstRead, lastRead - first >= detector.window {
            // Never at rest but pushed a push's height: the weight alone did not register.
            let pushed = pushedFirst || pressing == nil && Double(highest) - Double(axis.lowerBound) >= pushHeight(above: Double(axis.lowerBound))
            touch = PenTouch(pressing: pressing, releasing: releasing, saturated: saturated, pushedBeforeRest: pushed)
        }
        touching = false
        silentSince = nil
        preRest = []
        pushedFirst = false
        firstRead = nil
        highest = 0
        held = nil
        pressing = nil
        releasing = nil
        saturated = false
        return .ended(touch)
    }
}
