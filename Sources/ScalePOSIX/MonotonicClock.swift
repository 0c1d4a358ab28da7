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

/// What the environment says about how output should look.
public enum Environment {
    /// The working directory, for relative paths given on a command line ("." when it
    /// cannot be read).
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// `NO_COLOR` set to anything non-empty turns colour off (no-color.org).
    public static var prefersNoColor: Bool { !(value("NO_COLOR") ?? "").isEmpty }

    /// Whether the locale's character set is UTF-8, so block characters will show.
    public static var usesUTF8: Bool {
        let locale = value("LC_ALL").flatMap { $0.isEmpty ? nil : $0 }
            ?? value("LC_CTYPE").flatMap { $0.isEmpty ? nil : $0 }
            ?? value("LANG") ?? ""
        let lowered = locale.lowercased()
        return lowered.contains("utf-8") || lowered.contains("utf8")
    }
}

/// Process-wide signal dispositions.
public enum Signals {
    /// Turns a vanished reader (`forcescale replay … | head`) into an `EPIPE` error from
    /// `write`, which the commands end on quietly, instead of a death by `SIGPIPE`.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }
}
