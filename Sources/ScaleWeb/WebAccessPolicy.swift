/// What a request may do, by the credential it carries (docs/web.md, "Access"): pure, so
/// that the rules are tested without sockets.
///
/// forcescale-web makes two random keys at each start (`WebKeys`) and writes them into
/// files that only those allowed may read: the *read key* for whoever may read the daemon's
/// socket, the *control key* (with `--allow-control`) for the control group. A request
/// proves its right with one of them: in `Authorization: Bearer KEY` (curl, Prometheus's
/// `credentials_file`), or in the cookie that a GET of `?key=KEY` sets and answers with a
/// redirect to the address without the key (what `forcescale-web-open` and `make run`
/// open), as Jupyter Server does with its token. Nothing else gets data, except `/metrics`
/// when the admin made it public (`--public-metrics`).
package struct WebAccess: Sendable {
    /// What a credential allows, each right including the one before.
    package enum Right: Int, Sendable, Comparable, CustomStringConvertible {
        case none, read, control
        package static func < (left: Right, right: Right) -> Bool { left.rawValue < right.rawValue }
        package var description: String {
            switch self {
            case .none: "no key"
            case .read: "the read key"
            case .control: "the control key"
            }
        }
    }

    /// What to do with a request before it reaches its endpoint.
    package enum Decision: Sendable, Equatable {
        /// Serve it, with this right (`.none` only for public metrics).
        case serve(Right)
        /// 303 See Other to `location` (the address without the key), setting the cookie.
        case exchange(location: String, setCookie: String)
        /// 401: no valid credential, with why.
        case unauthorized(String)
    }

    let readKey: String
    let controlKey: String?
    /// The cookie's name: `forcescale-web-PORT`, since browsers keep cookies per host and
    /// not per port, so that two forcescale-web on one machine (the service and `make
    /// run`) do not overwrite each other's.
    package let cookieName: String
    let publicMetrics: Bool

    /// - Parameters:
    ///   - readKey: The read key.
    ///   - controlKey: The control key, when control is allowed at all.
    ///   - port: The port served, for the cookie's name.
    ///   - publicMetrics: Whether `/metrics` is served without a key.
    package init(readKey: String, controlKey: String?, port: UInt16, publicMetrics: Bool) {
        self.readKey = readKey
        self.controlKey = controlKey
        cookieName = "forcescale-web-\(port)"
        self.publicMetrics = publicMetrics
    }

    /// The right a key gives: compared in time that does not depend on where the key
    /// differs, so that timing does not tell a guess's right prefix.
    package func right(ofKey key: Substring) -> Right {
        if let controlKey, Self.same(key, controlKey) { return .control }
        if Self.same(key, readKey) { return .read }
        return .none
    }

    /// The best right among the credentials a request carries: `Authorization: Bearer KEY`
    /// and every `Cookie` value of this server's name.
    package func right(authorization: String?, cookie: String?) -> Right {
        var best = Right.none
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
            if parts.count == 2, parts[0].lowercased() == "bearer" {
                best = max(best, right(ofKey: parts[1].drop { $0 == " " }))
            }
        }
        for pair in (cookie ?? "").split(separator: ";") {
            let trimmed = pair.drop { $0 == " " }
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals] == cookieName else { continue }
            best = max(best, right(ofKey: trimmed[trimmed.index(after: equals)...]))
        }
        return best
    }

    /// Decides what a request may do before its endpoint is looked at.
    /// - Parameters:
    ///   - method: `GET`, `POST`…
    ///   - path: The path without its query.
    ///   - queryKey: The query's `key`, when it has one.
    ///   - authorization: The `Authorization` header.
    ///   - cookie: The `Cookie` header.
    package func decide(method: String, path: String, queryKey: String?, authorization: String?, cookie: String?) -> Decision {
        if let queryKey, method == "GET" || method == "HEAD" {
            guard right(ofKey: Substring(queryKey)) > .none else {
                return .unauthorized("the key in the address is not this forcescale-web's (it makes new keys each time it starts): open the page again with forcescale-web-open, or the address make run printed")
            }
            // Back to the same path on this server: never `//host` (another server, to a
            // browser) nor anything but plain printable ASCII in a header.
            let plain = path.hasPrefix("/") && !path.hasPrefix("//") && path.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F }
            // SameSite=Strict: another site's page never sends it, not even by a link.
            return .exchange(location: plain ? path : "/", setCookie: "\(cookieName)=\(queryKey); HttpOnly; SameSite=Strict; Path=/")
        }
        let right = right(authorization: authorization, cookie: cookie)
        if right > .none { return .serve(right) }
        if publicMetrics, path == WebEndpoint.metrics.rawValue { return .serve(.none) }
        return .unauthorized(
            "a key is needed: open the page with forcescale-web-open as a member of the group that may read forcescaled's socket, or send Authorization: Bearer with the read key (forcescale-web(1))")
    }

    private static func same(_ given: Substring, _ key: String) -> Bool {
        let a = Array(given.utf8), b = Array(key.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// Which `Host` a request may name (docs/web.md, "Host names"): pure, tested without
/// sockets. A page of another site whose name is made to resolve to this machine (DNS
/// rebinding) sends its own name as `Host`; forcescale-web answers only the names an
/// attacker's DNS cannot give (the listening address's literals, `localhost`) and those the
/// admin names with `--allow-host`. The port is not compared: a tunnel (`ssh -L`) or a
/// proxy changes it, and it does not tell a rebinding page apart.
package struct WebHostPolicy: Sendable {
    /// The address listened on, without brackets (`127.0.0.1`, `::1`, `0.0.0.0`).
    let listenHost: String
    /// Names the admin allows, in lower case.
    let names: Set<String>

    package init(listenHost: String, names: [String]) {
        self.listenHost = listenHost.lowercased()
        self.names = Set(names.map { $0.lowercased() })
    }

    /// Whether the `Host` header `host` (`127.0.0.1:19385`, `[::1]`, `localhost`) is one
    /// of this server's names.
    package func allows(_ host: String?) -> Bool {
        guard let name = Self.name(ofHost: host ?? "") else { return false }
        if name == "localhost" || name == "127.0.0.1" || name == "::1" || name == listenHost || names.contains(name) { return true }
        // Listening on every address: any address names it.
        if listenHost == "0.0.0.0" || listenHost == "::" { return Self.isAddress(name) }
        return false
    }

    /// A `Host` header's name without its port and brackets, in lower case; `nil` when it
    /// is not of the form NAME, NAME:PORT, [V6] or [V6]:PORT.
    static func name(ofHost host: String) -> String? {
        var rest = Substring(host.lowercased())
        let name: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            name = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            guard name.contains(":") else { return nil }
        } else if let colon = rest.firstIndex(of: ":") {
            name = rest[..<colon]
            rest = rest[colon...]
        } else {
            name = rest
            rest = ""
        }
        if !rest.isEmpty {
            guard rest.hasPrefix(":"), rest.count > 1, rest.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        guard !name.isEmpty, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-.:_".contains($0)) }) else { return nil }
        return String(name)
    }

    /// Whether `name` is a numeric IPv4 or IPv6 address.
    static func isAddress(_ name: String) -> Bool {
        if name.contains(":") { return name.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." } }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
