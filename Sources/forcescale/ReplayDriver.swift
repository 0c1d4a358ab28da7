import ScaleCore
import ScaleEvdev
import ScalePOSIX
import ScaleRecording

/// Feeds events through a pipeline to a presenter, optionally at the pace of their
/// timestamps. Used by replay and demo; `read` drives the same pipeline from a device.
struct ReplayDriver {
    let settings: ScaleSettings
    let presenter: Presenter
    let realtime: Bool

    /// Plays a recording from disk.
    func play(_ files: RecordingFiles) throws {
        var device: DeviceDescription?
        // Local, not stored on a class: the per-event path then needs no runtime
        // exclusivity checks (on a class they would cost a fifth of replay time).
        // The flag, not `session == nil`: comparing the optional would copy the whole
        // session (pipeline included) on every event.
        var session: ReplaySession?
        var started = false
        // A device that cannot weigh is refused as soon as it is read, before anything else
        // is said of the file (that it has no events, say).
        try files.read(onDevice: { device = $0; _ = try PressureSource.select(for: $0) }, onEvent: { event in
            if !started, let device {
                session = try start(device, firstEvent: event)
                started = true
            }
            try session!.take(event)
        }, onNotice: { printDiagnostic($0) })
        if !started, let device { session = try start(device, firstEvent: nil) }
        try session?.finish()
    }

    /// Plays a recording held in memory.
    func play(_ recording: Recording) throws {
        var session = try start(recording.device, firstEvent: recording.events.first)
        for event in recording.events { try session.take(event) }
        try session.finish()
    }

    private func start(_ device: DeviceDescription, firstEvent: InputEvent?) throws -> ReplaySession {
        let pipeline = try ScalePipeline(device: device, settings: settings)
        try presenter.begin(
            device: device, source: pipeline.source, model: pipeline.gramModel.kind,
            origin: firstEvent?.time ?? EventTime(microseconds: 0))
        return ReplaySession(pipeline: pipeline, presenter: presenter, realtime: realtime)
    }
}

/// The state of one replay: the pipeline, its pending outputs and the pacing anchor.
private struct ReplaySession {
    var pipeline: ScalePipeline
    let presenter: Presenter
    let realtime: Bool
    var outputs: [ScaleOutput] = []
    /// Recording time and monotonic time of the first event, to pace the rest.
    var anchor: (eventTime: EventTime, clock: Int64)?

    init(pipeline: ScalePipeline, presenter: Presenter, realtime: Bool) {
        self.pipeline = pipeline
        self.presenter = presenter
        self.realtime = realtime
    }

    mutating func take(_ event: InputEvent) throws {
        if realtime { try wait(until: event.time) }
        pipeline.process(event, into: &outputs)
        if !outputs.isEmpty { try present() }
    }

    /// Sleeps until `time` on the recording's clock, letting held readings out at their
    /// own deadlines on the way, as the live loop's timer does.
    private mutating func wait(until time: EventTime) throws {
        guard let anchor else {
            anchor = (time, MonotonicClock.now())
            return
        }
        while let deadline = pipeline.nextDeadline, deadline < time {
            MonotonicClock.sleep(until: anchor.clock + (deadline.microseconds - anchor.eventTime.microseconds))
            pipeline.advance(to: deadline, into: &outputs)
            try present()
        }
        MonotonicClock.sleep(until: anchor.clock + (time.microseconds - anchor.eventTime.microseconds))
    }

    mutating func finish() throws {
        pipeline.finish(into: &outputs)
        try present()
        try presenter.end()
    }

    private mutating func present() throws {
        for output in outputs { try presenter.show(output) }
        outputs.removeAll(keepingCapacity: true)
    }
}
