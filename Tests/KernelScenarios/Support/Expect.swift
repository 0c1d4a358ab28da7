import Foundation

// Checks that wait for what they expect instead of looking at one moment.
//
// Under software emulation on a busy machine a process under test reacts in anything from
// milliseconds to tens of seconds, so a check made at a fixed moment is a guess. A positive
// check ("the notice came", "1000 plays") waits until its condition holds, up to a generous
// limit: the wait returns as soon as it holds, so a quiet machine stays fast. A negative
// check ("nothing more", "said once", "still exactly 1 upload") cannot be waited for: it
// first waits for a later event that is ordered after whatever it rules out (a later
// notice, the process's exit with its output closed, an FF request that the uinput fd
// delivers after the plays), then looks once.

/// The outcome of a wait: what was awaited, whether it came, and after how long.
public struct Waited: Sendable {
    public let description: String
    public let limit: Double
    public let seconds: Double
    public let held: Bool

    /// "waited 1.2 s for X" or "waited the whole 60 s for X; it did not come".
    public var account: String {
        held ? "waited \(format(seconds)) s for \(description)"
            : "waited the whole \(format(limit)) s for \(description); it did not come"
    }
}

private func format(_ seconds: Double) -> String { String(format: "%.1f", seconds) }

/// Waits up to `limit` seconds for `condition`, without making a check of it: for the
/// steps that a later check depends on (pacing, a precondition, the ordering event of a
/// negative check). A wait that runs out is noted, so the failure that follows is explained.
@discardableResult
public func waitFor(_ description: String, within limit: Double, _ condition: () -> Bool) -> Waited {
    let started = Clock.now()
    let held = waitUntil(limit, condition)
    let waited = Waited(description: description, limit: limit, seconds: Clock.now() - started, held: held)
    if !held { note(waited.account) }
    return waited
}

/// A positive check: waits up to `limit` seconds for `condition` and records whether it
/// held. On failure the detail says what it waited for, how long, and what it saw.
@discardableResult
public func expect(
    _ name: String, within limit: Double, waitingFor description: String, _ condition: () -> Bool,
    saw: @autoclosure () -> String
) -> Bool {
    let started = Clock.now()
    let held = waitUntil(limit, condition)
    let waited = Waited(description: description, limit: limit, seconds: Clock.now() - started, held: held)
    return check(held, name, held ? "" : joined(waited.account, saw()))
}

/// A check of what must not have happened, or of an exact count, judged once `ordering`
/// (a wait for a later event ordered after everything it rules out) has come. If that event
/// never came the check fails: without it nothing can be concluded.
@discardableResult
public func expect(_ name: String, after ordering: Waited, _ condition: @autoclosure () -> Bool, saw: @autoclosure () -> String) -> Bool {
    guard ordering.held else {
        return check(false, name, joined("cannot be judged: \(ordering.account), and this check relies on that later event", saw()))
    }
    let holds = condition()
    return check(holds, name, holds ? "" : joined("looked after that: \(ordering.account)", saw()))
}

private func joined(_ account: String, _ saw: String) -> String {
    saw.isEmpty ? account : "\(account); saw \(saw)"
}
