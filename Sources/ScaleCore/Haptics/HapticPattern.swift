// The feedback styles iOS users know (UIImpactFeedbackGenerator, UISelectionFeedbackGenerator,
// UINotificationFeedbackGenerator), expressed as Linux FF_RUMBLE effects.
//
// An FF_RUMBLE effect drives two motors: the strong one is a large, slow eccentric mass
// (low frequency, felt as a heavy thud) and the weak one a small, fast one (high frequency,
// felt as a light buzz or click). Each gets a magnitude 0…0xFFFF, and the effect plays for
// `replay.length` milliseconds. A pattern here is a sequence of such effects with pauses
// between them; playing it (uploading, timing the pauses) belongs to ScaleEvdev.

extension EventCode {
    /// The corresponding C constant is `FF_RUMBLE`. An `EV_FF` code: a device that lists it
    /// among its force-feedback capabilities can play ``HapticPattern``s.
    public static let ffRumble = EventCode(rawValue: 0x50)
    /// The corresponding C constant is `FF_GAIN`. An `EV_FF` code: writing it scales every
    /// effect the device plays (0…0xFFFF).
    public static let ffGain = EventCode(rawValue: 0x60)
}

/// One rumble: how hard each motor runs, for how long, and how long to stay still afterwards.
public struct HapticSegment: Hashable, Sendable {
    /// The strong (low-frequency, heavy) motor, 0…1.
    public var strong: Double
    /// The weak (high-frequency, light) motor, 0…1.
    public var weak: Double
    /// How long the motors run, in milliseconds; the effect's `replay.length`.
    public var durationMilliseconds: Int
    /// How long to wait after this segment before the next one starts, in milliseconds.
    public var pauseMilliseconds: Int

    /// The longest segment this module describes. The kernel treats a `replay.length` of 0
    /// as "play forever", so every segment has a finite, positive duration, and a second is
    /// far beyond any feedback tap.
    public static let maximumDurationMilliseconds = 1000

    /// Creates a segment.
    /// - Parameters:
    ///   - strong: The strong motor's level, 0…1.
    ///   - weak: The weak motor's level, 0…1.
    ///   - durationMilliseconds: How long the motors run.
    ///   - pauseMilliseconds: The silence after this segment; 0 for the last one.
    public init(strong: Double, weak: Double, durationMilliseconds: Int, pauseMilliseconds: Int = 0) {
        self.strong = strong
        self.weak = weak
        self.durationMilliseconds = durationMilliseconds
        self.pauseMilliseconds = pauseMilliseconds
    }

    /// The strong motor's level as the kernel's `strong_magnitude` (0…0xFFFF), rounded and
    /// clamped.
    public var strongMagnitude: UInt16 { Self.magnitude(strong) }

    /// The weak motor's level as the kernel's `weak_magnitude` (0…0xFFFF), rounded and clamped.
    public var weakMagnitude: UInt16 { Self.magnitude(weak) }

    /// Converts a 0…1 level to a u16 magnitude.
    /// - Parameter level: The level; values outside 0…1 are clamped, NaN counts as 0 so a
    ///   bad computation upstream gives silence rather than a trap.
    /// - Returns: The magnitude, 0…0xFFFF.
    static func magnitude(_ level: Double) -> UInt16 {
        UInt16((clampedUnit(level) * Double(UInt16.max)).rounded())
    }

    /// Clamps to 0…1, with NaN as 0.
    /// - Parameter value: Any level or intensity.
    /// - Returns: The value within 0…1.
    static func clampedUnit(_ value: Double) -> Double {
        guard value > 0 else { return 0 }  // `> 0` is false for NaN too
        return min(value, 1)
    }
}

/// A named sequence of rumbles, such as `impact-heavy` or `success`.
public struct HapticPattern: Hashable, Sendable {
    /// The name used on the command line and in configuration (`impact-light`, `error`).
    public var name: String
    /// One line for help text: what the pattern is and when iOS uses it.
    public var summary: String
    /// The rumbles in the order they play.
    public var segments: [HapticSegment]

    /// Creates a pattern.
    /// - Parameters:
    ///   - name: The pattern's name.
    ///   - summary: One line describing it.
    ///   - segments: The rumbles, in order.
    public init(name: String, summary: String, segments: [HapticSegment]) {
        self.name = name
        self.summary = summary
        self.segments = segments
    }

    /// The same pattern played softer, like the `intensity` of
    /// `UIImpactFeedbackGenerator.impactOccurred(intensity:)`.
    /// - Parameter intensity: 0…1; values outside are clamped (NaN counts as 0).
    /// - Returns: The pattern with both motor levels of every segment multiplied by the
    ///   intensity; durations and pauses are unchanged, so the rhythm stays recognisable.
    public func scaled(intensity: Double) -> HapticPattern {
        let factor = HapticSegment.clampedUnit(intensity)
        var result = self
        result.segments = segments.map { segment in
            var scaled = segment
            scaled.strong = HapticSegment.clampedUnit(segment.strong) * factor
            scaled.weak = HapticSegment.clampedUnit(segment.weak) * factor
            return scaled
        }
        return result
    }

    /// How long the pattern takes from the first rumble to the end of the last segment's
    /// pause, in milliseconds.
    public var totalMilliseconds: Int {
        segments.reduce(0) { $0 + $1.durationMilliseconds + $1.pauseMilliseconds }
    }

    /// Finds a pattern by name.
    /// - Parameter name: A name from ``all``, such as `impact-medium`; matched exactly.
    /// - Returns: The pattern, or `nil` when no pattern has that name.
    public static func named(_ name: String) -> HapticPattern? {
        all.first { $0.name == name }
    }

    /// Every pattern: the five impact styles, selection, then the three notifications,
    /// in the order iOS documents them.
    public static let all: [HapticPattern] = [
        impactLight, impactMedium, impactHeavy, impactSoft, impactRigid,
        selection, success, warning, error,
    ]

    /// What fires on a peak. A peak is the press crossing its threshold, a single firm
    /// event, so it gets the firmest single impact: `impact-heavy`. A notification pattern
    /// would be wrong here, because its multiple pulses would read as "something went wrong
    /// or right" rather than "you pressed hard".
    public static let peak: HapticPattern = impactHeavy

    // MARK: The patterns
    //
    // Phone actuators are linear resonators that stop within a few milliseconds; rumble
    // motors spin up and down over roughly 10–30 ms. So durations below ~10 ms are barely
    // felt, and the pulses of multi-pulse patterns need pauses of tens of milliseconds to
    // feel separate rather than merging into one buzz.

    /// A small, light tap: the weak motor alone, because the strong motor's low-frequency
    /// thud is exactly what "light" should lack; 20 ms is about the shortest the small motor
    /// is clearly felt.
    public static let impactLight = HapticPattern(
        name: "impact-light",
        summary: "a small, light tap (UIImpactFeedbackGenerator .light)",
        segments: [HapticSegment(strong: 0, weak: 0.6, durationMilliseconds: 20)])

    /// A moderate tap: both motors at half, a little longer than light, so some of the heavy
    /// motor's body comes through.
    public static let impactMedium = HapticPattern(
        name: "impact-medium",
        summary: "a moderate tap (UIImpactFeedbackGenerator .medium)",
        segments: [HapticSegment(strong: 0.5, weak: 0.5, durationMilliseconds: 30)])

    /// A heavy knock: the strong motor at full for 45 ms, long enough for the large mass to
    /// reach speed; a little of the weak motor sharpens its start.
    public static let impactHeavy = HapticPattern(
        name: "impact-heavy",
        summary: "a heavy knock (UIImpactFeedbackGenerator .heavy)",
        segments: [HapticSegment(strong: 1, weak: 0.3, durationMilliseconds: 45)])

    /// A soft, cushioned bump: longer (70 ms) but gentle, mostly the weak motor, so it is
    /// felt as a dull swell rather than a hit.
    public static let impactSoft = HapticPattern(
        name: "impact-soft",
        summary: "a soft, cushioned bump (UIImpactFeedbackGenerator .soft)",
        segments: [HapticSegment(strong: 0.2, weak: 0.5, durationMilliseconds: 70)])

    /// A hard, crisp click: very short (12 ms) with the weak motor at full, because a crisp
    /// edge comes from the fast motor, and a strong kick that ends before it can swell.
    public static let impactRigid = HapticPattern(
        name: "impact-rigid",
        summary: "a hard, crisp click (UIImpactFeedbackGenerator .rigid)",
        segments: [HapticSegment(strong: 0.7, weak: 1, durationMilliseconds: 12)])

    /// The tick of a picker wheel: a tiny 10 ms pulse of the weak motor, meant to be played
    /// many times in a row without becoming tiring.
    public static let selection = HapticPattern(
        name: "selection",
        summary: "a faint tick, as when a picker moves (UISelectionFeedbackGenerator)",
        segments: [HapticSegment(strong: 0, weak: 0.4, durationMilliseconds: 10)])

    /// Two rising pulses, "da-DUM": a light pulse, then a firmer one, so it ends on a
    /// confident note.
    public static let success = HapticPattern(
        name: "success",
        summary: "two rising pulses: a task succeeded (UINotificationFeedbackGenerator .success)",
        segments: [
            HapticSegment(strong: 0.2, weak: 0.5, durationMilliseconds: 30, pauseMilliseconds: 70),
            HapticSegment(strong: 0.8, weak: 0.7, durationMilliseconds: 45),
        ])

    /// Two even, firm pulses with a longer gap (150 ms) than success, which makes it read as
    /// a hesitant "uh-oh" rather than a flourish.
    public static let warning = HapticPattern(
        name: "warning",
        summary: "two pulses with a longer gap: a task needs attention (UINotificationFeedbackGenerator .warning)",
        segments: [
            HapticSegment(strong: 0.7, weak: 0.5, durationMilliseconds: 40, pauseMilliseconds: 150),
            HapticSegment(strong: 0.6, weak: 0.5, durationMilliseconds: 40),
        ])

    /// Three quick, strong pulses: the insistent buzz of a failure. The pauses (50 ms) are
    /// just long enough for the strong motor to slow down, so the pulses stay distinct.
    public static let error = HapticPattern(
        name: "error",
        summary: "three quick, strong pulses: a task failed (UINotificationFeedbackGenerator .error)",
        segments: [
            HapticSegment(strong: 1, weak: 0.6, durationMilliseconds: 35, pauseMilliseconds: 50),
            HapticSegment(strong: 1, weak: 0.6, durationMilliseconds: 35, pauseMilliseconds: 50),
            HapticSegment(strong: 1, weak: 0.6, durationMilliseconds: 35),
        ])
}
