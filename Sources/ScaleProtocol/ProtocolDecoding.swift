import ScaleCore

/// Why a line from the daemon could not be read as the message its class names: which
/// field, and what it should have been.
public enum ProtocolDecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The line is not JSON.
    case malformedJSON(JSONParseError)
    /// The line is JSON, but not an object with a string `"class"`.
    case notAMessage
    /// A field the message needs is absent (or `null`).
    /// - `field`: its path from the top of the line: `grams`, `calibration.tare`,
    ///   `devices[1].active`.
    case missingField(messageClass: String, field: String, expected: ProtocolValueType)
    /// A field holds a value of the wrong type (or out of range, such as a fractional
    /// `raw`).
    case wrongType(messageClass: String, field: String, expected: ProtocolValueType)
    /// The line is a valid message, but of another class than the one asked for.
    case unexpectedClass(expected: String, found: String)

    /// The path of the field at fault (`calibration.tare`), when one is.
    public var field: String? {
        switch self {
        case .missingField(_, let field, _), .wrongType(_, let field, _): return field
        case .malformedJSON, .notAMessage, .unexpectedClass: return nil
        }
    }

    /// `READING: 'grams' must be a number`, `STATUS: missing 'calibration.points' (an integer)`.
    public var description: String {
        switch self {
        case .malformedJSON(let error): return error.description
        case .notAMessage: return #"not a JSON object with a string "class""#
        case .missingField(let name, let field, let expected): return "\(name): missing '\(field)' (\(expected))"
        case .wrongType(let name, let field, let expected): return "\(name): '\(field)' must be \(expected)"
        case .unexpectedClass(let expected, let found): return "expected a \(expected) line, got \(found)"
        }
    }
}

/// The types of the protocol's fields, as a decoding error names what was expected.
public enum ProtocolValueType: String, Hashable, Sendable, CustomStringConvertible {
    case string = "a string"
    case boolean = "true or false"
    case number = "a number"
    case integer = "an integer"
    /// Raw pressures: evdev values are 32-bit.
    case integer32 = "an integer of 32 bits"
    /// Seconds with six decimals, within what microseconds in 64 bits can hold.
    case time = "a time in seconds"
    case object = "an object"
    case array = "an array"

    /// What a value of this type is, in words: `a number`.
    public var description: String { rawValue }
}

/// The members of one object of a daemon line, read with errors that name the field. The
/// protocol leaves out fields without a value, so an optional field given as `null` counts
/// as absent, as it does in requests.
struct MessageFields {
    let members: [String: JSONValue]
    /// The class of the line the object belongs to, for errors.
    let messageClass: String
    /// Where the object sits in the line (`devices[1].`), prefixed to field names in errors.
    let path: String

    init(members: [String: JSONValue], messageClass: String, path: String = "") {
        self.members = members
        self.messageClass = messageClass
        self.path = path
    }

    func string(_ key: String) throws(ProtocolDecodeError) -> String {
        try required(key, .string) { $0.stringValue }
    }

    func optionalString(_ key: String) throws(ProtocolDecodeError) -> String? {
        try optional(key, .string) { $0.stringValue }
    }

    func bool(_ key: String) throws(ProtocolDecodeError) -> Bool {
        try required(key, .boolean) { $0.boolValue }
    }

    func optionalBool(_ key: String) throws(ProtocolDecodeError) -> Bool? {
        try optional(key, .boolean) { $0.boolValue }
    }

    func number(_ key: String) throws(ProtocolDecodeError) -> Double {
        try required(key, .number) { $0.numberValue }
    }

    func optionalNumber(_ key: String) throws(ProtocolDecodeError) -> Double? {
        try optional(key, .number) { $0.numberValue }
    }

    func optionalInteger(_ key: String) throws(ProtocolDecodeError) -> Int? {
        try optional(key, .integer) { $0.numberValue.flatMap { Int(exactly: $0) } }
    }

    func integer(_ key: String) throws(ProtocolDecodeError) -> Int {
        try required(key, .integer) { $0.numberValue.flatMap { Int(exactly: $0) } }
    }

    func integer32(_ key: String) throws(ProtocolDecodeError) -> Int32 {
        try required(key, .integer32) { $0.numberValue.flatMap { Int32(exactly: $0) } }
    }

    func time(_ key: String) throws(ProtocolDecodeError) -> EventTime {
        try required(key, .time) { $0.numberValue.flatMap(EventTime.init(protocolSeconds:)) }
    }

    func optionalTime(_ key: String) throws(ProtocolDecodeError) -> EventTime? {
        try optional(key, .time) { $0.numberValue.flatMap(EventTime.init(protocolSeconds:)) }
    }

    /// A nested object, read with its own path.
    func optionalObject(_ key: String) throws(ProtocolDecodeError) -> MessageFields? {
        try optional(key, .object) { $0.objectValue }.map { nested($0, at: path + key + ".") }
    }

    /// A required nested object, read with its own path.
    func object(_ key: String) throws(ProtocolDecodeError) -> MessageFields {
        nested(try required(key, .object) { $0.objectValue }, at: path + key + ".")
    }

    /// An array whose elements must all be objects.
    func objects(_ key: String) throws(ProtocolDecodeError) -> [MessageFields] {
        try elements(of: try required(key, .array) { $0.arrayValue }, key: key)
    }

    func optionalObjects(_ key: String) throws(ProtocolDecodeError) -> [MessageFields]? {
        guard let array = try optional(key, .array, { $0.arrayValue }) else { return nil }
        return try elements(of: array, key: key)
    }

    // MARK: Private

    private func elements(of array: [JSONValue], key: String) throws(ProtocolDecodeError) -> [MessageFields] {
        var result: [MessageFields] = []
        result.reserveCapacity(array.count)
        for (index, element) in array.enumerated() {
            let elementPath = path + key + "[\(index)]"
            guard let members = element.objectValue else {
                throw .wrongType(messageClass: messageClass, field: elementPath, expected: .object)
            }
            result.append(nested(members, at: elementPath + "."))
        }
        return result
    }

    private func nested(_ members: [String: JSONValue], at path: String) -> MessageFields {
        MessageFields(members: members, messageClass: messageClass, path: path)
    }

    private func required<Value>(
        _ key: String, _ type: ProtocolValueType, _ convert: (JSONValue) -> Value?
    ) throws(ProtocolDecodeError) -> Value {
        guard let value = try optional(key, type, convert) else {
            throw .missingField(messageClass: messageClass, field: path + key, expected: type)
        }
        return value
    }

    private func optional<Value>(
        _ key: String, _ type: ProtocolValueType, _ convert: (JSONValue) -> Value?
    ) throws(ProtocolDecodeError) -> Value? {
        guard let value = members[key], value != .null else { return nil }
        guard let converted = convert(value) else {
            throw .wrongType(messageClass: messageClass, field: path + key, expected: type)
        }
        return converted
    }
}

extension EventTime {
    /// An event time from the protocol's seconds (`1382570965.747302`), rounded to the
    /// microsecond: the line has six decimals, and a `Double` holds them exactly enough
    /// for any time below 2^53 µs (285 years).
    /// - Parameter seconds: The number from the line.
    /// - Returns: `nil` beyond what 64-bit microseconds can hold.
    init?(protocolSeconds seconds: Double) {
        guard seconds.isFinite, seconds.magnitude < 9e12 else { return nil }
        self.init(microseconds: Int64((seconds * 1_000_000).rounded()))
    }
}
