import ScaleCore

/// A request a client sends to the daemon: one JSON object on one line, with a `"class"`
/// naming the request, as gpsd's clients do. docs/protocol.md documents each.
public enum ClientRequest: Hashable, Sendable {
    /// Start (`enable` true) or stop streaming READING and PEAK lines, optionally only those
    /// of one device.
    case watch(enable: Bool, device: String?)
    /// The newest reading, once.
    case poll(device: String? = nil)
    /// The input devices the daemon knows.
    case devices
    /// The daemon's state.
    case status(device: String? = nil)
    /// Take the current weight as zero.
    case tare(device: String? = nil)
    /// Add a calibration point: the known weight now on the pad, in grams.
    case calibrate(grams: Double, device: String? = nil)
    /// Measure a calibration point without adding it (CALIBRATE with `"add":false`): the
    /// known weight now on the pad, in grams. Guided calibration measures every point first
    /// and saves them together only when the person agrees.
    case measure(grams: Double, device: String? = nil)
    /// Report the calibration, or first clear it when `reset` is true.
    case calibration(reset: Bool, device: String? = nil)
    /// Replace the curve's points (CALIBRATION with `"curve"`), keeping the tare; with
    /// `preview`, only show the fit those points would give and change nothing.
    case replaceCurve(points: [CalibrationPoint], preview: Bool, device: String? = nil)
    /// Play a haptic pattern on the rumble device.
    case rumble(pattern: HapticPattern)
    /// Take the device for this client's weighing (`enable` true), so that the desktop sees
    /// none of its events, for at most `seconds` (the daemon's bound when `nil`, and never
    /// more); or give it back (`enable` false). Since protocol 1.7.
    case grab(enable: Bool, seconds: Double? = nil, device: String? = nil)

    /// The longest request line the daemon reads, in bytes before its `\n` (a `\r` before
    /// the `\n` counts). A longer line gets ``RequestError/lineTooLong`` and the connection
    /// is closed: a client that sends one is not speaking the protocol, and the daemon will
    /// not buffer without bound to find where its line ends.
    public static let maximumLineBytes = 65536

    /// The request classes, in the order docs/protocol.md lists them.
    public static let classNames = ["WATCH", "POLL", "DEVICES", "STATUS", "TARE", "CALIBRATE", "CALIBRATION", "RUMBLE", "GRAB"]

    /// The class of the request, as it appears in the request and its reply: `"WATCH"`.
    /// The device the request names, for those that take one.
    public var device: String? {
        switch self {
        case .watch(_, let device), .poll(let device), .status(let device), .tare(let device), .calibrate(_, let device),
             .measure(_, let device), .calibration(_, let device), .replaceCurve(_, _, let device), .grab(_, _, let device):
            return device
        case .devices, .rumble:
            return nil
        }
    }

    public var className: String {
        switch self {
        case .watch: return "WATCH"
        case .poll: return "POLL"
        case .devices: return "DEVICES"
        case .status: return "STATUS"
        case .tare: return "TARE"
        case .calibrate, .measure: return "CALIBRATE"
        case .calibration, .replaceCurve: return "CALIBRATION"
        case .rumble: return "RUMBLE"
        case .grab: return "GRAB"
        }
    }

    // MARK: Writing

    /// The request as one line, newline included, as a client sends it:
    /// `{"class":"WATCH","enable":true}`.
    ///
    /// Every field the request has is written, defaults included, so that what is meant
    /// does not hang on the daemon's defaults; ``parse(line:)-(String)`` gives the request
    /// back. Only a RUMBLE pattern that is not one of ``HapticPattern/all`` (a scaled copy)
    /// comes back as the named pattern, since the line carries the name alone; and a
    /// CALIBRATE weight that is not finite is left out, which the daemon refuses.
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: className)
        switch self {
        case .watch(let enable, _):
            json.add("enable", bool: enable)
        case .poll, .devices, .status, .tare:
            break
        case .calibrate(let grams, _):
            // The shortest text that reads back as the same Double: 100.0, 0.25, 1e-05.
            json.add("grams", literal: grams.isFinite ? grams.description : nil)
        case .measure(let grams, _):
            json.add("grams", literal: grams.isFinite ? grams.description : nil)
            json.add("add", bool: false)
        case .calibration(let reset, _):
            json.add("reset", bool: reset)
        case .replaceCurve(let points, let preview, _):
            json.add("curve", objects: points.map { point in
                var entry = JSONLineWriter()
                entry.add("raw", literal: point.raw.isFinite ? point.raw.description : nil)
                entry.add("grams", literal: point.grams.isFinite ? point.grams.description : nil)
                entry.add("sd", literal: point.spread.flatMap { $0.isFinite ? $0.description : nil })
                entry.add("n", integer: point.count)
                return entry
            })
            json.add("preview", bool: preview)
        case .rumble(let pattern):
            json.add("pattern", string: pattern.name)
        case .grab(let enable, let seconds, _):
            json.add("enable", bool: enable)
            json.add("seconds", literal: seconds.flatMap { $0.isFinite ? $0.description : nil })
        }
        json.add("device", string: device)
        return json.line
    }

    // MARK: Parsing

    /// Reads one request line.
    /// - Parameter line: The line's bytes; a trailing `\n` may be included (and a `\r`
    ///   before it, which JSON reads as whitespace).
    /// - Returns: The request, or the error to send back as an ERROR line. Lines longer than
    ///   ``maximumLineBytes`` fail with ``RequestError/lineTooLong``, whose
    ///   ``RequestError/closesConnection`` is true.
    public static func parse(line: UnsafeBufferPointer<UInt8>) -> Result<ClientRequest, RequestError> {
        var length = line.count
        if length > 0, line[length - 1] == UInt8(ascii: "\n") { length -= 1 }
        guard length <= maximumLineBytes else { return .failure(.lineTooLong) }
        let content = UnsafeBufferPointer(rebasing: line[0..<length])
        if let offset = firstInvalidUTF8(in: content) {
            return .failure(RequestError(message: JSONParseError(offset: offset, message: "invalid UTF-8").description))
        }
        let value: JSONValue
        do {
            value = try JSONValue.parse(content)
        } catch {
            return .failure(RequestError(message: error.description))
        }
        return parse(json: value)
    }

    /// Where `bytes` stop being UTF-8 (RFC 3629): the offset of the first byte of the first
    /// sequence that is not, `nil` when all of it is. A whole line is checked, not only its
    /// strings, so that a byte outside a string is reported as what it is.
    static func firstInvalidUTF8(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let scalar): offset += scalar.count
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }

    /// Reads one request line given as bytes.
    public static func parse(line: [UInt8]) -> Result<ClientRequest, RequestError> {
        line.withUnsafeBufferPointer { parse(line: $0) }
    }

    /// Reads one request line given as text.
    public static func parse(line: Substring) -> Result<ClientRequest, RequestError> {
        if let result = line.utf8.withContiguousStorageIfAvailable({ parse(line: $0) }) { return result }
        return parse(line: Array(line.utf8))
    }

    /// Reads one request line given as text.
    public static func parse(line: String) -> Result<ClientRequest, RequestError> {
        parse(line: line[...])
    }

    /// Reads a request from a parsed JSON value.
    ///
    /// Unknown keys are ignored, so that clients written for a later minor version of the
    /// protocol still work. An optional key given as `null` counts as absent.
    /// - Parameter json: The value of the line.
    /// - Returns: The request, or what is wrong with it; the error names the request's class
    ///   once the class is known.
    public static func parse(json: JSONValue) -> Result<ClientRequest, RequestError> {
        guard let members = json.objectValue, let name = members["class"]?.stringValue else {
            return .failure(.notARequest)
        }
        let fields = Fields(members: members, requestClass: name)
        do {
            switch name {
            case "WATCH":
                let enable = try fields.bool("enable") ?? true
                return .success(.watch(enable: enable, device: try fields.string("device")))
            case "POLL": return .success(.poll(device: try fields.string("device")))
            case "DEVICES": return .success(.devices)
            case "STATUS": return .success(.status(device: try fields.string("device")))
            case "TARE": return .success(.tare(device: try fields.string("device")))
            case "CALIBRATE":
                let grams = try fields.positiveGrams()
                let device = try fields.string("device")
                return .success(try fields.bool("add") ?? true ? .calibrate(grams: grams, device: device) : .measure(grams: grams, device: device))
            case "CALIBRATION":
                let device = try fields.string("device")
                if let points = try fields.curve() {
                    return .success(.replaceCurve(points: points, preview: try fields.bool("preview") ?? false, device: device))
                }
                return .success(.calibration(reset: try fields.bool("reset") ?? false, device: device))
            case "RUMBLE":
                return .success(.rumble(pattern: try fields.pattern()))
            case "GRAB":
                return .success(.grab(
                    enable: try fields.bool("enable") ?? true, seconds: try fields.grabSeconds(), device: try fields.string("device")))
            default:
                return .failure(RequestError(message: "unknown class '\(abbreviated(name))'"))
            }
        } catch {
            return .failure(error)
        }
    }

    /// The members of a request, read with the errors the protocol promises.
    private struct Fields {
        let members: [String: JSONValue]
        let requestClass: String

        /// An optional boolean; `nil` when absent or null.
        func bool(_ key: String) throws(RequestError) -> Bool? {
            guard let value = present(key) else { return nil }
            guard let bool = value.boolValue else { throw error("'\(key)' must be true or false") }
            return bool
        }

        /// An optional string; `nil` when absent or null.
        func string(_ key: String) throws(RequestError) -> String? {
            guard let value = present(key) else { return nil }
            guard let string = value.stringValue else { throw error("'\(key)' must be a string") }
            return string
        }

        /// CALIBRATE's required weight. The parser already rejects NaN and infinities; a
        /// weight above ``CalibrationPoint/maximumGrams`` is refused here, where every number
        /// a client sends is checked, so none can reach a curve, a tare or the state file.
        func positiveGrams() throws(RequestError) -> Double {
            guard let value = present("grams") else {
                throw error("missing 'grams': the known weight, a number greater than 0")
            }
            guard let grams = value.numberValue, grams.isFinite else { throw error("'grams' must be a number greater than 0") }
            return try Self.weight(grams, name: "grams", error)
        }

        /// A known weight: more than 0 g, at most ``CalibrationPoint/maximumGrams``.
        static func weight(_ grams: Double, name: String, _ error: (String) -> RequestError) throws(RequestError) -> Double {
            guard grams > 0 else { throw error("'\(name)' must be a number greater than 0") }
            guard grams <= CalibrationPoint.maximumGrams else {
                throw error("'\(name)' must be at most \(Int(CalibrationPoint.maximumGrams)) (grams): no pad or pen carries more")
            }
            return grams
        }

        /// CALIBRATION's optional `curve`: points with `raw` and `grams` numbers and, when
        /// known, `sd` (a number of 0 or more) and `n` (a whole number above 0).
        func curve() throws(RequestError) -> [CalibrationPoint]? {
            guard let value = present("curve") else { return nil }
            guard let entries = value.arrayValue else { throw error("'curve' must be a list of points") }
            var points: [CalibrationPoint] = []
            for (index, entry) in entries.enumerated() {
                let name = "curve[\(index)]"
                guard entry.objectValue != nil else { throw error("'\(name)' must be an object with 'raw' and 'grams'") }
                guard let raw = entry["raw"]?.numberValue, let grams = entry["grams"]?.numberValue else {
                    throw error("'\(name)' needs 'raw' and 'grams' numbers")
                }
                guard raw.magnitude <= CalibrationPoint.maximumRaw else {
                    throw error("'\(name).raw' must be a pressure a device can report (at most \(Int32.max) either way)")
                }
                _ = try Self.weight(grams, name: "\(name).grams", error)
                var spread: Double?
                if let sd = entry["sd"], sd != .null {
                    guard let number = sd.numberValue, number >= 0, number <= CalibrationPoint.maximumRaw else {
                        throw error("'\(name).sd' must be a number of 0 or more, at most \(Int32.max)")
                    }
                    spread = number
                }
                var count: Int?
                if let n = entry["n"], n != .null {
                    guard let number = n.numberValue.flatMap({ Int(exactly: $0) }), number > 0 else {
                        throw error("'\(name).n' must be a whole number greater than 0")
                    }
                    count = number
                }
                points.append(CalibrationPoint(raw: raw, grams: grams, spread: spread, count: count))
            }
            return points
        }

        /// GRAB's optional bound in seconds: a number greater than 0 (the daemon caps it at
        /// its own bound).
        func grabSeconds() throws(RequestError) -> Double? {
            guard let value = present("seconds") else { return nil }
            guard let seconds = value.numberValue, seconds.isFinite, seconds > 0 else {
                throw error("'seconds' must be a number greater than 0")
            }
            return seconds
        }

        /// RUMBLE's pattern, by name; `impact-medium` when absent, as for `forcescale rumble`.
        func pattern() throws(RequestError) -> HapticPattern {
            guard let name = try string("pattern") else { return HapticPattern.impactMedium }
            guard let pattern = HapticPattern.named(name) else {
                let known = HapticPattern.all.map(\.name).joined(separator: ", ")
                throw error("unknown pattern '\(ClientRequest.abbreviated(name))' (known: \(known))")
            }
            return pattern
        }

        private func present(_ key: String) -> JSONValue? {
            guard let value = members[key], value != .null else { return nil }
            return value
        }

        private func error(_ message: String) -> RequestError {
            RequestError(message: message, requestClass: requestClass)
        }
    }

    /// A client's text quoted in an error, cut to 40 characters so that a huge bogus value
    /// does not come back as a huge error.
    public static func abbreviated(_ text: String) -> String {
        let limit = 40
        guard text.count > limit else { return text }
        return String(text.prefix(limit)) + "…"
    }
}

/// What is wrong with a request: the `message` of the ERROR reply, and the request's class
/// when it was known.
public struct RequestError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One sentence naming the problem: `unknown class 'FOO'`.
    public var message: String
    /// The class of the request that failed (`"CALIBRATE"`), sent as the ERROR's `request`;
    /// `nil` when the line was not JSON, had no class, or its class was unknown.
    public var requestClass: String?

    public init(message: String, requestClass: String? = nil) {
        self.message = message
        self.requestClass = requestClass
    }

    /// A failure while serving a valid request (the device is gone, no rumble device).
    /// - Parameters:
    ///   - message: One sentence naming the problem.
    ///   - request: The request that failed, named in the ERROR's `request`.
    public init(message: String, request: ClientRequest?) {
        self.init(message: message, requestClass: request?.className)
    }

    /// A line longer than ``ClientRequest/maximumLineBytes``.
    public static let lineTooLong = RequestError(message: "line longer than \(ClientRequest.maximumLineBytes) bytes")

    /// Valid JSON that is not an object with a string `"class"`.
    public static let notARequest = RequestError(message: #"the request must be a JSON object with a "class""#)

    /// Whether the daemon closes the connection after sending this error: only for a line
    /// that is too long. Every other error leaves the connection up.
    public var closesConnection: Bool { self == .lineTooLong }

    public var description: String { message }
}
