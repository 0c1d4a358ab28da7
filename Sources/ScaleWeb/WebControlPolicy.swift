/// Who may tare through the web (docs/web.md, "Control"): only when forcescale-web was
/// started with `--allow-control`, only a request with the control key (`WebAccess`), and
/// only from the page's own origin.
///
/// A browser sends `Origin` with every POST; a page of another site that posts to this
/// server has its own origin there, so comparing `Origin` with `Host` refuses it. That
/// alone would let a site whose name is made to resolve to this machine (DNS rebinding)
/// through, since its `Host` and `Origin` agree; so the host must also be an address
/// (`127.0.0.1`, `[::1]`, `192.168.1.20`) or `localhost`, names that an attacker's DNS
/// cannot give.
enum WebControlPolicy {
    /// Why a control request is refused; `nil` when it is allowed.
    /// - Parameters:
    ///   - allowControl: Whether `--allow-control` was given.
    ///   - right: What the request's credential allows.
    ///   - origin: The `Origin` header.
    ///   - host: The `Host` header.
    static func refusal(allowControl: Bool, right: WebAccess.Right, origin: String?, host: String?) -> String? {
        guard allowControl else { return "control is off: start forcescale-web with --allow-control" }
        guard right >= .control else {
            return "\(right) allows reading only: control needs the control key (open the page with forcescale-web-open as a member of the control group)"
        }
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
