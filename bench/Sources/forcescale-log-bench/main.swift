// forcescale-log-bench: the force log's timings, for bench/log (results in BENCHMARKS.md).
//
//   forcescale-log-bench inserts DIR READINGS
//       The same READINGS readings (sessions of 500) written to two fresh logs in DIR: one
//       transaction per reading, then one per 100 readings (the daemon's batch), both with
//       the daemon's settings (WAL, synchronous = FULL). Prints each rate and the ratio.
//   forcescale-log-bench fill PATH READINGS
//       Writes READINGS readings to a fresh log at PATH in batches of 100, sessions of 1000
//       readings with a PEAK each, checkpoints, and prints the bytes per reading on disk.
//   forcescale-log-bench read PATH [REPETITIONS]
//       Streams every reading of the log with `forEachReading(since:)`, as an export does,
//       without formatting; median of REPETITIONS (3).
//   forcescale-log-bench history PATH SESSIONS READINGS LONG
//       For bench/history: a fresh log at PATH of SESSIONS sessions holding READINGS readings
//       in all, written by LogDatabase as the daemon's writer writes them (larger
//       transactions, for speed). Two sessions have LONG readings each: the one in the
//       middle, ended, and the newest, left open (a touch still going on); the others share
//       the rest. 1 kHz readings whose pressure changes every reading, a weight resting 3 s
//       in every 5 s (stable), a PEAK per session. Prints the ids of the two long sessions
//       (`ended=ID`, `open=ID`) and what it wrote.

import BenchSupport
import Glibc
import ScaleCore
import ScaleLog

/// Reading `index` of the synthetic stream: 1 kHz, a 1 s gap between sessions, pressures
/// that change every reading (as the daemon's 1 kHz benchmark recording does).
func reading(_ index: Int, sessionLength: Int) -> LoggedReading {
    let session = index / sessionLength
    let time = 1_764_500_000_000_000 + Int64(index) * 1_000 + Int64(session) * 1_000_000
    let raw = Int32(100 + (index * 37) % 800)
    let force = Double(raw) / 1023
    return LoggedReading(
        session: 0, time: WallTime(microseconds: time), raw: raw, force: force, grams: (force * 385 * 10).rounded() / 10,
        contacts: 1, flags: index % 50 == 0 ? [.stable] : [])
}

/// Writes `count` readings in sessions of `sessionLength`, `perTransaction` to a transaction.
func write(_ database: LogDatabase, count: Int, perTransaction: Int, sessionLength: Int, peaks: Bool) throws {
    let device = try database.device(key: "0003-056a-0304-wacom-cintiq-13hd-pen", name: "Wacom Cintiq 13HD Pen")
    var session: LoggedSession?
    var index = 0
    while index < count {
        let end = min(count, index + perTransaction)
        try database.transaction { () throws(LogDatabaseError) in
            var batch: [LoggedReading] = []
            for i in index..<end {
                let value = reading(i, sessionLength: sessionLength)
                if session == nil { session = try database.openSession(device: device, started: value.time, model: .nominal) }
                batch.append(value)
                if peaks, i % sessionLength == sessionLength / 2 {
                    try database.append(LoggedPeak(session: session!.id, time: value.time, raw: value.raw, grams: value.grams))
                }
                if (i + 1) % sessionLength == 0 || i + 1 == count {
                    try database.append(batch, to: &session!)
                    batch.removeAll(keepingCapacity: true)
                    try database.close(&session!, at: value.time)
                    session = nil
                }
            }
            if !batch.isEmpty { try database.append(batch, to: &session!) }
        }
        index = end
    }
}

/// The sessions of `history`: see the usage above. Returns the ids of the long ended and
/// the long open session.
func writeHistory(_ database: LogDatabase, sessions: Int, total: Int, long: Int) throws -> (ended: Int64, open: Int64) {
    let device = try database.device(key: "0003-056a-0304-wacom-cintiq-13hd-pen", name: "Wacom Cintiq 13HD Pen")
    let middle = sessions / 2, newest = sessions - 1
    let shared = total - 2 * long, others = sessions - 2
    var time: Int64 = 1_764_500_000_000_000
    var ids = (ended: Int64(0), open: Int64(0))
    var other = 0
    var batch: [LoggedReading] = []
    batch.reserveCapacity(50_000)
    for index in 0..<sessions {
        let length: Int
        if index == middle || index == newest {
            length = long
        } else {
            length = shared / others + (other < shared % others ? 1 : 0)
            other += 1
        }
        var session = try database.openSession(device: device, started: WallTime(microseconds: time), model: .nominal)
        if index == middle { ids.ended = session.id }
        if index == newest { ids.open = session.id }
        var written = 0
        while written < length {
            let count = min(50_000, length - written)
            try database.transaction { () throws(LogDatabaseError) in
                batch.removeAll(keepingCapacity: true)
                for n in written..<written + count {
                    let raw = Int32(100 + (n * 37) % 800)
                    let force = Double(raw) / 1023
                    let resting = n % 5000 >= 1000 && n % 5000 < 4000
                    batch.append(LoggedReading(
                        session: session.id, time: WallTime(microseconds: time + Int64(n) * 1000), raw: raw, force: force,
                        grams: (force * 385 * 10).rounded() / 10, contacts: 1, flags: resting ? [.stable] : []))
                }
                try database.append(batch, to: &session)
                if written <= length / 2, length / 2 < written + count {
                    let peak = batch[length / 2 - written]
                    try database.append(LoggedPeak(session: session.id, time: peak.time, raw: peak.raw, grams: peak.grams))
                }
            }
            written += count
        }
        let last = WallTime(microseconds: time + Int64(max(0, length - 1)) * 1000)
        if index != newest { try database.close(&session, at: last) }
        // A second between touches.
        time = last.microseconds + 1_000_000
    }
    return ids
}

func size(_ path: String) -> Int64 {
    var status = stat()
    return stat(path, &status) == 0 ? Int64(status.st_size) : 0
}

func remove(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    fail("usage: inserts DIR READINGS | fill PATH READINGS | read PATH [REPETITIONS] | history PATH SESSIONS READINGS LONG")
}
do {
    switch arguments[1] {
    case "inserts":
        guard arguments.count == 4, let count = Int(arguments[3]), count > 0 else { fail("inserts DIR READINGS") }
        var rates: [Double] = []
        for (label, perTransaction) in [("1 transaction per reading", 1), ("1 transaction per 100 readings", 100)] {
            let path = arguments[2] + "/inserts-\(perTransaction).sqlite"
            remove(path)
            let database = try LogDatabase.open(path: path)
            let start = nanoseconds()
            try write(database, count: count, perTransaction: perTransaction, sessionLength: 500, peaks: false)
            let seconds = Double(nanoseconds() - start) / 1e9
            database.close()
            remove(path)
            rates.append(Double(count) / seconds)
            print("  \(label): \(count) readings in \(format(seconds, 3)) s = \(format(Double(count) / seconds, 0)) readings/s")
        }
        print("  batched / per-reading: \(format(rates[1] / rates[0], 1))x")
    case "fill":
        guard arguments.count == 4, let count = Int(arguments[3]), count > 0 else { fail("fill PATH READINGS") }
        let path = arguments[2]
        remove(path)
        let database = try LogDatabase.open(path: path)
        let start = nanoseconds()
        try write(database, count: count, perTransaction: 100, sessionLength: 1000, peaks: true)
        let seconds = Double(nanoseconds() - start) / 1e9
        try database.checkpoint()
        let stats = try database.statistics()
        database.close()
        let bytes = size(path)
        print("  wrote \(stats.readings) readings, \(stats.sessions) sessions, \(stats.peaks) peaks in \(format(seconds, 2)) s (batches of 100)")
        print("  file \(bytes) bytes after a checkpoint (WAL \(size(path + "-wal")) bytes): \(format(Double(bytes) / Double(count), 1)) bytes per reading")
    case "read":
        let path = arguments[2]
        let repetitions = arguments.count > 3 ? Int(arguments[3]) ?? 3 : 3
        let database = try LogDatabase.open(path: path, readOnly: true)
        var times: [Double] = []
        var count = 0
        var sum = 0.0
        for _ in 0..<repetitions {
            count = 0
            sum = 0
            let start = nanoseconds()
            try database.forEachReading(since: WallTime(microseconds: 0)) { reading in
                count += 1
                sum += reading.grams
            }
            times.append(Double(nanoseconds() - start) / 1e9)
        }
        times.sort()
        let median = times[times.count / 2]
        print("  forEachReading(since: 0): \(count) readings in \(format(median, 3)) s (median of \(repetitions)) = \(format(Double(count) / median / 1e6, 2)) M readings/s (sum of grams \(format(sum, 1)))")
    case "history":
        guard arguments.count == 6, let sessions = Int(arguments[3]), let total = Int(arguments[4]), let long = Int(arguments[5]),
              sessions >= 3, long > 0, total - 2 * long >= sessions - 2 else {
            fail("history PATH SESSIONS READINGS LONG (at least 3 sessions, and a reading for each of the others)")
        }
        let path = arguments[2]
        remove(path)
        let database = try LogDatabase.open(path: path)
        let start = nanoseconds()
        let ids = try writeHistory(database, sessions: sessions, total: total, long: long)
        let seconds = Double(nanoseconds() - start) / 1e9
        try database.checkpoint()
        let stats = try database.statistics()
        database.close()
        print("ended=\(ids.ended)")
        print("open=\(ids.open)")
        print("wrote=\(stats.readings) readings, \(stats.sessions) sessions, \(stats.peaks) peaks in \(format(seconds, 1)) s; \(size(path)) bytes")
    default:
        fail("unknown benchmark '\(arguments[1])'")
    }
} catch {
    fail("\(error)")
}
