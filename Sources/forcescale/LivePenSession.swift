import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

/// `forcescale characterize` on a live pen: the weights asked for one by one, each touch
/// followed through forcescaled's readings by the same ``PenTouchTracker`` a recording
/// goes through. The person talks on standard error; standard output gets only the result.
struct LivePenSession {
    let client: DaemonClient
    /// The device as the daemon names it.
    let device: String
    let timeout: Double
    /// The device's name, pressure axis and USB ids, from DEVICES.
    let name: String
    let axis: ClosedRange<Int32>
    let fuzz: Int32
    let identity: DeviceIdentity?
    private let prompts = OutputChannel.standardError
    /// The last reading's event time and when it arrived here: the daemon sends nothing
    /// while nothing changes, so the tracker is told the time goes on.
    private var lastReading: (time: EventTime, arrived: Int64)?

    /// Finds the device and its pressure axis.
    /// - Throws: `CommandFailure` when the daemon has no device, several without --device,
    ///   or one without a pressure axis.
    init(client: DaemonClient, device requested: String?, timeout: Double, socket: String) throws {
        self.client = client
        self.timeout = timeout
        let status = try client.request(.status(device: requested), expecting: StatusMessage.self).message
        guard let device = status.device else {
            if let served = status.devices, served.count > 1 {
                throw CommandFailure(
                    message: "forcescaled serves \(served.count) devices (\(served.map(\.device).joined(separator: ", "))): name the pen with --device",
                    status: ExitStatus.failure)
            }
            throw CommandFailure(
                message: "forcescaled on \(socket) has no pressure device open: plug the pen in or name it with forcescaled --device; "
                    + "'forcescale devices' lists what this machine has. Without one, try the demo pen: forcescale demo --pen --write pen.events, "
                    + "then forcescale characterize --replay pen.events with the weights its comment lists",
                status: ExitStatus.unavailable)
        }
        self.device = device
        let devices = try client.request(.devices, expecting: DevicesMessage.self).message.devices
        let listed = devices.first { $0.path == device || $0.path.hasSuffix("/" + device) } ?? devices.first { $0.active }
        guard let axisInfo = listed?.pressure?.first, let minimum = Int32(exactly: axisInfo.min), let maximum = Int32(exactly: axisInfo.max),
              maximum > minimum else {
            throw CommandFailure(message: "forcescaled's device \(device) shows no usable pressure axis in DEVICES", status: ExitStatus.unavailable)
        }
        name = listed?.name ?? device
        // A device of a kind this build knows that is not a tablet has no pen (DeviceKind's
        // rule: a pen tool or a stylus button makes a tablet).
        if let kind = listed?.kind?.kind, kind != .tablet {
            try CharacterizeCommand.requirePen(
                name: name, isPen: false, why: "forcescaled lists it as a \(kind.rawValue), not a tablet: it declares no pen tool",
                advice: "name the pen with --device ('forcescale devices' lists each device's kind)")
        }
        axis = minimum...maximum
        fuzz = Int32(clamping: axisInfo.fuzz)
        identity = listed?.id.flatMap(Self.identity)
    }

    /// `0003:056a:00b9:0110`-style ids (bus, vendor, product, version in hexadecimal).
    static func identity(_ text: String) -> DeviceIdentity? {
        let parts = text.split(separator: ":").compactMap { UInt16($0, radix: 16) }
        guard parts.count >= 3 else { return nil }
        return DeviceIdentity(bus: parts[0], vendor: parts[1], product: parts[2], version: parts.count > 3 ? parts[3] : 0)
    }

    /// Asks for each weight in turn.
    /// - Returns: Each weight and what it did; `nil` when the person stopped (q, end of input).
    mutating func run(weights: [Double]) throws -> [WeightMeasurement]? {
        try say("Characterizing \(untrusted: name) (pressure \(axis.lowerBound)–\(axis.upperBound)) with \(weights.count) weights.")
        try say("Stand the pen upright on its tip in a holder; each weight goes on top of it, alone. Ctrl-C or q stops.")
        _ = try client.request(.watch(enable: true, device: device), expecting: WatchMessage.self)
        defer { _ = try? client.request(.watch(enable: false, device: nil), expecting: WatchMessage.self) }
        var measurements: [WeightMeasurement] = []
        var index = 0
        while index < weights.count {
            let grams = weights[index]
            try waitForLift(first: index == 0)
            guard let answer = try askLine("[\(index + 1)/\(weights.count)] Put the \(PenReport.grams(grams)) weight on the pen's tip, then press Enter (q to stop): ", on: prompts),
                  answer != "q" else { return nil }
            let newest = try client.request(.poll(device: device), expecting: PollMessage.self).message.reading
            guard let newest, newest.contacts > 0, newest.raw > axis.lowerBound else {
                try say("  nothing registers with \(PenReport.grams(grams)): below the pen's activation force. Take it off.")
                measurements.append(WeightMeasurement(grams: grams, touch: nil))
                index += 1
                continue
            }
            var tracker = PenTouchTracker(axis: axis, fuzz: fuzz)
            lastReading = nil
            guard let touch = try follow(&tracker, grams: grams) else {
                try say("  the weight was lifted before it rested: nothing was taken. Try it again.")
                continue
            }
            measurements.append(WeightMeasurement(grams: grams, touch: touch))
            index += 1
        }
        return measurements
    }

    /// Follows one touch to its end, telling the person what comes next.
    private mutating func follow(_ tracker: inout PenTouchTracker, grams: Double) throws -> PenTouch? {
        let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
        try say("  waiting for it to rest…")
        while true {
            let events: [PenTouchTracker.Event]
            if let line = try client.nextLine(deadline: Swift.min(deadline, MonotonicClock.now() + 100_000)) {
                guard case .reading(let reading) = line.message else { continue }
                lastReading = (reading.time, MonotonicClock.now())
                events = tracker.add(time: reading.time, raw: reading.raw, touching: reading.contacts > 0)
            } else if MonotonicClock.now() >= deadline {
                throw CommandFailure(
                    message: "the \(PenReport.grams(grams)) weight did not rest steadily within \(DaemonClient.seconds(timeout)) s: "
                        + "nothing more was measured; steady the pen in its holder and start again",
                    status: ExitStatus.failure)
            } else if let last = lastReading {
                // Nothing new: the pen holds what it read last while time goes on.
                events = tracker.advance(to: EventTime(microseconds: last.time.microseconds + (MonotonicClock.now() - last.arrived)))
            } else {
                continue
            }
            for event in events {
                switch event {
                case .pressing(let pressure):
                    try say("  pressing: raw \(fixed(pressure.mean, decimals: 1)) (sd \(fixed(pressure.standardDeviation, decimals: 1))). "
                        + "Now press it down a little further and let go; or lift it off to go on.")
                case .releasing(let pressure):
                    try say("  releasing: raw \(fixed(pressure.mean, decimals: 1)). Lift it off.")
                case .ended(let touch):
                    return touch?.pressing == nil && touch?.pushedBeforeRest != true ? nil : touch
                }
            }
        }
    }

    /// Waits until the pen reads nothing, so that each weight is a touch of its own.
    private mutating func waitForLift(first: Bool) throws {
        let newest = try client.request(.poll(device: device), expecting: PollMessage.self).message.reading
        guard let newest, newest.contacts > 0, newest.raw > axis.lowerBound else { return }
        try say(first ? "Take everything off the pen's tip…" : "Lift it off…")
        let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
        while true {
            guard let line = try client.nextLine(deadline: deadline) else {
                throw CommandFailure(message: "the pen was not cleared within \(DaemonClient.seconds(timeout)) s: lift the weight off", status: ExitStatus.failure)
            }
            if case .reading(let reading) = line.message, reading.contacts == 0 || reading.raw <= axis.lowerBound { return }
        }
    }

    private func say(_ text: String) throws {
        try prompts.write(text + "\n")
        try prompts.flush()
    }


}
