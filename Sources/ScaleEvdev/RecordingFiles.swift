import Glibc
import ScaleCore
import ScalePOSIX

/// Why a recording could not be read.
public enum RecordingError: Error, Sendable, CustomStringConvertible {
    case file(SystemError)
    case parse(EvemuParseError)
    case noDescription(file: String)

    public var description: String {
        switch self {
        case .file(let error): return error.description
        case .parse(let error): return error.description
        case .noDescription(let file):
            return "\(file): no device description (N:, I:, B:, A: lines) before the first event; this looks like the events half of a split pair, so give its .desc file first: forcescale replay NAME.desc '\(file)'"
        }
    }
}

/// A recording on disk: one evemu file, or the older split pair of a `.desc` file and an
/// `.events` file. Events stream from disk; only the description is kept.
public struct RecordingFiles: Sendable {
    public let descriptionPath: String
    public let eventsPath: String?

    /// - Parameters:
    ///   - file: A whole recording, or the `.desc` of a pair.
    ///   - eventsFile: The `.events` of a pair. When it is `nil` and `file` holds only
    ///     events, the `.desc` beside it (`NAME.desc` for `NAME.events` or
    ///     `NAME.anything.events`) is used when it exists, as the evemu-devices collection
    ///     names its pairs.
    public init(file: String, eventsFile: String? = nil) {
        if eventsFile == nil, let description = Self.companionDescription(of: file) {
            descriptionPath = description
            eventsPath = file
        } else {
            descriptionPath = file
            eventsPath = eventsFile
        }
    }

    /// Reads the device description, then streams every event to `onEvent`.
    /// - Parameters:
    ///   - onDevice: Called once with the device before the first event; it may throw to
    ///     refuse the device (no pressure axis, say).
    ///   - onEvent: Called for each event in order.
    /// - Throws: `RecordingError`, or what `onDevice` or `onEvent` throws.
    public func read(onDevice: (DeviceDescription) throws -> Void, onEvent: (InputEvent) throws -> Void) throws {
        var device: DeviceDescription?
        // Events parsed from one chunk wait here, so that the consumer sees the device
        // (complete once the first event arrives) before any event.
        var pending: [InputEvent] = []

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

        func stream(path: String, acceptsDescription: Bool) throws {
            var reader = EvemuReader(fileName: path, acceptsDescription: acceptsDescription)
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
        }

        try stream(path: descriptionPath, acceptsDescription: true)
        guard device != nil else { throw RecordingError.noDescription(file: descriptionPath) }
        if let eventsPath { try stream(path: eventsPath, acceptsDescription: false) }
    }

    static func companionDescription(of path: String) -> String? {
        guard path.hasSuffix(".events") else { return nil }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let base = String(path[(slash.map { path.index(after: $0) } ?? path.startIndex)...])
        var candidates: [String] = []
        var stem = Substring(base.dropLast(".events".count))
        candidates.append(String(stem))
        // "NAME.stylus-drag.events" pairs with "NAME.desc": try each shorter dotted prefix.
        while let dot = stem.lastIndex(of: ".") {
            stem = stem[..<dot]
            candidates.append(String(stem))
        }
        for candidate in candidates where !candidate.isEmpty {
            let description = directory + candidate + ".desc"
            if access(description, R_OK) == 0 { return description }
        }
        return nil
    }
}
