import ScaleCore

/// Turns the writer's entries into sessions: a session opens with the first reading that
/// has a contact and closes with the release (the first reading without one), or when the
/// device goes away or changes, or the daemon stops. Readings without a contact outside a
/// session (a resting pad) are not logged.
///
/// Each source (one device the daemon serves; `LogWriter.Entry`'s `source`) has a session of
/// its own, so that devices that log at once, their entries interleaved, are kept apart.
/// A session's times are its readings' monotonic times plus the wall-clock offset of its
/// first reading: a step of the wall clock (an NTP correction, a person setting the date)
/// never makes a session's times jump or run backwards; it shows from the next session on.
///
/// A value, so that the writer can keep a copy from before a batch and go back to it when
/// the batch's transaction fails.
struct LogSessionBuilder {
    /// What one source is logging.
    private struct Source {
        var device: LoggedDevice?
        var session: LoggedSession?
        /// Readings of the open session not yet inserted (they go in one call at the end of
        /// the batch, or when the session closes).
        var buffered: [LoggedReading] = []
        var lastTime: WallTime?
        /// The wall-clock offset of the open session's first reading, used for all of it.
        var wallOffset: Int64 = 0
    }

    private var sources: [Int: Source] = [:]

    /// Applies one entry. - Returns: Rows inserted (readings and PEAKs).
    mutating func take(_ entry: LogWriter.Entry, into database: LogDatabase) throws(LogDatabaseError) -> Int {
        switch entry {
        case .device(let key, let name, let source):
            let inserted = try end(source, in: database)
            sources[source, default: Source()].device = try database.device(key: key, name: name)
            return inserted
        case .sourceEnded(let source):
            guard let source else {
                var inserted = 0
                for source in sources.keys.sorted() { inserted += try end(source, in: database) }
                return inserted
            }
            return try end(source, in: database)
        case .reading(let reading, let offset, let source):
            if sources[source]?.session == nil {
                guard reading.contacts > 0 else { return 0 }
                let device: LoggedDevice
                if let known = sources[source]?.device { device = known } else { device = try database.device(key: "unknown", name: "unknown device") }
                let session = try database.openSession(
                    device: device, started: WallTime(microseconds: reading.time.microseconds &+ offset), model: reading.model)
                sources[source, default: Source()].device = device
                sources[source]!.session = session
                sources[source]!.wallOffset = offset
            }
            let time = WallTime(microseconds: reading.time.microseconds &+ sources[source]!.wallOffset)
            var flags = ReadingFlags()
            if reading.saturated { flags.insert(.saturated) }
            if reading.stable { flags.insert(.stable) }
            // Changed in place: a copy of the source would copy its buffer at every reading.
            try modify(source) { state in
                state.buffered.append(LoggedReading(
                    session: state.session!.id, time: time, raw: reading.raw, force: reading.force, grams: reading.grams,
                    contacts: reading.contacts, flags: flags, settledGrams: reading.settledGrams))
                state.lastTime = time
            }
            return reading.contacts == 0 ? try end(source, in: database) : 0
        case .peak(let peak, let source):
            guard let session = sources[source]?.session, let offset = sources[source]?.wallOffset else { return 0 }
            try database.append(LoggedPeak(
                session: session.id, time: WallTime(microseconds: peak.time.microseconds &+ offset), raw: peak.raw, grams: peak.grams,
                rumble: peak.rumble))
            return 1
        }
    }

    private mutating func modify(_ source: Int, _ change: (inout Source) throws(LogDatabaseError) -> Void) throws(LogDatabaseError) {
        try change(&sources[source, default: Source()])
    }

    /// Inserts the buffered readings of every open session and saves their summaries.
    /// - Returns: Readings inserted.
    mutating func flush(into database: LogDatabase) throws(LogDatabaseError) -> Int {
        var inserted = 0
        for source in sources.keys.sorted() { inserted += try flush(source, into: database) }
        return inserted
    }

    private mutating func flush(_ source: Int, into database: LogDatabase) throws(LogDatabaseError) -> Int {
        guard sources[source]?.session != nil, let count = sources[source]?.buffered.count, count > 0 else { return 0 }
        try modify(source) { state throws(LogDatabaseError) in
            try database.append(state.buffered, to: &state.session!)
            state.buffered.removeAll(keepingCapacity: true)
        }
        return count
    }

    /// Closes the source's open session at its last reading. - Returns: Readings inserted.
    private mutating func end(_ source: Int, in database: LogDatabase) throws(LogDatabaseError) -> Int {
        let inserted = try flush(source, into: database)
        guard sources[source]?.session != nil else { return inserted }
        try modify(source) { state throws(LogDatabaseError) in
            try database.close(&state.session!, at: state.lastTime ?? state.session!.started)
            state.session = nil
        }
        return inserted
    }
}
