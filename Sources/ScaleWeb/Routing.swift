/// Which endpoint a request is for, and whether its method is one that endpoint takes
/// (docs/web.md, "Endpoints"). Pure, so that the answers to bad requests are tested
/// without a socket.
public enum WebEndpoint: String, Sendable, Hashable, CaseIterable {
    case page = "/"
    case events = "/events"
    case status = "/api/status"
    case tare = "/api/tare"
    case metrics = "/metrics"

    /// The methods it takes, as the `Allow` header of a 405 lists them.
    public var allowedMethods: [String] {
        switch self {
        case .tare: return ["POST"]
        default: return ["GET", "HEAD"]
        }
    }
}

/// What to do with a request line.
public enum RouteDecision: Sendable, Hashable {
    case endpoint(WebEndpoint)
    /// 404: no such path.
    case notFound
    /// 405, with the `Allow` header's value.
    case methodNotAllowed(allow: String)

    /// Decides from the method and the path (libmicrohttpd hands the path without its query).
    public static func route(method: String, path: String) -> RouteDecision {
        guard let endpoint = WebEndpoint(rawValue: path) else { return .notFound }
        guard endpoint.allowedMethods.contains(method) else {
            return .methodNotAllowed(allow: endpoint.allowedMethods.joined(separator: ", "))
        }
        return .endpoint(endpoint)
    }
}

/// Who may tare through the web (docs/web.md, "Control"): only when forcescale-web was
/// started with `--allow-control`, and only a request from the page's own origin.
///
/// A browser sends `Origin` with every POST; a page of another site that posts to this
/// server has its own origin there, so comparing `Origin` with `Host` refuses it. That
/// alone would let a site whose name is made to resolve to this machine (DNS rebinding)
/// through, since its `Host` and `Origin` agree; so the host must also be an address
/// (`127.0.0.1`, `[::1]`, `192.168.1.20`) or `localhost`, names that an attacker's DNS
/// cannot give.
public enum ControlPolicy {
    /// Why a control request is refused; `nil` when it is allowed.
    /// - Parameters:
    ///   - allowControl: Whether `--allow-control` was given.
    ///   - origin: The `Origin` header.
    ///   - host: The `Host` header.
    public static func refusal(allowControl: Bool, origin: String?, host: String?) -> String? {
        guard allowControl else { return "control is off: start forcescale-web with --allow-control" }
        guard let origin, origin != "null" else { return "no Origin header: only the dashboard page may tare" }
        guard let host, !host.isEmpty else { return "no Host header" }
        guard origin.lowercased() == "http://" + host.lowercased() else {
            return "Origin \(origin) is not this server's (http://\(host))"
        }
        guard isAddressOrLocalhost(host: host) else {
            return "open the dashboard by address or as localhost to tare (Host \(host) could be another site's name)"
        }
        return nil
    }

    /// Whether a `Host` header's host part is a literal address or `localhost`.
    static func isAddressOrLocalhost(host: String) -> Bool {
        var name = Substring(host)
        if name.hasPrefix("[") {
            // [v6]:port
            guard let close = name.firstIndex(of: "]") else { return false }
            return name[name.index(after: name.startIndex)..<close].allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        }
        if let colon = name.lastIndex(of: ":") { name = name[..<colon] }
        if name.lowercased() == "localhost" { return true }
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}

/// `--listen`'s value: a numeric address and a port.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.1`, `0.0.0.0`, `::1` (without brackets).
    public var host: String
    public var port: UInt16

    /// The default port: outside 9100–9999, the range of the Prometheus wiki's "Default
    /// port allocations" (all taken since 2023), and outside the numbers it gives out after
    /// that range, outside Linux's ephemeral ports (32768–60999), and not in /etc/services.
    public static let defaultPort: UInt16 = 19385
    /// Loopback only, unless told otherwise.
    public static let `default` = ListenAddress(host: "127.0.0.1", port: defaultPort)

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Reads `ADDR:PORT`: `127.0.0.1:19385`, `[::1]:19385`, `localhost:19385` (as
    /// 127.0.0.1), `0.0.0.0:19385` for every IPv4 address. Port 0 lets the kernel choose.
    /// - Throws: A message saying what is wrong, for a usage error.
    public init(parsing text: String) throws(ListenAddressError) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ListenAddressError(text: text, problem: "an IPv6 address goes in brackets with a port after it: [::1]:\(Self.defaultPort)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw ListenAddressError(text: text, problem: "\(host) is not an IPv6 address")
            }
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ListenAddressError(text: text, problem: "give an address and a port: 127.0.0.1:\(Self.defaultPort)")
            }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
            guard !host.contains(":") else {
                throw ListenAddressError(text: text, problem: "put an IPv6 address in brackets: [::1]:\(Self.defaultPort)")
            }
        }
        guard let number = UInt16(port) else {
            throw ListenAddressError(text: text, problem: "the port must be a number from 0 to 65535")
        }
        var address = String(host)
        if address.lowercased() == "localhost" { address = "127.0.0.1" }
        if !address.contains(":") {
            let parts = address.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4, parts.allSatisfy({ UInt8($0) != nil }) else {
                throw ListenAddressError(text: text, problem: "\(host) is not a numeric address (give 127.0.0.1, 0.0.0.0, [::1]…)")
            }
        }
        self.init(host: address, port: number)
    }

    /// Whether only this machine can connect.
    public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A `--listen` value that cannot be used.
public struct ListenAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var problem: String
    public var description: String { "--listen \(text): \(problem)" }
}
