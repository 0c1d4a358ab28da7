/// Builds one JSON object with its keys in the order written, which the protocol fixes so
/// that output can be compared byte for byte. Fields without a value are left out rather
/// than written as `null`.
public struct JSONLineWriter: Sendable {
    private var text = "{"
    private var isFirst = true

    public init() {}

    public mutating func add(_ key: String, string value: String?) {
        guard let value else { return }
        addKey(key)
        Self.appendQuoted(value, to: &text)
    }

    public mutating func add(_ key: String, integer value: Int?) {
        guard let value else { return }
        addKey(key)
        text += String(value)
    }

    public mutating func add(_ key: String, bool value: Bool?) {
        guard let value else { return }
        addKey(key)
        text += value ? "true" : "false"
    }

    /// A number rounded to `decimals` places and written in its shortest form (`0.2`, `77.0`).
    public mutating func add(_ key: String, number value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        addKey(key)
        text += Self.rounded(value, decimals: decimals)
    }

    /// A number written exactly as given (event times keep all six decimals).
    public mutating func add(_ key: String, literal value: String?) {
        guard let value else { return }
        addKey(key)
        text += value
    }

    /// A list of strings.
    public mutating func add(_ key: String, strings values: [String]?) {
        guard let values else { return }
        addKey(key)
        text += "["
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            Self.appendQuoted(value, to: &text)
        }
        text += "]"
    }

    /// A nested object, or a list of them when given several.
    public mutating func add(_ key: String, object value: JSONLineWriter?) {
        guard let value else { return }
        add(key, literal: value.object)
    }

    public mutating func add(_ key: String, objects values: [JSONLineWriter]?) {
        guard let values else { return }
        add(key, literal: "[" + values.map(\.object).joined(separator: ",") + "]")
    }

    /// The object on its own, for nesting.
    public var object: String { text + "}" }

    /// The object followed by a newline.
    public var line: String { text + "}\n" }

    private mutating func addKey(_ key: String) {
        if !isFirst { text += "," }
        isFirst = false
        Self.appendQuoted(key, to: &text)
        text += ":"
    }

    static func rounded(_ value: Double, decimals: Int) -> String {
        round(value, decimals: decimals).description
    }

    /// `value` rounded to `decimals` places, as a line carries it. Rounding again gives the
    /// same number, so a message can keep its values at the line's precision and its line
    /// still comes out as if the unrounded value had been written.
    /// - Parameters:
    ///   - value: The number; NaN and infinities come back unchanged.
    ///   - decimals: Places after the point.
    /// - Returns: The rounded number, never -0.0.
    static func round(_ value: Double, decimals: Int) -> Double {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let result = (value * scale).rounded() / scale
        // -0.0 would print as "-0.0"; a reading of nothing is just 0.
        return result == 0 ? 0.0 : result
    }

    static func appendQuoted(_ value: String, to text: inout String) {
        // Keys and most values need no escaping: append them whole.
        if !value.utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += "\""
            text += value
            text += "\""
            return
        }
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let digits = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
