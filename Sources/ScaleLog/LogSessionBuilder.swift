import ScaleCore

/// Turns the writer's entries into sessions: a session opens with the first reading that
/// has a contact and closes with the release (the first reading without one), or when the
/// device goes away or changes, or the daemon stops. Readings without a contact outside a
/// session (a resting pad) are not logged. A value, so that the writer can keep a copy
/// from before a batch and go back to it when the batch's transaction fails.
struct LogSessionBuilder {
    private var device: LoggedDevice?
    private var session: LoggedSession?
    /// Readings of the open session not yet inserted (they go in one call at the end of the
    /// batch, or when the session closes).
    private var buffered: [LoggedReading] = []
    private var lastTime: WallTime?

    /// Applies one entry. - Returns: Rows inserted (readings and PEAKs).
    mutating func take(_ entry: LogWriter.Entry, into database: LogDatabase) throws(LogDatabaseError) -> Int {
        switch entry {
        case .device(let key, let name):
            let inserted = try end(in: database)
            device = try database.device(key: key, name: name)
            return inserted
        case .sourceEnded:
            return try end(in: database)
        case .reading(let reading, let offset):
            let time = WallTime(microseconds: reading.time.microseconds + offset)
            if session == nil {
                guard reading.contacts > 0 else { return 0 }
                if self.device == nil { self.device = try database.device(key: "unknown", name: "unknown device") }
                guard let device else { return 0 }
                session = try database.openSession(device: device, started: time, model: reading.model)
            }
            var flags = ReadingFlags()
            if reading.saturated { flags.insert(.saturated) }
            if reading.stable { flags.insert(.stable) }
            buffered.append(LoggedReading(
                session: session!.id, time: time, raw: reading.raw, force: reading.force, grams: reading.grams,
                contacts: reading.contacts, flags: flags, settledGrams: reading.settledGrams))
            lastTime = time
            return reading.contacts == 0 ? try end(in: database) : 0
        case .peak(let peak, let offset):
            guard let session else { return 0 }
            try database.append(LoggedPeak(
                session: session.id, time: WallTime(microseconds: peak.time.microseconds + offset), raw: peak.raw, grams: peak.grams,
                rumble: peak.rumble))
            return 1
        }
    }

    /// Inserts the buffered readings of the open session and saves its summary.
    /// - Returns: Readings inserted.
    mutating func flush(into database: LogDatabase) throws(LogDatabaseError) -> Int {
        guard var session, !buffered.isEmpty else { return 0 }
        try database.append(buffered, to: &session)
        self.session = session
        let count = buffered.count
        buffered.removeAll(keepingCapacity: true)
        return count
    }

    /// Closes the open session at its last reading. - Returns: Readings inserted.
    private mutating func end(in database: LogDatabase) throws(LogDatabaseError) -> Int {
        let inserted = try flush(into: database)
        guard var session else { return inserted }
        try database.close(&session, at: lastTime ?? session.started)
        self.session = nil
        return inserted
    }
}
