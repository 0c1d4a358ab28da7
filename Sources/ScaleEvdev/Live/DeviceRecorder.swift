import Glibc
import ScaleCore
import ScalePOSIX
import ScaleRecording

/// What a recording run saw, for the summary line.
package struct RecordingSummary: Sendable {
    /// Every `E:` line written.
    package var events = 0
    /// The frames among them (`SYN_REPORT`s).
    package var frames = 0
    /// How often the kernel dropped events (`SYN_DROPPED`).
    package var resynchronizations = 0
    /// Why recording stopped.
    package var ending: RecordingEnding = .stopped
}

/// Why a recording ended.
package enum RecordingEnding: Sendable, Equatable {
    /// SIGINT or SIGTERM.
    case stopped
    /// The `duration` ran out.
    case durationReached
    /// The device was unplugged; everything before is in the file.
    case deviceRemoved
}

/// The file formats `forcescale record` writes.
package enum RecordingFormat: String, CaseIterable, Sendable {
    /// evemu 1.3 text, the default: evemu-device and evemu-play replay it.
    case evemu
    /// `libinput record` version-1 YAML: `libinput replay` replays it.
    case libinput
}

/// Records a live device in evemu's text format (or libinput record's YAML), as `evemu-record` does, so the file
/// replays through `forcescale replay`, `evemu-device` and `evemu-play`, and can be shared
/// the way the evemu-devices collection is.
///
/// Events are written with the device's own timestamps (`CLOCK_MONOTONIC`, as `read` and
/// the daemon see them), so replaying the file gives the same readings, times included, as
/// the live run did. Output is flushed after every batch the kernel hands over, so a crash
/// or a pulled plug loses at most the batch being written.
package final class DeviceRecorder {
    private let device: EvdevDevice
    private let output: OutputChannel
    private let loop: EventLoop
    private var summary = RecordingSummary()
    private var failure: (any Error)?
    private var deadline: DeadlineTimer?
    private let format: RecordingFormat
    /// Whether the next event opens a frame (a `- evdev:` list in libinput's format).
    private var startsFrame = true

    /// - Parameters:
    ///   - device: The opened device; it is not grabbed, so the desktop keeps it.
    ///   - output: Where the recording goes (a file or standard output).
    ///   - loop: The loop that delivers the device's events and the signals.
    ///   - format: evemu text (the default) or libinput record's YAML.
    package init(device: EvdevDevice, output: OutputChannel, loop: EventLoop, format: RecordingFormat = .evemu) {
        self.format = format
        self.device = device
        self.output = output
        self.loop = loop
    }

    /// Writes the description, then every event until SIGINT/SIGTERM, the device's removal
    /// or, when given, `seconds` after the start.
    /// - Parameter comments: `#` lines for the header (who recorded it, when, the clock).
    /// - Returns: What was recorded.
    /// - Throws: `Errno` when the output cannot be written (the disk is full, say);
    ///   `DeviceOpenError` when reading the device fails in a way that will not heal.
    package func record(comments: [String], seconds: Double?) throws -> RecordingSummary {
        switch format {
        case .evemu: try output.write(EvemuWriter.header(for: device.description, comments: comments))
        case .libinput: try output.write(LibinputRecordWriter.header(for: device.description, node: device.path, comments: comments))
        }
        try output.flush()
        try loop.watch(device.descriptor) { [unowned self] in drainDevice() }
        defer { loop.unwatch(device.descriptor) }
        if let seconds {
            let timer = try DeadlineTimer()
            timer.arm(atMicroseconds: MonotonicClock.now() + Int64(seconds * 1_000_000))
            try loop.watch(timer.descriptor) { [unowned self] in
                timer.acknowledge()
                summary.ending = .durationReached
                loop.stop()
            }
            deadline = timer
        }
        defer { if let deadline { loop.unwatch(deadline.descriptor) } }
        // Events already queued before the loop starts would not wake it: read them now.
        drainDevice()
        if failure == nil, summary.ending == .stopped { try loop.runUntilTerminated() }
        if let failure { throw failure }
        try output.flush()
        return summary
    }

    private func drainDevice() {
        var writeError: Errno?
        let outcome = device.drain(
            onEvent: { event in
                guard writeError == nil else { return }
                summary.events += 1
                if event.type == .synchronization, event.code == .synReport { summary.frames += 1 }
                let text: String
                switch format {
                case .evemu: text = EvemuWriter.line(for: event)
                case .libinput:
                    text = LibinputRecordWriter.line(for: event, startsFrame: startsFrame)
                    startsFrame = event.isFrameEnd
                }
                do throws(Errno) { try output.write(text) } catch { writeError = error }
            },
            onResynchronize: {
                // What follows is libevdev's rebuilt state, closed by its own SYN_REPORT: it is
                // written as an ordinary frame (a SYN_DROPPED line would make replay throw the
                // frame away, as the kernel's semantics demand), with a comment saying so.
                summary.resynchronizations += 1
                do throws(Errno) {
                    try output.write("# SYN_DROPPED: the kernel dropped events here; the next frame is the device's state as libevdev rebuilt it\n")
                } catch { writeError = error }
            })
        if writeError == nil {
            do throws(Errno) { try output.flush() } catch { writeError = error }
        }
        if let writeError {
            failure = writeError
            loop.stop()
            return
        }
        switch outcome {
        case .drained:
            break
        case .removed:
            summary.ending = .deviceRemoved
            loop.stop()
        case .failed(let errno):
            failure = DeviceOpenError(path: device.path, errno: errno)
            loop.stop()
        }
    }
}
