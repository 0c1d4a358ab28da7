import ScaleCore

/// Builds one JSON object with its keys in the order written, which the protocol fixes so
/// that output can be compared byte for byte. Fields without a value are left out rather
/// than written as `null`.
///
/// The object is gathered as UTF-8 bytes and becomes a `String` once, at the end: a live
/// reader writes a line per reading, and appending piece by piece to a `String` (capacity
/// checks, ASCII and grapheme bookkeeping per append) costs more than the rest of a
/// reading's work (BENCHMARKS.md, Live, has the measurements).
public struct JSONLineWriter: Sendable {
    private var bytes: [UInt8]
    private var isFirst = true

    public init() {
        bytes = []
        // A READING line is about 190 bytes: one allocation for most objects.
        bytes.reserveCapacity(256)
        bytes.append(UInt8(ascii: "{"))
    }

    public mutating func add(_ key: StaticString, string value: String?) {
        guard let value else { return }
        // A short string with nothing to escape (every one a reading carries) goes in with
        // its key in one piece; anything else through the escaping path.
        let simple = value.utf8.withContiguousStorageIfAvailable { utf8 -> Bool in
            guard utf8.count <= Self.simpleStringLimit, !utf8.contains(where: Self.needsEscape) else { return false }
            addMember(key, utf8, quoted: true)
            return true
        }
        guard simple != true else { return }
        addKey(key)
        Self.appendQuoted(value, to: &bytes)
    }

    public mutating func add(_ key: StaticString, integer value: Int?) {
        guard let value else { return }
        DecimalDigits.withDigits(UInt64(value.magnitude), decimals: 0, negative: value < 0) { addMember(key, $0) }
    }

    public mutating func add(_ key: StaticString, bool value: Bool?) {
        guard let value else { return }
        let text: StaticString = value ? "true" : "false"
        addMember(key, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A number rounded to `decimals` places and written in its shortest form (`0.2`, `77.0`).
    public mutating func add(_ key: StaticString, number value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        DecimalDigits.withRoundedDigits(value, decimals: decimals) { addMember(key, $0) }
    }

    /// An event time: seconds with six decimals, as ``EventTime/description`` writes it.
    public mutating func add(_ key: StaticString, time value: EventTime?) {
        guard let value else { return }
        DecimalDigits.withDigits(value.microseconds.magnitude, decimals: 6, negative: value.microseconds < 0) { addMember(key, $0) }
    }

    /// A value written exactly as given, already formatted by the caller.
    public mutating func add(_ key: StaticString, literal value: String?) {
        guard let value else { return }
        addKey(key)
        bytes.append(contentsOf: value.utf8)
    }

    /// A list of strings.
    public mutating func add(_ key: StaticString, strings values: [String]?) {
        guard let values else { return }
        addKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            Self.appendQuoted(value, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// A nested object, or a list of them when given several.
    public mutating func add(_ key: StaticString, object value: JSONLineWriter?) {
        guard let value else { return }
        addKey(key)
        appendObject(value)
    }

    public mutating func add(_ key: StaticString, objects values: [JSONLineWriter]?) {
        guard let values else { return }
        addKey(key)
        bytes.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendObject(value)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    private mutating func appendObject(_ value: JSONLineWriter) {
        bytes.append(contentsOf: value.bytes)
        bytes.append(UInt8(ascii: "}"))
    }

    /// The object on its own, for nesting.
    public var object: String { finished(newline: false) }

    /// The object followed by a newline.
    public var line: String { finished(newline: true) }

    /// Appends the object and a newline to `output` as UTF-8.
    public func appendLine(to output: inout [UInt8]) {
        output.append(contentsOf: bytes)
        Self.append("}\n", to: &output)
    }

    /// The object and a newline as UTF-8, in the writer's own buffer: a line for a socket,
    /// made with one allocation and no copy.
    public consuming func lineBytes() -> [UInt8] {
        Self.append("}\n", to: &bytes)
        return bytes
    }

    /// The bytes with the closing brace (and a newline) as one `String`, made in place.
    private func finished(newline: Bool) -> String {
        String(unsafeUninitializedCapacity: bytes.count + (newline ? 2 : 1)) { buffer in
            var end = buffer.initialize(fromContentsOf: bytes)
            buffer[end] = UInt8(ascii: "}")
            end += 1
            if newline {
                buffer[end] = UInt8(ascii: "\n")
                end += 1
            }
            return end
        }
    }

    /// `"key":`, after a comma but for the first key.
    private mutating func addKey(_ key: StaticString) {
        addMember(key, UnsafeBufferPointer(start: nil, count: 0))
    }

    /// `"key":value` (the value in quotes when `quoted`), after a comma but for the first
    /// member, gathered on the stack and appended in one piece: every append to the line
    /// checks that its array is not shared and has room, a reading has ten members, and
    /// this runs for every line a live reader writes. Keys are literals
    /// of the code, which need no escape (checked in debug builds); `value` is written as
    /// given (digits, or a string already known to need no escape).
    private mutating func addMember(_ key: StaticString, _ value: UnsafeBufferPointer<UInt8>, quoted: Bool = false) {
        // (`utf8Start` itself traps for a StaticString made of a single scalar.)
        let name = UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)
        assert(name.count <= 60 && !name.contains(where: Self.needsEscape),
               "a JSON key must be a short literal with nothing to escape: \(key)")
        let comma = startMember()
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: name.count + value.count + 6) { scratch in
            // Pointers, not the buffer's collection methods: a member is a few bytes, and
            // copying them one by one through the generic path cost more than the appends saved.
            let start = scratch.baseAddress!
            var end = start
            func put(_ byte: UInt8) {
                end.initialize(to: byte)
                end += 1
            }
            func put(_ run: UnsafeBufferPointer<UInt8>) {
                guard let base = run.baseAddress else { return }
                end.initialize(from: base, count: run.count)
                end += run.count
            }
            if comma { put(UInt8(ascii: ",")) }
            put(UInt8(ascii: "\""))
            put(name)
            put(UInt8(ascii: "\""))
            put(UInt8(ascii: ":"))
            if quoted { put(UInt8(ascii: "\"")) }
            put(value)
            if quoted { put(UInt8(ascii: "\"")) }
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: end - start))
        }
    }

    /// The longest string that goes in with its key in one piece (on the stack).
    private static let simpleStringLimit = 128

    /// A number under a key made at run time (a fit's parameter names), escaped as any
    /// string is.
    public mutating func add(name key: String, number value: Double?, decimals: Int) {
        guard let value, value.isFinite else { return }
        if startMember() { bytes.append(UInt8(ascii: ",")) }
        Self.appendQuoted(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        DecimalDigits.appendRounded(value, decimals: decimals, to: &bytes)
    }

    /// Whether the member being started follows another (and so needs a comma).
    private mutating func startMember() -> Bool {
        defer { isFirst = false }
        return !isFirst
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
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

    static func appendQuoted(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs of bytes that need no escape (all of most keys and values) are copied whole.
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard needsEscape(byte) else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                appendEscaped(byte, to: &bytes)
                runStart = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A quote, a backslash or a control character as JSON escapes it.
    private static func appendEscaped(_ byte: UInt8, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case UInt8(ascii: "\n"): bytes.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): bytes.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): bytes.append(UInt8(ascii: "t"))
        default:
            // \u00XX, lower-case hex digits.
            let hex = Array("0123456789abcdef".utf8)
            bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
        }
    }
}
