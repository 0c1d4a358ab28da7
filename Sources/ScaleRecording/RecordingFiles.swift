import Glibc
import ScaleCore
import ScalePOSIX

/// Why a recording could not be read.
package enum RecordingError: Error, Sendable, CustomStringConvertible {
    case file(SystemError)
    case parse(EvemuParseError)
    /// A `libinput record` file that could not be read.
    case libinput(LibinputRecordError)
    case noDescription(file: String)
    /// Nothing in the file but blank lines and comments (a 0-byte file, say), or no event in
    /// the events file of a pair.
    case empty(file: String)
    /// A description and not one event: nothing to replay.
    case noEvents(file: String)
    /// The device of a `libinput record` file holds no event (`label` as
    /// `RecordedDevice.label`); `others` when the record holds other devices.
    case noEventsInRecord(file: String, line: Int, device: String, others: Bool)
    /// `--recording-device` given for an evemu recording, which holds one device.
    case deviceSelectionWithoutRecord(file: String, selection: String)

    package var description: String {
        switch self {
        case .file(let error): return error.description
        case .parse(let error): return error.description
        case .libinput(let error): return error.description
        case .noDescription(let file):
            return "\(file): no device description (N:, I:, B:, A: lines) before the first event, and no .desc or .device file beside it shares its name (NAME.desc for NAME.events, NAME.variant.events or 'NAME variant.events'); this looks like the events half of a split pair, so give its description first: forcescale replay NAME.desc '\(file)'"
        case .empty(let file):
            return "\(file): the file is empty: no events (and no device description); record one with 'forcescale record' (or evemu-record, or libinput record), or make the demo's with 'forcescale demo --write demo.events'"
        case .noEvents(let file):
            return "\(file): a device description without any event, so there is nothing to replay; give the events file beside it too: forcescale replay '\(file)' EVENTS-FILE"
        case .noEventsInRecord(let file, let line, let device, let others):
            return "\(file):\(line): device \(device) has no events in the record, so there is nothing to replay; "
                + (others ? "name a device with events with --recording-device, or " : "")
                + "record it again while it is in use (libinput record, or forcescale record --format libinput)"
        case .deviceSelectionWithoutRecord(let file, let selection):
            return "\(file): --recording-device \(selection) chooses a device of a libinput record (YAML), but this is an evemu recording, which holds one device: leave the option out"
        }
    }
}

/// A recording on disk: one evemu file, one `libinput record` file (YAML, known by its
/// content), or the older split pair of a description file
/// (`.desc`, `.device`) and an events-only file (`.events`, `.event`). Events stream from
/// disk; only the description is kept.
package struct RecordingFiles: Sendable {
    package let descriptionPath: String
    package let eventsPath: String?
    /// Whether `descriptionPath` was found beside a lone events file rather than given; it
    /// must then hold only a description.
    package let descriptionIsCompanion: Bool
    /// `--recording-device NODE|NAME|INDEX`: which device of a `libinput record` file with
    /// several to play (see `LibinputRecordReader.deviceSelection`); evemu files hold one,
    /// and refuse it.
    package var deviceSelection: String?
    /// Which device of a `libinput record` file to play when `deviceSelection` is `nil`.
    package var preference = RecordingDevicePreference.pressure

    /// - Parameters:
    ///   - file: A whole recording, or the description of a pair.
    ///   - eventsFile: The events of a pair. When it is `nil` and `file` starts with events
    ///     rather than its own description, the description beside it is used when there is
    ///     one, found the ways the evemu-devices collection names its pairs (see
    ///     `companionDescription(of:)`). A file's own description always wins.
    package init(file: String, eventsFile: String? = nil) {
        if eventsFile == nil, Self.startsWithDescription(file) == false,
           let description = Self.companionDescription(of: file) {
            descriptionPath = description
            eventsPath = file
            descriptionIsCompanion = true
        } else {
            descriptionPath = file
            eventsPath = eventsFile
            descriptionIsCompanion = false
        }
    }

    /// Splits forcescaled's `--replay FILE[:DEVICE]`: a value that names a file that exists
    /// is that file, colons and all; else what follows its last colon is the device of a
    /// `libinput record` file (as `--recording-device` takes it) when the rest names a file.
    /// - Parameters:
    ///   - value: The option's value.
    ///   - exists: Whether a path names a file (`access(path, F_OK)`; a test's stand-in).
    /// - Returns: The file, and the device when one was named.
    package static func splitReplay(_ value: String, exists: (String) -> Bool = { access($0, F_OK) == 0 }) -> (file: String, device: String?) {
        guard !exists(value), let colon = value.lastIndex(of: ":") else { return (value, nil) }
        let file = String(value[..<colon])
        let device = String(value[value.index(after: colon)...])
        guard !file.isEmpty, !device.isEmpty, exists(file) else { return (value, nil) }
        return (file, device)
    }

    /// Reads the device description, then streams every event to `onEvent`.
    /// - Parameters:
    ///   - onDevice: Called once with the device before the first event; it may throw to
    ///     refuse the device (no pressure axis, say).
    ///   - onEvent: Called for each event in order.
    ///   - onNotice: Warnings and notes of a `libinput record` file (unknown keys, which
    ///     device of several is played), one line each, for standard error or a log.
    /// - Throws: `RecordingError`, or what `onDevice` or `onEvent` throws.
    package func read(onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void, onNotice: (String) -> Void = { _ in }) throws {
        // A `libinput record` file, known by its content: the YAML reader plays it.
        if eventsPath == nil, LibinputRecordReader.looksLikeLibinputRecord(descriptionPath) {
            do {
                try LibinputRecordReader(path: descriptionPath, deviceSelection: deviceSelection, preference: preference)
                    .read(onDevice: onDevice, onEvent: onEvent, onNotice: onNotice)
            } catch let error as LibinputRecordError {
                throw RecordingError.libinput(error)
            }
            return
        }
        if let deviceSelection {
            throw RecordingError.deviceSelectionWithoutRecord(file: descriptionPath, selection: deviceSelection)
        }
        var device: DeviceDescription?
        // Events parsed from one chunk wait here, so that the consumer sees the device
        // (complete once the first event arrives) before any event.
        var pending: [InputEvent] = []
        var eventCount = 0

        func deliverPending(_ reader: EvemuReader) throws {
            guard !pending.isEmpty else { return }
            if device == nil {
                guard let described = reader.device else { throw RecordingError.noDescription(file: reader.fileName) }
                device = described
                try onDevice(described)
            }
            for event in pending { try onEvent(event) }
            pending.removeAll(keepingCapacity: true)
        }

        func stream(path: String, acceptsDescription: Bool, acceptsEvents: Bool) throws {
            var reader = EvemuReader(fileName: path, acceptsDescription: acceptsDescription, acceptsEvents: acceptsEvents)
            do {
                let input = try FileInput(path: path)
                try input.forEachChunk { chunk in
                    try reader.feed(chunk) { pending.append($0) }
                    try deliverPending(reader)
                }
                try reader.finish { pending.append($0) }
                try deliverPending(reader)
            } catch let error as SystemError {
                throw RecordingError.file(error)
            } catch let error as EvemuParseError {
                throw RecordingError.parse(error)
            }
            if device == nil, let described = reader.device {
                device = described
                try onDevice(described)
            }
            eventCount += reader.eventCount
        }

        try stream(path: descriptionPath, acceptsDescription: true, acceptsEvents: !descriptionIsCompanion)
        guard device != nil else {
            throw eventCount == 0 ? RecordingError.empty(file: descriptionPath) : RecordingError.noDescription(file: descriptionPath)
        }
        if let eventsPath { try stream(path: eventsPath, acceptsDescription: false, acceptsEvents: true) }
        guard eventCount > 0 else {
            throw eventsPath.map { RecordingError.empty(file: $0) } ?? RecordingError.noEvents(file: descriptionPath)
        }
    }

    /// Whether the first line of `path` that is not blank or a comment is a description line
    /// (`N:`, `I:`, `P:`, `B:`, `A:`) rather than an event. Reads only that far.
    /// - Returns: `nil` when the file cannot be read or that far is malformed: reading it
    ///   alone then reports why, naming the file and line.
    static func startsWithDescription(_ path: String) -> Bool? {
        struct Decided: Error {}
        var reader = EvemuReader(fileName: path)
        do {
            let input = try FileInput(path: path)
            // The header comments of EVEMU 1.3 run to a few kilobytes; a small chunk
            // nearly always decides.
            try input.forEachChunk(size: 1 << 16) { chunk in
                try reader.feed(chunk) { _ in }
                if reader.eventCount > 0 || reader.device != nil { throw Decided() }
            }
            try reader.finish { _ in }
        } catch is Decided {
        } catch {
            return nil
        }
        // A chunk that holds both decides by its first line: events first would have
        // failed above ("description line after the first event").
        return reader.device != nil
    }

    /// The description beside an events-only file, as the evemu-devices collection lays its
    /// pairs out: for `NAME.events`, `NAME.variant.events` (`.event` too) it is `NAME.desc`
    /// or `NAME.device`, the longest dotted prefix first, so `NAME.machine.variant.events`
    /// takes `NAME.machine.device` before `NAME.desc`; for `NAME variant.events` (the variant
    /// after the last space) it is `NAME.desc` or `NAME.device`.
    /// - Returns: `nil` when no such file can be read.
    static func companionDescription(of path: String) -> String? {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = path[(slash.map { path.index(after: $0) } ?? path.startIndex)...]
        guard let extensionDot = base.lastIndex(of: ".") else { return nil }
        let fullStem = base[..<extensionDot]
        var stems: [Substring] = [fullStem]
        var stem = fullStem
        while let dot = stem.lastIndex(of: ".") {
            stem = stem[..<dot]
            stems.append(stem)
        }
        // Only one word goes, and only after every dotted prefix: names themselves hold
        // spaces ("Wacom Intuos4 6x9 Pen"), and a shorter name is another device.
        if let space = fullStem.lastIndex(of: " "), !fullStem[space...].contains(".") {
            stems.append(fullStem[..<space])
        }
        for stem in stems where !stem.isEmpty {
            for suffix in [".desc", ".device"] {
                let candidate = directory + stem + suffix
                if candidate != path, access(candidate, R_OK) == 0 { return candidate }
            }
        }
        return nil
    }
}
