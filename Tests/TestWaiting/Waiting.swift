import Glibc

/// How long a host test waits, by default, for something it expects to happen (a line from
/// the daemon, a file, a process's exit, a row in the log) before it fails.
///
/// Generous on purpose: CI runs the tests on a 2-core machine shared with other builds,
/// where "at once" can take seconds. A wait returns as soon as its condition holds, so a
/// long deadline costs nothing while everything works; it only bounds how long a broken
/// build takes to fail.
public let patience: Double = 30

/// A wait that ran out: says what was awaited, for how long, and what was seen instead.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public var what: String
    public var seconds: Double
    public var saw: String

    public init(what: String, seconds: Double, saw: String) {
        self.what = what
        self.seconds = seconds
        self.saw = saw
    }

    public var description: String { "waited \(formatSeconds(seconds)) s for \(what); saw \(saw)" }
}

/// Seconds as a test message shows them: "30", "0.5".
public func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}

/// The monotonic clock in seconds (never steps with the wall clock).
public func monotonicNow() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

/// Checks `condition` until it holds, and returns at once when it does.
/// - Parameters:
///   - what: What is awaited, for the failure message ("forcescaled to log …").
///   - seconds: The deadline.
///   - interval: Seconds between checks, when `between` is not given. Checks that start a
///     process (sqlite3, forcescale) are better spaced at 0.1–0.2 s.
///   - saw: What there was instead, for the failure message; evaluated only on failure.
///   - between: What to do between two checks instead of sleeping `interval` (run an event
///     loop once, say).
/// - Throws: `WaitTimedOut` after `seconds`; what `condition` throws, at once.
public func waitFor(
    _ what: String, within seconds: Double = patience, every interval: Double = 0.01,
    saw: () -> String = { "it never held" }, between: (() throws -> Void)? = nil,
    _ condition: () throws -> Bool
) throws {
    _ = try waitForValue(what, within: seconds, every: interval, saw: saw, between: between) { try condition() ? true : nil }
}

/// Asks `produce` until it gives a value, and returns that value as soon as it does.
/// Parameters and errors as for `waitFor`.
public func waitForValue<Value>(
    _ what: String, within seconds: Double = patience, every interval: Double = 0.01,
    saw: () -> String = { "nothing" }, between: (() throws -> Void)? = nil,
    _ produce: () throws -> Value?
) throws -> Value {
    let deadline = monotonicNow() + seconds
    while true {
        // Asked once more after the pause in which the deadline passed, so that what
        // happened during that pause counts.
        if let value = try produce() { return value }
        guard monotonicNow() < deadline else { throw WaitTimedOut(what: what, seconds: seconds, saw: saw()) }
        if let between {
            try between()
        } else {
            usleep(useconds_t(max(1, interval * 1_000_000)))
        }
    }
}
