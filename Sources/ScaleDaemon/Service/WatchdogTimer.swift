import Glibc
import ScalePOSIX

/// Sends the service manager's watchdog its `WATCHDOG=1` from the event loop, at half the
/// interval it asked for, so that a loop that hangs stops feeding it and gets restarted.
///
/// Create it with `init?(loop:notifier:)`, which makes nothing at all (no timer, no wake-up)
/// when no watchdog was asked for. It sends from the loop's thread until `stop()` or until
/// it is released.
final class WatchdogTimer {
    /// The interval the service manager asked for, in microseconds.
    let intervalMicroseconds: Int64
    /// How often a keep-alive goes out: half the interval.
    var periodMicroseconds: Int64 { max(intervalMicroseconds / 2, 1) }
    /// Sending a keep-alive failed; the timer keeps going. By default a line on stderr.
    var onError: (Errno) -> Void = { error in printError("forcescaled: watchdog notification failed: \(error)") }

    private let loop: EventLoop
    private let notifier: ServiceNotifier
    private let timer: DeadlineTimer
    private var nextDeadline: Int64
    private var isStopped = false

    /// Starts a watchdog timer on `loop` when the service manager asked for one
    /// (`notifier.watchdogInterval`).
    /// - Returns: `nil` when no watchdog was asked for: then nothing is created.
    /// - Throws: `Errno` from `timerfd_create` or `epoll_ctl`.
    convenience init?(loop: EventLoop, notifier: ServiceNotifier = ServiceNotifier()) throws(Errno) {
        guard let interval = notifier.watchdogInterval else { return nil }
        try self.init(loop: loop, intervalMicroseconds: interval, notifier: notifier)
    }

    /// Starts sending `WATCHDOG=1` every `intervalMicroseconds / 2`, the first half an
    /// interval from now.
    /// - Throws: `Errno` from `timerfd_create` or `epoll_ctl`.
    init(loop: EventLoop, intervalMicroseconds: Int64, notifier: ServiceNotifier = ServiceNotifier()) throws(Errno) {
        precondition(intervalMicroseconds > 0, "a watchdog interval must be positive")
        self.loop = loop
        self.notifier = notifier
        self.intervalMicroseconds = intervalMicroseconds
        timer = try DeadlineTimer()
        nextDeadline = MonotonicClock.now() + max(intervalMicroseconds / 2, 1)
        try loop.watch(timer.descriptor) { [weak self] in self?.fire() }
        timer.arm(atMicroseconds: nextDeadline)
    }

    deinit { stop() }

    /// Stops sending and leaves the loop. Calling it again does nothing.
    func stop() {
        guard !isStopped else { return }
        isStopped = true
        timer.arm(atMicroseconds: nil)
        loop.unwatch(timer.descriptor)
    }

    private func fire() {
        timer.acknowledge()
        guard !isStopped else { return }
        do throws(Errno) { try notifier.keepAlive() } catch { onError(error) }
        // On the original schedule, without drift; after a stall (a suspended machine, a
        // slow handler) from now, rather than in a burst.
        let now = MonotonicClock.now()
        nextDeadline += periodMicroseconds
        if nextDeadline <= now { nextDeadline = now + periodMicroseconds }
        timer.arm(atMicroseconds: nextDeadline)
    }
}
