import Testing
@testable import ScaleWeb

@Suite struct AdmissionTests {
    private func scan(_ text: String, bytes: Int = 64, lines: Int = 4) -> RequestHeadScan {
        Array(text.utf8).withUnsafeBytes { RequestHeadScan.scan($0, maximumBytes: bytes, maximumLines: lines) }
    }

    @Test func aHeadIsWholeAtItsEmptyLine() {
        #expect(scan("GET / HTTP/1.1\r\nHost: x\r\n\r\n") == .complete(length: 27))
        #expect(scan("GET / HTTP/1.1\nHost: x\n\n") == .complete(length: 24))
        // The body that follows is not looked at.
        #expect(scan("POST / HTTP/1.1\r\nHost: x\r\n\r\nbody") == .complete(length: 28))
        // Empty lines before the request line are skipped (RFC 9112, 2.2).
        #expect(scan("\r\nGET / HTTP/1.1\r\n\r\n") == .complete(length: 20))
        #expect(scan("GET / HTTP/1.1\r\nHost: x\r\n") == .incomplete)
        #expect(scan("") == .incomplete)
    }

    @Test func aHeadPastItsBytesOrLinesIsTooLarge() {
        let sixtyFour = "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 41) + "\r\n\r\n"
        #expect(sixtyFour.utf8.count == 64)
        #expect(scan(sixtyFour) == .complete(length: 64))
        #expect(scan("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 42) + "\r\n\r\n") == .tooLarge)
        // Too long already, before its end has come.
        #expect(scan("GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 100)) == .tooLarge)
        #expect(scan("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\n\r\n") == .complete(length: 36))
        #expect(scan("GET / HTTP/1.1\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\n") == .tooLarge)
    }

    @Test func aNewConnectionTakesTheOldestWaitingPlaceOnlyPastALimit() {
        let policy = AdmissionPolicy(connections: 10, connectionsPerAddress: 6)
        #expect(policy.decide(held: 9, heldFromAddress: 5) == .admit)
        #expect(policy.decide(held: 10, heldFromAddress: 0) == .admitInPlaceOfOldestWaiting(sameAddress: false))
        #expect(policy.decide(held: 7, heldFromAddress: 6) == .admitInPlaceOfOldestWaiting(sameAddress: true))
    }
}
