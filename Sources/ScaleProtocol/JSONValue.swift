import ScaleCore

/// A JSON document, as a client's request line holds one. Parsing follows RFC 8259
/// strictly (see ``parse(_:)-(UnsafeBufferPointer<UInt8>)``); the daemon's own output is
/// written with ``JSONLineWriter`` instead, which fixes the order of keys.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// Always finite: numbers beyond the range of `Double` are rejected, not made infinite.
    case number(Double)
    case string(String)
    case array([JSONValue])
    /// The members of an object. A key that appears more than once keeps its last value, as
    /// most parsers do (RFC 8259 leaves it open).
    case object([String: JSONValue])

    /// The deepest nesting of arrays and objects accepted: `[[…]]` 64 levels deep parses,
    /// 65 does not. The parser recurses once per level, so this bounds its stack.
    public static let maximumDepth = 64

    // MARK: Parsing

    /// Parses one JSON text.
    ///
    /// Strict RFC 8259: any value at the top, whitespace (space, tab, line feed, carriage
    /// return) only around values and tokens, no trailing commas, no comments, no leading
    /// zeros, no `NaN` or `Infinity`, numbers that fit a finite `Double`, strings of valid
    /// UTF-8 with control characters escaped, `\uXXXX` escapes with surrogates in pairs
    /// (a lone surrogate cannot be a Swift `String`, so it is an error), and at most
    /// ``maximumDepth`` levels of nesting. Runs in time linear in the input and never traps.
    /// - Parameter bytes: The text as UTF-8.
    /// - Returns: The value.
    /// - Throws: ``JSONParseError`` with the offset of the first byte that is wrong.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        return try parser.parseDocument()
    }

    /// Parses one JSON text given as UTF-8 bytes.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON text. Offsets in errors count UTF-8 bytes from the start of `text`.
    public static func parse(_ text: Substring) throws(JSONParseError) -> JSONValue {
        let contiguous = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONParseError) -> JSONValue in try parse(buffer) }
        }
        if let contiguous { return try contiguous.get() }
        return try parse(Array(text.utf8))
    }

    /// Parses one JSON text. Offsets in errors count UTF-8 bytes from the start of `text`.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(text[...])
    }

    // MARK: Reading values

    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    public var numberValue: Double? {
        guard case .number(let value) = self else { return nil }
        return value
    }

    public var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    public var objectValue: [String: JSONValue]? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    public var isNull: Bool { self == .null }
}

/// Why a text is not JSON: where, and what was wrong there.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes before the problem (0 for the first byte). For a text cut short,
    /// the length of the text.
    public var offset: Int
    /// What is wrong, briefly: `expected ':'`, `leading zeros are not allowed`.
    public var message: String

    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// `malformed JSON at byte 12: expected ':'`
    public var description: String { "malformed JSON at byte \(offset): \(message)" }
}

/// A recursive-descent parser over bytes. Every loop advances `position` or throws, and
/// recursion is bounded by ``JSONValue/maximumDepth``, so no input makes it hang or
/// exhaust the stack; every subscript is checked against `bytes.count` first.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0
    var depth = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == bytes.count else {
            if let problem = forbiddenExtension() { throw fail(problem) }
            throw fail("unexpected data after the JSON value")
        }
        return value
    }

    // MARK: Values

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard let byte = peek() else { throw unexpected(expecting: "a value") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw unexpected(expecting: "a value")
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterNesting()
        position += 1  // "{"
        // Gathered in order, then hashed into a dictionary made at its final size: growing
        // it member by member rehashed every key several times (a client decodes a READING
        // of ten members 100 times a second).
        var members: [(String, JSONValue)] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            depth -= 1
            return .object([:])
        }
        while true {
            guard peek() == UInt8(ascii: "\"") else { throw unexpected(expecting: "a string key") }
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw unexpected(expecting: "':'") }
            position += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") { throw fail("trailing comma before '}'") }
            case UInt8(ascii: "}"):
                position += 1
                depth -= 1
                // A key given twice keeps its last value.
                return .object(Dictionary(members, uniquingKeysWith: { _, last in last }))
            default:
                throw unexpected(expecting: "',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterNesting()
        position += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","):
                position += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") { throw fail("trailing comma before ']'") }
            case UInt8(ascii: "]"):
                position += 1
                depth -= 1
                return .array(elements)
            default:
                throw unexpected(expecting: "',' or ']'")
            }
        }
    }

    private mutating func enterNesting() throws(JSONParseError) {
        depth += 1
        if depth > JSONValue.maximumDepth {
            throw fail("nesting deeper than \(JSONValue.maximumDepth) levels")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            guard bytes.count - position >= count else { return false }
            for index in 0..<count where bytes[position + index] != expected[index] { return false }
            return true
        }
        guard matches else { throw fail("expected '\(literal)'") }
        position += count
    }

    // MARK: Numbers

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, converted only once the
    /// grammar is checked.
    ///
    /// A number of at most 15 significant digits without an exponent (every number the
    /// daemon writes) is worked out from its digits: its significand is then exact in a
    /// `Double`, and so is the power of ten it is divided by, so the one division rounds
    /// correctly, to the same `Double` that `strtod` gives (Clinger's fast path). Others go
    /// through `Double(String)`.
    private mutating func parseNumber() throws(JSONParseError) -> Double {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        var significand: UInt64 = 0
        var digits = 0
        switch peek() {
        case UInt8(ascii: "0"):
            position += 1
            if let next = peek(), isDigit(next) { throw fail("leading zeros are not allowed", at: start) }
        case let byte? where isDigit(byte):
            accumulateDigits(into: &significand, count: &digits)
        case UInt8(ascii: "I"):
            throw fail("NaN and Infinity are not JSON numbers")
        default:
            throw unexpected(expecting: "a digit")
        }
        var decimals = 0
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let byte = peek(), isDigit(byte) else { throw unexpected(expecting: "a digit after '.'") }
            let before = position
            accumulateDigits(into: &significand, count: &digits)
            decimals = position - before
        }
        var hasExponent = false
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            hasExponent = true
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let byte = peek(), isDigit(byte) else { throw unexpected(expecting: "a digit in the exponent") }
            skipDigits()
        }
        if !hasExponent, digits <= 15, decimals < Self.powersOfTen.count {
            let magnitude = Double(significand) / Self.powersOfTen[decimals]
            return negative ? -magnitude : magnitude
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw fail("number out of range", at: start)
        }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// 10^0 through 10^22: the powers of ten a `Double` holds exactly.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        (0..<exponent).reduce(1.0) { value, _ in value * 10 }
    }

    /// Skips digits, adding them to `significand` while it has at most 15 of them (leading
    /// zeros do not count); `count` says how many there were beyond those zeros.
    private mutating func accumulateDigits(into significand: inout UInt64, count: inout Int) {
        while let byte = peek(), isDigit(byte) {
            if significand != 0 || byte != UInt8(ascii: "0") { count += 1 }
            if count <= 15 { significand = significand * 10 + UInt64(byte - UInt8(ascii: "0")) }
            position += 1
        }
    }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { position += 1 }
    }

    // MARK: Strings

    /// A string from its opening quote to just past its closing quote. Text without escapes
    /// is decoded straight from the input; the first escape switches to a copy.
    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        let start = position
        var copy: [UInt8]? = nil
        while true {
            guard let byte = peek() else { throw fail("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                let end = position
                position += 1
                if let copy { return String(decoding: copy, as: UTF8.self) }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            case UInt8(ascii: "\\"):
                if copy == nil { copy = Array(bytes[start..<position]) }
                let scalar = try parseEscape()
                copy!.append(contentsOf: UTF8.encode(scalar)!)
            case 0..<0x20:
                throw fail("control characters in strings must be escaped")
            case 0x80...:
                let length = try validateUTF8Sequence()
                if copy != nil { copy!.append(contentsOf: bytes[position..<position + length]) }
                position += length
            default:
                copy?.append(byte)
                position += 1
            }
        }
    }

    /// One escape, from its backslash to just past it.
    private mutating func parseEscape() throws(JSONParseError) -> Unicode.Scalar {
        let escapeStart = position
        position += 1  // backslash
        guard let byte = peek() else { throw fail("unterminated string") }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try parseHex4()
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate must be followed at once by an escaped low surrogate.
                guard bytes.count - position >= 2,
                      bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                else { throw fail("unpaired surrogate in \\u escape", at: escapeStart) }
                position += 2
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw fail("unpaired surrogate in \\u escape", at: escapeStart)
                }
                let value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                return Unicode.Scalar(value)!
            case 0xDC00...0xDFFF:
                throw fail("unpaired surrogate in \\u escape", at: escapeStart)
            default:
                return Unicode.Scalar(unit)!
            }
        default:
            throw fail("invalid escape '\\\(Self.describe(byte))'", at: escapeStart)
        }
    }

    /// Four hex digits of a `\u` escape.
    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek() else { throw fail("\\u needs 4 hex digits") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("\\u needs 4 hex digits")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Checks the multi-byte UTF-8 sequence at `position` (RFC 3629: no overlong forms, no
    /// surrogates, nothing above U+10FFFF).
    /// - Returns: Its length in bytes.
    private func validateUTF8Sequence() throws(JSONParseError) -> Int {
        let lead = bytes[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw fail("invalid UTF-8")
        }
        guard bytes.count - position >= length, secondRange.contains(bytes[position + 1]) else {
            throw fail("invalid UTF-8")
        }
        for index in 2..<length where !(0x80...0xBF).contains(bytes[position + index]) {
            throw fail("invalid UTF-8")
        }
        return length
    }

    // MARK: Bytes and errors

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
              byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t") {
            position += 1
        }
    }

    private func fail(_ message: String, at offset: Int? = nil) -> JSONParseError {
        JSONParseError(offset: offset ?? position, message: message)
    }

    /// The error for a byte that cannot start what was expected, naming the common
    /// extensions of JSON that RFC 8259 does not allow.
    private func unexpected(expecting expected: String) -> JSONParseError {
        guard peek() != nil else { return fail("unexpected end of input, expected \(expected)") }
        if let problem = forbiddenExtension() { return fail(problem) }
        return fail("expected \(expected)")
    }

    /// Comments and the non-numbers some encoders write.
    private func forbiddenExtension() -> String? {
        switch peek() {
        case UInt8(ascii: "/"): return "comments are not allowed"
        case UInt8(ascii: "N"), UInt8(ascii: "I"): return "NaN and Infinity are not JSON numbers"
        default: return nil
        }
    }

    /// A byte for a message: itself when printable ASCII, otherwise in hex.
    private static func describe(_ byte: UInt8) -> String {
        if byte > 0x20, byte < 0x7F { return String(UnicodeScalar(byte)) }
        let digits = String(byte, radix: 16, uppercase: true)
        return "x" + (digits.count < 2 ? "0" : "") + digits
    }
}
