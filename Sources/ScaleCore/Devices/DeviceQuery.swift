/// What a user passed to `--device`, parsed, to pick one device among the candidates.
public struct DeviceQuery: Hashable, Sendable, CustomStringConvertible {
    /// The ways a user can name a device.
    public enum Criterion: Hashable, Sendable {
        /// An event node or one of its symlinks, e.g. `/dev/input/event5` or
        /// `/dev/input/by-id/usb-Wacom…-event-stylus`.
        case path(String)
        /// The USB/Bluetooth vendor and product ids, as `lsusb` prints them.
        case vendorProduct(vendor: UInt16, product: UInt16)
        /// Part of the device name, as typed; matched case-insensitively.
        case nameContaining(String)
    }

    /// How the text was understood.
    public var criterion: Criterion

    /// Parses what a user passes to `--device`.
    ///
    /// - Text starting with `/` is a path.
    /// - Exactly two parts separated by `:`, each 1–4 hex digits (`056a:0304`, case does
    ///   not matter), is `vendor:product`. Anything else with colons (`12:34:56`, a
    ///   `bus:vendor:product` triple, a name like `Foo: Pen`) is a name, since device names
    ///   do contain colons.
    /// - Otherwise the text is a substring of the device name. An empty text therefore
    ///   matches every device.
    /// - Parameter text: The option's value, used as given (not trimmed).
    public init(_ text: String) {
        if text.hasPrefix("/") {
            criterion = .path(text)
        } else if let (vendor, product) = Self.parseVendorProduct(text) {
            criterion = .vendorProduct(vendor: vendor, product: product)
        } else {
            criterion = .nameContaining(text)
        }
    }

    /// Creates a query from an already-known criterion.
    /// - Parameter criterion: What to match.
    public init(criterion: Criterion) {
        self.criterion = criterion
    }

    /// Whether the candidate is the device the user named.
    /// - Parameter candidate: A device found on the system.
    /// - Returns: For a path, whether it equals the candidate's path or any of its links
    ///   (compared as strings: the caller lists links as absolute paths); for vendor:product,
    ///   whether both ids are equal; for a name, whether the device name contains the text,
    ///   ignoring case.
    public func matches(_ candidate: DeviceCandidate) -> Bool {
        switch criterion {
        case .path(let path):
            return candidate.path == path || candidate.links.contains(path)
        case .vendorProduct(let vendor, let product):
            let identity = candidate.description.identity
            return identity.vendor == vendor && identity.product == product
        case .nameContaining(let text):
            return candidate.description.name.lowercased().contains(text.lowercased())
        }
    }

    /// The query for messages: `path /dev/input/event5`, `vendor:product 056a:0304`,
    /// `name containing 'wacom'`.
    public var description: String {
        switch criterion {
        case .path(let path): return "path \(path)"
        case .vendorProduct(let vendor, let product): return "vendor:product \(hex4(vendor)):\(hex4(product))"
        case .nameContaining(let text): return "name containing '\(text)'"
        }
    }

    /// Reads `vendor:product`.
    /// - Parameter text: The user's text.
    /// - Returns: The two ids, or `nil` unless the text is exactly two 1–4 digit hex parts.
    private static func parseVendorProduct(_ text: String) -> (UInt16, UInt16)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2,
              let vendor = parseHexID(parts[0]),
              let product = parseHexID(parts[1])
        else { return nil }
        return (vendor, product)
    }

    /// Reads one id of 1–4 ASCII hex digits. `UInt16(_:radix:)` alone would also accept a sign
    /// (`+12`), which is not an id.
    private static func parseHexID(_ part: Substring) -> UInt16? {
        guard (1...4).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isHexDigit }) else { return nil }
        return UInt16(part, radix: 16)
    }
}
