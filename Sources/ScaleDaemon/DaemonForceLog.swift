import Glibc
import ScaleCore
import ScaleEvdev
import ScaleLog
import ScalePOSIX
import ScaleProtocol

/// The daemon's side of the force log: hands each reading and PEAK, with the device it came
/// from and its wall-clock time, to the `LogWriter`, whose thread does all the SQLite work.
/// On the loop this costs a clock read and an append to the writer's queue under a lock.
///
/// Times: readings carry `CLOCK_MONOTONIC` event times (live devices, and recordings,
/// which `RecordingScale` restamps on that clock as it serves them). Each is turned into
/// wall time here, at the hand-off, with the offset between the two clocks read at that
/// moment — so a replay is logged at the time it was served, like a live session, not at
/// the recording's original times.
final class DaemonForceLog {
    let writer: LogWriter
    /// The devices whose readings are being handed over, by their name in the protocol
    /// (`event5`, `pen.evemu`, `pen.evemu#2`: one per device served), with the writer's
    /// `source` number for each: every device logs a session of its own.
    private var sources: [String: (device: SourceDevice, number: Int)] = [:]
    private var nextSource = 0

    /// Starts the writer thread; the file is opened (and made) there.
    /// - Parameter log: Where the writer's notices go: one line per failure, not per batch.
    init(path: String, retention: LogWriter.Retention, log: DaemonLog) throws {
        writer = try LogWriter(path: path, retention: retention) { notice in
            switch notice {
            case .opened(let path, let version, let closed):
                log.logFromAnyThread(.notice, "logging readings to \(path) (schema \(version))"
                    + (closed > 0 ? "; \(closed) session\(closed == 1 ? "" : "s") left open by a crash closed at \(closed == 1 ? "its" : "their") last reading" : ""))
            case .failing(let error, let retry):
                log.logFromAnyThread(.error, "force log: \(error); readings wait in memory (up to \(LogWriter.defaultCapacity), then new ones are dropped and counted) and writing is retried, first in \(retry) s")
            case .resumed(let path, let dropped):
                log.logFromAnyThread(.notice, "force log: writing to \(path) again" + (dropped > 0 ? "; \(dropped) entries were dropped meanwhile" : ""))
            case .lostAtStop(let entries, let error):
                log.logFromAnyThread(.error, "force log: \(entries) entries could not be written before stopping: \(error)")
            }
        }
    }

    /// Hands over one output of the pipeline.
    /// - Parameters:
    ///   - output: A reading or PEAK.
    ///   - device: The device it came from, which the source hands over with it; a new one
    ///     starts the log's entries for that device.
    func record(_ output: ScaleOutput, device: SourceDevice) {
        let offset = WallClock.offsetFromMonotonic()
        let source: Int
        if let known = sources[device.nodeName], known.device == device {
            source = known.number
        } else {
            source = nextSource
            nextSource += 1
            sources[device.nodeName] = (device, source)
            let name = device.description.name.isEmpty ? device.nodeName : device.description.name
            writer.append(.device(key: device.description.stateIdentity, name: name, source: source))
        }
        switch output {
        case .reading(let reading): writer.append(.reading(reading, wallOffset: offset, source: source))
        case .peak(let peak): writer.append(.peak(peak, source: source))
        }
    }

    /// A device went away: its session in progress ends. Without its name (`event5`),
    /// every device's session ends.
    func sourceEnded(device name: String? = nil) {
        guard let name else {
            sources.removeAll()
            writer.append(.sourceEnded())
            return
        }
        guard let known = sources.removeValue(forKey: name) else { return }
        writer.append(.sourceEnded(source: known.number))
    }

    /// Writes what is queued and stops the writer thread.
    func stop() {
        sources.removeAll()
        writer.stop()
    }

    var status: StatusMessage.LogSummary {
        let status = writer.status
        return StatusMessage.LogSummary(path: status.path, written: status.written, pending: status.pending, dropped: status.dropped, error: status.error)
    }
}

extension DaemonLog {
    /// `log`, safe on the writer's thread: one `write(2)` of the whole line, which does not
    /// touch the buffer of `OutputChannel.standardError` that the loop's thread uses.
    func logFromAnyThread(_ level: Level, _ message: String) {
        guard level <= threshold else { return }
        var line = Self.record(level, message)
        // A failure is dropped: standard error is where it would be reported.
        line.withUTF8 { bytes in _ = try? FileDescriptor.standardError.writeAll(UnsafeRawBufferPointer(bytes)) }
    }
}

extension DaemonConfiguration {
    /// The retention limits of the configuration.
    var logRetention: LogWriter.Retention { LogWriter.Retention(keepDays: logKeepDays, keepReadings: logKeepReadings) }
}
