import ScalePOSIX

extension ForcescaleClient {
    /// Drives the client from a ScalePOSIX `EventLoop`: its socket is watched for
    /// readability, a timer fires when a reconnection is due, and `step()` runs on either.
    /// Connects at once if not connected yet.
    ///
    /// Connecting waits (at most `options.timeout`) for the daemon's greeting, which it
    /// sends as soon as it accepts, so do not serve the daemon's socket on the same loop.
    /// - Parameters:
    ///   - loop: The loop to run on; the client is then used on its thread only.
    ///   - onEvent: Gets each READING and PEAK. It may make requests: events they pass by
    ///     are delivered after it returns.
    ///   - onError: Gets the failure that ends the stream when there is no reconnect policy.
    /// - Returns: The attachment; the client is driven until `detach()` or its release.
    /// - Throws: `Errno` when the timer cannot be made or watched.
    public func attach(
        to loop: EventLoop, onEvent: @escaping (StreamEvent) -> Void, onError: @escaping (DaemonClientError) -> Void = { _ in }
    ) throws(Errno) -> ClientLoopAttachment {
        try ClientLoopAttachment(client: self, loop: loop, onEvent: onEvent, onError: onError)
    }
}

/// A `ForcescaleClient` running on an `EventLoop` (see `ForcescaleClient.attach(to:)`).
/// No polling: between events, the loop sleeps on the socket and the reconnect timer.
public final class ClientLoopAttachment {
    private let client: ForcescaleClient
    private let loop: EventLoop
    private let timer: DeadlineTimer
    private let onEvent: (StreamEvent) -> Void
    private let onError: (DaemonClientError) -> Void
    /// The connection whose socket is watched: compared by identity, since a new connection
    /// may get the number of the one just closed, which epoll has already forgotten.
    private var watchedConnection: DaemonClient?
    private var isDetached = false

    init(
        client: ForcescaleClient, loop: EventLoop, onEvent: @escaping (StreamEvent) -> Void,
        onError: @escaping (DaemonClientError) -> Void
    ) throws(Errno) {
        self.client = client
        self.loop = loop
        self.onEvent = onEvent
        self.onError = onError
        timer = try DeadlineTimer()
        try loop.watch(timer.descriptor) { [weak self] in
            guard let self else { return }
            timer.acknowledge()
            service()
        }
        service()
    }

    deinit { detach() }

    /// Stops driving the client: its socket and the timer leave the loop. The client stays
    /// connected. Calling it again does nothing.
    public func detach() {
        guard !isDetached else { return }
        isDetached = true
        if let watchedConnection { loop.unwatch(watchedConnection.descriptor) }
        watchedConnection = nil
        timer.arm(atMicroseconds: nil)
        loop.unwatch(timer.descriptor)
    }

    /// Delivers what the client holds without the loop being woken for it: call it after a
    /// request made outside `onEvent` (a timer's handler, say) while watching.
    public func flush() {
        service()
    }

    /// Steps the client until it has nothing in hand, then follows its connection and
    /// deadline with the watch and the timer.
    private func service() {
        guard !isDetached else { return }
        repeat {
            let events: [StreamEvent]
            do {
                events = try client.step()
            } catch {
                onError(error)
                break
            }
            for event in events where !isDetached { onEvent(event) }
        } while !isDetached && client.hasBufferedEvents
        follow()
    }

    private func follow() {
        guard !isDetached else { return }
        let current = client.connection
        if current !== watchedConnection {
            if let watchedConnection { loop.unwatch(watchedConnection.descriptor) }
            watchedConnection = nil
            if let current {
                do {
                    try loop.watch(current.descriptor) { [weak self] in self?.service() }
                    watchedConnection = current
                } catch {
                    onError(.failed(SystemError(path: client.options.socketPath, errno: error)))
                }
            }
        }
        timer.arm(atMicroseconds: client.reconnectDeadline)
    }
}
