// A pressure pad's actuator (kernel 6.18's FF_HAPTIC) plays waveforms of the HID haptics
// page instead of running motors: the pad lists which it has, and an effect names one with an
// intensity in percent. forcescale's patterns map onto them: each segment is one waveform at
// the segment's strength, its rhythm kept by the pauses.

extension EventCode {
    /// The corresponding C constant is `FF_HAPTIC` (kernel 6.18; Debian 12's headers lack it,
    /// hence the literal). An `EV_FF` code: the device plays ``HapticWaveform``s.
    public static let ffHaptic = EventCode(rawValue: 0x4f)
}

/// The waveforms of the HID haptics page (0x0E) that forcescale plays, in its order of
/// preference: a click is what a peak should feel like, and a buzz is the fallback for a pad
/// that lists no click.
///
/// PRESS (0x1006) and RELEASE (0x1007) are left out on purpose, so no code can name them:
/// uploading either switches the pad to host-controlled mode, where it stops clicking by
/// itself when pressed, and the kernel's erase does not switch it back. A scale that uploaded
/// them would leave the person's touchpad without clicks until the next reboot.
public enum HapticWaveform: UInt16, CaseIterable, Hashable, Sendable {
    /// `WAVEFORM_CLICK`: one short click, over by itself.
    case click = 0x1003
    /// `WAVEFORM_BUZZ_CONTINUOUS`: a buzz that lasts until it is stopped (or until the pad's
    /// own cutoff time), so forcescale stops it when the segment ends.
    case buzzContinuous = 0x1004

    /// The name people see (`devices`, STATUS, `rumble --test`): `click`, `buzz`.
    public var name: String {
        switch self {
        case .click: "click"
        case .buzzContinuous: "buzz"
        }
    }

    /// Whether the waveform goes on until it is stopped.
    public var playsUntilStopped: Bool { self == .buzzContinuous }

    /// The HID usage within the haptics page, as the kernel's `ff_haptic_effect.hid_usage`.
    public var usage: UInt16 { rawValue }
}

extension HapticSegment {
    /// The segment's strength on a haptic actuator, in percent as FF_HAPTIC's `intensity`:
    /// the stronger of the two motor levels (an actuator has one strength, and a segment is
    /// felt as strong as its stronger motor), rounded, at least 1 for a segment that plays at
    /// all so that a faint tap is not silence.
    public var hapticIntensityPercent: UInt16 {
        let level = Swift.max(Self.clampedUnit(strong), Self.clampedUnit(weak))
        guard level > 0 else { return 0 }
        return Swift.max(1, UInt16((level * 100).rounded()))
    }
}
