import Glibc

extension EventLoop {
    /// Runs the loop until SIGINT, SIGTERM or SIGHUP (a hang-up: nobody is left to watch),
    /// or until a handler stops it.
    /// - Parameter onHangUp: When given, SIGHUP calls it and the loop goes on, as daemons
    ///   reload their configuration on SIGHUP; only SIGINT and SIGTERM stop the loop then.
    /// - Returns: The signal that ended it, or `nil` when a handler stopped the loop.
    @discardableResult
    public func runUntilTerminated(onHangUp: (() -> Void)? = nil) throws -> Int32? {
        let signals = try SignalWatcher()
        var received: Int32?
        try watch(signals.descriptor) { [unowned self] in
            while let signal = signals.next() {
                if signal == SIGHUP, let onHangUp {
                    onHangUp()
                    continue
                }
                guard [SIGINT, SIGTERM, SIGHUP].contains(signal) else { continue }
                received = signal
                stop()
            }
        }
        defer { unwatch(signals.descriptor) }
        try run()
        return received
    }
}
