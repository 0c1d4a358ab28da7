import ScaleCore

/// One message the daemon sends, of a class this build knows: its typed value, the line it
/// is written as, and how to find it in a decoded ``DaemonLine``.
///
/// The daemon writes a message with ``line``; a client reads it back with
/// ``DaemonLine/decode(line:)-(String)``. Both go through the same type, so the bytes the daemon writes
/// and the fields the client reads have one definition.
public protocol DaemonLineMessage: Hashable, Sendable {
    /// The `"class"` of the message's lines: `"READING"`.
    static var className: String { get }

    /// The message as one line, newline included, byte for byte as the daemon writes it
    /// (docs/protocol.md fixes the order of keys and the number formats).
    var line: String { get }

    /// The message a decoded line holds, when it is of this class.
    /// - Parameter line: A decoded line.
    init?(_ line: DaemonLine)
}

extension DaemonLineMessage {
    /// Reads one line that must be of this class.
    /// - Parameter line: The line, with or without its newline.
    /// - Returns: The message.
    /// - Throws: ``ProtocolDecodeError``, `.unexpectedClass` when the line is a message of
    ///   another class (or one this build does not know).
    public static func decode(line: String) throws(ProtocolDecodeError) -> Self {
        let decoded = try DaemonLine.decode(line: line)
        guard let message = Self(decoded) else {
            throw .unexpectedClass(expected: className, found: decoded.className)
        }
        return message
    }
}

/// A line the daemon sent, decoded: the greeting, a reading or peak of the stream, a reply,
/// an ERROR, or a class this build does not know.
///
/// Decoding follows what the protocol asks of clients: fields it does not know are
/// ignored, names it does not know (a gram model, a device kind) are kept as they are, and
/// a class it does not know is ``unknown(className:_:)`` rather than an error, so a later
/// daemon's additions never make a client fail or drop a reading.
public enum DaemonLine: Hashable, Sendable {
    case version(VersionMessage)
    case reading(ReadingMessage)
    case peak(PeakMessage)
    case watch(WatchMessage)
    case poll(PollMessage)
    case devices(DevicesMessage)
    case status(StatusMessage)
    case tare(TareMessage)
    case calibrate(CalibrateMessage)
    case calibration(CalibrationMessage)
    case rumble(RumbleMessage)
    case grab(GrabMessage)
    /// An ERROR line: the same type the daemon sends it from.
    case error(RequestError)
    /// A class this build does not know, with the whole line's value.
    case unknown(className: String, JSONValue)

    // MARK: Decoding

    /// Reads one line from the daemon.
    /// - Parameter line: The line as UTF-8; a trailing `\n` (and `\r`) may be included.
    /// - Returns: The message.
    /// - Throws: ``ProtocolDecodeError``: not JSON, not an object with a string `"class"`,
    ///   or a field of a known class missing or of the wrong type (the error names it).
    public static func decode(line: UnsafeBufferPointer<UInt8>) throws(ProtocolDecodeError) -> DaemonLine {
        let value: JSONValue
        do {
            // JSON counts the newline and a `\r` before it as whitespace.
            value = try JSONValue.parse(line)
        } catch {
            throw .malformedJSON(error)
        }
        return try decode(json: value)
    }

    /// Reads one line from the daemon given as bytes.
    /// - Parameter line: The line as UTF-8, with or without its newline.
    /// - Returns: The message.
    /// - Throws: ``ProtocolDecodeError``, as ``decode(line:)-(UnsafeBufferPointer<UInt8>)``.
    public static func decode(line: [UInt8]) throws(ProtocolDecodeError) -> DaemonLine {
        let result = line.withUnsafeBufferPointer { buffer in
            Result { () throws(ProtocolDecodeError) -> DaemonLine in try decode(line: buffer) }
        }
        return try result.get()
    }

    /// Reads one line from the daemon given as text.
    /// - Parameter line: The line, with or without its newline.
    /// - Returns: The message.
    /// - Throws: ``ProtocolDecodeError``, as ``decode(line:)-(UnsafeBufferPointer<UInt8>)``.
    public static func decode(line: String) throws(ProtocolDecodeError) -> DaemonLine {
        var line = line
        let result = line.withUTF8 { buffer in
            Result { () throws(ProtocolDecodeError) -> DaemonLine in try decode(line: buffer) }
        }
        return try result.get()
    }

    /// Reads a message from a line's parsed JSON.
    /// - Parameter json: The line's value.
    /// - Returns: The message; ``unknown(className:_:)`` for a class this build does not know.
    /// - Throws: ``ProtocolDecodeError``: `.notAMessage`, `.missingField`, `.wrongType`.
    public static func decode(json: JSONValue) throws(ProtocolDecodeError) -> DaemonLine {
        guard let members = json.objectValue, let name = members["class"]?.stringValue else { throw .notAMessage }
        let fields = MessageFields(members: members, messageClass: name)
        switch name {
        case VersionMessage.className: return .version(try VersionMessage(fields: fields))
        case ReadingMessage.className: return .reading(try ReadingMessage(fields: fields))
        case PeakMessage.className: return .peak(try PeakMessage(fields: fields))
        case WatchMessage.className: return .watch(try WatchMessage(fields: fields))
        case PollMessage.className: return .poll(try PollMessage(fields: fields))
        case DevicesMessage.className: return .devices(try DevicesMessage(fields: fields))
        case StatusMessage.className: return .status(try StatusMessage(fields: fields))
        case TareMessage.className: return .tare(try TareMessage(fields: fields))
        case CalibrateMessage.className: return .calibrate(try CalibrateMessage(fields: fields))
        case CalibrationMessage.className: return .calibration(try CalibrationMessage(fields: fields))
        case RumbleMessage.className: return .rumble(try RumbleMessage(fields: fields))
        case GrabMessage.className: return .grab(try GrabMessage(fields: fields))
        case RequestError.className: return .error(try RequestError(fields: fields))
        default: return .unknown(className: name, json)
        }
    }

    // MARK: Reading the value

    /// The line's `"class"`: `"READING"`, or the unknown class as sent.
    public var className: String {
        if case .unknown(let name, _) = self { return name }
        // Every other case holds a message.
        return message.map { $0.classNameOfType } ?? ""
    }

    /// Whether this is a line of the stream (READING or PEAK) rather than a reply.
    public var isStream: Bool {
        switch self {
        case .reading, .peak: return true
        default: return false
        }
    }

    /// The typed message; `nil` for a class this build does not know.
    public var message: (any DaemonLineMessage)? {
        switch self {
        case .version(let message): return message
        case .reading(let message): return message
        case .peak(let message): return message
        case .watch(let message): return message
        case .poll(let message): return message
        case .devices(let message): return message
        case .status(let message): return message
        case .tare(let message): return message
        case .calibrate(let message): return message
        case .calibration(let message): return message
        case .rumble(let message): return message
        case .grab(let message): return message
        case .error(let message): return message
        case .unknown: return nil
        }
    }

    /// The line as the daemon writes it, newline included; `nil` for a class this build
    /// does not know, whose key order a decoded value no longer holds.
    public var line: String? { message?.line }
}

extension DaemonLineMessage {
    /// ``className`` reached through an existential.
    fileprivate var classNameOfType: String { Self.className }
}
