import Glibc

/// `CLOCK_MONOTONIC` in microseconds, for pacing replays: unaffected by changes of the
/// wall clock.
public enum MonotonicClock {
    public static func now() -> Int64 {
        now(on: CLOCK_MONOTONIC)
    }

    /// Any clock in microseconds: the clock an input device stamps its events with
    /// (`EvdevDevice.eventClock`), to compare a moment with an event time.
    public static func now(on clock: clockid_t) -> Int64 {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000
    }

    /// Sleeps until the clock reaches `deadline` (microseconds), resuming after signals.
    public static func sleep(until deadline: Int64) {
        var spec = timespec(tv_sec: Int(deadline / 1_000_000), tv_nsec: Int(deadline % 1_000_000) * 1_000)
        // Outside the funnel: clock_nanosleep returns its error instead of setting errno. The
        // deadline is absolute, so sleeping again after a signal does not stretch the wait.
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }
}
