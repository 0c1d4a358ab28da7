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

/// Which device of a record with several is played when `--recording-device` names none.
package enum RecordingDevicePreference: Sendable {
    /// The first device with a pressure axis and events (`replay`, `forcescaled`); when
    /// several qualify, a notice names them and how to choose.
    case pressure
    /// The pen (`BTN_TOOL_PEN`) with a pressure axis and events (`characterize`); several
    /// such pens are an error that lists them. A record without one falls back to `pressure`.
    case pen
}

/// A device of a record as reading the file found it.
package struct RecordedDevice: Sendable {
    /// Its place in the `devices:` list, 1 for the first.
    package var place: Int
    /// The `node:` it was recorded from (`/dev/input/event9`), when the record says.
    package var node: String?
    package var description: DeviceDescription
    /// The line of its `evdev:` key, and of its `events:` key (its item's line if none).
    package var evdevLine: Int
    package var eventsLine: Int
    /// How many `- evdev:` frames it holds.
    package var frames: Int

    /// `event9` for `/dev/input/event9`.
    package var nodeName: String? { node.map { String($0.split(separator: "/").last ?? Substring($0)) } }

    var hasPressure: Bool { description.axes[.absPressure] != nil || description.axes[.absMTPressure] != nil }
    var isPen: Bool { hasPressure && description.supports(.key, .btnToolPen) }

    /// Whether `--recording-device selection` names it: a whole number is a place in the
    /// list; else its node (`event9`, `/dev/input/event9`) or a part of its name
    /// (case-insensitive).
    func isNamed(by selection: String) -> Bool {
        if let number = Int(selection) { return number == place }
        return node == selection || nodeName == selection || description.name.lowercased().contains(selection.lowercased())
    }

    /// `2: 'Wacom Intuos S Pen' (event9)`, as lists of devices show it.
    package var label: String { "\(place): '\(description.name)'" + (nodeName.map { " (\($0))" } ?? "") }
}

/// Reads the YAML that `libinput record` writes (version 1: libinput's
/// tools/libinput-record.c and libinput-record(1)): per device `node`, `evdev` (`name`, `id`,
/// `codes`, `absinfo: {code: [min, max, fuzz, flat, resolution]}`, `properties`), `udev`,
/// `quirks`, then `events`, each an `evdev:` frame of `[sec, usec, type, code, value]`
/// ending in SYN_REPORT, or a `hid:` or `libinput:` entry (skipped).
///
/// libyaml's event API streams the file, so a recording of millions of events never sits in
/// memory as a document, and it is read once: the device to play is the first that
/// `RecordingDevicePreference` (or `--recording-device`) wants, from its first frame on (a
/// device without events is passed over); the other devices are listed as they go by, so
/// that what the user should know of them (several could have been played, several pens)
/// is said at the end. A file with no pressure device gives its first device, which the
/// caller refuses as it refuses an evemu file without a pressure axis.
package struct LibinputRecordReader {
    package let path: String
    /// `--recording-device`: the device to play of several, by its place in the list
    /// (1 is the first), its node (`event9` or `/dev/input/event9`) or a part of its name
    /// (case-insensitive); `nil` chooses by `preference`.
    package let deviceSelection: String?
    package var preference: RecordingDevicePreference

    package init(path: String, deviceSelection: String? = nil, preference: RecordingDevicePreference = .pressure) {
        self.path = path
        self.deviceSelection = deviceSelection
        self.preference = preference
    }

    /// Whether the file is named `.yml` or `.yaml` (then the YAML reader says what is wrong
    /// with it, whatever it holds), or its first line that is neither blank nor a comment
    /// opens a YAML document of libinput's (`version:`, `ndevices:`, `devices:` or `---`)
    /// rather than an evemu line. Reads one chunk at most.
    static func looksLikeLibinputRecord(_ path: String) -> Bool {
        let lowered = path.lowercased()
        if lowered.hasSuffix(".yml") || lowered.hasSuffix(".yaml") { return access(path, F_OK) == 0 }
        guard let file = fopen(path, "r") else { return false }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // Characters one by one: in a string literal "\r\n" is one Character, which a
            // lone "\n" is not.
            let blank: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
            let line = text.drop { blank.contains($0) }.reversed().drop { blank.contains($0) }.reversed()
            let trimmed = String(line)
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("%") { continue }
            return trimmed == "---" || trimmed.hasPrefix("--- ") || trimmed.hasPrefix("version:") || trimmed.hasPrefix("ndevices:") || trimmed.hasPrefix("devices:")
        }
        return false
    }

    /// Streams the chosen device's events, listing the others on the way.
    /// - Parameters:
    ///   - onNotice: Warnings (`file:line: warning: …`) and which device was chosen of several,
    ///     for standard error or the daemon's log.
    /// - Throws: `LibinputRecordError` naming the line, `RecordingError.file` when the file
    ///   cannot be read, `RecordingError.noEventsInRecord` when the device holds no event, or
    ///   what `onDevice` and `onEvent` throw.
    package func read(onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void, onNotice: (String) -> Void = { _ in }) throws {
        guard let file = fopen(path, "r") else { throw RecordingError.file(SystemError(path: path, errno: .current)) }
        defer { fclose(file) }
        try read(from: file, onDevice: onDevice, onEvent: onEvent, onNotice: onNotice)
    }

    /// Reads from an open stream (`fmemopen` in the fuzz target), named by `path` in errors.
    /// One pass streams the chosen device's events as they come; only a `.pen` record without
    /// a pen, whose pressure device has events, is read a second time (seeking to its start).
    package func read(
        from file: UnsafeMutablePointer<FILE>, onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void,
        onNotice: (String) -> Void = { _ in }
    ) throws {
        let rule: Session.Rule
        if let selection = deviceSelection {
            rule = Session.Rule(needsEvents: false) { $0.isNamed(by: selection) }
        } else if preference == .pen {
            rule = Session.Rule(needsEvents: true) { $0.isPen }
        } else {
            rule = Session.Rule(needsEvents: true) { $0.hasPressure }
        }
        let outcome = try pass(file, rule: rule, warns: true, onDevice: onDevice, onEvent: onEvent, onNotice: onNotice)
        if let second = try conclude(outcome, onDevice: onDevice, onNotice: onNotice) {
            guard fseek(file, 0, SEEK_SET) == 0 else { throw RecordingError.file(SystemError(path: path, errno: .current)) }
            let rule = Session.Rule(needsEvents: false) { $0.place == second }
            _ = try pass(file, rule: rule, warns: false, onDevice: onDevice, onEvent: onEvent, onNotice: onNotice)
        }
    }

    /// What one pass found: the devices, the one played (if any) and how many events it gave.
    struct Outcome {
        var devices: [RecordedDevice]
        var devicesLine: Int
        var played: RecordedDevice?
        var eventCount: Int
    }

    private func pass(
        _ file: UnsafeMutablePointer<FILE>, rule: Session.Rule, warns: Bool,
        onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void, onNotice: (String) -> Void
    ) throws -> Outcome {
        try withoutActuallyEscaping(onDevice) { onDevice in
            try withoutActuallyEscaping(onEvent) { onEvent in
                try withoutActuallyEscaping(onNotice) { onNotice in
                    var stream = try YAMLEventStream(file: file, path: path)
                    var session = Session(path: path, rule: rule, warns: warns, onDevice: onDevice, onEvent: onEvent, onNotice: onNotice)
                    try session.readDocument(&stream)
                    return Outcome(devices: session.devices, devicesLine: session.devicesLine,
                                   played: session.played.map { session.devices[$0 - 1] }, eventCount: session.eventCount)
                }
            }
        }
    }

    /// Checks what was played against the other devices, says what the user should know,
    /// and refuses what cannot be played.
    /// - Returns: The place of a device to play in a second pass (a `.pen` record with no
    ///   pen, whose pressure device has events), else `nil`.
    /// - Throws: `LibinputRecordError` at the `devices:` line when `--recording-device`
    ///   names no device, when the list is empty or when several pens could be meant;
    ///   `RecordingError.noEventsInRecord`; what `onDevice` throws of a device handed over to
    ///   be refused.
    func conclude(_ outcome: Outcome, onDevice: (DeviceDescription) throws -> Void, onNotice: (String) -> Void) throws -> Int? {
        let devices = outcome.devices
        func listed(_ devices: [RecordedDevice]) -> String { devices.map(\.label).joined(separator: ", ") }
        func failure(_ problem: String) -> LibinputRecordError { LibinputRecordError(file: path, line: outcome.devicesLine, problem: problem) }
        func noEvents(_ device: RecordedDevice) -> RecordingError {
            .noEventsInRecord(file: path, line: device.eventsLine, device: device.label, others: devices.count > 1)
        }
        let pressure = devices.filter(\.hasPressure)
        let playable = pressure.filter { $0.frames > 0 }
        if let played = outcome.played {
            guard outcome.eventCount > 0 else { throw noEvents(played) }
            guard deviceSelection == nil else { return nil }
            if preference == .pen {
                let pens = playable.filter(\.isPen)
                if pens.count > 1 {
                    throw failure("the record holds \(pens.count) pens with events: \(listed(pens)); name the one to characterize with --recording-device (its node, its place or a part of its name)")
                }
            } else if playable.count > 1, let other = playable.first(where: { $0.place != played.place }) {
                onNotice("\(path):\(outcome.devicesLine): note: \(playable.count) devices of the record have pressure and events: \(listed(playable)); played \(played.label). Choose another with --recording-device, e.g. --recording-device \(other.nodeName ?? String(other.place))")
            }
            return nil
        }
        guard !devices.isEmpty else { throw failure("the 'devices:' list is empty") }
        if let selection = deviceSelection {
            throw failure("--recording-device \(selection) names no device of the record (give its place, its node or a part of its name); it holds \(listed(devices))")
        }
        // A device that cannot weigh is refused where it is described.
        func hand(_ device: RecordedDevice) throws {
            do {
                try onDevice(device.description)
            } catch let error as DeviceSetupError {
                throw LibinputRecordError(file: path, line: device.evdevLine, problem: error.description)
            }
        }
        if preference == .pen, let pen = devices.first(where: \.isPen) {
            try hand(pen)
            throw noEvents(pen)
        }
        if let first = playable.first { return first.place }
        if let first = pressure.first {
            try hand(first)
            throw noEvents(first)
        }
        try hand(devices[0])
        throw failure("no device of the record has a pressure axis")
    }

    /// One pass over the document: it lists the devices (with how many frames each holds),
    /// warns of unknown keys, and plays the first device the rule wants: its description goes
    /// to `onDevice` and its events to `onEvent` as they are read.
    private struct Session {
        /// Which device to play: the first that `wants` and, with `needsEvents`, whose
        /// `events:` list holds a frame (it is played from that frame on).
        struct Rule {
            var needsEvents: Bool
            var wants: (RecordedDevice) -> Bool
        }

        let path: String
        let rule: Rule
        let warns: Bool
        let onDevice: (DeviceDescription) throws -> Void
        let onEvent: (InputEvent) throws -> Void
        let onNotice: (String) -> Void
        var previousTime: EventTime?
        var eventCount = 0
        var devices: [RecordedDevice] = []
        var devicesLine = 1
        /// The place of the device played, once chosen.
        var played: Int?
        /// Unknown keys already warned of, by where they were found: one warning each.
        var warned: Set<String> = []

        init(path: String, rule: Rule, warns: Bool, onDevice: @escaping (DeviceDescription) throws -> Void,
             onEvent: @escaping (InputEvent) throws -> Void, onNotice: @escaping (String) -> Void) {
            self.path = path
            self.rule = rule
            self.warns = warns
            self.onDevice = onDevice
            self.onEvent = onEvent
            self.onNotice = onNotice
        }

        func failure(_ line: Int, _ problem: String) -> LibinputRecordError {
            LibinputRecordError(file: path, line: line, problem: problem)
        }

        /// Warns once of a key that libinput's format does not have where it was found, with
        /// the known keys and the likeliest one meant; the value is skipped.
        mutating func unknown(_ key: YAMLEventStream.Event, in place: String, known: [String], _ stream: inout YAMLEventStream) throws {
            if warns, warned.insert(place + "\u{0}" + key.value).inserted {
                let meant = Suggestion.closest(to: key.value, among: known)
                onNotice("\(path):\(key.line): warning: '\(key.value):' is not a key of \(place) in a libinput record (it has \(known.joined(separator: ", "))), so it is skipped"
                    + (meant.map { "; did you mean '\($0):'?" } ?? ""))
            }
            try stream.skipValue()
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
                    devicesLine = key.line
                    try readDevices(&stream)
                case "ndevices", "libinput", "system":
                    try stream.skipValue()
                default:
                    try unknown(key, in: "the record", known: ["version", "ndevices", "libinput", "system", "devices"], &stream)
                }
            }
            guard version != nil else { throw failure(1, "no 'version:': not a libinput record") }
            guard sawDevices else { throw failure(stream.line, "no 'devices:' list: the record holds no device") }
        }

        mutating func readDevices(_ stream: inout YAMLEventStream) throws {
            let start = try stream.next()
            guard start.kind == .sequenceStart else { throw failure(start.line, "'devices:' must be a list of devices") }
            while true {
                let item = try stream.next()
                if item.kind == .sequenceEnd { return }
                guard item.kind == .mappingStart else { throw failure(item.line, "each device must be a mapping with 'evdev:' and 'events:'") }
                try readDevice(&stream, line: item.line)
            }
        }

        mutating func readDevice(_ stream: inout YAMLEventStream, line: Int) throws {
            let place = devices.count + 1
            var device: RecordedDevice?
            var node: String?
            var sawEvents = false
            while true {
                let key = try stream.next()
                if key.kind == .mappingEnd { break }
                guard key.kind == .scalar else { throw failure(key.line, "expected a key of the device") }
                switch key.value {
                case "node":
                    node = try stream.scalar("the device's node").value
                case "evdev":
                    let description = try readEvdev(&stream)
                    device = RecordedDevice(place: place, node: nil, description: description, evdevLine: key.line, eventsLine: line, frames: 0)
                case "events":
                    guard var listed = device else { throw failure(key.line, "the device's 'events:' come before its 'evdev:' description") }
                    sawEvents = true
                    listed.node = node
                    listed.eventsLine = key.line
                    let wanted = played == nil && rule.wants(listed)
                    if wanted, !rule.needsEvents { try play(listed) }
                    listed.frames = try readEvents(&stream, playing: played == place, device: wanted && rule.needsEvents ? listed : nil)
                    device = listed
                case "hid", "udev", "quirks":
                    try stream.skipValue()
                default:
                    try unknown(key, in: "a device", known: ["node", "evdev", "hid", "udev", "quirks", "events"], &stream)
                }
            }
            guard var device else { throw failure(line, "device \(place) of the record has no 'evdev:' description") }
            if !sawEvents {
                device.node = node
                // A device without 'events:' holds none: played only when named.
                if played == nil, !rule.needsEvents, rule.wants(device) { try play(device) }
            }
            devices.append(device)
        }

        /// Chooses `device`: its description goes to `onDevice`, a device that cannot weigh
        /// refused at its `evdev:` line.
        mutating func play(_ device: RecordedDevice) throws {
            played = device.place
            do {
                try onDevice(device.description)
            } catch let error as DeviceSetupError {
                throw failure(device.evdevLine, error.description)
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
                    try unknown(key, in: "'evdev:'", known: ["name", "id", "codes", "absinfo", "properties"], &stream)
                }
            }
            guard let name else { throw failure(start.line, "'evdev:' has no 'name:'") }
            guard let identity else { throw failure(start.line, "'evdev:' has no 'id:'") }
            return DeviceDescription(name: name, identity: identity, properties: properties, supportedCodes: codes, axes: axes)
        }

        /// `events:`: a list of entries, each `evdev:` (a frame) or another kind (skipped).
        /// - Parameters:
        ///   - playing: Whether the device is played: its frames go to `onEvent`.
        ///   - device: A device to play from its first frame on, when it has one.
        /// - Returns: How many frames the list holds.
        mutating func readEvents(_ stream: inout YAMLEventStream, playing: Bool, device: RecordedDevice?) throws -> Int {
            var playing = playing
            let start = try stream.next()
            if start.kind == .scalar, start.value.isEmpty { return 0 }
            guard start.kind == .sequenceStart else { throw failure(start.line, "'events:' must be a list of '- evdev:' frames") }
            var frames = 0
            while true {
                let entry = try stream.next()
                if entry.kind == .sequenceEnd { return frames }
                guard entry.kind == .mappingStart else { throw failure(entry.line, "an entry of 'events:' must be '- evdev: [...]'") }
                while true {
                    let key = try stream.next()
                    if key.kind == .mappingEnd { break }
                    guard key.kind == .scalar else { throw failure(key.line, "expected 'evdev:', 'hid:' or 'libinput:'") }
                    switch key.value {
                    case "evdev":
                        frames += 1
                        if frames == 1, let device, played == nil {
                            try play(device)
                            playing = true
                        }
                        if playing {
                            try readFrame(&stream)
                        } else {
                            try stream.skipValue()
                        }
                    case "hid", "libinput":
                        try stream.skipValue()
                    default:
                        try unknown(key, in: "an entry of 'events:'", known: ["evdev", "hid", "libinput"], &stream)
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
    private let file: UnsafeMutablePointer<FILE>
    private let path: String
    /// The line of the last event read.
    private(set) var line = 1

    init(file: UnsafeMutablePointer<FILE>, path: String) throws {
        self.path = path
        self.file = file
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
            let line = Int(parser.pointee.problem_mark.line) + 1
            // libyaml says only "found character that cannot start any token" of a tab.
            let tab = Self.hasTab(file, line: line) ? "; the line holds a tab, and YAML forbids tabs for indentation: indent with spaces" : ""
            throw LibinputRecordError(file: path, line: line, problem: "not valid YAML: \(context)\(problem)\(tab)")
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

    /// Whether line `line` (1-based) of the file holds a tab. Reads the file again from its
    /// start (on an error's path only).
    static func hasTab(_ file: UnsafeMutablePointer<FILE>, line: Int) -> Bool {
        guard fseek(file, 0, SEEK_SET) == 0 else { return false }
        var current = 1
        while true {
            let character = getc(file)
            if character == EOF || (current == line && character == 0x0A) { return false }
            if current == line, character == 0x09 { return true }
            if character == 0x0A { current += 1 }
        }
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
