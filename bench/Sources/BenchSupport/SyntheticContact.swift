import Glibc
import ScaleCore

/// A contact on a single-touch pad whose pressure is known: it rests, then moves at a
/// steady rate (a fall, a creep, a step), with the noise and wobble real sensors add,
/// quantised to whole raw units and reported at a fixed rate. The stability rule's tests
/// and its benchmark (`forcescale-bench drift-limits`) feed it to the pipeline; the
/// end-to-end tests serve it as a recording (`forcescale-bench contact`).
public struct SyntheticContact: Sendable {
    /// A steady movement: from `at` seconds after landing, `rate` raw units a second
    /// (negative falls) for `seconds`.
    public struct Move: Sendable {
        public var at: Double
        public var rate: Double
        public var seconds: Double

        public init(at: Double, rate: Double, seconds: Double) {
            self.at = at
            self.rate = rate
            self.seconds = seconds
        }
    }

    /// The raw pressure it rests at before moving.
    public var rest: Double
    /// Its movements, which add up.
    public var moves: [Move]
    /// The standard deviation of the Gaussian noise of each frame, in raw units.
    public var noise: Double
    /// The amplitude in raw units of a slow sinusoidal wobble (a hand, a spring), and its
    /// frequency in hertz.
    public var wobble: Double
    public var wobbleHertz: Double
    /// Milliseconds between frames.
    public var period: Double
    /// Seconds from landing to lifting.
    public var duration: Double
    /// The axis maximum (the minimum is 0).
    public var maximum: Int32

    /// - Parameters: As the properties, with one move (`rate` from `moveAt` for `moveFor`
    ///   seconds) or a list of them; by default a contact that rests for `duration` seconds
    ///   on a 0–255 pad at 100 Hz with a unit of noise.
    public init(
        rest: Double, moveAt: Double = 0, rate: Double = 0, moveFor: Double = .infinity, moves: [Move] = [], noise: Double = 1,
        wobble: Double = 0, wobbleHertz: Double = 1, period: Double = 10, duration: Double, maximum: Int32 = 255
    ) {
        self.rest = rest
        self.moves = (rate == 0 ? [] : [Move(at: moveAt, rate: rate, seconds: moveFor)]) + moves
        self.noise = noise
        self.wobble = wobble
        self.wobbleHertz = wobbleHertz
        self.period = period
        self.duration = duration
        self.maximum = maximum
    }

    /// The pad the contact is on: a single-touch pressure pad, `ABS_PRESSURE` 0…``maximum``.
    public var device: DeviceDescription {
        DeviceDescription(
            name: "forcescale synthetic contact 0-\(maximum)",
            identity: DeviceIdentity(bus: 0x06, vendor: 0x0fce, product: 0x0c01, version: 1),
            properties: BitSet([Int(InputProperty.pointer.rawValue), Int(InputProperty.buttonPad.rawValue)]),
            supportedCodes: [
                .synchronization: BitSet([0]),
                .key: BitSet([0x110, Int(EventCode.btnToolFinger.rawValue), Int(EventCode.btnTouch.rawValue)]),
                .absolute: BitSet([0x00, 0x01, 0x18]),
            ],
            axes: [
                .absX: AxisRange(minimum: 0, maximum: 1600, resolution: 16),
                .absY: AxisRange(minimum: 0, maximum: 900, resolution: 15),
                .absPressure: AxisRange(minimum: 0, maximum: maximum),
            ])
    }

    /// The pressure without noise or wobble, `seconds` after landing.
    public func trend(at seconds: Double) -> Double {
        moves.reduce(rest) { $0 + $1.rate * Swift.min(Swift.max(0, seconds - $1.at), $1.seconds) }
    }

    /// The events: a press at `lead` seconds, a frame every ``period`` ms, a lift
    /// ``duration`` seconds later.
    /// - Parameters:
    ///   - seed: The noise's seed.
    ///   - lead: Seconds before the press, after an empty frame at 0 when above 0 (a replay
    ///     starts at its first event: the empty frame keeps the lead).
    public func events(seed: UInt64, lead: Double = 0) -> [InputEvent] {
        var random = Noise(seed: seed)
        var events: [InputEvent] = []
        if lead > 0 { events.append(InputEvent(time: EventTime(microseconds: 0), type: .synchronization, code: .synReport, value: 0)) }
        let leadMicroseconds = Int64((lead * 1_000_000).rounded())
        var frame = 0
        while true {
            let seconds = Double(frame) * period / 1000
            guard seconds < duration else { break }
            let time = EventTime(microseconds: leadMicroseconds + Int64((seconds * 1_000_000).rounded()))
            let value = trend(at: seconds) + noise * random.gaussian() + wobble * sin(2 * Double.pi * wobbleHertz * seconds)
            let raw = Int32(Swift.min(Double(maximum), Swift.max(1, value.rounded())))
            if frame == 0 {
                events.append(InputEvent(time: time, type: .key, code: .btnToolFinger, value: 1))
                events.append(InputEvent(time: time, type: .key, code: .btnTouch, value: 1))
            }
            events.append(InputEvent(time: time, type: .absolute, code: .absPressure, value: raw))
            events.append(InputEvent(time: time, type: .synchronization, code: .synReport, value: 0))
            frame += 1
        }
        let end = EventTime(microseconds: leadMicroseconds + Int64((duration * 1_000_000).rounded()))
        events.append(InputEvent(time: end, type: .key, code: .btnToolFinger, value: 0))
        events.append(InputEvent(time: end, type: .key, code: .btnTouch, value: 0))
        events.append(InputEvent(time: end, type: .absolute, code: .absPressure, value: 0))
        events.append(InputEvent(time: end, type: .synchronization, code: .synReport, value: 0))
        return events
    }

    /// The contact as a recording, for `forcescaled --replay`: `lead` seconds of nothing first.
    /// - Parameters:
    ///   - seed: The noise's seed.
    ///   - lead: Seconds before the press.
    public func recording(seed: UInt64, lead: Double) -> Recording {
        Recording(device: device, events: events(seed: seed, lead: lead), comments: ["a synthetic contact (forcescale-bench contact)"])
    }

    /// Runs the contact through a pipeline with no throttle (every frame's reading).
    /// - Parameters:
    ///   - seed: The noise's seed.
    ///   - settings: The pipeline's settings; the throttle is turned off.
    /// - Returns: The readings while touching, with the seconds since landing of each.
    public func readings(seed: UInt64, settings: ScaleSettings = ScaleSettings()) throws -> [(seconds: Double, reading: Reading)] {
        var settings = settings
        settings.throttleInterval = 0
        var pipeline = try ScalePipeline(device: device, settings: settings)
        var output: [ScaleOutput] = []
        for event in events(seed: seed) { pipeline.process(event, into: &output) }
        pipeline.finish(into: &output)
        return output.compactMap {
            guard case .reading(let reading) = $0, reading.contacts > 0 else { return nil }
            return (Double(reading.time.microseconds) / 1_000_000, reading)
        }
    }
}
