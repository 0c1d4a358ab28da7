import Testing
@testable import ScaleWeb

/// Who gets in (WebAccess), which Host names are this server's (WebHostPolicy), and who may
/// control (WebControlPolicy with the credential's right), without sockets.
@Suite struct AccessPolicyTests {
    static let read = String(repeating: "3f", count: 32)
    static let control = String(repeating: "a9", count: 32)
    static let access = WebAccess(readKey: read, controlKey: control, port: 19385, publicMetrics: false)

    @Test func eachKeyGivesItsRightAndNothingElseGivesAny() {
        let access = Self.access
        #expect(access.right(ofKey: Substring(Self.read)) == .read)
        #expect(access.right(ofKey: Substring(Self.control)) == .control)
        // A key one digit off, a prefix, one longer, empty: nothing.
        #expect(access.right(ofKey: Substring(String(Self.read.dropLast()) + "e")) == .none)
        #expect(access.right(ofKey: Substring(Self.read.dropLast())) == .none)
        #expect(access.right(ofKey: Substring(Self.read + "0")) == .none)
        #expect(access.right(ofKey: "") == .none)
        // Without --allow-control there is no control key to match.
        let readOnly = WebAccess(readKey: Self.read, controlKey: nil, port: 19385, publicMetrics: false)
        #expect(readOnly.right(ofKey: Substring(Self.control)) == .none)
    }

    @Test func aBearerHeaderOrThisPortsCookieCarriesTheKey() {
        let access = Self.access
        #expect(access.right(authorization: "Bearer \(Self.read)", cookie: nil) == .read)
        #expect(access.right(authorization: "bearer \(Self.control)", cookie: nil) == .control)
        #expect(access.right(authorization: "Basic \(Self.read)", cookie: nil) == .none)
        #expect(access.right(authorization: Self.read, cookie: nil) == .none)
        #expect(access.right(authorization: nil, cookie: "a=b; forcescale-web-19385=\(Self.read); c=d") == .read)
        // Another forcescale-web's cookie on the same host (another port) is not this one's.
        #expect(access.right(authorization: nil, cookie: "forcescale-web-8080=\(Self.control)") == .none)
        #expect(access.right(authorization: nil, cookie: "forcescale-web-19385=\(Self.control)x") == .none)
        // The best of several.
        #expect(access.right(authorization: "Bearer \(Self.read)", cookie: "forcescale-web-19385=\(Self.control)") == .control)
        #expect(access.right(authorization: nil, cookie: nil) == .none)
    }

    @Test func aKeyInTheAddressIsExchangedForACookieAndTakenOut() {
        let access = Self.access
        #expect(access.decide(method: "GET", path: "/", queryKey: Self.control, authorization: nil, cookie: nil)
            == .exchange(location: "/", setCookie: "forcescale-web-19385=\(Self.control); HttpOnly; SameSite=Strict; Path=/"))
        // The redirect stays on this server and in one header line.
        for path in ["//evil.example/", "/a\r\nSet-Cookie: x=y", "evil"] {
            guard case .exchange(let location, _) = access.decide(method: "GET", path: path, queryKey: Self.read, authorization: nil, cookie: nil) else {
                Issue.record("\(path) was not exchanged")
                continue
            }
            #expect(location == "/", "\(path)")
        }
        #expect(access.decide(method: "GET", path: "/api/sessions/3.csv", queryKey: Self.read, authorization: nil, cookie: nil)
            == .exchange(location: "/api/sessions/3.csv", setCookie: "forcescale-web-19385=\(Self.read); HttpOnly; SameSite=Strict; Path=/"))
        guard case .unauthorized(let why) = access.decide(method: "GET", path: "/", queryKey: "guess", authorization: nil, cookie: nil) else {
            Issue.record("a wrong key in the address got in")
            return
        }
        #expect(why.contains("forcescale-web-open"))
        // Only a GET exchanges: a POST's query key is no credential.
        guard case .unauthorized = access.decide(method: "POST", path: "/api/tare", queryKey: Self.control, authorization: nil, cookie: nil) else {
            Issue.record("a POST with a key in its query got in")
            return
        }
    }

    @Test func everyEndpointNeedsAKeyButMetricsWhenMadePublic() {
        for path in ["/", "/page.js", "/events", "/api/status", "/api/sessions", "/api/sessions/1.csv", "/metrics", "/nope"] {
            guard case .unauthorized = Self.access.decide(method: "GET", path: path, queryKey: nil, authorization: nil, cookie: nil) else {
                Issue.record("\(path) without a key was let in")
                continue
            }
            #expect(Self.access.decide(method: "GET", path: path, queryKey: nil, authorization: "Bearer \(Self.read)", cookie: nil) == .serve(.read))
        }
        let publicMetrics = WebAccess(readKey: Self.read, controlKey: nil, port: 19385, publicMetrics: true)
        #expect(publicMetrics.decide(method: "GET", path: "/metrics", queryKey: nil, authorization: nil, cookie: nil) == .serve(.none))
        guard case .unauthorized = publicMetrics.decide(method: "GET", path: "/api/status", queryKey: nil, authorization: nil, cookie: nil) else {
            Issue.record("--public-metrics opened more than /metrics")
            return
        }
    }

    @Test func controlNeedsTheControlKeyAsWellAsTheFlagAndTheOrigin() {
        let origin = "http://127.0.0.1:19385", host = "127.0.0.1:19385"
        #expect(WebControlPolicy.refusal(allowControl: true, right: .control, origin: origin, host: host) == nil)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .read, origin: origin, host: host)?.contains("control key") == true)
        #expect(WebControlPolicy.refusal(allowControl: true, right: .none, origin: origin, host: host) != nil)
        #expect(WebControlPolicy.refusal(allowControl: false, right: .control, origin: origin, host: host)?.contains("--allow-control") == true)
    }

    @Test func theHostMustBeThisServersAddressLocalhostOrANameTheAdminAllowed() {
        let loopback = WebHostPolicy(listenHost: "127.0.0.1", names: [])
        for host in ["127.0.0.1:19385", "127.0.0.1", "localhost:19385", "LOCALHOST", "[::1]:19385", "[::1]", "localhost:8080"] {
            #expect(loopback.allows(host), "\(host)")
        }
        for host in ["rebind.attacker.example:19385", "rebind.attacker.example", "192.168.1.20:19385", "127.0.0.1.nip.io:19385",
                     "", "127.0.0.1:", "127.0.0.1:x", "[::1", "local host", "localhost:19385@evil"] {
            #expect(!loopback.allows(host), "\(host)")
        }
        #expect(!loopback.allows(nil))
        // Every address: any literal, still no name.
        let wildcard = WebHostPolicy(listenHost: "0.0.0.0", names: ["Scale.Lan"])
        #expect(wildcard.allows("192.168.1.20:19385") && wildcard.allows("[fe80::1]:19385") && wildcard.allows("10.0.0.1"))
        #expect(wildcard.allows("scale.lan:19385") && wildcard.allows("SCALE.LAN"))
        #expect(!wildcard.allows("rebind.attacker.example:19385") && !wildcard.allows("scale.lan.attacker.example"))
        // One address: that one.
        let lan = WebHostPolicy(listenHost: "192.168.1.20", names: [])
        #expect(lan.allows("192.168.1.20:19385") && !lan.allows("192.168.1.21:19385"))
        let six = WebHostPolicy(listenHost: "::1", names: [])
        #expect(six.allows("[::1]:19385") && !six.allows("[fe80::1]:19385"))
    }
}
