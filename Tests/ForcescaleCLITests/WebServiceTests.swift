import Foundation
import Glibc
import TestWaiting
import Testing

/// forcescale-web as a system service: systemd/forcescale-web.socket and
/// .service checked with systemd-analyze and systemd-sysusers, and the program started as
/// the units start it, through `systemd-socket-activate` handing it a bound loopback socket.
@Suite(.serialized) struct WebServiceTests {
    static let serviceUnit = CLI.packageRoot.appendingPathComponent("systemd/forcescale-web.service").path
    static let socketUnit = CLI.packageRoot.appendingPathComponent("systemd/forcescale-web.socket").path

    @Test func serviceExposureIsAtMostOnePointFive() throws {
        let (figure, line) = try ServiceFilesTests.exposure(of: Self.serviceUnit)
        print("systemd-analyze security --offline=yes systemd/forcescale-web.service: exposure \(figure)")
        #expect(figure <= 1.5, "\(line)")
    }

    /// What the sandbox must keep, or the server cannot reach the daemon or is reachable from
    /// where it should not be.
    @Test func unitsKeepTheServerOnLoopbackWithoutANetwork() throws {
        let service = try UnitFile(path: Self.serviceUnit)
        let socket = try UnitFile(path: Self.socketUnit)
        #expect(service.values("Service", "PrivateNetwork") == ["yes"])
        #expect(service.values("Service", "User") == ["forcescale-web"] && service.values("Service", "Group") == ["forcescale-web"])
        // forcescaled.socket lets group forcescale connect (mode 0660).
        #expect(service.values("Service", "SupplementaryGroups") == ["forcescale"])
        #expect(try UnitFile(path: ServiceFilesTests.socketUnit).values("Socket", "SocketGroup") == ["forcescale"])
        // The listener comes from the socket unit: no address of its own on the command line.
        #expect(service.values("Service", "ExecStart") == ["/usr/local/bin/forcescale-web"])
        #expect(service.values("Unit", "Requires") == ["forcescale-web.socket"])
        let listen = socket.values("Socket", "ListenStream")
        #expect(listen.count == 1 && listen[0].hasPrefix("127.0.0.1:"), "loopback only by default: \(listen)")
        // The listener systemd holds lets in loopback peers only: the service's own
        // IPAddressDeny= does not cover it, so a wider ListenStream= alone opens nothing.
        #expect(socket.values("Socket", "IPAddressAllow") == ["localhost"] && socket.values("Socket", "IPAddressDeny") == ["any"])
        // The access keys' directory, and a bound on memory.
        #expect(service.values("Service", "RuntimeDirectory") == ["forcescale-web"] && service.values("Service", "RuntimeDirectoryMode") == ["0755"])
        #expect(service.values("Service", "MemoryMax") == ["64M"])
        // Off by default: only `systemctl enable` puts the socket in sockets.target, and the
        // service is never wanted by anything but its socket.
        #expect(socket.values("Install", "WantedBy") == ["sockets.target"])
        #expect(service.values("Install", "WantedBy").isEmpty && service.values("Install", "Also") == ["forcescale-web.socket"])
    }

    /// systemd-sysusers into an empty root: a system user that cannot log in, with the group
    /// forcescale there for the unit's SupplementaryGroups= (made by forcescale.conf).
    @Test func sysusersFileMakesTheUnitsUser() throws {
        let root = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("etc"), withIntermediateDirectories: true)
        let files = ["forcescale.conf", "forcescale-web.conf"].map { CLI.packageRoot.appendingPathComponent("sysusers.d/" + $0).path }
        let result = try run("/usr/bin/systemd-sysusers", ["--root=\(root.path)"] + files)
        #expect(result.exited && result.status == 0, "systemd-sysusers: \(result.stderr)")
        let passwd = try String(contentsOfFile: root.path + "/etc/passwd", encoding: .utf8).split(separator: "\n")
        let group = try String(contentsOfFile: root.path + "/etc/group", encoding: .utf8).split(separator: "\n")
        let user = try #require(passwd.first { $0.hasPrefix("forcescale-web:") }, "\(passwd)").split(separator: ":", omittingEmptySubsequences: false)
        #expect(user.count == 7)
        #expect(Int(user[2]).map { $0 > 0 && $0 < 1000 } == true, "a system user: \(user)")
        #expect(user[6].hasSuffix("nologin"), "\(user)")
        #expect(group.contains { $0.hasPrefix("forcescale-web:") } && group.contains { $0.hasPrefix("forcescale:") }, "\(group)")
    }

    /// As the units start it: systemd-socket-activate binds a loopback port and runs the
    /// unit's ExecStart= (with --socket pointing at a daemon of the test's own) on the first
    /// connection, handing it the listener as fd 3, as an unprivileged user (nobody stands in
    /// for forcescale-web) whose only way to the daemon's socket (mode 0660) is a supplementary
    /// group, as the unit's SupplementaryGroups= gives it. The page and the metrics come back on
    /// that port, and the metrics are the daemon's; without the group they say it is down.
    @Test func servesThroughSocketActivationAsAnUnprivilegedUser() throws {
        let shared = try SharedWithOtherUsers()
        let daemonDirectory = try shared.makeDirectory("daemon")
        let daemon = try DaemonUnderTest(recording: try DaemonRecordings.dashboardPress(in: daemonDirectory), directory: daemonDirectory)
        defer { daemon.cleanUp() }
        let program = try shared.program("forcescale-web")
        var status = stat()
        #expect(stat(daemon.socketPath, &status) == 0 && status.st_mode & 0o007 == 0, "the daemon's socket is open to others")
        let service = try UnitFile(path: Self.serviceUnit)
        let execStart = try #require(service.values("Service", "ExecStart").first).split(separator: " ").map(String.init)

        // The key directory, nobody's own as RuntimeDirectory= makes it the service user's.
        func activate(groups: [String], keys: String) throws -> (ChildProcess, Int) {
            let directory = try shared.makeDirectory(keys)
            #expect(chown(directory.path, 65534, 65534) == 0)
            let port = try freeLoopbackPort()
            let activator = try ChildProcess(
                "/usr/bin/systemd-socket-activate",
                ["-l", "127.0.0.1:\(port)", "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup"] + groups + [program]
                    + execStart.dropFirst() + ["--socket", daemon.socketPath, "--key-dir", directory.path])
            return (activator, port)
        }
        func key(_ keys: String) -> String? {
            (try? String(contentsOfFile: shared.path(keys + "/read-key"), encoding: .utf8))?.trimmingCharacters(in: .newlines)
        }

        let (activator, port) = try activate(groups: ["--groups=\(status.st_gid)"], keys: "keys")
        defer { activator.kill() }
        var page: HTTPTestResponse?
        try waitFor("the page on 127.0.0.1:\(port) through systemd-socket-activate", saw: { "its stderr: \(activator.stderr.suffix(2000))" }) {
            page = try? httpGet(port: port, path: "/", key: key("keys"))
            return page.map { $0.status == 200 } ?? false
        }
        // The read key is for the socket's group, as the socket is.
        var keyStatus = stat()
        #expect(stat(shared.path("keys/read-key"), &keyStatus) == 0 && keyStatus.st_gid == status.st_gid && keyStatus.st_mode & 0o777 == 0o640)
        #expect(page?.status == 200, "GET /: \(page.map { "\($0.status) \($0.headers)" } ?? "nothing")")
        #expect(page?.text.contains(#"class="dial""#) == true && page?.text.contains("role=\"meter\"") == true, "GET / is not the dashboard")
        var metrics: HTTPTestResponse?
        try waitFor("forcescale_daemon_up 1 and a weight on /metrics", saw: { "\(metrics?.text.suffix(1500) ?? "nothing"); \(activator.stderr.suffix(1000))" }) {
            metrics = try? httpGet(port: port, path: "/metrics", key: key("keys"))
            return metrics.map { $0.status == 200 && $0.text.contains("\nforcescale_daemon_up 1") && $0.text.contains("forcescale_weight_grams{") } ?? false
        }
        // It served the socket it was handed, and says so; SIGTERM stops it cleanly.
        #expect(activator.stderr.contains("listening on http://127.0.0.1:\(port)/"), "\(activator.stderr)")
        activator.signal(SIGTERM)
        let stopped = activator.wait()
        #expect(stopped.exited && stopped.status == 0, "forcescale-web after SIGTERM: \(stopped.status) \(stopped.stderr)")

        // Without the group the same user serves the page but cannot reach the daemon.
        let (refused, refusedPort) = try activate(groups: ["--clear-groups"], keys: "refused-keys")
        defer { refused.kill() }
        var down: HTTPTestResponse?
        try waitFor("forcescale_daemon_up 0 without the socket's group", saw: { "\(down?.text.suffix(1500) ?? "nothing"); \(refused.stderr.suffix(1000))" }) {
            down = try? httpGet(port: refusedPort, path: "/metrics", key: key("refused-keys"))
            return down.map { $0.status == 200 && $0.text.contains("\nforcescale_daemon_up 0") } ?? false
        }
        #expect(refused.stderr.contains("permission denied"), "\(refused.stderr)")
        refused.signal(SIGTERM)
        let refusedStopped = refused.wait()
        #expect(refusedStopped.exited && refusedStopped.status == 0, "\(refusedStopped.stderr)")
    }
}

/// A loopback port that nothing listens on now (the kernel's pick, released again).
func freeLoopbackPort() throws -> Int {
    let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard probe >= 0 else { throw DaemonTestError(description: "socket: \(String(cString: strerror(errno)))") }
    defer { close(probe) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
    }
    guard bound else { throw DaemonTestError(description: "bind 127.0.0.1:0: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// GET on a connection of its own to 127.0.0.1:`port` (WebTestSupport's connection, whose
/// every read has a deadline), with `key` as `Authorization: Bearer` when given.
func httpGet(port: Int, path: String, key: String? = nil, timeout: Double = patience) throws -> HTTPTestResponse {
    let connection = try HTTPTestConnection(port: UInt16(port))
    let authorization = key.map { "Authorization: Bearer \($0)\r\n" } ?? ""
    try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(authorization)Connection: close\r\n\r\n")
    return try connection.readResponse(timeout: timeout)
}
