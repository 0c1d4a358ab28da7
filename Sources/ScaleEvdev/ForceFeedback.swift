import CEvdev
import Glibc
import ScaleCore
import ScalePOSIX

/// The kinds of force-feedback effect the kernel knows (`FF_RUMBLE` … `FF_RAMP`).
package enum ForceFeedbackEffectType: UInt16, CaseIterable, Sendable {
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

/// One rumble effect kept uploaded on a device, the equivalent of iOS's `prepare()`: the
/// effect sits in the device's memory, so firing it is a single `write()`, and updating it
/// reuses its id, so thousands of peaks never exhaust the device's slots. It is erased when
/// this object goes away; if the process dies instead, closing the fd makes the kernel erase it.
package final class RumbleEffect {
    package let device: EvdevDevice
    package private(set) var effectID: Int16 = -1

    /// - Throws: `ForceFeedbackError` when the device cannot rumble.
    package init(device: EvdevDevice) throws(ForceFeedbackError) {
        self.device = device
        let capabilities = ForceFeedbackCapabilities(of: device)
        guard capabilities.canRumble else {
            throw ForceFeedbackError(path: device.path, operation: "rumble", errno: nil, explanation: "the device has no FF_RUMBLE effect")
        }
        guard device.isWritable else {
            throw ForceFeedbackError.failed("rumble", on: device.path, errno: Errno(rawValue: EACCES))
        }
    }

    deinit { erase() }

    /// Uploads the effect, or changes it in place when it is already uploaded.
    /// - Parameters:
    ///   - strong: The heavy, low-frequency motor, 0…0xFFFF.
    ///   - weak: The light, high-frequency motor, 0…0xFFFF.
    ///   - milliseconds: How long one play lasts; always finite, so a lost stop cannot
    ///     leave a motor running.
    package func upload(strong: UInt16, weak: UInt16, milliseconds: Int) throws(ForceFeedbackError) {
        var effect = ff_effect()
        effect.type = UInt16(FF_RUMBLE)
        effect.id = effectID
        effect.replay.length = UInt16(clamping: max(1, milliseconds))
        effect.u.rumble.strong_magnitude = strong
        effect.u.rumble.weak_magnitude = weak
        guard CEvdev_upload_effect(device.descriptor.rawValue, &effect) == 0 else {
            throw .failed("uploading the rumble effect", on: device.path, errno: .current)
        }
        effectID = effect.id
    }

    /// Plays the uploaded effect once.
    package func play() throws(ForceFeedbackError) {
        do {
            try device.write(type: .forceFeedback, code: UInt16(bitPattern: effectID), value: 1)
        } catch {
            throw .failed("playing the rumble effect", on: device.path, errno: error)
        }
    }

    /// Stops the effect if it is playing.
    package func stop() throws(ForceFeedbackError) {
        do {
            try device.write(type: .forceFeedback, code: UInt16(bitPattern: effectID), value: 0)
        } catch {
            throw .failed("stopping the rumble effect", on: device.path, errno: error)
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
        guard status == 0 else { throw .failed("erasing the rumble effect", on: device.path, errno: .current) }
    }
}

extension RumbleEffect {
    /// Plays a pattern segment by segment through this one effect slot, waiting out each
    /// segment and its pause.
    package func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        for segment in pattern.segments {
            try upload(strong: segment.strongMagnitude, weak: segment.weakMagnitude, milliseconds: segment.durationMilliseconds)
            try play()
            MonotonicClock.sleep(until: MonotonicClock.now() + Int64(segment.durationMilliseconds + segment.pauseMilliseconds) * 1000)
        }
    }
}

/// Tries each kind of effect on a device, as fftest does, to show what really works.
package enum ForceFeedbackProbe {
    /// Uploads a small effect of `type` and erases it again.
    /// - Throws: `ForceFeedbackError` explaining a refusal in words.
    package static func tryEffect(_ type: ForceFeedbackEffectType, on device: EvdevDevice) throws(ForceFeedbackError) {
        var effect = ff_effect()
        effect.type = type.rawValue
        effect.id = -1
        effect.replay.length = 200
        switch type {
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
