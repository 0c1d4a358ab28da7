import Glibc

extension EventLoop {
    /// Runs the loop until SIGINT, SIGTERM or SIGHUP (a hang-up: nobody is left to watch),
    /// or until a handler stops it.
    /// - Returns: The signal that ended it, or `nil` when a handler stopped the loop.
    @discardableResult
    public func runUntilTerminated() throws -> Int32? {
        let signals = try SignalWatcher()
        var received: Int32?
        try watch(signals.descriptor) { [unowned self] in
            while let signal = signals.next() {
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
