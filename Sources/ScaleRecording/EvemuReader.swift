import Glibc  // memchr: the reader is fed bytes; it opens no file itself.
import ScaleCore

/// Reads the evemu text format incrementally: feed it chunks of a file as they arrive and it
/// hands back each `E:` event at once, so a recording of any length streams through in
/// constant memory.
///
/// Accepts format 1.0 (no header) to 1.3: `N:`, `I:`, `P:`, `B:`, `A:` (5 fields, or 6 with
/// the resolution from 1.2 on) and `E:` lines, blank lines, and `#` comments on a line of
/// their own or after the data. Description lines must come before the first event.
package struct EvemuReader: Sendable {
    /// The file name used in error messages.
    package let fileName: String
    /// The format version from the `# EVEMU x.y` header, `nil` when there is none (1.0).
    package private(set) var formatVersion: String?
    /// Number of `E:` lines read so far.
    package private(set) var eventCount = 0
    /// The time of the last event read.
    private var previousTime = EventTime(microseconds: 0)

    private let acceptsDescription: Bool
    private let acceptsEvents: Bool
    private var lineNumber = 0
    private var partialLine: [UInt8] = []
    private var description = DescriptionBuilder()

    /// - Parameters:
    ///   - fileName: Named in every error.
    ///   - acceptsDescription: `false` for the events half of a split pair, where a device
    ///     description would silently contradict the `.desc` file.
    ///   - acceptsEvents: `false` for a description found beside an events file rather than
    ///     given: events of its own would make it a second recording, played before the one
    ///     that was asked for.
    package init(fileName: String, acceptsDescription: Bool = true, acceptsEvents: Bool = true) {
        self.fileName = fileName
        self.acceptsDescription = acceptsDescription
        self.acceptsEvents = acceptsEvents
    }

    /// The device described so far, or `nil` when the input had no description lines.
    package var device: DeviceDescription? { description.build() }

    /// Reads every complete line of `chunk`; a trailing partial line waits for the next chunk.
    /// - Parameters:
    ///   - chunk: The next bytes of the file.
    ///   - onEvent: Called for each `E:` line, in order.
    /// - Throws: `EvemuParseError` naming the first malformed line.
    package mutating func feed(
        _ chunk: UnsafeRawBufferPointer, onEvent: (InputEvent) -> Void
    ) throws(EvemuParseError) {
        guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let end = chunk.count
        var lineStart = 0
        // memchr finds the newlines many bytes at a time; a byte loop here was the single
        // largest cost of a replay. Lines are read in place: only a line cut by the end of
        // a chunk is copied, into `partialLine`.
        while lineStart < end, let found = memchr(base + lineStart, Int32(UInt8(ascii: "\n")), end - lineStart) {
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            let line = UnsafeBufferPointer(start: base + lineStart, count: newline - lineStart)
            if partialLine.isEmpty {
                try readLine(line, onEvent)
            } else {
                partialLine.append(contentsOf: line)
                let joined = partialLine
                partialLine.removeAll(keepingCapacity: true)
                try joined.withUnsafeBufferPointer { joined throws(EvemuParseError) in try readLine(joined, onEvent) }
            }
            lineStart = newline + 1
        }
        if lineStart < end {
            partialLine.append(contentsOf: UnsafeBufferPointer(start: base + lineStart, count: end - lineStart))
        }
    }

    /// Reads the last line when the input does not end with a newline.
    package mutating func finish(onEvent: (InputEvent) -> Void) throws(EvemuParseError) {
        guard !partialLine.isEmpty else { return }
        let line = partialLine
        partialLine.removeAll()
        try line.withUnsafeBufferPointer { line throws(EvemuParseError) in try readLine(line, onEvent) }
    }

    // MARK: - Lines

    private mutating func readLine(
        _ rawLine: UnsafeBufferPointer<UInt8>, _ onEvent: (InputEvent) -> Void
    ) throws(EvemuParseError) {
        lineNumber += 1
        var line = rawLine
        if let last = line.last, last == UInt8(ascii: "\r") { line = UnsafeBufferPointer(rebasing: line.dropLast()) }
        guard let first = line.first else { return }

        // Events are nearly every line of a recording, so they take the byte-level path.
        if first == UInt8(ascii: "E"), line.count > 1, line[1] == UInt8(ascii: ":") {
            guard let event = Self.parseCanonicalEvent(line) ?? Self.parseEvent(line) else {
                throw failure("expected 'E: <seconds>.<microseconds> <type hex> <code hex> <value>', found '\(Self.excerpt(line))'")
            }
            guard acceptsEvents else {
                throw failure("an event in a file taken as the description beside an events file, so it is a recording of its own; replay it alone, or give the description and the events file both")
            }
            // Replay paces by these times and a loop starts over after the last: a time
            // earlier than the one before cannot be served (nor can a kernel stamp one).
            if eventCount > 0, event.time < previousTime {
                throw failure("event time \(event.time) is earlier than the event before it (\(previousTime)): a recording's times never go backwards; was the file edited or joined from two recordings?")
            }
            previousTime = event.time
            eventCount += 1
            onEvent(event)
            return
        }
        let text = String(decoding: line, as: UTF8.self)
        try readDescriptionLine(text)
    }

    private mutating func readDescriptionLine(_ text: String) throws(EvemuParseError) {
        let trimmed = text.drop { $0 == " " || $0 == "\t" }
        if trimmed.isEmpty { return }
        if trimmed.hasPrefix("#") {
            try readComment(trimmed.dropFirst())
            return
        }
        guard trimmed.count >= 2, trimmed.dropFirst().first == ":" else {
            throw failure("not an evemu line: '\(Self.excerpt(text))' (expected N:, I:, P:, B:, A:, E: or a # comment)")
        }
        let kind = trimmed.first!
        guard "NIPBA".contains(kind) else {
            throw failure("unknown line kind '\(kind):' (expected N:, I:, P:, B:, A:, E: or a # comment)")
        }
        guard acceptsDescription else {
            throw failure("a device description line in the events file of a split pair; give the .desc file first, or this file alone")
        }
        guard eventCount == 0 else {
            throw failure("device description line '\(kind):' after the first event; descriptions come first")
        }
        let body = trimmed.dropFirst(2)
        if kind == "N" {
            // Names may contain '#', so the whole rest of the line is the name.
            description.name = String(body.trimmingSpaces())
            return
        }
        let fields = Self.stripComment(body).split(whereSeparator: { $0 == " " || $0 == "\t" })
        switch kind {
        case "I": try readIdentity(fields)
        case "P": description.propertyBytes.append(contentsOf: try hexBytes(fields, what: "property"))
        case "B": try readBits(fields)
        default: try readAxis(fields)
        }
    }

    private mutating func readComment(_ comment: Substring) throws(EvemuParseError) {
        let words = comment.split(separator: " ")
        guard words.count >= 2, words[0] == "EVEMU", formatVersion == nil, eventCount == 0 else { return }
        let version = String(words[1])
        guard ["1.0", "1.1", "1.2", "1.3"].contains(version) else {
            throw failure("unsupported evemu format version \(version); forcescale reads versions 1.0 to 1.3")
        }
        formatVersion = version
    }

    private mutating func readIdentity(_ fields: [Substring]) throws(EvemuParseError) {
        guard fields.count == 4 else {
            throw failure("'I:' needs 4 hex fields (bus vendor product version), found \(fields.count)")
        }
        var values: [UInt16] = []
        for field in fields {
            guard let value = UInt16(field, radix: 16) else {
                throw failure("'I:' field '\(field)' is not a 16-bit hex number")
            }
            values.append(value)
        }
        description.identity = DeviceIdentity(bus: values[0], vendor: values[1], product: values[2], version: values[3])
        description.hasIdentity = true
    }

    private mutating func readBits(_ fields: [Substring]) throws(EvemuParseError) {
        guard let typeField = fields.first, let type = UInt16(typeField, radix: 16) else {
            throw failure("'B:' needs an event type in hex first")
        }
        guard type <= EventType.maximum.rawValue else {
            throw failure("'B:' event type 0x\(String(type, radix: 16)) is beyond EV_MAX (0x1f)")
        }
        let bytes = try hexBytes(fields.dropFirst(), what: "bitmask")
        description.bitBytes[EventType(rawValue: type), default: []].append(contentsOf: bytes)
    }

    private mutating func readAxis(_ fields: [Substring]) throws(EvemuParseError) {
        guard fields.count == 5 || fields.count == 6 else {
            throw failure("'A:' needs 5 or 6 fields (code min max fuzz flat [resolution]), found \(fields.count)")
        }
        guard let code = UInt16(fields[0], radix: 16), code <= EventCode.absMaximum.rawValue else {
            throw failure("'A:' axis code '\(fields[0])' is not a hex ABS_ code up to 3f")
        }
        var numbers: [Int32] = []
        for field in fields.dropFirst() {
            guard let number = Int32(field) else {
                throw failure("'A:' field '\(field)' of axis \(EventCode(rawValue: code).absoluteAxisName) is not a 32-bit integer")
            }
            numbers.append(number)
        }
        description.axes[EventCode(rawValue: code)] = AxisRange(
            minimum: numbers[0], maximum: numbers[1], fuzz: numbers[2], flat: numbers[3],
            resolution: numbers.count == 5 ? numbers[4] : 0)
    }

    private func hexBytes<C: Collection<Substring>>(_ fields: C, what: String) throws(EvemuParseError) -> [UInt8] {
        var bytes: [UInt8] = []
        for field in fields {
            guard field.count <= 2, let byte = UInt8(field, radix: 16) else {
                throw failure("\(what) byte '\(field)' is not a two-digit hex number")
            }
            bytes.append(byte)
        }
        return bytes
    }

    private func failure(_ problem: String) -> EvemuParseError {
        EvemuParseError(file: fileName, line: lineNumber, problem: problem)
    }

    private static func stripComment(_ text: Substring) -> Substring {
        guard let hash = text.firstIndex(of: "#") else { return text }
        return text[..<hash]
    }

    static func excerpt<C: Collection<UInt8>>(_ line: C) -> String {
        excerpt(String(decoding: line, as: UTF8.self))
    }

    static func excerpt(_ text: String) -> String {
        text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }
}

// MARK: - E: lines

extension EvemuReader {
    /// The layout evemu itself writes (`E: %lu.%06u %04x %04x %d`), read with fixed widths
    /// and no per-field loops: nearly every line of a recording takes this path.
    /// - Returns: `nil` when the line is laid out any other way; `parseEvent` decides then.
    @inline(__always)
    static func parseCanonicalEvent(_ line: UnsafeBufferPointer<UInt8>) -> InputEvent? {
        guard let base = line.baseAddress, line.count >= 23, base[2] == 0x20 else { return nil }
        let end = line.count
        var position = 3
        var seconds: Int64 = 0
        while position < end, position < 15 {
            let digit = base[position] &- 0x30
            guard digit < 10 else { break }
            seconds = seconds &* 10 &+ Int64(digit)
            position &+= 1
        }
        // "." + 6 digits + " " + 4 hex + " " + 4 hex + " " = 18 bytes, then the value.
        guard position > 3, end - position > 18, base[position] == UInt8(ascii: ".") else { return nil }
        var microseconds: Int64 = 0
        for offset in 1...6 {
            let digit = base[position &+ offset] &- 0x30
            guard digit < 10 else { return nil }
            microseconds = microseconds &* 10 &+ Int64(digit)
        }
        guard base[position &+ 7] == 0x20, base[position &+ 12] == 0x20, base[position &+ 17] == 0x20,
              let type = hex4(base + position + 8), let code = hex4(base + position + 13)
        else { return nil }
        position &+= 18
        let negative = base[position] == UInt8(ascii: "-")
        if negative { position &+= 1 }
        let valueStart = position
        var magnitude: Int64 = 0
        while position < end, position &- valueStart < 11 {
            let digit = base[position] &- 0x30
            guard digit < 10 else { break }
            magnitude = magnitude &* 10 &+ Int64(digit)
            position &+= 1
        }
        let value = negative ? -magnitude : magnitude
        guard position > valueStart, value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        // Only a comment, or nothing, may follow.
        if position < end {
            let next = base[position]
            guard next == 0x20 || next == 0x09 || next == UInt8(ascii: "#") else { return nil }
            var cursor = ByteCursor(line, position: position)
            guard cursor.atEndOrComment() else { return nil }
        }
        return InputEvent(
            time: EventTime(microseconds: seconds &* 1_000_000 &+ microseconds),
            type: EventType(rawValue: type), code: EventCode(rawValue: code), value: Int32(truncatingIfNeeded: value))
    }

    @inline(__always)
    private static func hex4(_ digits: UnsafePointer<UInt8>) -> UInt16? {
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = digits[offset]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte &- 0x30
            case 0x61...0x66: nibble = byte &- 0x61 &+ 10
            case 0x41...0x46: nibble = byte &- 0x41 &+ 10
            default: return nil
            }
            value = value << 4 | UInt16(nibble)
        }
        return value
    }

    /// Parses `E: <sec>.<usec> <type> <code> <value> [# comment]` without allocating.
    /// - Returns: `nil` when the line does not have that shape or a number is out of range.
    static func parseEvent(_ line: UnsafeBufferPointer<UInt8>) -> InputEvent? {
        var cursor = ByteCursor(line, position: 2)
        guard cursor.skipSpaces() else { return nil }
        guard let seconds = cursor.decimal(maxDigits: 12), cursor.consume(UInt8(ascii: ".")) else { return nil }
        let fractionStart = cursor.position
        guard let fraction = cursor.decimal(maxDigits: 6) else { return nil }
        var microseconds = fraction
        for _ in (cursor.position - fractionStart)..<6 { microseconds &*= 10 }
        guard cursor.skipSpaces(), let type = cursor.hex(maxDigits: 4),
              cursor.skipSpaces(), let code = cursor.hex(maxDigits: 4),
              cursor.skipSpaces(), let value = cursor.signedDecimal32()
        else { return nil }
        guard cursor.atEndOrComment() else { return nil }
        // At most 12 digits of seconds, so the sum stays below 10^18 and cannot wrap.
        return InputEvent(
            time: EventTime(microseconds: seconds &* 1_000_000 &+ microseconds),
            type: EventType(rawValue: UInt16(type)), code: EventCode(rawValue: UInt16(code)), value: value)
    }
}

/// A forward-only reader over the bytes of one line. Its methods run several times for every
/// event of a recording, so they are inlined into `parseEvent`, and the digit loops use
/// wrapping arithmetic: a value is only returned with at most `maxDigits` (12) digits, so it
/// cannot have wrapped. Under callgrind each saves 40 to 80 instructions per event.
struct ByteCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var position: Int

    init(_ bytes: UnsafeBufferPointer<UInt8>, position: Int) {
        self.bytes = bytes
        self.position = position
    }

    /// Skips one or more spaces or tabs. - Returns: whether there was at least one.
    @inline(__always)
    mutating func skipSpaces() -> Bool {
        let start = position
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x09 { position += 1 }
        return position > start
    }

    @inline(__always)
    mutating func consume(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// A value that wrapped is never returned: it would have more than `maxDigits` digits.
    @inline(__always)
    mutating func decimal(maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        let start = position
        while position < bytes.count {
            let digit = bytes[position] &- 0x30
            guard digit < 10 else { break }
            value = value &* 10 &+ Int64(digit)
            position += 1
            if position - start > maxDigits { return nil }
        }
        return position > start ? value : nil
    }

    @inline(__always)
    mutating func hex(maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        let start = position
        while position < bytes.count {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x61...0x66: digit = byte - 0x61 + 10
            case 0x41...0x46: digit = byte - 0x41 + 10
            default: return position > start ? value : nil
            }
            value = value &<< 4 | Int64(digit)
            position += 1
            if position - start > maxDigits { return nil }
        }
        return position > start ? value : nil
    }

    @inline(__always)
    mutating func signedDecimal32() -> Int32? {
        let negative = consume(UInt8(ascii: "-"))
        guard let magnitude = decimal(maxDigits: 10) else { return nil }
        let value = negative ? -magnitude : magnitude
        guard value >= Int64(Int32.min), value <= Int64(Int32.max) else { return nil }
        return Int32(value)
    }

    /// Whether only spaces and an optional `#` comment remain.
    @inline(__always)
    mutating func atEndOrComment() -> Bool {
        _ = skipSpaces()
        return position == bytes.count || bytes[position] == UInt8(ascii: "#")
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        let isText: (Character) -> Bool = { $0 != " " && $0 != "\t" }
        guard let first = firstIndex(where: isText), let last = lastIndex(where: isText) else { return "" }
        return self[first...last]
    }
}

/// Accumulates description lines; bitmask lines of one type continue each other.
struct DescriptionBuilder: Sendable {
    var name: String?
    var identity = DeviceIdentity(bus: 0, vendor: 0, product: 0, version: 0)
    var hasIdentity = false
    var propertyBytes: [UInt8] = []
    var bitBytes: [EventType: [UInt8]] = [:]
    var axes: [EventCode: AxisRange] = [:]

    func build() -> DeviceDescription? {
        guard name != nil || hasIdentity || !propertyBytes.isEmpty || !bitBytes.isEmpty || !axes.isEmpty else {
            return nil
        }
        var codes: [EventType: BitSet] = [:]
        for (type, bytes) in bitBytes { codes[type] = Self.bits(of: bytes) }
        return DeviceDescription(
            name: name ?? "unnamed device", identity: identity, properties: Self.bits(of: propertyBytes),
            supportedCodes: codes, axes: axes)
    }

    private static func bits(of bytes: [UInt8]) -> BitSet {
        var set = BitSet()
        for (index, byte) in bytes.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << bit) != 0 { set.insert(index * 8 + bit) }
        }
        return set
    }
}
