import Dispatch
import Foundation
import Glibc
import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol
import ScaleTestSupport
import Testing

/// The client against a real Unix socket served by the project's own `SocketServer`
/// (`FakeDaemon`, on a thread of its own): the greeting, typed replies, the stream, and
/// finding the daemon again after it stopped and started.
@Suite struct RoundTripTests {
    /// A reconnect policy quick enough for a test and still doubling.
    static let quick = ReconnectPolicy(initialDelay: 0.1, maximumDelay: 0.4)

    @Test func requestsGetTypedRepliesAndTheStreamTypedEvents() throws {
        let directory = TemporaryDirectory()
        let daemon = try FakeDaemon(path: directory.path + "/forcescale.sock")
        defer { daemon.stop() }
        let client = ForcescaleClient(options: .init(socketPath: daemon.path))
        var changes: [ForcescaleClient.ConnectionEvent] = []
        client.onConnectionEvent = { changes.append($0) }

        try client.connect()
        #expect(client.release == FakeDaemon.release)
        #expect(changes == [.connected(release: FakeDaemon.release)])

        let status = try client.status()
        #expect(status.release == FakeDaemon.release)
        #expect(status.device == "event5")
        #expect(status.model == .calibrated)
        #expect(status.calibration == StatusMessage.CalibrationSummary(points: 1, tare: FakeDaemon.tareGrams))
        #expect(status.dropped == 3)
        #expect(status.log?.written == 10)

        #expect(try client.tare() == TareMessage(device: "event5", grams: FakeDaemon.tareGrams))
        #expect(try client.calibrate(grams: 100) == CalibrateMessage(point: CalibrationPoint(raw: 152.37, grams: 100), points: 1, device: "event5"))
        #expect(try client.rumble(.success).hapticPattern == .success)

        let devices = try client.devices()
        #expect(devices.count == 2)
        #expect(devices.first?.name == "Fake Pressure Pad")
        #expect(devices.first?.kind?.kind == .pressurePad)
        #expect(devices.first?.id == "0003:056a:00b9")
        #expect(devices.first?.pressure == [.init(code: .absMTPressure, range: AxisRange(minimum: 0, maximum: 255, resolution: 40))])
        #expect(devices.last?.error == "permission denied")

        try client.watch()
        var events: [StreamEvent] = []
        while events.count < 4, let event = try client.nextEvent(timeout: 5) { events.append(event) }
        #expect(events.count == 4)
        guard case .reading(let first) = events.first?.message else {
            Issue.record("the first event is not a reading: \(events)")
            return
        }
        #expect(first.device == "event5")
        #expect(first.raw == 40)
        #expect(first.grams == 20)
        #expect(first.model == .calibrated)
        let peak = PeakMessage(device: "event5", time: EventTime(microseconds: 1_030_000), raw: 255, grams: 127.5)
        #expect(events.last?.message == .peak(peak))
        // Each event carries the line as the daemon sent it.
        #expect(events.last.map { String(decoding: $0.line, as: UTF8.self) + "\n" } == peak.line)

        #expect(daemon.requests == [
            #"{"class":"STATUS"}"#, #"{"class":"TARE"}"#, #"{"class":"CALIBRATE","grams":100.0}"#,
            #"{"class":"RUMBLE","pattern":"success"}"#, #"{"class":"DEVICES"}"#, #"{"class":"WATCH","enable":true}"#,
        ])
    }

    @Test func anErrorReplyIsRefusedAndTheConnectionStays() throws {
        let directory = TemporaryDirectory()
        let daemon = try FakeDaemon(path: directory.path + "/forcescale.sock")
        defer { daemon.stop() }
        let client = ForcescaleClient(options: .init(socketPath: daemon.path))
        #expect(throws: DaemonClientError.refused(message: "'grams' must be a number greater than 0", request: "CALIBRATE")) {
            try client.calibrate(grams: -1)
        }
        #expect(client.isConnected)
        #expect(try client.tare().grams == FakeDaemon.tareGrams)
    }

    @Test func withoutAPolicyALostDaemonIsAnError() throws {
        let directory = TemporaryDirectory()
        let daemon = try FakeDaemon(path: directory.path + "/forcescale.sock")
        let client = ForcescaleClient(options: .init(socketPath: daemon.path))
        try client.connect()
        daemon.stop()
        #expect(throws: DaemonClientError.closed(path: daemon.path)) { try client.nextEvent(timeout: 5) }
        #expect(!client.isConnected)
        #expect(throws: DaemonClientError.notListening(path: daemon.path)) { try client.status() }
    }

    /// Blocking: the daemon stops and comes back once the client has announced its fourth
    /// retry; the client retries after 0.1, 0.2, 0.4 s (the cap) and so on, each no sooner
    /// than its delay (no spinning), asks for its WATCH again, and the stream goes on. A
    /// second loss starts the delays over at 0.1 s. What is asserted is the schedule, never
    /// how many retries fit in a stretch of wall-clock time.
    @Test func aRestartedDaemonIsFoundAgainWithBackOff() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/forcescale.sock"
        var daemon = try FakeDaemon(path: path)
        let client = ForcescaleClient(options: .init(socketPath: path, reconnect: Self.quick))
        var changes: [ForcescaleClient.ConnectionEvent] = []
        // When each retry was announced, for the restart to wait on and for its pace.
        let announced = RetryLog()
        client.onConnectionEvent = { change in
            changes.append(change)
            if case .retrying = change { announced.add(monotonicSeconds()) }
        }
        try client.watch()
        for _ in 0..<4 { #expect(try client.nextEvent(timeout: 5) != nil) }
        changes.removeAll()

        daemon.stop()
        let restart = Restart(path: path) { announced.count >= 4 }
        let event = try client.nextEvent(timeout: 30)
        daemon = try restart.daemon()
        guard case .reading = event?.message else {
            Issue.record("no reading after the restart: \(String(describing: event))")
            return
        }

        let retries = changes.compactMap { change -> (Int, Double)? in
            if case .retrying(let attempt, let delay, _) = change { return (attempt, delay) }
            return nil
        }
        #expect(retries.count >= 4, "\(retries.count) retries")
        #expect(retries.map(\.0) == Array(1...max(1, retries.count)))
        #expect(Array(retries.map(\.1).prefix(3)) == [0.1, 0.2, 0.4])
        #expect(retries.dropFirst(2).allSatisfy { $0.1 == 0.4 })
        // No spinning: each attempt came no sooner than the delay announced before it.
        let times = announced.times
        for index in 1..<min(times.count, retries.count) {
            let waited = times[index] - times[index - 1]
            #expect(waited >= retries[index - 1].1 * 0.95, "attempt \(index + 1) came \(waited) s after attempt \(index), announced \(retries[index - 1].1) s")
        }
        #expect(changes.first.map { if case .lost = $0 { true } else { false } } == true)
        #expect(changes.last == .connected(release: FakeDaemon.release))
        // The WATCH was asked for again on the new connection.
        #expect(daemon.requests == [#"{"class":"WATCH","enable":true}"#])

        // Success reset the back-off: the next loss starts at 0.1 s again.
        changes.removeAll()
        daemon.stop()
        let again = Restart(path: path) { true }
        var next: StreamEvent?
        repeat { next = try client.nextEvent(timeout: 10) } while next != nil && !changes.contains(where: { if case .lost = $0 { true } else { false } })
        daemon = try again.daemon()
        let firstRetry = changes.first { if case .retrying = $0 { true } else { false } }
        if case .retrying(let attempt, let delay, _) = firstRetry {
            #expect(attempt == 1)
            #expect(delay == 0.1)
        } else {
            Issue.record("no retry after the second loss: \(changes)")
        }
        daemon.stop()
    }

    /// The same from an event loop: `attach(to:)` watches the socket and arms a timer for
    /// each retry; the loop sleeps between them.
    @Test func onAnEventLoopTheStreamSurvivesARestart() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/forcescale.sock"
        var daemon = try FakeDaemon(path: path)
        let loop = try EventLoop()
        let client = ForcescaleClient(options: .init(socketPath: path, reconnect: Self.quick))
        var changes: [ForcescaleClient.ConnectionEvent] = []
        let retried = RetryLog()
        client.onConnectionEvent = { change in
            changes.append(change)
            if case .retrying = change { retried.add(monotonicSeconds()) }
        }
        try client.watch()
        var events: [StreamEvent] = []
        var errors: [DaemonClientError] = []
        let attachment = try client.attach(to: loop, onEvent: { events.append($0) }, onError: { errors.append($0) })
        defer { attachment.detach() }
        try pump(loop, "the first four events", saw: { "\(events)" }) { events.count >= 4 }

        daemon.stop()
        let restart = Restart(path: path) { retried.count >= 3 }
        var wakeUps = 0
        let deadline = monotonicSeconds() + 10
        while events.count < 8, monotonicSeconds() < deadline {
            // Blocking waits of the loop itself: each return is one wake-up.
            if (try? loop.runOnce(timeoutMilliseconds: 1000)) ?? 0 > 0 { wakeUps += 1 }
        }
        daemon = try restart.daemon()
        #expect(events.count >= 8, "events after the restart: \(events.count - 4)")
        #expect(errors.isEmpty)
        #expect(changes.contains { if case .retrying(1, 0.1, _) = $0 { true } else { false } })
        #expect(changes.last == .connected(release: FakeDaemon.release))
        // Each retry is one timer wake-up, plus the end of the old stream and the new one's
        // lines: a spinning client would wake hundreds of times between two retries.
        #expect(retried.count >= 3 && wakeUps <= retried.count + 12, "\(wakeUps) wake-ups for \(retried.count) retries")
        daemon.stop()
    }
}

/// Starts a `FakeDaemon` on another thread once a condition holds (the client has retried
/// so often), while the test's thread is busy waiting in the client.
final class Restart: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<FakeDaemon, any Error>?

    /// - Parameters:
    ///   - path: The socket to listen on.
    ///   - ready: Whether to start now; asked every 10 ms until it says so (at most 60 s:
    ///     a client that never gets there fails the test instead of hanging it).
    init(path: String, when ready: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            let deadline = monotonicSeconds() + 60
            while !ready(), monotonicSeconds() < deadline { usleep(10_000) }
            result = Result { try FakeDaemon(path: path) }
            done.signal()
        }
        thread.start()
    }

    /// The restarted daemon, once it listens.
    /// - Throws: What starting it threw.
    func daemon() throws -> FakeDaemon {
        done.wait()
        return try result!.get()
    }
}

/// The times at which a client announced its retries, shared with a `Restart` thread.
final class RetryLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stamps: [Double] = []

    func add(_ time: Double) { lock.lock(); stamps.append(time); lock.unlock() }
    var times: [Double] { lock.lock(); defer { lock.unlock() }; return stamps }
    var count: Int { times.count }
}
