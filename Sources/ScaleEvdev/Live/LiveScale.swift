import Glibc
import ScaleCore
import ScalePOSIX

/// Which device rumbles on a PEAK.
package enum RumbleChoice: Sendable {
    /// The pressure device itself, when it has force feedback.
    case pressureDevice
    /// Another device (a gamepad) for pressure devices without `EV_FF`.
    case device(DeviceQuery)
    case off
}

/// What happened to the devices, for the user to be told once each.
package enum LiveNotice: Sendable {
    case opened(path: String, device: DeviceDescription, source: PressureSource, model: GramModelKind)
    case rumbleReady(path: String)
    case rumbleUnavailable(reason: String)
    case resynchronized(path: String)
    case removed(path: String)
    case readFailed(path: String, errno: Errno)
    case waiting(for: String)
}

/// A scale reading a live device on an epoll loop it shares with its owner (the `read`
/// command, or the daemon with its clients): the device, a timer for the throttle's
/// trailing edge, and hotplug. It follows its device through unplug and replug and rumbles
/// on peaks. The pipeline is the same one replay uses.
package final class LiveScale: ScaleSource {
    package struct Options: Sendable {
        package var query: DeviceQuery?
        package var settings: ScaleSettings
        package var grab: Bool
        package var rumble: RumbleChoice
        /// Strength of the peak rumble, 0…1: through `FF_GAIN` when the device has it, so
        /// the device scales its own motors, otherwise by scaling the effect's magnitudes.
        package var rumbleIntensity: Double
        package var directory: String
        /// Start without a device rather than throw when none is usable (or the input
        /// directory is missing): the scale waits and takes the device up when it appears.
        /// The daemon starts so; `forcescale read` wants a device at once.
        package var waitForDevice: Bool

        package init(
            query: DeviceQuery?, settings: ScaleSettings, grab: Bool = false, rumble: RumbleChoice = .pressureDevice,
            rumbleIntensity: Double = 1, directory: String = DeviceDiscovery.inputDirectory, waitForDevice: Bool = false
        ) {
            self.query = query
            self.settings = settings
            self.grab = grab
            self.rumble = rumble
            self.rumbleIntensity = rumbleIntensity
            self.directory = directory
            self.waitForDevice = waitForDevice
        }

        /// What the scale waits for when its device is away, for `LiveNotice.waiting`.
        var awaited: String { query?.description ?? "a pressure device" }
    }

    package private(set) var options: Options
    private let onOutput: (ScaleOutput, SourceDevice) throws -> Void
    private let onNotice: (LiveNotice) -> Void
    private let onDelivered: () throws -> Void

    private let loop: EventLoop
    private let timer: DeadlineTimer
    /// `nil` before `start()`, and when the input directory could not be watched (see
    /// `hotplugError`).
    private var hotplug: DirectoryWatcher?
    /// The device being read, with its pipeline; `nil` while none is open.
    private var current: OpenDevice?
    private var rumble: RumbleEffect?
    private var outputs: [ScaleOutput] = []
    private var rumbleUnavailableSaid = false
    /// What `timer` is armed for: it is re-armed only when the pipeline's deadline changes,
    /// and rings one throttle interval after it (`maximumTimerSlack` at most), so that while
    /// a touch streams the next frame lets the held reading out and the timer never wakes
    /// the loop (ArmedDeadline).
    private var armed = ArmedDeadline()
    /// The longest the timer waits past a deadline for the device's next frame. Devices send
    /// a frame every 4–16 ms while a touch streams, so this covers the next frame of any;
    /// waiting longer (an interval of a second, say) would only hold back the last reading
    /// of a stream that stops.
    static let maximumTimerSlack: Int64 = 20_000
    private let hapticTimer: DeadlineTimer
    private var pendingSegments: [HapticSegment] = []
    private var peakSegment = HapticPattern.peak.segments[0]
    /// Devices whose FF_GAIN this scale lowered, to set back to full when asked.
    private var loweredGain: Set<String> = []
    private var isStarted = false

    /// Why no device is open, when none is: nothing usable was found, or the chosen one
    /// could not be opened. Set when the scale starts or is reconfigured without a device.
    package private(set) var waitingReason: String?
    /// Why the input directory cannot be watched (it does not exist, say): no device can
    /// appear then. Only with `waitForDevice`; otherwise this failure is thrown by `start()`.
    package private(set) var hotplugError: SystemError?

    /// Why the loop was stopped from inside, if it was: output could not be written.
    package private(set) var failure: (any Error)?

    /// Makes the scale's timers; nothing is read, opened or announced until `start()`.
    /// - Parameters:
    ///   - onOutput: Each reading and PEAK, with the device it came from.
    ///   - onNotice: What happened to the devices, once each.
    ///   - onDelivered: After the outputs of one wake-up have all gone to `onOutput`: an
    ///     owner that buffers them writes them out here, in one system call however many
    ///     there were (several, when the loop has fallen behind the device).
    /// - Throws: `Errno` when a timer cannot be made.
    package init(
        options: Options, loop: EventLoop, onOutput: @escaping (ScaleOutput, SourceDevice) throws -> Void,
        onNotice: @escaping (LiveNotice) -> Void, onDelivered: @escaping () throws -> Void = {}
    ) throws {
        self.options = options
        self.loop = loop
        self.onOutput = onOutput
        self.onNotice = onNotice
        self.onDelivered = onDelivered
        timer = try DeadlineTimer()
        hapticTimer = try DeadlineTimer()
    }

    /// Opens the chosen device and adds the scale's sources to the loop. Notices and outputs
    /// start here (the `.opened` notice first), never in the initialiser, so the owner holds
    /// the scale before it hears from it.
    ///
    /// With `options.waitForDevice`, a missing or unusable device is no error: the scale
    /// starts without one (`currentDevice` is `nil`, `waitingReason` says why; no notice
    /// is sent, the owner says so as it likes) and opens it when it appears.
    /// - Throws: `DeviceSelectionError`, `DeviceOpenError`, `DeviceSetupError` or a
    ///   `SystemError` when there is nothing to read; with `waitForDevice`, only failures
    ///   of the loop's own descriptors. A second call does nothing.
    package func start() throws {
        guard !isStarted else { return }
        isStarted = true
        // The device first: "no pressure device" says more than any failure after it.
        var candidate: DeviceCandidate?
        do {
            candidate = try DeviceDiscovery.choose(options.query, from: DeviceDiscovery.scan(directory: options.directory))
        } catch {
            guard options.waitForDevice else { throw error }
            waitingReason = error.description
        }
        do {
            hotplug = try DirectoryWatcher(directory: options.directory)
            hotplugError = nil
        } catch {
            guard options.waitForDevice else { throw error }
            hotplug = nil
            hotplugError = error
        }
        try loop.watch(timer.descriptor) { [unowned self] in
            // The deadline it fired for has come: what is due then goes out, and no clock
            // is read. Nothing, when the device's handler re-armed it after epoll said so.
            guard let due = armed.fired(expirations: timer.acknowledge()), let current else { return }
            current.pipeline.advance(to: due, into: &outputs)
            deliver()
        }
        try loop.watch(hapticTimer.descriptor) { [unowned self] in
            hapticTimer.acknowledge()
            guard let rumble else { return }
            do throws(ForceFeedbackError) { try playNextSegment(on: rumble) } catch {
                self.rumble = nil
                sayRumbleUnavailable(error.description)
            }
        }
        if let hotplug {
            try loop.watch(hotplug.descriptor) { [unowned self] in
                let names = hotplug.drain()
                guard names.contains(where: { $0.hasPrefix("event") }) else { return }
                if current == nil { reopen() } else { followSeparateRumbler() }
            }
        }
        if let candidate {
            do {
                try open(candidate.path)
            } catch {
                guard options.waitForDevice else { throw error }
                waitingReason = "\(error)"
            }
        }
    }

    /// Takes new options: the device is closed (its held reading goes out, its effect is
    /// erased) and the device the new options choose is opened with the new settings,
    /// rumble and all — or the scale waits for it. The input directory stays the one the
    /// scale started with.
    package func reconfigure(_ newOptions: Options) {
        var newOptions = newOptions
        newOptions.directory = options.directory
        closeDevice()
        options = newOptions
        rumbleUnavailableSaid = false
        waitingReason = nil
        reopen()
        if current == nil { onNotice(.waiting(for: options.awaited)) }
    }

    /// Closes the device (its held reading goes out, its effect is erased) and leaves the loop.
    package func stop() {
        closeDevice()
        loop.unwatch(timer.descriptor)
        loop.unwatch(hapticTimer.descriptor)
        if let hotplug { loop.unwatch(hotplug.descriptor) }
    }

    /// The device being read, if one is present.
    package var currentDevice: (path: String, description: DeviceDescription)? {
        current.map { ($0.device.path, $0.device.description) }
    }

    /// The device that rumbles on a PEAK, if any.
    package var rumblePath: String? { rumble?.device.path }

    package var gramModel: GramModelKind? { current?.pipeline.gramModel.kind }

    /// Plays a pattern through the rumble effect, one segment per timer wake-up, then puts
    /// the peak effect back (they share the device's one slot that forcescale holds).
    package func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        guard let rumble else {
            throw ForceFeedbackError(
                path: current?.device.path ?? "forcescale", operation: "rumble", errno: nil,
                explanation: "no device can rumble" + (current == nil ? " (the pressure device is away)" : ""))
        }
        pendingSegments = pattern.segments
        hapticTimer.acknowledge()
        try playNextSegment(on: rumble)
    }

    private func playNextSegment(on effect: RumbleEffect) throws(ForceFeedbackError) {
        guard !pendingSegments.isEmpty else {
            try uploadPeakEffect(effect)
            hapticTimer.arm(atMicroseconds: nil)
            return
        }
        let segment = pendingSegments.removeFirst()
        try effect.upload(strong: segment.strongMagnitude, weak: segment.weakMagnitude, milliseconds: segment.durationMilliseconds)
        try effect.play()
        hapticTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(segment.durationMilliseconds + segment.pauseMilliseconds) * 1000)
    }

    /// Applies a calibration to the open device's readings from now on. The scale keeps no
    /// copy: a device that opens starts uncalibrated, and its owner (the daemon, told by
    /// `.opened`) applies that device's calibration before the first event is read.
    package func setCalibration(_ calibration: Calibration) {
        current?.pipeline.setCalibration(calibration)
    }

    // MARK: - Devices

    private func open(_ path: String) throws {
        let opened = try EvdevDevice(path: path, wantsWrite: true)
        let pipeline = try ScalePipeline(device: opened.description, settings: options.settings)
        if options.grab { try opened.grab() }
        try loop.watch(opened.descriptor) { [unowned self] in readDevice() }
        let current = OpenDevice(device: opened, pipeline: pipeline)
        self.current = current
        armed = ArmedDeadline(slack: min(options.settings.throttleInterval, Self.maximumTimerSlack))
        waitingReason = nil
        onNotice(.opened(path: path, device: opened.description, source: pipeline.source, model: pipeline.gramModel.kind))
        prepareRumble(for: opened)
        // A touch already down is weighed from now (after `.opened`, whose owner may have
        // given the pipeline its calibration).
        for event in opened.currentState(at: EventTime(microseconds: MonotonicClock.now(on: opened.eventClock))) {
            current.pipeline.process(event, into: &outputs)
        }
        deliver()
    }

    /// Uploads the peak effect once, so that firing it later is a single write.
    private func prepareRumble(for pressureDevice: EvdevDevice) {
        let target: EvdevDevice
        switch options.rumble {
        case .off:
            return
        case .pressureDevice:
            target = pressureDevice
        case .device(let query):
            do {
                let path = try DeviceDiscovery.chooseRumbler(query, from: DeviceDiscovery.scan(directory: options.directory))
                target = try EvdevDevice(path: path, wantsWrite: true)
            } catch {
                sayRumbleUnavailable("\(error)")
                return
            }
        }
        do {
            let effect = try RumbleEffect(device: target)
            var pattern = HapticPattern.peak
            // The gain is the device's own, shared with other programs: touched only when
            // less than full strength is asked for.
            let supportsGain = ForceFeedbackCapabilities(of: target).supportsGain
            if options.rumbleIntensity < 1 {
                if supportsGain {
                    try effect.setGain(options.rumbleIntensity)
                    loweredGain.insert(target.path)
                } else {
                    pattern = pattern.scaled(intensity: options.rumbleIntensity)
                }
            } else if supportsGain, loweredGain.contains(target.path) {
                // Lowered before a reconfiguration asked for full strength again.
                try effect.setGain(1)
                loweredGain.remove(target.path)
            }
            peakSegment = pattern.segments[0]
            try uploadPeakEffect(effect)
            rumble = effect
            // A later loss is news again.
            rumbleUnavailableSaid = false
            onNotice(.rumbleReady(path: target.path))
        } catch {
            sayRumbleUnavailable(error.description + (target === pressureDevice ? "; --rumble-device can name another device, such as a gamepad" : ""))
        }
    }

    /// Plays the PEAK's rumble and times it: from the event time of the frame that reached
    /// the threshold to the return of the play's `write`, read on the clock the pressure
    /// device stamps its events with (a separate rumble device changes nothing: the start
    /// is the pressure device's frame).
    private func rumbleForPeak(at time: EventTime, of pressureDevice: EvdevDevice) -> RumbleOutcome {
        if case .off = options.rumble { return .off }
        guard let rumble else { return .unavailable }
        do throws(ForceFeedbackError) {
            try rumble.play()
        } catch {
            self.rumble = nil
            sayRumbleUnavailable(error.description)
            return .failed(errno: error.errno?.rawValue ?? EIO)
        }
        return .played(latencyMicroseconds: MonotonicClock.now(on: pressureDevice.eventClock) - time.microseconds)
    }

    /// A separate --rumble-device comes and goes on its own: after a change in the input
    /// directory, one that is gone is let go (said once) and one that is back, or newly
    /// there, is taken up (said when it is).
    private func followSeparateRumbler() {
        guard case .device = options.rumble, let device = current?.device else { return }
        if let rumble, !rumble.device.isPresent {
            self.rumble = nil
            sayRumbleUnavailable("\(rumble.device.path) was removed; rumble resumes when it is back")
        }
        if rumble == nil { prepareRumble(for: device) }
    }

    private func uploadPeakEffect(_ effect: RumbleEffect) throws(ForceFeedbackError) {
        try effect.upload(strong: peakSegment.strongMagnitude, weak: peakSegment.weakMagnitude, milliseconds: peakSegment.durationMilliseconds)
    }

    private func sayRumbleUnavailable(_ reason: String) {
        guard !rumbleUnavailableSaid else { return }
        rumbleUnavailableSaid = true
        onNotice(.rumbleUnavailable(reason: reason))
    }

    private func readDevice() {
        guard let current else { return }
        let device = current.device
        let outcome = device.drain(
            onEvent: { current.pipeline.process($0, into: &outputs) },
            onResynchronize: {
                current.pipeline.beginResynchronization()
                onNotice(.resynchronized(path: device.path))
            })
        deliver()
        switch outcome {
        case .drained:
            break
        case .removed:
            onNotice(.removed(path: device.path))
            closeDevice()
            onNotice(.waiting(for: options.awaited))
            reopen()
        case .failed(let errno):
            onNotice(.readFailed(path: device.path, errno: errno))
            closeDevice()
            onNotice(.waiting(for: options.awaited))
        }
    }

    /// Tries to take up a device again after hotplug; quietly waits for the next change
    /// when none is usable yet (udev may not have fixed the node's permissions).
    private func reopen() {
        guard current == nil else { return }
        do {
            let candidate = try DeviceDiscovery.choose(options.query, from: DeviceDiscovery.scan(directory: options.directory))
            try open(candidate.path)
        } catch {
            waitingReason = "\(error)"
        }
    }

    /// Closes the device: the held reading goes out, the effect is erased, the fd closed.
    private func closeDevice() {
        if let current {
            current.pipeline.finish(into: &outputs)
            deliver()
            loop.unwatch(current.device.descriptor)
        }
        timer.arm(atMicroseconds: nil)
        armed.disarmed()
        rumble?.erase()
        rumble = nil
        current = nil
    }

    /// Hands outputs on, rumbling first on a PEAK so the feel is not delayed by printing.
    /// Each goes with the device that produced it (outputs exist only while one is open:
    /// the pipeline is made and dropped with it).
    private func deliver() {
        let delivering = !outputs.isEmpty
        for var output in outputs {
            guard let current else { break }
            if case .peak(var peak) = output {
                peak.rumble = rumbleForPeak(at: peak.time, of: current.device)
                output = .peak(peak)
            }
            do { try onOutput(output, current.source) } catch {
                failure = error
                loop.stop()
                break
            }
        }
        if delivering { outputs.removeAll(keepingCapacity: true) }
        if delivering, failure == nil {
            do { try onDelivered() } catch {
                failure = error
                loop.stop()
            }
        }
        // Re-arming costs a system call; only a new deadline needs it (once per throttle
        // window while a touch streams).
        switch armed.follow(current?.pipeline.nextDeadline) {
        case .arm(let deadline): timer.arm(atMicroseconds: deadline.microseconds)
        case .disarm: timer.arm(atMicroseconds: nil)
        case nil: break
        }
    }
}

/// An open device and what reads it, made and dropped together. A class, so that the
/// per-frame path reaches the pipeline in place: an optional `ScalePipeline` stored in the
/// scale itself would be copied whole (a retain and release of each array and string in it)
/// by every `!= nil` and `?.nextDeadline`, several times per frame.
private final class OpenDevice {
    let device: EvdevDevice
    /// The device as its outputs name it.
    let source: SourceDevice
    var pipeline: ScalePipeline

    init(device: EvdevDevice, pipeline: ScalePipeline) {
        self.device = device
        source = SourceDevice(path: device.path, description: device.description)
        self.pipeline = pipeline
    }
}
