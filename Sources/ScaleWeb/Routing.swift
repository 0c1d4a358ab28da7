/// Which endpoint a request is for, and whether its method is one that endpoint takes
/// (docs/web.md, "Endpoints"). Pure, so that the answers to bad requests are tested
/// without a socket.
package enum WebEndpoint: String, Sendable, Hashable, CaseIterable {
    case page = "/"
    case events = "/events"
    case status = "/api/status"
    case tare = "/api/tare"
    case metrics = "/metrics"

    /// The methods it takes, as the `Allow` header of a 405 lists them.
    var allowedMethods: [String] {
        switch self {
        case .tare: return ["POST"]
        default: return ["GET", "HEAD"]
        }
    }
}

/// What to do with a request line.
package enum RouteDecision: Sendable, Hashable {
    case endpoint(WebEndpoint)
    /// 404: no such path.
    case notFound
    /// 405, with the `Allow` header's value.
    case methodNotAllowed(allow: String)

    /// Decides from the method and the path (libmicrohttpd hands the path without its query).
    package static func route(method: String, path: String) -> RouteDecision {
        guard let endpoint = WebEndpoint(rawValue: path) else { return .notFound }
        guard endpoint.allowedMethods.contains(method) else {
            return .methodNotAllowed(allow: endpoint.allowedMethods.joined(separator: ", "))
        }
        return .endpoint(endpoint)
    }
}
