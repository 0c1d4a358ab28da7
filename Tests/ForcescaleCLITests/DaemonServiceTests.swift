import Foundation
import Glibc
import TestWaiting
import Testing

/// forcescaled as systemd runs it, without systemd: a real notify socket for sd_notify, and
/// `systemd-socket-activate` (from Debian's systemd) handing it an already bound socket.
@Suite(.serialized) struct DaemonServiceTests {
    /// Receives the datagrams a daemon sends to `NOTIFY_SOCKET`.
    final class NotifySocket {
        let path: String
        let descriptor: Int32

        init(in directory: URL) throws {
            path = directory.appendingPathComponent("notify").path
            descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { bytes in
                for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0 else { throw DaemonTestError(description: "cannot bind \(path): \(String(cString: strerror(errno)))") }
        }

        deinit { close(descriptor) }

        /// The datagrams received so far, for failure messages.
        private(set) var received: [String] = []

        /// The next datagram within `timeout` seconds; waiting longer is a failure of the
        /// test, recorded with what it waited for.
        func receive(_ what: String, timeout: Double = patience, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let deadline = monotonicNow() + timeout
            while true {
                let left = deadline - monotonicNow()
                let ready = left > 0 ? poll(&poller, 1, Int32(left * 1000) + 1) : 0
                if ready < 0, errno == EINTR { continue }
                guard ready == 1 else { break }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let count = recv(descriptor, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                let message = String(decoding: buffer[..<count], as: UTF8.self)
                received.append(message)
                return message
            }
            let timedOut = WaitTimedOut(what: "\(what) on \(path)", seconds: timeout,
                                        saw: received.isEmpty ? "no datagram at all" : "only \(received)")
            Issue.record("\(timedOut)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func tellsTheServiceManagerReadyAndStopping() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(in: directory)
        let socketPath = directory.appendingPathComponent("sock").path
        let daemon = try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescaled").path,
            ["--replay", DaemonRecordings.intuos, "--loop", "--socket", socketPath, "--state-dir", directory.appendingPathComponent("state").path],
            environment: ["NOTIFY_SOCKET": notify.path])
        defer { daemon.kill() }
        let ready = notify.receive("READY=1")
        #expect(ready?.contains("READY=1") == true, "got \(ready ?? "nothing")")
        #expect(ready?.contains("STATUS=serving on \(socketPath)") == true)
        // The socket answers once READY=1 has been sent.
        let client = try RawClient(path: socketPath)
        #expect(client.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true)
        daemon.signal(SIGTERM)
        let stopping = notify.receive("STOPPING=1")
        #expect(stopping?.contains("STOPPING=1") == true, "got \(stopping ?? "nothing")")
        #expect(daemon.wait().status == 0)
    }

    @Test func sendsWatchdogKeepAlivesOnlyWhenAsked() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let notify = try NotifySocket(in: directory)
        let daemon = try ChildProcess(
            CLI.binDirectory.appendingPathComponent("forcescaled").path,
            ["--replay", DaemonRecordings.intuos, "--loop", "--socket", directory.appendingPathComponent("sock").path,
             "--state-dir", directory.appendingPathComponent("state").path],
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "200000"])
        defer { daemon.kill() }
        // Taken before the daemon starts, so every deadline of its watchdog timer is after it.
        let start = monotonicNow()
        var keepAlivesAt: [Double] = []
        while keepAlivesAt.count < 20, let message = notify.receive("20 WATCHDOG=1 keep-alives (\(keepAlivesAt.count) so far)") {
            if message.contains("WATCHDOG=1") { keepAlivesAt.append(monotonicNow()) }
        }
        try #require(keepAlivesAt.count == 20, "\(daemon.stderr)")
        // Every 100 ms (half of WATCHDOG_USEC). Never early: the k-th cannot come before k
        // half-intervals after the start, however the machine schedules the daemon.
        for (index, time) in keepAlivesAt.enumerated() {
            #expect(time - start >= Double(index + 1) * 0.1, "keep-alive \(index + 1) after \(time - start) s")
        }
        // And at half the interval, not the whole. From the first to the twentieth is 1.9 s
        // plus whatever the machine delayed the daemon by (that is the margin); at the whole
        // interval it is 3.6 s at least (19 intervals, less the part of one by which the
        // first may have been late without moving the timer's schedule).
        let span = keepAlivesAt[19] - keepAlivesAt[0]
        #expect(span < 3.6, "19 keep-alive periods took \(span) s")
    }

    @Test func servesOverASocketBoundBySystemd() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socketPath = directory.appendingPathComponent("activated.sock").path
        // systemd-socket-activate binds and listens, then starts the daemon on the first
        // connection with the socket as fd 3 (LISTEN_FDS=1).
        let activator = try ChildProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", socketPath, CLI.binDirectory.appendingPathComponent("forcescaled").path,
             "--replay", DaemonRecordings.intuos, "--loop", "--socket", socketPath, "--state-dir", directory.appendingPathComponent("state").path])
        defer { activator.kill() }
        let connected = try Self.connectOnceListening(socketPath, activator)
        #expect(connected.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true, "\(activator.stderr)")
        #expect(connected.request(#"{"class":"STATUS"}"#)?.hasPrefix(#"{"class":"STATUS""#) == true)
    }

    /// As systemd/forcescaled.socket and forcescaled.service start it, without systemd: the
    /// listener bound at the socket unit's ListenStream= (under a scratch root), and the
    /// daemon run by ExecStart= with no --socket or --state-dir, as an unprivileged user
    /// (nobody stands in for forcescale), given the $RUNTIME_DIRECTORY and $STATE_DIRECTORY
    /// that RuntimeDirectory= and StateDirectory= set. Only the source (a recording) and an
    /// empty configuration file are added, so that no device and no /etc file of this
    /// machine take part.
    @Test func servesAsTheUnitsStartIt() throws {
        let socketUnit = try UnitFile(path: ServiceFilesTests.socketUnit)
        let serviceUnit = try UnitFile(path: ServiceFilesTests.serviceUnit)
        let listenStream = try #require(socketUnit.values("Socket", "ListenStream").first)
        let execStart = try #require(serviceUnit.values("Service", "ExecStart").first).split(separator: " ").map(String.init)
        let runtimeName = try #require(serviceUnit.values("Service", "RuntimeDirectory").first)
        let stateName = try #require(serviceUnit.values("Service", "StateDirectory").first)
        #expect(execStart.first == "/usr/local/bin/forcescaled")
        #expect(listenStream == "/run/\(runtimeName)/forcescale.sock", "the socket unit listens in the service's RuntimeDirectory")

        // The scratch root, and copies of the daemon and the recording it serves, where the
        // user nobody can reach them (the build and the recordings may be where it cannot).
        let shared = try SharedWithOtherUsers()
        let root = try shared.makeDirectory("root")
        let forcescaled = try shared.program("forcescaled")
        // The recording is a split pair: the .desc beside the .events goes with it.
        let recordings = try shared.copy(URL(fileURLWithPath: DaemonRecordings.intuos).deletingLastPathComponent(), to: "recordings")
        let recording = recordings + "/" + URL(fileURLWithPath: DaemonRecordings.intuos).lastPathComponent
        let socketPath = root.path + listenStream
        let runtimeDirectory = try shared.makeDirectory("root/run/" + runtimeName).path
        let stateDirectory = try shared.makeDirectory("root/var/lib/" + stateName).path
        for directory in [runtimeDirectory, stateDirectory] {
            // systemd makes these directories the service user's.
            #expect(try run("/bin/chown", ["nobody", directory]).status == 0)
        }
        let configuration = root.appendingPathComponent("empty.conf").path
        _ = FileManager.default.createFile(atPath: configuration, contents: Data())

        let activator = try ChildProcess(
            "/usr/bin/systemd-socket-activate",
            ["-l", socketPath, "-E", "RUNTIME_DIRECTORY=\(runtimeDirectory)", "-E", "STATE_DIRECTORY=\(stateDirectory)",
             "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", forcescaled]
                + execStart.dropFirst() + ["--config", configuration, "--replay", recording, "--loop"])
        defer { activator.kill() }
        let connected = try Self.connectOnceListening(socketPath, activator)
        #expect(connected.readLine()?.hasPrefix(#"{"class":"VERSION""#) == true, "\(activator.stderr)")
        #expect(connected.request(#"{"class":"STATUS"}"#)?.hasPrefix(#"{"class":"STATUS""#) == true, "\(activator.stderr)")
        // Root may tare; the calibration goes to $STATE_DIRECTORY, written by the daemon's user.
        let tare = connected.request(#"{"class":"TARE"}"#)
        #expect(tare?.hasPrefix(#"{"class":"TARE""#) == true, "TARE: \(tare ?? "nothing"); \(activator.stderr)")
        let stateFile = stateDirectory + "/" + DaemonRecordings.intuosStateFile
        let attributes = try? FileManager.default.attributesOfItem(atPath: stateFile)
        #expect((attributes?[.ownerAccountName] as? String) == "nobody", "\(stateFile): \(attributes.map { "\($0)" } ?? "missing")")
        // It names the socket it was handed, found from $RUNTIME_DIRECTORY.
        #expect(activator.stderr.contains("listening on \(socketPath)"), "\(activator.stderr)")
    }

    /// Connects to `path` as soon as something listens there (systemd-socket-activate binds
    /// it a moment after it starts).
    static func connectOnceListening(_ path: String, _ activator: ChildProcess) throws -> RawClient {
        try waitForValue("systemd-socket-activate to listen on \(path)", saw: { "its stderr: \(activator.stderr)" }) {
            try? RawClient(path: path)
        }
    }
}
