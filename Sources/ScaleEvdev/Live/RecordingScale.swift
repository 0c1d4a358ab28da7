import Glibc
import ScaleCore
import ScalePOSIX
import ScaleRecording

/// A recording served as if it were a live device, on the owner's loop: each event is due
/// at its own offset from the start, restamped on `CLOCK_MONOTONIC` like live events, and a
/// timer wakes the loop for the next one. For the daemon's demo and its tests.
package final class RecordingScale: ScaleSource {
    package let path: String
    /// Chunked rather than an Array: no doubling copies while loading (ChunkedArray says why).
    private let events: ChunkedArray<InputEvent>
    private let loops: Bool
    private let loop: EventLoop
    private let timer: DeadlineTimer
    private let onOutput: (ScaleOutput, SourceDevice) throws -> Void
    /// The recording as its outputs name it.
    package let device: SourceDevice
    private var pipeline: ScalePipeline
    private var outputs: [ScaleOutput] = []
    private var nextIndex = 0
    /// Added to recording times to put them on the monotonic clock; grows by one pass
    /// (plus a second) each time the recording starts over.
    private var offset: Int64 = 0
    private let passLength: Int64
    private var isStarted = false
    private var isFinished = false

    /// Why the loop was stopped from inside, if it was: output could not be written.
    package private(set) var failure: (any Error)?

    /// Loads the recording; playing starts with `start()`.
    /// - Parameters:
    ///   - files: The recording.
    ///   - name: The name its outputs carry; the file's name when `nil`.
    ///   - loops: Start over at the end instead of stopping.
    ///   - onNotice: Warnings and notes of a `libinput record` file (which device of several
    ///     is served, keys the format does not have), one line each.
    ///   - onOutput: Each reading and PEAK, with the recording as its device.
    /// - Throws: `RecordingError`, `DeviceSetupError`, or `Errno` for the timer.
    package init(
        files: RecordingFiles, name: String? = nil, loops: Bool, settings: ScaleSettings, loop: EventLoop,
        onNotice: (String) -> Void = { _ in },
        onOutput: @escaping (ScaleOutput, SourceDevice) throws -> Void
    ) throws {
        var description: DeviceDescription?
        var events = ChunkedArray<InputEvent>()
        // A device that cannot weigh is refused as soon as it is read, as `forcescale replay` does.
        try files.read(onDevice: { description = $0; _ = try PressureSource.select(for: $0) }, onEvent: { events.append($0) }, onNotice: onNotice)
        guard let description else { throw RecordingError.noDescription(file: files.descriptionPath) }
        self.events = events
        self.loops = loops
        self.loop = loop
        self.onOutput = onOutput
        path = files.eventsPath ?? files.descriptionPath
        self.device = SourceDevice(path: path, name: name ?? SourceDevice.nodeName(of: path), description: description)
        pipeline = try ScalePipeline(device: description, settings: settings)
        timer = try DeadlineTimer()
        // Readers refuse times that go backwards; a pass is never shorter than its second of
        // rest all the same, so that no offset can move backwards.
        let first = events.first?.time.microseconds ?? 0
        passLength = max(0, (events.last?.time.microseconds ?? first) - first) + 1_000_000
    }

    /// Starts playing: the recording's first event is due now, and outputs go out from here
    /// on (those already due at once, before this returns). A second call does nothing.
    /// - Throws: `Errno` when the loop cannot watch the timer.
    package func start() throws {
        guard !isStarted, !isFinished else { return }
        isStarted = true
        offset = MonotonicClock.now() - (events.first?.time.microseconds ?? 0)
        try loop.watch(timer.descriptor) { [unowned self] in
            timer.acknowledge()
            advance()
        }
        advance()
    }

    /// The recording as a device, until it ends.
    package var servedDevices: [SourceDeviceStatus] {
        isFinished ? [] : [SourceDeviceStatus(device: device, gramModel: pipeline.gramModel, pressureSource: pipeline.source, contactMode: pipeline.contactMode, droppedEvents: 0)]
    }

    /// Applies a calibration when `device` is this recording (by its name: the same file
    /// may be served twice); other devices' calibrations are not its own.
    package func setCalibration(_ calibration: Calibration, for device: SourceDevice) {
        guard device.nodeName == self.device.nodeName else { return }
        pipeline.setCalibration(calibration)
    }

    package func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        throw ForceFeedbackError(path: path, operation: "rumble", errno: nil, explanation: "a recording cannot rumble")
    }

    /// A recording has no device for the desktop to lose: taking it succeeds and changes
    /// nothing, so that GRAB follows the protocol (its reply, bound and release) where the
    /// daemon serves a recording, and clients can be tested against one.
    package func setGrabbed(_ grabbed: Bool, device: SourceDevice) throws(DeviceOpenError) -> Bool {
        device.nodeName == self.device.nodeName
    }

    package func stop() {
        guard !isFinished else { return }
        isFinished = true
        pipeline.finish(into: &outputs)
        deliver()
        timer.arm(atMicroseconds: nil)
        loop.unwatch(timer.descriptor)
    }

    /// Processes every event that is due, then sleeps until the next one or the throttle's
    /// deadline, whichever is first.
    private func advance() {
        guard isStarted, !isFinished else { return }
        let now = MonotonicClock.now()
        while nextIndex < events.count, events[nextIndex].time.microseconds + offset <= now {
            var event = events[nextIndex]
            event.time = event.time.adding(microseconds: offset)
            pipeline.process(event, into: &outputs)
            nextIndex += 1
        }
        pipeline.advance(to: EventTime(microseconds: now), into: &outputs)
        if nextIndex == events.count {
            // A pass that would take the offset past Int64 (a recording spanning 10^5 years
            // looped as long) ends the loop instead of trapping.
            let (next, overflows) = offset.addingReportingOverflow(passLength)
            if loops, !events.isEmpty, !overflows {
                nextIndex = 0
                offset = next
            } else {
                deliver()
                stop()
                return
            }
        }
        deliver()
        let nextEvent = events[nextIndex].time.microseconds + offset
        timer.arm(atMicroseconds: min(nextEvent, pipeline.nextDeadline?.microseconds ?? .max))
    }

    private func deliver() {
        for output in outputs {
            do { try onOutput(output, device) } catch {
                failure = error
                loop.stop()
                break
            }
        }
        outputs.removeAll(keepingCapacity: true)
    }
}
