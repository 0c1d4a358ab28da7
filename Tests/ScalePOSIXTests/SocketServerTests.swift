import Glibc
@testable import ScalePOSIX
import ScaleTestSupport
import TestWaiting
import Testing

@Suite struct SocketServerTests {
    @Test func echoesALineBackToItsClient() throws {
        let harness = try ServerHarness()
        harness.respond = { client, line in client.send("ECHO " + line) }
        let (client, connection) = try harness.connect()
        client.send("hello\n")
        try pump(harness.loop, "the echo of 'hello'", saw: { "\(client.lines)" }) { client.readAvailable(); return client.lines.count == 1 }
        #expect(client.lines == ["ECHO hello"])
        #expect(harness.linesFrom(connection) == ["hello"])
        #expect(connection.label.hasPrefix("client 1 (pid \(getpid())"))
    }

    @Test func linesSplitAcrossReadsAreJoined() throws {
        let harness = try ServerHarness()
        let (client, connection) = try harness.connect()
        client.send("HEL")
        // Not a line until its end comes: looked at once the server has read the bytes.
        try pump(harness.loop, "the server to read 'HEL'", saw: { "\(unreadBytes(connection.descriptor)) bytes unread" }) {
            unreadBytes(connection.descriptor) == 0
        }
        #expect(harness.lines.isEmpty)
        client.send("LO\r\nWOR")
        try pump(harness.loop, "the line HELLO", saw: { "\(harness.lines)" }) { harness.lines.count == 1 }
        client.send("LD\n\n")
        // The empty line after WORLD is no line: looked at once all of it has been read.
        try pump(harness.loop, "the line WORLD and the server to read the rest", saw: { "\(harness.lines)" }) {
            harness.lines.count == 2 && unreadBytes(connection.descriptor) == 0
        }
        #expect(harness.linesFrom(connection) == ["HELLO", "WORLD"])
    }

    /// The first line sent to a client in a wake-up of the loop goes to its socket at once;
    /// the ones after it in that wake-up go out together when its handlers are done, in one
    /// `send`: none of them has reached the client while the handler still runs.
    @Test func theLaterLinesOfOneWakeUpGoOutTogetherAfterIt() throws {
        let harness = try ServerHarness()
        let (client, connection) = try harness.connect()
        var seenInsideTheWakeUp: [String]?
        harness.respond = { connection, line in
            connection.send("one for \(line)")
            connection.send("two for \(line)")
            connection.send("three for \(line)", droppable: true)
            try? waitFor("the first line, sent at once", saw: { "\(client.lines)" }) {
                client.readAvailable()
                return !client.lines.isEmpty
            }
            client.readAvailable()
            seenInsideTheWakeUp = client.lines
        }
        client.send("go\n")
        try pump(harness.loop, "the three lines", saw: { "\(client.lines)" }) { client.readAvailable(); return client.lines.count == 3 }
        #expect(seenInsideTheWakeUp == ["one for go"])
        #expect(client.lines == ["one for go", "two for go", "three for go"])
        // In the next wake-up the first line goes at once again.
        client.send("again\n")
        var seenInsideTheNextWakeUp: [String]?
        harness.respond = { connection, line in
            connection.send("one for \(line)")
            try? waitFor("the next wake-up's first line, sent at once", saw: { "\(client.lines)" }) {
                client.readAvailable()
                return client.lines.count == 4
            }
            seenInsideTheNextWakeUp = client.lines
        }
        try pump(harness.loop, "the line for again", saw: { "\(client.lines)" }) { client.readAvailable(); return client.lines.count == 4 }
        #expect(seenInsideTheNextWakeUp?.last == "one for again")
        // Outside a wake-up (set-up code, a shutdown) a line goes at once.
        connection.send("at once")
        try waitFor("the line sent outside a wake-up, without running the loop", saw: { "\(client.lines)" }) {
            client.readAvailable()
            return client.lines.last == "at once"
        }
    }

    @Test func everyOneOfManyClientsGetsABroadcast() throws {
        let harness = try ServerHarness()
        var clients: [TestClient] = []
        for _ in 0..<120 { clients.append(try harness.connect().0) }
        #expect(harness.server.clients.count == 120)
        harness.server.broadcast(#"{"class":"READING","grams":12.5}"#)
        try pump(harness.loop, "the broadcast to reach all 120 clients", saw: { "\(clients.filter { $0.lines.count == 1 }.count) with it" }) {
            clients.forEach { $0.readAvailable() }
            return clients.allSatisfy { $0.lines.count == 1 }
        }
        #expect(clients.allSatisfy { $0.lines == [#"{"class":"READING","grams":12.5}"#] })
    }

    @Test func broadcastGoesOnlyToTheClientsChosen() throws {
        let harness = try ServerHarness()
        let (first, _) = try harness.connect()
        let (second, secondConnection) = try harness.connect()
        harness.server.broadcast("only the second", to: { $0.id == secondConnection.id })
        try pump(harness.loop, "the second client to get its line", saw: { "\(second.lines)" }) { second.readAvailable(); return second.lines.count == 1 }
        // A later line to both: the first client gets lines in order, so once this one is
        // there, the line meant for the second alone would have come before it.
        harness.server.broadcast("to both")
        try pump(harness.loop, "the first client to get the line sent to both", saw: { "\(first.lines)" }) {
            first.readAvailable()
            return first.lines.contains("to both")
        }
        #expect(first.lines == ["to both"])
        #expect(second.lines == ["only the second"] || second.lines == ["only the second", "to both"])
    }

    /// The slow client's oldest readings make way for new ones; its replies all arrive, in
    /// order; and a fast client beside it misses nothing.
    @Test func aClientThatDoesNotReadLosesOldReadingsButNoReplies() throws {
        let harness = try ServerHarness(limits: SocketServer.Limits(maximumQueuedLines: 16))
        let (slow, slowConnection) = try harness.connect()
        let (fast, fastConnection) = try harness.connect()
        let padding = String(repeating: "x", count: 500)
        let readings = 3000
        var replies: [String] = []
        for number in 0..<readings {
            harness.server.broadcast("READING \(number) \(padding)")
            if number % 100 == 99 {
                let reply = "REPLY \(replies.count)"
                replies.append(reply)
                slowConnection.send(reply)
            }
            if number % 50 == 49 {
                _ = try harness.loop.runOnce(timeoutMilliseconds: 0)
                fast.readAvailable()
            }
        }
        #expect(slowConnection.droppedCount > 0)
        #expect(slowConnection.queuedLineCount > 16)     // replies do not count against the limit
        try pump(harness.loop, "the fast client to get all \(readings) readings", saw: { "\(fast.lines.count)" }) {
            fast.readAvailable()
            return fast.lines.count == readings
        }
        #expect(fastConnection.droppedCount == 0)

        // Now the slow client reads everything.
        try pump(harness.loop, "the slow client to get everything queued for it, ending with \(replies.last ?? "")",
                 saw: { "\(slow.lines.count) lines, the last \(slow.lines.last ?? "none"); \(slowConnection.queuedLineCount) still queued" }) {
            slow.readAvailable()
            return slow.lines.last == replies.last && slowConnection.queuedLineCount == 0
        }
        let received = slow.lines
        #expect(received.filter { $0.hasPrefix("REPLY") } == replies)
        let numbers = received.filter { $0.hasPrefix("READING") }.map { Int($0.split(separator: " ")[1])! }
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
        #expect(numbers.count + slowConnection.droppedCount == readings)
        #expect(numbers.last == readings - 1)      // the newest survive
    }

    @Test func aClientThatAsksButNeverReadsIsDisconnected() throws {
        let harness = try ServerHarness(limits: SocketServer.Limits(maximumQueuedReplyBytes: 64 * 1024))
        let (client, connection) = try harness.connect()
        defer { withExtendedLifetime(client) {} }      // connected, but never reading
        let reply = String(repeating: "r", count: 1023)
        for _ in 0..<2000 where connection.isOpen { connection.send(reply) }
        #expect(!connection.isOpen)
        try pump(harness.loop, "the server to report the disconnection") { !harness.disconnected.isEmpty }
        #expect(harness.disconnected.first?.reason == .unresponsive(limit: 64 * 1024))
        #expect(harness.server.clients.isEmpty)
    }

    /// With SIGPIPE's default action, a write to a vanished client without MSG_NOSIGNAL would
    /// kill this process; the test surviving is the point.
    @Test func aClientVanishingMidWriteCostsNothing() throws {
        var previous = sigaction()
        var fallback = sigaction()
        fallback.__sigaction_handler.sa_handler = SIG_DFL
        sigaction(SIGPIPE, &fallback, &previous)
        defer { sigaction(SIGPIPE, &previous, nil) }

        let harness = try ServerHarness()
        let (vanishing, vanishingConnection) = try harness.connect()
        let (staying, _) = try harness.connect()
        // Fill the vanishing client's socket so that lines are queued, mid-write.
        let padding = String(repeating: "y", count: 4000)
        for number in 0..<200 { vanishingConnection.send("R \(number) \(padding)") }
        #expect(vanishingConnection.queuedLineCount > 0)
        vanishing.close()
        // Writing before the loop has noticed: send fails with EPIPE, not a signal.
        harness.server.broadcast("after")
        try pump(harness.loop, "the server to report the vanished client") { !harness.disconnected.isEmpty }
        let reason = harness.disconnected.first?.reason
        #expect(reason == .failed(.brokenPipe) || reason == .failed(Errno(rawValue: ECONNRESET)))
        try pump(harness.loop, "the staying client to get 'after'", saw: { "\(staying.lines)" }) {
            staying.readAvailable()
            return staying.lines == ["after"]
        }
    }

    /// The loop's handler for a client holds it (no weak reference, which would send every
    /// retain of it through the runtime's slow path) only until the client is gone.
    @Test func aClientThatHasGoneIsFreed() throws {
        let harness = try ServerHarness()
        let client: TestClient
        weak let gone: ClientConnection?
        do {
            let (connected, connection) = try harness.connect()
            client = connected
            gone = connection
        }
        harness.forgetConnections()
        #expect(gone != nil, "the server holds its connected client")
        client.close()
        try pump(harness.loop, "the server to report the client gone") { !harness.disconnected.isEmpty }
        #expect(gone == nil, "the connection of a client that has gone is still held")
    }

    @Test func aLineTooLongIsReportedAndTheClientGetsAnError() throws {
        let harness = try ServerHarness()
        let (client, connection) = try harness.connect()
        client.send(String(repeating: "z", count: 70 * 1024))
        try pump(harness.loop, "the server to report the line too long") { !harness.oversized.isEmpty }
        client.send("\n{\"class\":\"POLL\"}\n")
        try pump(harness.loop, "the server to close the connection", saw: { "\(client.lines)" }) { client.readAvailable(); return client.status != .open }
        #expect(client.lines == [#"{"class":"ERROR","message":"line too long"}"#])
        #expect(client.status == .endOfFile)
        #expect(harness.oversized == [connection.id])
        #expect(harness.lines.isEmpty)
        #expect(harness.disconnected.map(\.reason) == [.closedByServer])
    }

    @Test func aClientThatStopsSendingStillGetsItsReplies() throws {
        let harness = try ServerHarness()
        harness.respond = { client, line in client.send("PONG " + line) }
        let (client, _) = try harness.connect()
        client.send("PING\n")
        client.shutdownWriting()           // as `nc -N` does
        try pump(harness.loop, "the server to answer and close", saw: { "\(client.lines)" }) { client.readAvailable(); return client.status != .open }
        #expect(client.lines == ["PONG PING"])
        #expect(client.status == .endOfFile)
        #expect(harness.disconnected.map(\.reason) == [.peerClosed])
    }

    @Test func closingWithoutFlushingEndsAtOnceAndSendsNothingMore() throws {
        let harness = try ServerHarness()
        let (client, connection) = try harness.connect()
        connection.close(afterFlushing: false)
        connection.send("never")
        try pump(harness.loop, "the server to report the close") { !harness.disconnected.isEmpty }
        try pump(harness.loop, "the client to see the end", saw: { "\(client.lines)" }) { client.readAvailable(); return client.status != .open }
        #expect(client.lines.isEmpty)
        #expect(connection.disconnectReason == .closedByServer)
    }

    @Test func peerCredentialsAreThisProcess() throws {
        let harness = try ServerHarness()
        let (client, connection) = try harness.connect()
        defer { withExtendedLifetime(client) {} }
        let credentials = try #require(connection.credentials)
        #expect(credentials.pid == getpid())
        #expect(credentials.uid == getuid())
        #expect(credentials.gid == getgid())
        #expect(credentials.isAuthorized(group: nil))
    }

    @Test func closingTheServerDisconnectsEveryoneAndRemovesTheSocket() throws {
        let harness = try ServerHarness()
        let (client, _) = try harness.connect()
        let (other, _) = try harness.connect()
        defer { withExtendedLifetime(other) {} }
        harness.server.close()
        #expect(harness.disconnected.map(\.reason) == [.serverShutdown, .serverShutdown])
        #expect(fileStatus(harness.socketPath) == nil)
        client.readAvailable()
        #expect(client.status == .endOfFile)
    }
}
