import ScaleProtocol

/// A request as the application sees it, once its body has been read.
struct HTTPRequest {
    var method: String
    var path: String
    /// Where the request comes from, `127.0.0.1:54321` (`?` when unknown), for logs.
    var peer: String
    /// A request header by name (case does not matter), `nil` when absent.
    let header: (String) -> String?
    /// An argument of the URL's query by name (`device` of `/api/tare?device=event5`),
    /// decoded; `nil` when absent.
    let queryArgument: (String) -> String?
    /// The body, at most `HTTPServer.Limits.maximumBody` bytes.
    var body: [UInt8]
}

/// The headers of every response, whatever its kind (page, API, error, stream): nothing
/// forcescale-web serves may be framed by another page (a click on Tare through an invisible
/// frame), read as another type than it says, or named to other sites in a `Referer`; and
/// the page may load nothing but its own files (no inline script: page.js and page.css are
/// endpoints of their own; the units' JSON is a data block, which is not run). `data:`
/// images are the page's empty icon (`<link rel="icon" href="data:,">`).
enum SecurityHeaders {
    static let contentSecurityPolicy =
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    static let all: [(String, String)] = [
        ("X-Frame-Options", "DENY"),
        ("Content-Security-Policy", contentSecurityPolicy),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
    ]

    /// The same as lines of a response head, each ending in CRLF.
    static var lines: String { all.map { "\($0.0): \($0.1)\r\n" }.joined() }
}

/// What the application answers.
enum HTTPResponse {
    /// A whole response.
    case complete(status: UInt32, contentType: String, body: [UInt8], headers: [(String, String)] = [])
    /// A stream that the application feeds through the subscriber: `/events`.
    case stream(EventStreamSubscriber)
    /// A body made a piece at a time as the client takes it (chunked), for one too large
    /// to hold whole: a session's export.
    case pieces(contentType: String, body: StreamedBody, headers: [(String, String)] = [])

    /// A plain-text response, for errors.
    static func text(_ status: UInt32, _ message: String, headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, contentType: "text/plain; charset=utf-8", body: Array((message + "\n").utf8), headers: headers)
    }

    /// A JSON response.
    static func json(_ status: UInt32, _ object: String, headers: [(String, String)] = []) -> HTTPResponse {
        .complete(status: status, contentType: "application/json", body: Array((object + "\n").utf8), headers: headers)
    }

    /// An error of `/api/`, in the one shape every such error has (docs/web.md, "Errors"):
    /// `{"error":"…","status":N}`, the message saying what is wrong and what to do, and
    /// `"log":"missing"` when the force log is not there, so that a client reads any failure
    /// one way.
    static func apiError(_ status: UInt32, _ message: String, logMissing: Bool = false, headers: [(String, String)] = []) -> HTTPResponse {
        var json = JSONLineWriter()
        json.add("error", string: message)
        json.add("status", integer: Int(status))
        if logMissing { json.add("log", string: "missing") }
        return .json(status, json.object, headers: headers)
    }

    /// An error answered before the application sees the request: JSON in `/api/`'s shape
    /// for a path under `/api/`, plain text elsewhere.
    static func error(_ status: UInt32, _ message: String, path: String, headers: [(String, String)] = []) -> HTTPResponse {
        path.hasPrefix("/api/") ? apiError(status, message, headers: headers) : text(status, message, headers: headers)
    }
}
