/// What became of the rumble a PEAK cues: played (with how long it took to start), or why
/// none played.
///
/// The latency runs from the event time of the frame that reached the threshold to the
/// return of the `write` that starts the effect (the kernel took it), on the clock of the
/// event times: `CLOCK_MONOTONIC` for live devices, which is the clock forcescale asks the
/// kernel to stamp their events with. It is measured where the write is made (ScaleEvdev);
/// this module only carries and counts it. A device's own "playing" report (`EV_FF_STATUS`)
/// is not passed on to evdev readers by the kernel's input core, so the write's return is
/// the last moment forcescale can see.
public enum RumbleOutcome: Hashable, Sendable {
    /// The play was written; the latency in microseconds.
    case played(latencyMicroseconds: Int64)
    /// The play's `write` failed with this errno.
    case failed(errno: Int32)
    /// Rumble is on, but no device can rumble (none has `FF_RUMBLE`, or it was lost).
    case unavailable
    /// Rumble is turned off (`rumble off`, `--no-rumble`).
    case off

    /// The name PEAK's `rumble` carries: `played`, `failed`, `unavailable`, `off`.
    public var name: String {
        switch self {
        case .played: "played"
        case .failed: "failed"
        case .unavailable: "unavailable"
        case .off: "off"
        }
    }

    /// The latency in microseconds, for a rumble that played.
    public var latencyMicroseconds: Int64? {
        guard case .played(let latency) = self else { return nil }
        return latency
    }

    /// The latency in seconds, for a rumble that played.
    public var latencySeconds: Double? { latencyMicroseconds.map { Double($0) / 1e6 } }

    /// The errno of a play that failed.
    public var errno: Int32? {
        guard case .failed(let errno) = self else { return nil }
        return errno
    }

    /// An outcome from its name and fields, as a PEAK line or the log holds them.
    /// - Parameters:
    ///   - name: `played`, `failed`, `unavailable` or `off`.
    ///   - latencyMicroseconds: The latency of one that played.
    ///   - errno: The errno of one that failed.
    /// - Returns: `nil` for an unknown name (a later daemon's), or a name without its field.
    public init?(name: String, latencyMicroseconds: Int64?, errno: Int32?) {
        switch name {
        case "played":
            guard let latencyMicroseconds else { return nil }
            self = .played(latencyMicroseconds: latencyMicroseconds)
        case "failed":
            guard let errno else { return nil }
            self = .failed(errno: errno)
        case "unavailable": self = .unavailable
        case "off": self = .off
        default: return nil
        }
    }
}
