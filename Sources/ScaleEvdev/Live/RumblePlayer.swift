import Glibc
import ScaleCore
import ScalePOSIX

/// Where one open pressure device's PEAKs rumble, and whether its owner was told that they
/// cannot. `LiveScale` makes one per device it opens and hands it to `RumblePlayer`.
final class RumbleRoute {
    /// The pressure device.
    let device: EvdevDevice
    /// Its name in notices (`event5`).
    let nodeName: String
    /// What its PEAKs rumble through: its own effect, or `--rumble-device`'s.
    fileprivate var rumbler: Rumbler?
    fileprivate var unavailableSaid = false
    /// Why its PEAKs cannot rumble, when they cannot although rumble is on.
    fileprivate var problem: String?

    init(device: EvdevDevice, nodeName: String) {
        self.device = device
        self.nodeName = nodeName
    }

    /// The node its PEAKs rumble through, if any.
    var rumblePath: String? { rumbler?.path }
    /// The kind of effect they play, if any.
    var feedback: FeedbackKind? { rumbler?.effect.kind }
    /// Why its PEAKs cannot rumble, when they cannot although rumble is on.
    var feedbackProblem: String? { rumbler == nil ? problem : nil }
}

/// A live scale's rumbles and haptic effects: the PEAK's effect uploaded once on each
/// device that rumbles (a pressure device's own, or `--rumble-device`'s shared by every
/// pressure device that cannot), played on each PEAK; RUMBLE patterns played a segment per
/// timer wake-up in the same slot, the PEAK's effect put back after; a play that lasts until
/// stopped (a haptic buzz) stopped when its segment ends; and a rumble device that fails or
/// goes away let go, each pressure device it served told once. On the scale's loop, with
/// timers of its own.
final class RumblePlayer {
    /// Which device rumbles on a PEAK; takes effect for the devices attached from now on.
    var choice: RumbleChoice
    /// Strength of the peak rumble, 0…1 (see `LiveScale.Options.rumbleIntensity`); takes
    /// effect for the effects uploaded from now on.
    var intensity: Double

    private let directory: String
    private let loop: EventLoop
    private let onNotice: (LiveNotice) -> Void
    /// The open pressure devices, in the order they were opened.
    private var routes: [RumbleRoute] = []
    /// The PEAK effects, one per device that rumbles (by its path).
    private var rumblers: [String: Rumbler] = [:]
    private let hapticTimer: DeadlineTimer
    /// Ends a play that lasts until it is stopped (a haptic buzz) when its segment does.
    private let stopTimer: DeadlineTimer
    /// The rumbler whose play `stopTimer` ends.
    private var stopping: Rumbler?
    private var pendingSegments: [HapticSegment] = []
    /// The rumbler a RUMBLE pattern is playing on, until it is done.
    private var playing: Rumbler?
    /// Devices whose FF_GAIN this player lowered, to set back to full when asked.
    private var loweredGain: Set<String> = []

    /// Makes the timers; nothing is watched until `start()`.
    /// - Parameters:
    ///   - directory: Where a `--rumble-device` is looked for.
    ///   - onNotice: Gets `.rumbleReady` and `.rumbleUnavailable`.
    /// - Throws: `Errno` when a timer cannot be made.
    init(choice: RumbleChoice, intensity: Double, directory: String, loop: EventLoop, onNotice: @escaping (LiveNotice) -> Void) throws(Errno) {
        self.choice = choice
        self.intensity = intensity
        self.directory = directory
        self.loop = loop
        self.onNotice = onNotice
        hapticTimer = try DeadlineTimer()
        stopTimer = try DeadlineTimer()
    }

    /// Adds the timers to the loop.
    /// - Throws: `Errno` from the loop.
    func start() throws(Errno) {
        try loop.watch(stopTimer.descriptor) { [unowned self] in
            stopTimer.acknowledge()
            guard let stopping else { return }
            self.stopping = nil
            do throws(ForceFeedbackError) { try stopping.effect.stop() } catch { lose(stopping, error.description) }
        }
        try loop.watch(hapticTimer.descriptor) { [unowned self] in
            hapticTimer.acknowledge()
            guard let playing else { return }
            do throws(ForceFeedbackError) { try playNextSegment(on: playing) } catch {
                self.playing = nil
                lose(playing, error.description)
            }
        }
    }

    /// Takes the timers off the loop (after every device was detached).
    func stop() {
        loop.unwatch(hapticTimer.descriptor)
        loop.unwatch(stopTimer.descriptor)
    }

    /// A pressure device was opened: its PEAKs rumble through its own effect when it can
    /// rumble, otherwise through `--rumble-device`'s; each effect is uploaded once, however
    /// many devices share it. Said through `.rumbleReady` or `.rumbleUnavailable`.
    func attach(_ route: RumbleRoute) {
        routes.append(route)
        prepare(route)
    }

    /// A pressure device was closed: an effect goes with the last device that rumbled
    /// through it (erased, and any play of it ended).
    func detach(_ route: RumbleRoute) {
        routes.removeAll { $0 === route }
        guard let rumbler = route.rumbler else { return }
        route.rumbler = nil
        guard !routes.contains(where: { $0.rumbler === rumbler }) else { return }
        rumbler.effect.erase()
        forget(rumbler)
    }

    /// A separate --rumble-device comes and goes on its own: after a change in the input
    /// directory, one that is gone is let go (said once for each device it served) and one
    /// that is back, or newly there, is taken up (said when it is).
    func followSeparateRumbler() {
        guard case .device = choice else { return }
        for rumbler in rumblers.values where !rumbler.effect.device.isPresent && !isPressureDevice(rumbler.path) {
            lose(rumbler, "\(rumbler.path) was removed; rumble resumes when it is back")
        }
        for route in routes where route.rumbler == nil { prepare(route) }
    }

    /// Plays a pattern through `--rumble-device`, or else through the first device's rumble,
    /// one segment per timer wake-up, then puts the peak effect back (they share the
    /// device's one slot that forcescale holds).
    func play(_ pattern: HapticPattern) throws(ForceFeedbackError) {
        let separate = rumblers.values.first { !isPressureDevice($0.path) }
        guard let rumbler = separate ?? routes.lazy.compactMap(\.rumbler).first else {
            throw ForceFeedbackError(
                path: routes.first?.device.path ?? "forcescale", operation: "rumble", errno: nil,
                explanation: "no device can rumble" + (routes.isEmpty ? " (no pressure device is open)" : ""))
        }
        if let playing, playing !== rumbler { try? uploadPeakEffect(playing) }
        playing = rumbler
        pendingSegments = pattern.segments
        hapticTimer.acknowledge()
        try playNextSegment(on: rumbler)
    }

    /// Plays the PEAK's rumble and times it: from the event time of the frame that reached
    /// the threshold to the return of the play's `write`, read on the clock the pressure
    /// device stamps its events with (a separate rumble device changes nothing: the start
    /// is the pressure device's frame).
    func rumbleForPeak(at time: EventTime, on route: RumbleRoute) -> RumbleOutcome {
        if case .off = choice { return .off }
        guard let rumbler = route.rumbler else { return .unavailable }
        do throws(ForceFeedbackError) {
            try play(rumbler, for: rumbler.peakSegment)
        } catch {
            lose(rumbler, error.description)
            return .failed(errno: error.errno?.rawValue ?? EIO)
        }
        return .played(latencyMicroseconds: MonotonicClock.now(on: route.device.eventClock) - time.microseconds)
    }

    // MARK: - Effects

    private func isPressureDevice(_ path: String) -> Bool {
        routes.contains { $0.device.path == path }
    }

    private func prepare(_ route: RumbleRoute) {
        let target: EvdevDevice
        switch choice {
        case .off:
            return
        case .pressureDevice:
            target = route.device
        case .device(let query):
            if ForceFeedbackCapabilities(of: route.device).canGiveFeedback {
                target = route.device
            } else {
                do {
                    let path = try DeviceDiscovery.chooseRumbler(query, from: DeviceDiscovery.scan(directory: directory))
                    // A device that is open already lends its descriptor.
                    target = try rumblers[path]?.effect.device ?? routes.first { $0.device.path == path }?.device
                        ?? EvdevDevice(path: path, wantsWrite: true)
                } catch {
                    sayUnavailable(for: route, "\(error)")
                    return
                }
            }
        }
        do {
            let rumbler = try rumblers[target.path] ?? makeRumbler(on: target)
            rumblers[target.path] = rumbler
            route.rumbler = rumbler
            // A later loss is news again.
            route.unavailableSaid = false
            route.problem = nil
            onNotice(.rumbleReady(path: target.path, device: route.nodeName, feedback: rumbler.effect.kind))
        } catch {
            var hint = ""
            if case .pressureDevice = choice { hint = "; --rumble-device can name another device, such as a gamepad" }
            sayUnavailable(for: route, "\(error)" + hint)
        }
    }

    /// Uploads the peak effect on `target`, at the configured intensity.
    private func makeRumbler(on target: EvdevDevice) throws(ForceFeedbackError) -> Rumbler {
        let effect = try RumbleEffect(device: target)
        var pattern = HapticPattern.peak
        // The gain is the device's own, shared with other programs: touched only when
        // less than full strength is asked for.
        let supportsGain = ForceFeedbackCapabilities(of: target).supportsGain
        if intensity < 1 {
            if supportsGain {
                try effect.setGain(intensity)
                loweredGain.insert(target.path)
            } else {
                pattern = pattern.scaled(intensity: intensity)
            }
        } else if supportsGain, loweredGain.contains(target.path) {
            // Lowered before a reconfiguration asked for full strength again.
            try effect.setGain(1)
            loweredGain.remove(target.path)
        }
        let rumbler = Rumbler(effect: effect, peakSegment: pattern.segments[0])
        try uploadPeakEffect(rumbler)
        return rumbler
    }

    private func playNextSegment(on rumbler: Rumbler) throws(ForceFeedbackError) {
        guard !pendingSegments.isEmpty else {
            playing = nil
            try uploadPeakEffect(rumbler)
            hapticTimer.arm(atMicroseconds: nil)
            return
        }
        let segment = pendingSegments.removeFirst()
        try rumbler.effect.upload(segment)
        try play(rumbler, for: segment)
        hapticTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(segment.durationMilliseconds + segment.pauseMilliseconds) * 1000)
    }

    /// Plays the segment uploaded on `rumbler`; a play that lasts until stopped (a haptic
    /// buzz) is stopped when the segment ends.
    private func play(_ rumbler: Rumbler, for segment: HapticSegment) throws(ForceFeedbackError) {
        try rumbler.effect.play()
        guard rumbler.effect.playsUntilStopped else { return }
        stopping = rumbler
        stopTimer.arm(atMicroseconds: MonotonicClock.now() + Int64(segment.durationMilliseconds) * 1000)
    }

    private func uploadPeakEffect(_ rumbler: Rumbler) throws(ForceFeedbackError) {
        try rumbler.effect.upload(rumbler.peakSegment)
    }

    /// Lets go of a rumbler that failed or went away: each device that rumbled through it is
    /// told once.
    private func lose(_ rumbler: Rumbler, _ reason: String) {
        forget(rumbler)
        for route in routes where route.rumbler === rumbler {
            route.rumbler = nil
            sayUnavailable(for: route, reason)
        }
    }

    /// Drops a rumbler that no device uses any more, or that failed: it is no longer found
    /// by its path, and a pattern it plays and a play it would stop end here.
    private func forget(_ rumbler: Rumbler) {
        rumblers[rumbler.path] = nil
        if playing === rumbler {
            playing = nil
            hapticTimer.arm(atMicroseconds: nil)
        }
        if stopping === rumbler {
            stopping = nil
            stopTimer.arm(atMicroseconds: nil)
        }
    }

    private func sayUnavailable(for route: RumbleRoute, _ reason: String) {
        route.problem = reason
        guard !route.unavailableSaid else { return }
        route.unavailableSaid = true
        onNotice(.rumbleUnavailable(reason: reason))
    }
}

/// A rumble effect uploaded once on a device, and the PEAK's segment it plays.
private final class Rumbler {
    let effect: RumbleEffect
    let peakSegment: HapticSegment
    /// The node that rumbles.
    var path: String { effect.device.path }

    init(effect: RumbleEffect, peakSegment: HapticSegment) {
        self.effect = effect
        self.peakSegment = peakSegment
    }
}
