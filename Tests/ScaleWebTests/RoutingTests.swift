import Testing
@testable import ScaleWeb

@Suite struct RoutingTests {
    @Test func eachPathTakesItsMethods() {
        #expect(RouteDecision.route(method: "GET", path: "/") == .endpoint(.page))
        #expect(RouteDecision.route(method: "HEAD", path: "/metrics") == .endpoint(.metrics))
        #expect(RouteDecision.route(method: "GET", path: "/events") == .endpoint(.events))
        #expect(RouteDecision.route(method: "GET", path: "/api/status") == .endpoint(.status))
        #expect(RouteDecision.route(method: "POST", path: "/api/tare") == .endpoint(.tare))
        #expect(RouteDecision.route(method: "GET", path: "/api/tare") == .methodNotAllowed(allow: "POST"))
        #expect(RouteDecision.route(method: "POST", path: "/metrics") == .methodNotAllowed(allow: "GET, HEAD"))
        #expect(RouteDecision.route(method: "DELETE", path: "/") == .methodNotAllowed(allow: "GET, HEAD"))
        #expect(RouteDecision.route(method: "GET", path: "/nope") == .notFound)
        #expect(RouteDecision.route(method: "GET", path: "/metrics/") == .notFound)
        #expect(RouteDecision.route(method: "GET", path: "") == .notFound)
    }

    @Test func aSessionPathNamesItsIdAndForm() {
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions") == .endpoint(.sessions))
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions/12") == .session(id: 12, .summary))
        #expect(RouteDecision.route(method: "HEAD", path: "/api/sessions/12.csv") == .session(id: 12, .csv))
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions/007.json") == .session(id: 7, .json))
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions/12.svg") == .session(id: 12, .svg))
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions/12.txt") == .notFound)
        #expect(RouteDecision.route(method: "GET", path: "/api/sessions/12.csv/x") == .notFound)
        #expect(RouteDecision.route(method: "POST", path: "/api/sessions/12.txt") == .notFound)
        #expect(RouteDecision.route(method: "POST", path: "/api/sessions/12") == .methodNotAllowed(allow: "GET, HEAD"))
        for bad in ["", "abc", "-1", "+1", "1e3", "١٢", "12a.csv", ".csv", "99999999999999999999", " 12", "3.5", "3.", "1.5.csv", "abc.txt"] {
            guard case .badRequest(let message) = RouteDecision.route(method: "GET", path: "/api/sessions/" + bad) else {
                Issue.record("'\(bad)' is not a bad request")
                continue
            }
            #expect(message.contains("not a session id"))
        }
    }

    @Test func tareNeedsTheFlagAndThePagesOwnOrigin() {
        let host = "127.0.0.1:19385"
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://127.0.0.1:19385", host: host) == nil)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://localhost:19385", host: "localhost:19385") == nil)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://[::1]:19385", host: "[::1]:19385") == nil)
        #expect(WebControlPolicy.refusal(allowControl: false, right: .control, origin: "http://127.0.0.1:19385", host: host)?.contains("--allow-control") == true)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: nil, host: host)?.contains("Origin") == true)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "null", host: host) != nil)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://evil.example", host: host)?.contains("not this server") == true)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "https://127.0.0.1:19385", host: host) != nil)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://127.0.0.1:19386", host: host) != nil)
        // DNS rebinding: a name of the attacker's that resolves here agrees with itself.
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://evil.example:19385", host: "evil.example:19385")?.contains("address") == true)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: "http://1.2.3.4.evil:19385", host: "1.2.3.4.evil:19385") != nil)
    }

    @Test func listenAddressesAreNumericWithAPort() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:19385") == ListenAddress(host: "127.0.0.1", port: 19385))
        #expect(try ListenAddress(parsing: "0.0.0.0:80") == ListenAddress(host: "0.0.0.0", port: 80))
        #expect(try ListenAddress(parsing: "[::1]:8080") == ListenAddress(host: "::1", port: 8080))
        #expect(try ListenAddress(parsing: "localhost:0") == ListenAddress(host: "127.0.0.1", port: 0))
        #expect(try ListenAddress(parsing: "[::1]:8080").description == "[::1]:8080")
        #expect(ListenAddress.default.description == "127.0.0.1:19385")
        #expect(ListenAddress.default.isLoopback)
        #expect(try !ListenAddress(parsing: "0.0.0.0:1").isLoopback)
        for bad in ["19385", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "example.com:80", "::1:80", "[::1]80", "[zz]:80", "1.2.3:80", "256.0.0.1:80"] {
            #expect(throws: ListenAddressError.self, "\(bad)") { try ListenAddress(parsing: bad) }
        }
    }
}
