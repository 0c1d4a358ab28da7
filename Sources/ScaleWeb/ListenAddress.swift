/// `--listen`'s value: a numeric address and a port.
package struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// `127.0.0.1`, `0.0.0.0`, `::1` (without brackets).
    package var host: String
    package var port: UInt16

    /// The default port: outside 9100–9999, the range of the Prometheus wiki's "Default
    /// port allocations" (all taken since 2023), and outside the numbers it gives out after
    /// that range, outside Linux's ephemeral ports (32768–60999), and not in /etc/services.
    static let defaultPort: UInt16 = 19385
    /// Loopback only, unless told otherwise.
    package static let `default` = ListenAddress(host: "127.0.0.1", port: defaultPort)

    init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Reads `ADDR:PORT`: `127.0.0.1:19385`, `[::1]:19385`, `localhost:19385` (as
    /// 127.0.0.1), `0.0.0.0:19385` for every IPv4 address. Port 0 lets the kernel choose.
    /// - Throws: A message saying what is wrong, for a usage error.
    package init(parsing text: String) throws(ListenAddressError) {
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
    package var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }

    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}

/// A `--listen` value that cannot be used.
package struct ListenAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    var text: String
    var problem: String
    package var description: String { "--listen \(text): \(problem)" }
}
