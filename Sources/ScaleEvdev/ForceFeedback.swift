import CEvdev
import Glibc
import ScaleCore
import ScalePOSIX

/// The kinds of force-feedback effect the kernel knows (`FF_HAPTIC`, then `FF_RUMBLE` …
/// `FF_RAMP`). `FF_HAPTIC` is kernel 6.18's: an older kernel refuses its uploads (EINVAL).
package enum ForceFeedbackEffectType: UInt16, CaseIterable, Sendable {
    case haptic = 0x4f
    case rumble = 0x50, periodic = 0x51, constant = 0x52, spring = 0x53
    case friction = 0x54, damper = 0x55, inertia = 0x56, ramp = 0x57

    package var name: String { String(describing: self) }
}

/// What a device can do with force feedback.
package struct ForceFeedbackCapabilities: Hashable, Sendable {
    /// How many effects the device holds at once (`EVIOCGEFFECTS`); 0 when it has no FF.
    package var effectsCapacity: Int
    package var effectTypes: [ForceFeedbackEffectType]
    package var supportsGain: Bool
    package var supportsAutocenter: Bool

    package var canRumble: Bool { effectsCapacity > 0 && effectTypes.contains(.rumble) }
    /// The device declares a haptic actuator (a pressure pad's); which waveforms it plays
    /// only an upload tells.
    package var canHaptic: Bool { effectsCapacity > 0 && effectTypes.contains(.haptic) }
    /// It can give a PEAK's feedback one way or the other.
    package var canGiveFeedback: Bool { canRumble || canHaptic }
}

// In an extension, so that the type keeps its memberwise initializer (tests describe a
// device as the scan finds it without opening one).
extension ForceFeedbackCapabilities {
    /// Reads the capabilities of an open device.
    package init(of device: EvdevDevice) {
        let codes = device.description.supportedCodes[.forceFeedback] ?? BitSet()
        effectTypes = ForceFeedbackEffectType.allCases.filter { codes.contains(Int($0.rawValue)) }
        supportsGain = codes.contains(Int(FF_GAIN))
        supportsAutocenter = codes.contains(Int(FF_AUTOCENTER))
        var capacity: Int32 = 0
        effectsCapacity = codes.isEmpty || CEvdev_effects_capacity(device.descriptor.rawValue, &capacity) < 0 ? 0 : Int(capacity)
    }
}

/// Why force feedback failed, in words a user can act on.
package struct ForceFeedbackError: Error, Hashable, Sendable, CustomStringConvertible {
    package var path: String
    package var operation: String
    package var errno: Errno?
    package var explanation: String

    package init(path: String, operation: String, errno: Errno?, explanation: String) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.explanation = explanation
    }

    package var description: String {
        "\(path): \(operation) failed" + (errno.map { ": \($0)" } ?? "") + " (\(explanation))"
    }

    static func failed(_ operation: String, on path: String, errno: Errno) -> ForceFeedbackError {
        let explanation: String
        switch errno.rawValue {
        case EINVAL: explanation = "the device or its driver does not accept this effect"
        case ENOSPC: explanation = "all of the device's effect slots are taken; another program may be holding them"
        case EACCES, EPERM, EBADF: explanation = "the device is open read-only; force feedback needs write access (group 'input' or the forcescaled service)"
        case ENODEV: explanation = "the device is gone"
        case ENOSYS, ENOTTY: explanation = "the device has no force feedback"
        default: explanation = "the kernel refused it"
        }
        return ForceFeedbackError(path: path, operation: operation, errno: errno, explanation: explanation)
    }
}

/// How a device gives feedback: motors (`FF_RUMBLE`), or a pressure pad's actuator playing a
/// waveform (`FF_HAPTIC`).
package enum FeedbackKind: Hashable, Sendable {
    case rumble
    case haptic(HapticWaveform)

    /// The words for it: `rumble`, `haptic click`, `haptic buzz`.
    package var name: String {
        switch self {
        case .rumble: "rumble"
        case .haptic(let waveform): "haptic \(waveform.name)"
        }
    }
}

/// One feedback effect kept uploaded on a device, the equivalent of iOS's `prepare()`: the
/// effect sits in the device's memory, so firing it is a single `write()`, and updating it
/// reuses its id, so thousands of peaks never exhaust the device's slots. It is erased when
/// this object goes away; if the process dies instead, closing the fd makes the kernel erase it.
///
/// A device with `FF_HAPTIC` (a pressure pad) gets a haptic waveform, else one with
/// `FF_RUMBLE` a rumble. Which waveform the pad plays is learnt from the first upload: CLICK,
/// else BUZZ CONTINUOUS; a pad that refuses both has no haptic forcescale can use.
package final class RumbleEffect {
    package let device: EvdevDevice
    package private(set) var effectID: Int16 = -1
    /// What the effect is; for a haptic pad, the waveform it accepted (CLICK until the first
    /// upload says otherwise).
    package private(set) var kind: FeedbackKind
    /// A haptic waveform the pad accepted: later uploads try no other.
    private var waveformSettled = false

    /// - Throws: `ForceFeedbackError` when the device can neither rumble nor play haptics.
    package init(device: EvdevDevice) throws(ForceFeedbackError) {
        self.device = device
        let capabilities = ForceFeedbackCapabilities(of: device)
        if capabilities.canHaptic {
            kind = .haptic(.click)
        } else if capabilities.canRumble {
            kind = .rumble
        } else {
            throw ForceFeedbackError(path: device.path, operation: "rumble", errno: nil, explanation: "the device has no FF_RUMBLE or FF_HAPTIC effect")
        }
        guard device.isWritable else {
            throw ForceFeedbackError.failed("rumble", on: device.path, errno: Errno(rawValue: EACCES))
        }
    }

    deinit { erase() }

    /// Uploads a segment as the effect, or changes it in place when it is already uploaded.
    /// A rumble runs the motors at the segment's levels for its duration (always finite, so a
    /// lost stop cannot leave a motor running); a haptic effect plays the waveform once at the
    /// segment's strength (``HapticSegment/hapticIntensityPercent``).
    /// - Parameter segment: What to play.
    /// - Throws: `ForceFeedbackError`; on a haptic pad that accepts neither CLICK nor BUZZ
    ///   CONTINUOUS, one saying there is no haptic on this pad.
    package func upload(_ segment: HapticSegment) throws(ForceFeedbackError) {
        var effect = ff_effect()
        effect.id = effectID
        effect.replay.length = UInt16(clamping: max(1, segment.durationMilliseconds))
        switch kind {
        case .rumble:
            effect.type = UInt16(FF_RUMBLE)
            effect.u.rumble.strong_magnitude = segment.strongMagnitude
            effect.u.rumble.weak_magnitude = segment.weakMagnitude
            guard CEvdev_upload_effect(device.descriptor.rawValue, &effect) == 0 else {
                throw .failed("uploading the rumble effect", on: device.path, errno: .current)
            }
        case .haptic(let preferred):
            let candidates = waveformSettled ? [preferred] : HapticWaveform.allCases.filter { $0.rawValue >= preferred.rawValue }
            var refusal = Errno(rawValue: EINVAL)
            for waveform in candidates {
                CEvdev_set_haptic(&effect, waveform.usage, segment.hapticIntensityPercent)
                if CEvdev_upload_effect(device.descriptor.rawValue, &effect) == 0 {
                    kind = .haptic(waveform)
                    waveformSettled = true
                    effectID = effect.id
                    return
                }
                refusal = .current
                // Only "not this waveform" moves on to the next; anything else is the answer.
                guard refusal.rawValue == EINVAL else { break }
            }
            guard refusal.rawValue == EINVAL, !waveformSettled else {
                throw .failed("uploading the haptic effect", on: device.path, errno: refusal)
            }
            throw ForceFeedbackError(
                path: device.path, operation: "uploading the haptic effect", errno: refusal,
                explanation: "no haptic on this pad: it plays neither the CLICK nor the BUZZ CONTINUOUS waveform, or the kernel is older than 6.18, which brought FF_HAPTIC")
        }
        effectID = effect.id
    }

    /// Whether a play goes on until `stop()` (a haptic buzz); a rumble and a click end by
    /// themselves.
    package var playsUntilStopped: Bool {
        if case .haptic(let waveform) = kind { return waveform.playsUntilStopped }
        return false
    }

    /// Plays the uploaded effect once.
    package func play() throws(ForceFeedbackError) {
        do {
            try device.write(type: .forceFeedback, code: UInt16(bitPattern: effectID), value: 1)
        } catch {
            throw .failed("playing the \(kind.name) effect", on: device.path, errno: error)
        }
    }

    /// Stops the effect if it is playing.
    package func stop() throws(ForceFeedbackError) {
        do {
            try device.write(type: .forceFeedback, code: UInt16(bitPattern: effectID), value: 0)
        } catch {
            throw .failed("stopping the \(kind.name) effect", on: device.path, errno: error)
        }
    }

    /// Sets the device's overall strength, when it supports `FF_GAIN`.
    /// - Parameter fraction: 0…1 of full strength.
    package func setGain(_ fraction: Double) throws(ForceFeedbackError) {
        let value = Int32((min(1, max(0, fraction)) * 0xFFFF).rounded())
        do {
            try device.write(type: .forceFeedback, code: UInt16(FF_GAIN), value: value)
        } catch {
            throw .failed("setting the gain", on: device.path, errno: error)
        }
    }

    /// Removes the effect from the device; safe to call twice. A failure is ignored: the
    /// kernel erases what is left when the fd closes.
    package func erase() {
        try? remove()
    }

    /// Removes the effect from the device, saying when the kernel refused; the effect counts
    /// as gone either way (a second erase could only fail the same way).
    package func remove() throws(ForceFeedbackError) {
        guard effectID >= 0 else { return }
        let status = CEvdev_erase_effect(device.descriptor.rawValue, Int32(effectID))
        effectID = -1
        guard status == 0 else { throw .failed("erasing the \(kind.name) effect", on: device.path, errno: .current) }
    }
}

extension RumbleEffect {
    /// Plays a pattern segment by segment through this one effect slot, waiting out each
    /// segment and its pause.
    package func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        for segment in pattern.segments {
            try upload(segment)
            try play()
            let started = MonotonicClock.now()
            if playsUntilStopped {
                MonotonicClock.sleep(until: started + Int64(segment.durationMilliseconds) * 1000)
                try stop()
            }
            MonotonicClock.sleep(until: started + Int64(segment.durationMilliseconds + segment.pauseMilliseconds) * 1000)
        }
    }
}

/// Tries each kind of effect on a device, as fftest does, to show what really works.
package enum ForceFeedbackProbe {
    /// Which haptic waveform a device with `FF_HAPTIC` plays on a PEAK: the peak's effect is
    /// uploaded (CLICK, else BUZZ CONTINUOUS; never PRESS or RELEASE) and erased again. Only
    /// an upload can tell: evdev lists FF_HAPTIC, not the pad's waveforms.
    /// - Parameter path: The device's node; it is opened for writing and closed again.
    /// - Returns: The waveform, or why there is none (no haptic on this pad, no write access).
    package static func hapticWaveform(of path: String) -> Result<HapticWaveform, ForceFeedbackError> {
        do {
            let device = try EvdevDevice(path: path, wantsWrite: true)
            let effect = try RumbleEffect(device: device)
            try effect.upload(HapticPattern.peak.segments[0])
            defer { effect.erase() }
            guard case .haptic(let waveform) = effect.kind else {
                return .failure(ForceFeedbackError(path: path, operation: "haptic", errno: nil, explanation: "the device has no FF_HAPTIC effect"))
            }
            return .success(waveform)
        } catch let error as ForceFeedbackError {
            return .failure(error)
        } catch {
            return .failure(ForceFeedbackError(path: path, operation: "opening", errno: nil, explanation: "\(error)"))
        }
    }

    /// Uploads a small effect of `type` and erases it again.
    /// - Throws: `ForceFeedbackError` explaining a refusal in words.
    package static func tryEffect(_ type: ForceFeedbackEffectType, on device: EvdevDevice) throws(ForceFeedbackError) {
        var effect = ff_effect()
        effect.type = type.rawValue
        effect.id = -1
        effect.replay.length = 200
        switch type {
        case .haptic:
            // CLICK only: never PRESS or RELEASE (see HapticWaveform).
            CEvdev_set_haptic(&effect, HapticWaveform.click.usage, 50)
        case .rumble:
            effect.u.rumble.strong_magnitude = 0x8000
            effect.u.rumble.weak_magnitude = 0x8000
        case .periodic:
            effect.u.periodic.waveform = UInt16(FF_SINE)
            effect.u.periodic.period = 100
            effect.u.periodic.magnitude = 0x4000
        case .constant:
            effect.u.constant.level = 0x2000
        case .ramp:
            effect.u.ramp.start_level = 0x1000
            effect.u.ramp.end_level = 0x4000
        case .spring, .friction, .damper, .inertia:
            effect.u.condition.0.right_saturation = 0x7FFF
            effect.u.condition.0.left_saturation = 0x7FFF
            effect.u.condition.0.right_coeff = 0x2000
            effect.u.condition.0.left_coeff = 0x2000
            effect.u.condition.1 = effect.u.condition.0
        }
        guard CEvdev_upload_effect(device.descriptor.rawValue, &effect) == 0 else {
            throw .failed("uploading a \(type.name) effect", on: device.path, errno: .current)
        }
        _ = CEvdev_erase_effect(device.descriptor.rawValue, Int32(effect.id))
    }
}
