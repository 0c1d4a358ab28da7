import ScaleCore
import ScaleSystem

/// Feeds events through a pipeline to a presenter, optionally at the pace of their
/// timestamps. Used by replay and demo; a live device will drive the same pipeline.
final class ReplayDriver {
    let settings: ScaleSettings
    let presenter: Presenter
    let realtime: Bool
    private var pipeline: ScalePipeline?
    private var outputs: [ScaleOutput] = []
    /// Recording time and monotonic time of the first event, to pace the rest.
    private var anchor: (eventTime: EventTime, clock: Int64)?

    init(settings: ScaleSettings, presenter: Presenter, realtime: Bool) {
        self.settings = settings
        self.presenter = presenter
        self.realtime = realtime
    }

    /// Plays a recording from disk.
    func play(_ files: RecordingFiles) throws {
        var device: DeviceDescription?
        try files.read(onDevice: { device = $0 }, onEvent: { event in
            if pipeline == nil, let device { try start(device, firstEvent: event) }
            try take(event)
        })
        if pipeline == nil, let device { try start(device, firstEvent: nil) }
        try finish()
    }

    /// Plays a recording held in memory.
    func play(_ recording: Recording) throws {
        try start(recording.device, firstEvent: recording.events.first)
        for event in recording.events { try take(event) }
        try finish()
    }

    private func start(_ device: DeviceDescription, firstEvent: InputEvent?) throws {
        let pipeline = try ScalePipeline(device: device, settings: settings)
        self.pipeline = pipeline
        try presenter.begin(
            device: device, source: pipeline.source, model: pipeline.gramModel.kind,
            origin: firstEvent?.time ?? EventTime(microseconds: 0))
    }

    private func take(_ event: InputEvent) throws {
        if realtime { try wait(until: event.time) }
        pipeline!.process(event, into: &outputs)
        try present()
    }

    /// Sleeps until `time` on the recording's clock, letting held readings out at their
    /// own deadlines on the way, as the live loop's timer would.
    private func wait(until time: EventTime) throws {
        guard let anchor else {
            anchor = (time, MonotonicClock.now())
            return
        }
        while let deadline = pipeline!.nextDeadline, deadline < time {
            MonotonicClock.sleep(until: anchor.clock + (deadline.microseconds - anchor.eventTime.microseconds))
            pipeline!.advance(to: deadline, into: &outputs)
            try present()
        }
        MonotonicClock.sleep(until: anchor.clock + (time.microseconds - anchor.eventTime.microseconds))
    }

    private func finish() throws {
        pipeline?.finish(into: &outputs)
        try present()
        try presenter.end()
    }

    private func present() throws {
        for output in outputs { try presenter.show(output) }
        outputs.removeAll(keepingCapacity: true)
    }
}
