import ScalePOSIX
import ScaleTestSupport
import Testing

/// A server on a fresh socket in a temporary directory, recording what its callbacks see.
final class ServerHarness {
    let directory = TemporaryDirectory()
    let loop: EventLoop
    let server: SocketServer
    var socketPath: String { directory.path + "/forcescale.sock" }

    private(set) var connected: [ClientConnection] = []
    private(set) var lines: [(client: Int, line: String)] = []
    private(set) var oversized: [Int] = []
    private(set) var disconnected: [(client: Int, reason: DisconnectReason)] = []
    /// Called for each line after it is recorded; the default does nothing.
    var respond: (ClientConnection, String) -> Void = { _, _ in }
    var respondToOversized: (ClientConnection) -> Void = { client in
        client.send(#"{"class":"ERROR","message":"line too long"}"#)
        client.close(afterFlushing: true)
    }

    init(limits: SocketServer.Limits = SocketServer.Limits()) throws {
        loop = try EventLoop()
        let listener = try UnixListener(path: directory.path + "/forcescale.sock")
        server = try SocketServer(listener: listener, loop: loop, limits: limits)
        server.onConnect = { [unowned self] client in connected.append(client) }
        server.onLine = { [unowned self] client, bytes in
            let line = String(decoding: bytes, as: UTF8.self)
            lines.append((client.id, line))
            respond(client, line)
        }
        server.onOversizedLine = { [unowned self] client in
            oversized.append(client.id)
            respondToOversized(client)
        }
        server.onDisconnect = { [unowned self] client, reason in disconnected.append((client.id, reason)) }
        server.onError = { error in Issue.record("server error: \(error)") }
    }

    deinit {
        // Its callbacks point back here, and this object is going.
        server.onDisconnect = { _, _ in }
        server.close()
    }

    /// Connects a client and runs the loop until the server has accepted it.
    /// - Returns: The test's end and the server's.
    func connect() throws -> (TestClient, ClientConnection) {
        let before = connected.count
        let client = try TestClient(path: socketPath)
        try pump(loop, "the server to accept a connection") { connected.count > before }
        return (client, connected[before])
    }

    /// Lets go of the connections it was told of, so that a test can see them freed.
    func forgetConnections() { connected.removeAll() }

    func linesFrom(_ client: ClientConnection) -> [String] {
        lines.filter { $0.client == client.id }.map(\.line)
    }
}
