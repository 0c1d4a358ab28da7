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

/// Which devices a live scale reads.
package enum DeviceChoice: Sendable, Equatable {
    /// The best device, or the best that the query matches: one device, followed through
    /// unplug and replug (`forcescale read`).
    case best(DeviceQuery?)
    /// Every device with usable pressure, or every one that one of the queries matches,
    /// each coming and going on its own (the daemon).
    case every([DeviceQuery])
}

/// What happened to the devices, for the user to be told once each.
package enum LiveNotice: Sendable {
    case opened(path: String, device: DeviceDescription, source: PressureSource, model: GramModelKind)
    /// A device that was chosen could not be opened; the others go on (said once per node).
    case unusable(path: String, reason: String)
    /// `device`'s PEAKs rumble through `path` (the device itself, or `--rumble-device`).
    case rumbleReady(path: String, device: String, feedback: FeedbackKind)
    case rumbleUnavailable(reason: String)
    case resynchronized(path: String)
    case removed(path: String)
    case readFailed(path: String, errno: Errno)
    case waiting(for: String)
}

/// A scale reading live devices on an epoll loop it shares with its owner (the `read`
/// command, or the daemon with its clients): each device with its own pipeline and its own
/// timer for the throttle's trailing edge, and hotplug. It follows its devices through
/// unplug and replug, and rumbles on peaks (``RumblePlayer``): through the device that
/// peaked when it can, otherwise through `--rumble-device`. The pipeline is the same one
/// replay uses.
///
/// A device that vanishes, fails or floods (`SYN_DROPPED`) is handled on its own; the others
/// read on.
package final class LiveScale: ScaleSource {
    package struct Options: Sendable {
        package var devices: DeviceChoice
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
            devices: DeviceChoice, settings: ScaleSettings, grab: Bool = false, rumble: RumbleChoice = .pressureDevice,
            rumbleIntensity: Double = 1, directory: String = DeviceDiscovery.inputDirectory, waitForDevice: Bool = false
        ) {
            self.devices = devices
            self.settings = settings
            self.grab = grab
            self.rumble = rumble
            self.rumbleIntensity = rumbleIntensity
            self.directory = directory
            self.waitForDevice = waitForDevice
        }

        /// What the scale waits for when its devices are away, for `LiveNotice.waiting`.
        package var awaited: String {
            switch devices {
            case .best(let query): query?.description ?? "a pressure device"
            case .every(let queries) where queries.isEmpty: "a pressure device"
            case .every(let queries): queries.map(\.description).joined(separator: ", ")
            }
        }
    }

    package private(set) var options: Options
    private let onOutput: (ScaleOutput, SourceDevice) throws -> Void
    private let onNotice: (LiveNotice) -> Void
    private let onDelivered: () throws -> Void

    private let loop: EventLoop
    /// `nil` before `start()`, and when the input directory could not be watched (see
    /// `hotplugError`).
    private var hotplug: DirectoryWatcher?
    /// The devices being read, each with its pipeline, in the order they were opened.
    private var open: [OpenDevice] = []
    /// The rumbles of PEAKs and RUMBLE patterns.
    private let rumble: RumblePlayer
    /// Nodes that were chosen but could not be opened, said once each.
    private var unusableSaid: Set<String> = []
    private var outputs: [ScaleOutput] = []
    /// The longest a device's timer waits past a deadline for the device's next frame.
    /// Devices send a frame every 4–16 ms while a touch streams, so this covers the next
    /// frame of any; waiting longer (an interval of a second, say) would only hold back the
    /// last reading of a stream that stops.
    static let maximumTimerSlack: Int64 = 20_000
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
        rumble = try RumblePlayer(
            choice: options.rumble, intensity: options.rumbleIntensity, directory: options.directory, loop: loop, onNotice: onNotice)
    }

    /// Opens the chosen devices and adds the scale's sources to the loop. Notices and
    /// outputs start here (the `.opened` notices first), never in the initialiser, so the
    /// owner holds the scale before it hears from it.
    ///
    /// With `options.waitForDevice`, a missing or unusable device is no error: the scale
    /// starts without one (`devices` is empty, `waitingReason` says why; no notice is sent,
    /// the owner says so as it likes) and opens devices as they appear.
    /// - Throws: `DeviceSelectionError`, `DeviceOpenError`, `DeviceSetupError` or a
    ///   `SystemError` when there is nothing to read; with `waitForDevice`, only failures
    ///   of the loop's own descriptors. A second call does nothing.
    package func start() throws {
        guard !isStarted else { return }
        isStarted = true
        // The devices first: "no pressure device" says more than any failure after it.
        var candidates: [DeviceCandidate] = []
        do {
            candidates = try chooseDevices()
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
        try rumble.start()
        if let hotplug {
            try loop.watch(hotplug.descriptor) { [unowned self] in
                let names = hotplug.drain()
                guard names.contains(where: { $0.hasPrefix("event") }) else { return }
                rumble.followSeparateRumbler()
                openChosenDevices()
            }
        }
        for candidate in candidates {
            do {
                try openDevice(candidate.path)
            } catch {
                guard options.waitForDevice else { throw error }
                if open.isEmpty { waitingReason = "\(error)" }
                sayUnusable(candidate.path, "\(error)")
            }
        }
    }

    /// Takes new options: every device is closed (its held reading goes out, its effect is
    /// erased) and the devices the new options choose are opened with the new settings,
    /// rumble and all — or the scale waits for them. The input directory stays the one the
    /// scale started with.
    package func reconfigure(_ newOptions: Options) {
        var newOptions = newOptions
        newOptions.directory = options.directory
        closeEveryDevice()
        options = newOptions
        rumble.choice = newOptions.rumble
        rumble.intensity = newOptions.rumbleIntensity
        unusableSaid = []
        waitingReason = nil
        openChosenDevices()
        if open.isEmpty { onNotice(.waiting(for: options.awaited)) }
    }

    /// Closes the devices (their held readings go out, their effects are erased) and leaves
    /// the loop.
    package func stop() {
        closeEveryDevice()
        rumble.stop()
        if let hotplug { loop.unwatch(hotplug.descriptor) }
    }

    /// The devices being read.
    package var servedDevices: [SourceDeviceStatus] {
        open.map { device in
            SourceDeviceStatus(
                device: device.source, gramModel: device.pipeline.gramModel, pressureSource: device.pipeline.source,
                contactMode: device.pipeline.contactMode, rumblePath: device.rumble.rumblePath, feedback: device.rumble.feedback,
                feedbackProblem: device.rumble.feedbackProblem, droppedEvents: device.resynchronizations)
        }
    }

    /// Plays a pattern through `--rumble-device`, or else through the first device's rumble
    /// (``RumblePlayer/play(_:)``).
    package func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        try rumble.play(pattern)
    }

    /// Applies a calibration to `device`'s readings from now on. The scale keeps no copy: a
    /// device that opens starts uncalibrated, and its owner (the daemon, told by `.opened`)
    /// applies that device's calibration before the first event is read.
    package func setCalibration(_ calibration: Calibration, for device: SourceDevice) {
        open.first { $0.device.path == device.path }?.pipeline.setCalibration(calibration)
    }

    /// Takes an open device for the daemon alone, or gives it back (``ScaleSource``).
    package func setGrabbed(_ grabbed: Bool, device: SourceDevice) throws(DeviceOpenError) -> Bool {
        guard let opened = open.first(where: { $0.device.path == device.path }) else { return false }
        if grabbed {
            try opened.device.grab()
        } else if !options.grab {
            // A device opened grabbed (`forcescale read --grab`) stays so.
            opened.device.ungrab()
        }
        return true
    }

    // MARK: - Devices

    /// The devices the options choose that are not open yet.
    private func chooseDevices() throws(DeviceSelectionError) -> [DeviceCandidate] {
        let openPaths = Set(open.map(\.device.path))
        switch options.devices {
        case .best(let query):
            guard open.isEmpty else { return [] }
            return [try DeviceDiscovery.choose(query, from: DeviceDiscovery.scan(directory: options.directory))]
        case .every(let queries):
            let found = DeviceDiscovery.scan(directory: options.directory, excluding: openPaths)
            do {
                return try DeviceDiscovery.chooseEvery(queries, from: found)
            } catch {
                // Devices already open are no error: nothing new is there.
                if !open.isEmpty { return [] }
                throw error
            }
        }
    }

    /// Opens what the options choose and is not open yet, after hotplug; quietly waits for
    /// the next change when nothing is usable yet (udev may not have fixed the node's
    /// permissions).
    private func openChosenDevices() {
        let candidates: [DeviceCandidate]
        do {
            candidates = try chooseDevices()
        } catch {
            waitingReason = "\(error)"
            return
        }
        for candidate in candidates {
            do {
                try openDevice(candidate.path)
            } catch {
                if open.isEmpty { waitingReason = "\(error)" }
                sayUnusable(candidate.path, "\(error)")
            }
        }
    }

    private func openDevice(_ path: String) throws {
        let opened = try EvdevDevice(path: path, wantsWrite: true)
        let pipeline = try ScalePipeline(device: opened.description, settings: options.settings)
        if options.grab { try opened.grab() }
        let device = OpenDevice(
            device: opened, pipeline: pipeline, timer: try DeadlineTimer(),
            armed: ArmedDeadline(slack: min(options.settings.throttleInterval, Self.maximumTimerSlack)))
        try loop.watch(opened.descriptor) { [unowned self, unowned device] in readDevice(device) }
        do {
            try loop.watch(device.timer.descriptor) { [unowned self, unowned device] in
                // The deadline it fired for has come: what is due then goes out, and no clock
                // is read. Nothing, when the device's handler re-armed it after epoll said so.
                guard let due = device.armed.fired(expirations: device.timer.acknowledge()) else { return }
                device.pipeline.advance(to: due, into: &outputs)
                deliver(from: device)
            }
        } catch {
            loop.unwatch(opened.descriptor)
            throw error
        }
        open.append(device)
        unusableSaid.remove(path)
        waitingReason = nil
        onNotice(.opened(path: path, device: opened.description, source: pipeline.source, model: pipeline.gramModel.kind))
        rumble.attach(device.rumble)
        // A touch already down is weighed from now (after `.opened`, whose owner may have
        // given the pipeline its calibration).
        for event in opened.currentState(at: EventTime(microseconds: MonotonicClock.now(on: opened.eventClock))) {
            device.pipeline.process(event, into: &outputs)
        }
        deliver(from: device)
    }

    private func sayUnusable(_ path: String, _ reason: String) {
        guard unusableSaid.insert(path).inserted else { return }
        onNotice(.unusable(path: path, reason: reason))
    }

    private func readDevice(_ device: OpenDevice) {
        let evdev = device.device
        let outcome = evdev.drain(
            onEvent: { device.pipeline.process($0, into: &outputs) },
            onResynchronize: {
                device.resynchronizations += 1
                device.pipeline.beginResynchronization()
                onNotice(.resynchronized(path: evdev.path))
            })
        deliver(from: device)
        switch outcome {
        case .drained:
            break
        case .removed:
            onNotice(.removed(path: evdev.path))
            close(device)
            if open.isEmpty { onNotice(.waiting(for: options.awaited)) }
            if case .best = options.devices { openChosenDevices() }
        case .failed(let errno):
            onNotice(.readFailed(path: evdev.path, errno: errno))
            close(device)
            if open.isEmpty { onNotice(.waiting(for: options.awaited)) }
        }
    }

    /// Closes one device: its held reading goes out, its effect is erased, its fd closed.
    private func close(_ device: OpenDevice) {
        device.pipeline.finish(into: &outputs)
        deliver(from: device)
        loop.unwatch(device.device.descriptor)
        loop.unwatch(device.timer.descriptor)
        open.removeAll { $0 === device }
        rumble.detach(device.rumble)
    }

    private func closeEveryDevice() {
        for device in open { close(device) }
    }

    /// Hands one device's outputs on, rumbling first on a PEAK so the feel is not delayed by
    /// printing. Each goes with the device that produced it.
    private func deliver(from device: OpenDevice) {
        let delivering = !outputs.isEmpty
        for var output in outputs {
            if case .peak(var peak) = output {
                peak.rumble = rumble.rumbleForPeak(at: peak.time, on: device.rumble)
                output = .peak(peak)
            }
            do { try onOutput(output, device.source) } catch {
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
        switch device.armed.follow(device.pipeline.nextDeadline) {
        case .arm(let deadline): device.timer.arm(atMicroseconds: deadline.microseconds)
        case .disarm: device.timer.arm(atMicroseconds: nil)
        case nil: break
        }
    }
}

/// An open device and what reads it, made and dropped together. A class, so that the
/// per-frame path reaches the pipeline in place: a `ScalePipeline` stored in an array of
/// structs would be copied whole (a retain and release of each array and string in it) on
/// each access, several times per frame.
private final class OpenDevice {
    let device: EvdevDevice
    /// The device as its outputs name it.
    let source: SourceDevice
    var pipeline: ScalePipeline
    /// Rings for the throttle's trailing edge (see `ArmedDeadline`).
    let timer: DeadlineTimer
    /// What `timer` is armed for: it is re-armed only when the pipeline's deadline changes,
    /// and rings one throttle interval after it (`maximumTimerSlack` at most), so that while
    /// a touch streams the next frame lets the held reading out and the timer never wakes
    /// the loop.
    var armed: ArmedDeadline
    /// Where its PEAKs rumble (``RumblePlayer``).
    let rumble: RumbleRoute
    /// How often the kernel dropped its events (`SYN_DROPPED`).
    var resynchronizations = 0

    init(device: EvdevDevice, pipeline: ScalePipeline, timer: DeadlineTimer, armed: ArmedDeadline) {
        self.device = device
        source = SourceDevice(path: device.path, description: device.description)
        rumble = RumbleRoute(device: device, nodeName: source.nodeName)
        self.pipeline = pipeline
        self.timer = timer
        self.armed = armed
    }
}
