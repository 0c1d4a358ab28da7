import Dispatch
import Foundation
import Glibc
import ScaleCore
import ScalePOSIX
import ScaleProtocol

/// A small daemon for the client's tests: the project's own `UnixListener` and
/// `SocketServer` on an `EventLoop` in a thread of its own, answering requests with
/// ScaleCore's encoders (the lines forcescaled sends) and streaming three READINGs and a
/// PEAK to each client that WATCHes.
///
/// Everything but `requests` and the start and stop belongs to the server's thread.
final class FakeDaemon: @unchecked Sendable {
    static let release = "9.9.9-test"
    static let tareGrams = 31.5

    let path: String
    private let lock = NSLock()
    private var seen: [String] = []
    /// Written to stop the loop from another thread.
    private var wake: [Int32] = [-1, -1]
    private let stopped = DispatchSemaphore(value: 0)
    private let ready = DispatchSemaphore(value: 0)
    private var startError: (any Error)?

    /// Starts serving on `path` and returns once it listens.
    /// - Throws: What binding the socket threw.
    init(path: String) throws {
        self.path = path
        guard pipe(&wake) == 0 else { throw Errno.current }
        let thread = Thread { [self] in serve() }
        thread.start()
        ready.wait()
        if let startError { throw startError }
    }

    deinit {
        close(wake[0])
        close(wake[1])
    }

    /// The request lines received so far, from every client, in order.
    var requests: [String] {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    /// Disconnects every client, removes the socket and ends the thread.
    func stop() {
        _ = write(wake[1], "s", 1)
        stopped.wait()
    }

    // MARK: The server's thread

    private func serve() {
        let loop: EventLoop
        let server: SocketServer
        do {
            loop = try EventLoop()
            server = try SocketServer(listener: UnixListener(path: path), loop: loop)
        } catch {
            startError = error
            ready.signal()
            stopped.signal()
            return
        }
        server.onConnect = { client in client.send(VersionMessage(release: Self.release).line) }
        server.onLine = { [self] client, line in answer(client, String(decoding: line, as: UTF8.self)) }
        server.onError = { _ in }
        let wakeEnd = FileDescriptor(rawValue: wake[0])
        do {
            try loop.watch(wakeEnd) {
                server.close()
                loop.stop()
            }
        } catch {
            startError = error
        }
        ready.signal()
        try? loop.run()
        loop.unwatch(wakeEnd)
        stopped.signal()
    }

    private func answer(_ client: ClientConnection, _ line: String) {
        lock.lock()
        seen.append(line)
        lock.unlock()
        switch ClientRequest.parse(line: line) {
        case .failure(let error):
            client.send(error.line)
        case .success(let request):
            switch request {
            case .status:
                let calibration = try? Calibration(points: [CalibrationPoint(raw: 152.37, grams: 100)], tareGrams: Self.tareGrams, axisMinimum: 0)
                client.send(StatusMessage(
                    release: Self.release, uptimeSeconds: 12.5, clients: 1, device: "event5", model: .calibrated,
                    calibration: calibration, rumble: "/dev/input/event21", dropped: 3,
                    log: StatusMessage.LogSummary(path: "/var/lib/forcescale/log.sqlite", written: 10, pending: 0, dropped: 0)).line)
            case .devices:
                client.send(DevicesMessage(devices: [
                    DevicesMessage.Device(
                        path: "/dev/input/event5", name: "Fake Pressure Pad", id: "0003:056a:00b9",
                        kind: DeviceKindName(.pressurePad), active: true,
                        pressure: [.init(code: .absMTPressure, range: AxisRange(minimum: 0, maximum: 255, resolution: 40))],
                        canWeigh: true, canRumble: false),
                    DevicesMessage.Device(path: "/dev/input/event9", error: "permission denied"),
                ]).line)
            case .tare:
                client.send(TareMessage(device: "event5", grams: Self.tareGrams).line)
            case .calibrate(let grams, _):
                client.send(CalibrateMessage(point: CalibrationPoint(raw: 152.37, grams: grams), points: 1, device: "event5").line)
            case .rumble(let pattern):
                client.send(RumbleMessage(pattern: pattern).line)
            case .watch(let enable, let device):
                client.send(WatchMessage(enable: enable, device: device).line)
                guard enable else { return }
                for (index, raw) in [40, 80, 120].enumerated() {
                    let reading = Reading(
                        time: EventTime(microseconds: 1_000_000 + Int64(index) * 10_000), raw: Int32(raw),
                        force: Double(raw) / 255, grams: Double(raw) / 2, saturated: false, contacts: 1,
                        stable: index == 2, model: .calibrated)
                    client.send(ReadingMessage(reading, device: "event5").line, droppable: true)
                }
                let peak = Peak(time: EventTime(microseconds: 1_030_000), raw: 255, force: 1, grams: 127.5)
                client.send(PeakMessage(peak, device: "event5").line, droppable: true)
            case .poll, .calibration, .measure, .replaceCurve, .grab:
                client.send(RequestError(message: "not served by the fake daemon", request: request).line)
            }
        }
    }
}
