/// What the force log holds, as plain values: the daemon's writer produces them, the
/// database stores them (ScaleLog's `LogDatabase`), and the CLI's listings, exports and
/// plots consume them. Times are wall-clock (Unix) time, because a log outlives boots and
/// is read beside other clocks; the pipeline's monotonic event times are converted once,
/// where the daemon hands a reading to the log.
///
/// A *session* is one touch: it opens with the first reading that has a contact and closes
/// with the release (the zero reading), or with the device going away or the daemon
/// stopping, whichever comes first.

/// The device a session was taken on.
public struct LoggedDevice: Hashable, Sendable {
    /// The row id.
    public var id: Int64
    /// The key the calibration store files the device under (stable across replugs).
    public var key: String
    /// The kernel's name for the device.
    public var name: String

    public init(id: Int64, key: String, name: String) {
        self.id = id
        self.key = key
        self.name = name
    }
}

/// One touch, summarised.
public struct LoggedSession: Hashable, Sendable {
    public var id: Int64
    public var device: LoggedDevice
    /// Unix time of the first reading.
    public var started: WallTime
    /// Unix time of the last reading; nil while the touch is still on.
    public var ended: WallTime?
    /// The most grams any reading of the session had.
    public var peakGrams: Double
    /// The grams of the last reading that was stable; nil if none was.
    public var stableGrams: Double?
    /// How many readings the session has.
    public var readingCount: Int
    /// The gram model of the session's readings.
    public var model: GramModelKind
    /// Whether the reading of `peakGrams` was saturated: the peak is a lower bound.
    public var peakSaturated: Bool
    /// Whether the stable reading of `stableGrams` was saturated: the weight is a lower
    /// bound, the object weighed at least that.
    public var stableSaturated: Bool

    public init(
        id: Int64, device: LoggedDevice, started: WallTime, ended: WallTime?, peakGrams: Double,
        stableGrams: Double?, readingCount: Int, model: GramModelKind, peakSaturated: Bool = false, stableSaturated: Bool = false
    ) {
        self.peakSaturated = peakSaturated
        self.stableSaturated = stableSaturated
        self.id = id
        self.device = device
        self.started = started
        self.ended = ended
        self.peakGrams = peakGrams
        self.stableGrams = stableGrams
        self.readingCount = readingCount
        self.model = model
    }
}

/// One reading as it was logged.
public struct LoggedReading: Hashable, Sendable {
    public var session: Int64
    public var time: WallTime
    public var raw: Int32
    public var force: Double
    public var grams: Double
    public var contacts: Int
    public var flags: ReadingFlags
    /// The settled weight of a stable reading (``Reading/settledGrams``): what the session's
    /// stable weight is taken from. Not stored per reading; `nil` when read back.
    public var settledGrams: Double?

    public init(
        session: Int64, time: WallTime, raw: Int32, force: Double, grams: Double, contacts: Int,
        flags: ReadingFlags, settledGrams: Double? = nil
    ) {
        self.session = session
        self.time = time
        self.raw = raw
        self.force = force
        self.grams = grams
        self.contacts = contacts
        self.flags = flags
        self.settledGrams = settledGrams
    }
}

/// One PEAK as it was logged.
public struct LoggedPeak: Hashable, Sendable {
    public var session: Int64
    public var time: WallTime
    public var raw: Int32
    public var grams: Double
    /// What became of its rumble; `nil` where none was tried (replays, and logs older than
    /// the column).
    public var rumble: RumbleOutcome?

    public init(session: Int64, time: WallTime, raw: Int32, grams: Double, rumble: RumbleOutcome? = nil) {
        self.session = session
        self.time = time
        self.raw = raw
        self.grams = grams
        self.rumble = rumble
    }
}

/// The yes/no facts of a reading, stored as one integer column.
public struct ReadingFlags: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Raw pressure at or beyond the axis maximum.
    public static let saturated = ReadingFlags(rawValue: 1 << 0)
    /// The weight held still (the stability detector's verdict).
    public static let stable = ReadingFlags(rawValue: 1 << 1)
}

/// Wall-clock time in whole microseconds since the Unix epoch; the same fixed six-decimal
/// text as `EventTime`, so exports and the protocol agree digit for digit.
public struct WallTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var microseconds: Int64

    public init(microseconds: Int64) { self.microseconds = microseconds }

    /// Seconds as a Double, for plotting and for SQLite's REAL columns.
    public var seconds: Double { Double(microseconds) / 1e6 }

    public static func < (lhs: WallTime, rhs: WallTime) -> Bool { lhs.microseconds < rhs.microseconds }

    public var description: String { EventTime(microseconds: microseconds).description }
}
