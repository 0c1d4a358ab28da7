import CYAML
import Glibc
import ScaleCore
import ScalePOSIX

/// A line of a `libinput record` file that could not be read, as `file:line: problem`.
package struct LibinputRecordError: Error, Equatable, Sendable, CustomStringConvertible {
    package var file: String
    package var line: Int
    package var problem: String

    package var description: String { "\(file):\(line): \(problem)" }
}

/// Reads the YAML that `libinput record` writes (version 1: libinput's
/// tools/libinput-record.c and libinput-record(1)): per device `node`, `evdev` (`name`, `id`,
/// `codes`, `absinfo: {code: [min, max, fuzz, flat, resolution]}`, `properties`), `udev`,
/// `quirks`, then `events`, each an `evdev:` frame of `[sec, usec, type, code, value]`
/// ending in SYN_REPORT, or a `hid:` or `libinput:` entry (skipped).
///
/// libyaml's event API streams the file, so a recording of millions of events never sits in
/// memory as a document. Of several devices the first with a pressure axis is played; a file
/// with none gives its first device, which the caller refuses as it refuses an evemu file
/// without a pressure axis.
package struct LibinputRecordReader {
    package let path: String
    /// `--recording-device`: the device to play of several, by its place in the list
    /// (1 is the first) or a part of its name (case-insensitive); `nil` takes the first with
    /// a pressure axis.
    package let deviceSelection: String?

    package init(path: String, deviceSelection: String? = nil) {
        self.path = path
        self.deviceSelection = deviceSelection
    }

    /// Whether the file's first line that is neither blank nor a comment opens a YAML
    /// document of libinput's (`version:`, `ndevices:`, `devices:` or `---`) rather than an
    /// evemu line. Reads one chunk at most.
    static func looksLikeLibinputRecord(_ path: String) -> Bool {
        guard let file = fopen(path, "r") else { return false }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let line = text.drop { " \t\r\n".contains($0) }.reversed().drop { " \t\r\n".contains($0) }.reversed()
            let trimmed = String(line)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            return trimmed == "---" || trimmed.hasPrefix("version:") || trimmed.hasPrefix("ndevices:") || trimmed.hasPrefix("devices:")
        }
        return false
    }

    /// Reads the device to play, then streams its events.
    /// - Throws: `LibinputRecordError` naming the line, `RecordingError.file` when the file
    ///   cannot be read, or what `onDevice` and `onEvent` throw.
    package func read(onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void) throws {
        guard let file = fopen(path, "r") else { throw RecordingError.file(SystemError(path: path, errno: .current)) }
        defer { fclose(file) }
        try read(from: file, onDevice: onDevice, onEvent: onEvent)
    }

    /// Reads from an open stream (`fmemopen` in the fuzz target), named by `path` in errors.
    package func read(from file: UnsafeMutablePointer<FILE>, onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void) throws {
        var stream = try YAMLEventStream(file: file, path: path)
        try withoutActuallyEscaping(onDevice) { onDevice in
            try withoutActuallyEscaping(onEvent) { onEvent in
                var session = Session(path: path, onDevice: onDevice, onEvent: onEvent)
                session.selection = deviceSelection
                try session.readDocument(&stream)
            }
        }
    }

    /// The state of one reading: which device is played, and the last event's time.
    private struct Session {
        let path: String
        let onDevice: (DeviceDescription) throws -> Void
        let onEvent: (InputEvent) throws -> Void
        var chosen = false
        var firstDevice: DeviceDescription?
        var previousTime: EventTime?
        var eventCount = 0
        /// `--recording-device`, and the devices seen so far (for the error naming them).
        var selection: String?
        var deviceNames: [String] = []

        /// Whether the device at `index` (0-based) named `name` is the one `selection` names.
        func isSelected(index: Int, name: String) -> Bool {
            guard let selection else { return false }
            if let number = Int(selection) { return number == index + 1 }
            return name.lowercased().contains(selection.lowercased())
        }

        init(path: String, onDevice: @escaping (DeviceDescription) throws -> Void, onEvent: @escaping (InputEvent) throws -> Void) {
            self.path = path
            self.onDevice = onDevice
            self.onEvent = onEvent
        }

        func failure(_ line: Int, _ problem: String) -> LibinputRecordError {
            LibinputRecordError(file: path, line: line, problem: problem)
        }

        mutating func readDocument(_ stream: inout YAMLEventStream) throws {
            try stream.expect(.streamStart, "a libinput record")
            try stream.expect(.documentStart, "a libinput record")
            let top = try stream.next()
            guard top.kind == .mappingStart else {
                throw failure(top.line, "not a libinput record: expected a mapping with 'version: 1' and 'devices:'")
            }
            var version: String?
            var sawDevices = false
            while true {
                let key = try stream.next()
                if key.kind == .mappingEnd { break }
                guard key.kind == .scalar else { throw failure(key.line, "expected a key of the libinput record") }
                switch key.value {
                case "version":
                    let value = try stream.scalar("the format version")
                    guard value.value == "1" else {
                        throw failure(value.line, "libinput record version \(value.value) is not supported (this forcescale reads version 1)")
                    }
                    version = value.value
                case "devices":
                    guard version != nil else { throw failure(key.line, "'devices:' before 'version:'; is this a libinput record?") }
                    sawDevices = true
                    try readDevices(&stream)
                default:
                    try stream.skipValue()
                }
            }
            guard version != nil else { throw failure(1, "no 'version:': not a libinput record") }
            guard sawDevices else { throw failure(stream.line, "no 'devices:' list: the record holds no device") }
            if !chosen, let selection {
                let listed = deviceNames.enumerated().map { "\($0.offset + 1): '\($0.element)'" }.joined(separator: ", ")
                throw failure(stream.line, "--recording-device \(selection) names no device of the record; it holds \(listed.isEmpty ? "none" : listed)")
            }
            if !chosen {
                // No device with a pressure axis: the first one is refused by the caller,
                // with the words it uses for an evemu file without one.
                guard let firstDevice else { throw failure(stream.line, "the 'devices:' list is empty") }
                try onDevice(firstDevice)
                throw failure(stream.line, "no device of the record has a pressure axis")
            }
            guard eventCount > 0 else { throw RecordingError.noEvents(file: path) }
        }

        mutating func readDevices(_ stream: inout YAMLEventStream) throws {
            let start = try stream.next()
            guard start.kind == .sequenceStart else { throw failure(start.line, "'devices:' must be a list of devices") }
            while true {
                let item = try stream.next()
                if item.kind == .sequenceEnd { return }
                guard item.kind == .mappingStart else { throw failure(item.line, "each device must be a mapping with 'evdev:' and 'events:'") }
                try readDevice(&stream)
            }
        }

        mutating func readDevice(_ stream: inout YAMLEventStream) throws {
            var description: DeviceDescription?
            var plays = false
            while true {
                let key = try stream.next()
                if key.kind == .mappingEnd { return }
                guard key.kind == .scalar else { throw failure(key.line, "expected a key of the device") }
                switch key.value {
                case "evdev":
                    let device = try readEvdev(&stream)
                    description = device
                    if firstDevice == nil { firstDevice = device }
                    let index = deviceNames.count
                    deviceNames.append(device.name)
                    // Named by --recording-device, it is played (or refused by the caller, as
                    // an evemu file without a pressure axis is); else the first with pressure.
                    let wanted = selection == nil
                        ? device.axes[.absPressure] != nil || device.axes[.absMTPressure] != nil
                        : isSelected(index: index, name: device.name)
                    if !chosen, wanted {
                        chosen = true
                        plays = true
                        try onDevice(device)
                    }
                case "events":
                    guard description != nil else { throw failure(key.line, "the device's 'events:' come before its 'evdev:' description") }
                    if plays {
                        try readEvents(&stream)
                    } else {
                        try stream.skipValue()
                    }
                default:
                    try stream.skipValue()
                }
            }
        }

        mutating func readEvdev(_ stream: inout YAMLEventStream) throws -> DeviceDescription {
            let start = try stream.next()
            guard start.kind == .mappingStart else { throw failure(start.line, "'evdev:' must be a mapping with name, id, codes and absinfo") }
            var name: String?
            var identity: DeviceIdentity?
            var codes: [EventType: BitSet] = [:]
            var axes: [EventCode: AxisRange] = [:]
            var properties = BitSet()
            while true {
                let key = try stream.next()
                if key.kind == .mappingEnd { break }
                guard key.kind == .scalar else { throw failure(key.line, "expected a key of 'evdev:'") }
                switch key.value {
                case "name":
                    name = try stream.scalar("the device's name").value
                case "id":
                    let numbers = try integers(&stream, "'id:' [bus, vendor, product, version]")
                    guard numbers.values.count == 4, numbers.values.allSatisfy({ (0...0xFFFF).contains($0) }) else {
                        throw failure(numbers.line, "'id:' needs 4 numbers of 0 to 65535 (bus, vendor, product, version)")
                    }
                    identity = DeviceIdentity(bus: UInt16(numbers.values[0]), vendor: UInt16(numbers.values[1]),
                                              product: UInt16(numbers.values[2]), version: UInt16(numbers.values[3]))
                case "codes":
                    try mapping(&stream, "'codes:' {type: [codes]}") { stream, type, line in
                        guard let type = Int(type), (0...0x1f).contains(type) else { throw failure(line, "'codes:' event type '\(type)' is not 0 to 31") }
                        let list = try integers(&stream, "the codes of event type \(type)")
                        guard list.values.allSatisfy({ (0...0x2ff).contains($0) }) else { throw failure(list.line, "a code of event type \(type) is out of range (0 to 767)") }
                        codes[EventType(rawValue: UInt16(type))] = BitSet(list.values)
                    }
                case "absinfo":
                    try mapping(&stream, "'absinfo:' {code: [min, max, fuzz, flat, resolution]}") { stream, code, line in
                        guard let code = Int(code), (0...0x3f).contains(code) else { throw failure(line, "'absinfo:' axis code '\(code)' is not 0 to 63") }
                        let list = try integers(&stream, "the absinfo of axis \(code)")
                        guard list.values.count == 5, list.values.allSatisfy({ Int64(Int32.min)...Int64(Int32.max) ~= Int64($0) }) else {
                            throw failure(list.line, "the absinfo of axis \(code) needs 5 numbers of 32 bits: [min, max, fuzz, flat, resolution]")
                        }
                        let axis = EventCode(rawValue: UInt16(code))
                        let range = AxisRange(minimum: Int32(list.values[0]), maximum: Int32(list.values[1]), fuzz: Int32(list.values[2]),
                                              flat: Int32(list.values[3]), resolution: Int32(list.values[4]))
                        if axis == .absPressure || axis == .absMTPressure, range.maximum <= range.minimum {
                            throw failure(list.line, "the absinfo of \(axis.absoluteAxisName) has max \(range.maximum) not above min \(range.minimum)")
                        }
                        axes[axis] = range
                    }
                case "properties":
                    let list = try integers(&stream, "'properties:' [properties]")
                    guard list.values.allSatisfy({ (0...0x1f).contains($0) }) else { throw failure(list.line, "an input property is out of range (0 to 31)") }
                    properties = BitSet(list.values)
                default:
                    try stream.skipValue()
                }
            }
            guard let name else { throw failure(start.line, "'evdev:' has no 'name:'") }
            guard let identity else { throw failure(start.line, "'evdev:' has no 'id:'") }
            return DeviceDescription(name: name, identity: identity, properties: properties, supportedCodes: codes, axes: axes)
        }

        /// `events:`: a list of entries, each `evdev:` (a frame) or another kind (skipped).
        mutating func readEvents(_ stream: inout YAMLEventStream) throws {
            let start = try stream.next()
            if start.kind == .scalar, start.value.isEmpty { return }
            guard start.kind == .sequenceStart else { throw failure(start.line, "'events:' must be a list of '- evdev:' frames") }
            while true {
                let entry = try stream.next()
                if entry.kind == .sequenceEnd { return }
                guard entry.kind == .mappingStart else { throw failure(entry.line, "an entry of 'events:' must be '- evdev: [...]'") }
                while true {
                    let key = try stream.next()
                    if key.kind == .mappingEnd { break }
                    guard key.kind == .scalar else { throw failure(key.line, "expected 'evdev:', 'hid:' or 'libinput:'") }
                    if key.value == "evdev" {
                        try readFrame(&stream)
                    } else {
                        try stream.skipValue()
                    }
                }
            }
        }

        /// One `evdev:` frame: `[sec, usec, type, code, value]` lists ending in SYN_REPORT.
        mutating func readFrame(_ stream: inout YAMLEventStream) throws {
            let start = try stream.next()
            guard start.kind == .sequenceStart else { throw failure(start.line, "'evdev:' must be a list of [sec, usec, type, code, value]") }
            var last: InputEvent?
            var lastLine = start.line
            while true {
                let item = try stream.next()
                if item.kind == .sequenceEnd { break }
                guard item.kind == .sequenceStart else { throw failure(item.line, "expected an event [sec, usec, type, code, value]") }
                var numbers: [Int64] = []
                while true {
                    let number = try stream.next()
                    if number.kind == .sequenceEnd { break }
                    guard number.kind == .scalar, let value = Int64(number.value), numbers.count < 5 else {
                        throw failure(number.line, "an event needs 5 whole numbers: [sec, usec, type, code, value]")
                    }
                    numbers.append(value)
                }
                guard numbers.count == 5 else { throw failure(item.line, "an event needs 5 whole numbers: [sec, usec, type, code, value]") }
                let (seconds, microseconds, type, code, value) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
                guard (0...999_999_999_999).contains(seconds), (0...999_999).contains(microseconds) else {
                    throw failure(item.line, "event time \(seconds).\(microseconds) is out of range (seconds 0 to 10^12, microseconds 0 to 999999)")
                }
                guard (0...0x1f).contains(type), (0...0x2ff).contains(code), (Int64(Int32.min)...Int64(Int32.max)).contains(value) else {
                    throw failure(item.line, "event [\(type), \(code), \(value)] is out of range (type 0 to 31, code 0 to 767, a 32-bit value)")
                }
                let event = InputEvent(time: EventTime(microseconds: seconds * 1_000_000 + microseconds),
                                       type: EventType(rawValue: UInt16(type)), code: EventCode(rawValue: UInt16(code)), value: Int32(value))
                if let previousTime, event.time < previousTime {
                    throw failure(item.line, "event time \(event.time) is earlier than the event before it (\(previousTime)): a recording's times never go backwards")
                }
                previousTime = event.time
                try onEvent(event)
                eventCount += 1
                last = event
                lastLine = item.line
            }
            guard let last, last.type == .synchronization, last.code == .synReport else {
                throw failure(lastLine, "a frame that does not end with SYN_REPORT [sec, usec, 0, 0, 0]")
            }
        }

        /// A flow or block sequence of whole numbers, with the line it starts on.
        func integers(_ stream: inout YAMLEventStream, _ what: String) throws -> (values: [Int], line: Int) {
            let start = try stream.next()
            guard start.kind == .sequenceStart else { throw failure(start.line, "expected \(what) as a list") }
            var values: [Int] = []
            while true {
                let item = try stream.next()
                if item.kind == .sequenceEnd { return (values, start.line) }
                guard item.kind == .scalar, let value = Int(item.value) else { throw failure(item.line, "expected a whole number in \(what), found '\(item.value)'") }
                values.append(value)
            }
        }

        /// A mapping whose values `readValue` reads, given each key and its line.
        func mapping(_ stream: inout YAMLEventStream, _ what: String, _ readValue: (inout YAMLEventStream, String, Int) throws -> Void) throws {
            let start = try stream.next()
            guard start.kind == .mappingStart else { throw failure(start.line, "expected \(what)") }
            while true {
                let key = try stream.next()
                if key.kind == .mappingEnd { return }
                guard key.kind == .scalar else { throw failure(key.line, "expected a key of \(what)") }
                try readValue(&stream, key.value, key.line)
            }
        }
    }
}

/// libyaml's parser as a stream of events, each with its kind, its scalar's text and its
/// line (1-based). Errors are `LibinputRecordError`s naming the line libyaml stopped at.
struct YAMLEventStream: ~Copyable {
    enum Kind: Equatable {
        case streamStart, streamEnd, documentStart, documentEnd, alias, scalar, sequenceStart, sequenceEnd, mappingStart, mappingEnd
    }

    struct Event {
        var kind: Kind
        var value: String
        var line: Int
    }

    private let parser: UnsafeMutablePointer<yaml_parser_t>
    private let path: String
    /// The line of the last event read.
    private(set) var line = 1

    init(file: UnsafeMutablePointer<FILE>, path: String) throws {
        self.path = path
        parser = .allocate(capacity: 1)
        guard yaml_parser_initialize(parser) == 1 else {
            parser.deallocate()
            throw LibinputRecordError(file: path, line: 1, problem: "libyaml could not start (out of memory)")
        }
        yaml_parser_set_input_file(parser, file)
    }

    deinit {
        yaml_parser_delete(parser)
        parser.deallocate()
    }

    /// The next event that belongs to the record: where a value is still expected, the end
    /// of the document or of the stream means the file ended early.
    mutating func next() throws -> Event {
        let event = try anyNext()
        if event.kind == .streamEnd || event.kind == .documentEnd {
            throw LibinputRecordError(file: path, line: event.line, problem: "the file ends before the record does (truncated?)")
        }
        return event
    }

    /// The next event, whatever it is.
    private mutating func anyNext() throws -> Event {
        var event = yaml_event_t()
        guard yaml_parser_parse(parser, &event) == 1 else {
            let problem = parser.pointee.problem.map { String(cString: $0) } ?? "malformed YAML"
            let context = parser.pointee.context.map { String(cString: $0) + ": " } ?? ""
            let mark = parser.pointee.problem_mark.line
            throw LibinputRecordError(file: path, line: Int(mark) + 1, problem: "not valid YAML: \(context)\(problem)")
        }
        defer { yaml_event_delete(&event) }
        line = Int(event.start_mark.line) + 1
        let kind: Kind
        var value = ""
        switch event.type {
        case YAML_STREAM_START_EVENT: kind = .streamStart
        case YAML_STREAM_END_EVENT: kind = .streamEnd
        case YAML_DOCUMENT_START_EVENT: kind = .documentStart
        case YAML_DOCUMENT_END_EVENT: kind = .documentEnd
        case YAML_ALIAS_EVENT: kind = .alias
        case YAML_SCALAR_EVENT:
            kind = .scalar
            if let text = event.data.scalar.value {
                value = String(decoding: UnsafeBufferPointer(start: text, count: Int(event.data.scalar.length)), as: UTF8.self)
            }
        case YAML_SEQUENCE_START_EVENT: kind = .sequenceStart
        case YAML_SEQUENCE_END_EVENT: kind = .sequenceEnd
        case YAML_MAPPING_START_EVENT: kind = .mappingStart
        default: kind = .mappingEnd
        }
        return Event(kind: kind, value: value, line: line)
    }

    mutating func expect(_ kind: Kind, _ what: String) throws {
        let event = try anyNext()
        guard event.kind == kind else { throw LibinputRecordError(file: path, line: event.line, problem: "expected \(what)") }
    }

    mutating func scalar(_ what: String) throws -> Event {
        let event = try next()
        guard event.kind == .scalar else { throw LibinputRecordError(file: path, line: event.line, problem: "expected \(what), a single value") }
        return event
    }

    /// Skips one value, however deeply nested.
    mutating func skipValue() throws {
        var depth = 0
        repeat {
            let event = try next()
            switch event.kind {
            case .sequenceStart, .mappingStart: depth += 1
            case .sequenceEnd, .mappingEnd: depth -= 1
            default: break
            }
        } while depth > 0
    }
}
