/// How a `ForcescaleClient` tries again after losing the daemon (it was restarted,
/// upgraded, or not started yet): the first retry after `initialDelay`, each further one
/// after twice the wait before it, never more than `maximumDelay`. A success starts the
/// sequence over. The waits are sleeps or timers, never a loop that spins.
public struct ReconnectPolicy: Hashable, Sendable {
    /// Seconds before the first retry.
    public var initialDelay: Double
    /// The longest wait between two retries, in seconds.
    public var maximumDelay: Double

    /// - Parameters:
    ///   - initialDelay: Seconds before the first retry; 0.1 by default, quick enough that a
    ///     restarted daemon is found again at once.
    ///   - maximumDelay: The cap, in seconds; 5 by default, so that a daemon that is down
    ///     for long costs one attempt every 5 s.
    public init(initialDelay: Double = 0.1, maximumDelay: Double = 5) {
        precondition(initialDelay > 0 && maximumDelay >= initialDelay, "a reconnect delay must be positive and the cap at least the first delay")
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before a retry.
    /// - Parameter attempt: Which retry since the connection was lost or last made: 1, 2…
    /// - Returns: `initialDelay × 2^(attempt − 1)`, at most `maximumDelay`, in seconds.
    public func delay(beforeAttempt attempt: Int) -> Double {
        var delay = initialDelay
        var doublings = max(attempt, 1) - 1
        while doublings > 0, delay < maximumDelay {
            delay *= 2
            doublings -= 1
        }
        return min(delay, maximumDelay)
    }
}
