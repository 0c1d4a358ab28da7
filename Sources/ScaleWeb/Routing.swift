/// Which endpoint a request is for, and whether its method is one that endpoint takes
/// (docs/web.md, "Endpoints"). Pure, so that the answers to bad requests are tested
/// without a socket.
package enum WebEndpoint: String, Sendable, Hashable, CaseIterable {
    case page = "/"
    /// The page's script and style, files of their own so that the Content-Security-Policy
    /// needs no inline code (`SecurityHeaders`).
    case script = "/page.js"
    case style = "/page.css"
    case events = "/events"
    case status = "/api/status"
    case tare = "/api/tare"
    /// Takes the pad for the page's weighing, or gives it back (the daemon's GRAB).
    case grab = "/api/grab"
    case metrics = "/metrics"
    /// The force log's sessions, a page at a time.
    case sessions = "/api/sessions"

    /// The methods it takes, as the `Allow` header of a 405 lists them.
    var allowedMethods: [String] {
        switch self {
        case .tare, .grab: return ["POST"]
        default: return ["GET", "HEAD"]
        }
    }
}

/// What of one logged session `/api/sessions/ID…` asks for.
package enum SessionRepresentation: String, Sendable, Hashable, CaseIterable {
    /// `/api/sessions/ID`: the session, its stable weights and its PEAKs, as JSON.
    case summary = ""
    /// `/api/sessions/ID.csv`: its readings as `forcescale log export --format csv` writes them.
    case csv = ".csv"
    /// `/api/sessions/ID.json`: its readings as `forcescale log export --format jsonl` writes them.
    case json = ".json"
    /// `/api/sessions/ID.svg`: the plot `forcescale log plot` draws.
    case svg = ".svg"
}

/// What to do with a request line.
package enum RouteDecision: Sendable, Hashable {
    case endpoint(WebEndpoint)
    /// One logged session, in one of its forms.
    case session(id: Int64, SessionRepresentation)
    /// 400: a session id that is not one (`/api/sessions/abc`), with what is wrong.
    case badRequest(String)
    /// 404: no such path.
    case notFound
    /// 405, with the `Allow` header's value.
    case methodNotAllowed(allow: String)

    /// Decides from the method and the path (libmicrohttpd hands the path without its query).
    package static func route(method: String, path: String) -> RouteDecision {
        let sessionPrefix = WebEndpoint.sessions.rawValue + "/"
        if path.hasPrefix(sessionPrefix) {
            return session(method: method, name: path.dropFirst(sessionPrefix.count))
        }
        guard let endpoint = WebEndpoint(rawValue: path) else { return .notFound }
        guard endpoint.allowedMethods.contains(method) else {
            return .methodNotAllowed(allow: endpoint.allowedMethods.joined(separator: ", "))
        }
        return .endpoint(endpoint)
    }

    /// `ID`, `ID.csv`, `ID.json` or `ID.svg`, ID a session id (decimal digits). A session id
    /// with another form's ending (`12.txt`) or a path below one (`12.csv/x`) is no such
    /// resource (404); anything else is a malformed id (400): `abc`, `1e3`, and `3.5`, a
    /// number but not a session's.
    private static func session(method: String, name: Substring) -> RouteDecision {
        let dot = name.lastIndex(of: ".")
        let idText = dot.map { name[..<$0] } ?? name
        let ending = dot.map { name[name.index(after: $0)...] } ?? ""
        let isDigits: (Substring) -> Bool = { text in
            !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }
        let representation = SessionRepresentation(rawValue: dot.map { String(name[$0...]) } ?? "")
        if representation == nil, isDigits(idText), !ending.isEmpty, !isDigits(ending) { return .notFound }
        let methods = WebEndpoint.sessions.allowedMethods
        guard methods.contains(method) else { return .methodNotAllowed(allow: methods.joined(separator: ", ")) }
        guard let representation, isDigits(idText), let id = Int64(idText) else {
            return .badRequest("'\(name)' is not a session id: give the number 'forcescale log sessions' or /api/sessions lists, as in /api/sessions/12")
        }
        return .session(id: id, representation)
    }
}
