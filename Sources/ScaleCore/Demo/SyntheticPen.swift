import Glibc  // exp and log only: ScaleCore does no I/O and reads no clock.

/// A pen whose response to force is known exactly, carrying weights placed on its tip one by
/// one as `forcescale characterize` asks: each lands (overshooting), rests, is pushed down
/// to twice its weight (at least 100 g more) and let go, rests again and is lifted. Frames at
/// 200 a second, as pens report, with Gaussian noise, creep under the resting load, and
/// nothing read below the force at which the pen registers. The demo's pen and the
/// characterization bench are made of it.
public struct SyntheticPen: Sendable {
    /// The logical range's top (the minimum is 0).
    public var axisMaximum: Int32
    /// Logical pressure (a fraction of the range) against force in grams, pressing; 0 below
    /// the activation force.
    public var pressing: @Sendable (Double) -> Double
    /// The same while releasing (at least `pressing`).
    public var releasing: @Sendable (Double) -> Double
    /// Standard deviation of the noise, in raw units.
    public var noise: Double
    /// How far a resting reading creeps up after landing, as a fraction of the reading.
    public var creep: Double
    /// How far a landing overshoots the weight, as a fraction of it.
    public var overshoot: Double

    public init(
        axisMaximum: Int32, pressing: @escaping @Sendable (Double) -> Double, releasing: @escaping @Sendable (Double) -> Double,
        noise: Double, creep: Double, overshoot: Double
    ) {
        self.axisMaximum = axisMaximum
        self.pressing = pressing
        self.releasing = releasing
        self.noise = noise
        self.creep = creep
        self.overshoot = overshoot
    }

    /// One frame: its time, raw pressure and whether the pen reports a touch.
    public struct Frame: Hashable, Sendable {
        public var time: EventTime
        public var raw: Int32
        public var touching: Bool
    }

    public static let framePeriod: Int64 = 5_000

    /// The frames of each weight placed in turn, from `start`.
    public func frames(weights: [Double], start: Int64 = 1_000_000, random: inout SplitMix64) -> [Frame] {
        var frames: [Frame] = []
        var time = start
        func add(_ fraction: Double, creeping: Double) {
            let exact = fraction * Double(axisMaximum)
            var frame = Frame(time: EventTime(microseconds: time), raw: 0, touching: false)
            if exact >= 0.5 {
                let value = (exact * (1 + creep * creeping) + noise * random.nextGaussianPair().0).rounded()
                frame.raw = Int32(Swift.min(Double(axisMaximum), Swift.max(0, value)))
                frame.touching = frame.raw > 0
            }
            frames.append(frame)
            time += Self.framePeriod
        }
        let step = Double(Self.framePeriod) / 1_000_000
        for weight in weights {
            let push = Swift.max(weight, 100)
            // Landing and rest: the overshoot decays, the reading creeps.
            for index in 0..<400 {
                let t = Double(index) * step
                add(pressing(weight * (1 + overshoot * exp(-t / 0.06))), creeping: 1 - exp(-t))
            }
            // The push up, held, back down (releasing on the way), then rest again.
            for index in 0..<60 { add(pressing(weight + push * Double(index) / 60), creeping: 1) }
            for _ in 0..<60 { add(pressing(weight + push), creeping: 1) }
            for index in 0..<60 {
                let force = weight + push * (1 - Double(index) / 60)
                add(Swift.max(releasing(force), pressing(force)), creeping: 1)
            }
            for _ in 0..<400 { add(releasing(weight), creeping: 1) }
            // Lifted, and half a second before the next.
            for _ in 0..<100 { add(0, creeping: 0) }
        }
        return frames
    }
}

/// The built-in pen demo: a synthetic pen tablet (0–2047) whose response is known (it is
/// generated, not recorded), with household weights placed on its tip one by one, for
/// `forcescale characterize --replay` to find what is known: an activation force of 6.0 g,
/// a logarithmic response reaching its full scale at 400 g, hysteresis of 3 % of the range
/// at mid-range, a unit and a half of noise.
public enum DemoPen {
    /// The weights, in the order placed: coins (1, 2, 5, 20 cent; 1 and 2 €), the 2 € coin
    /// with another on it, stacks of 2 € coins, then heavier household weights.
    public static let weights: [Double] = [2.3, 3.92, 5.74, 7.5, 8.5, 10.8, 12.42, 17, 25.5, 42.5, 85, 127.5, 170, 255, 340, 425]

    public static let activation = 6.0
    public static let fullScale = 400.0
    public static let hysteresis = 0.03

    public static let device = DeviceDescription(
        name: "forcescale demo pen (synthetic)",
        identity: DeviceIdentity(bus: 0x03, vendor: 0x0000, product: 0x0000, version: 1),
        properties: BitSet([Int(InputProperty.direct.rawValue)]),
        supportedCodes: [
            .synchronization: BitSet([0]),
            .key: BitSet([Int(EventCode.btnToolPen.rawValue), Int(EventCode.btnTouch.rawValue)]),
            .absolute: BitSet([0x00, 0x01, 0x18]),
        ],
        axes: [
            .absX: AxisRange(minimum: 0, maximum: 44704, resolution: 200),
            .absY: AxisRange(minimum: 0, maximum: 27940, resolution: 200),
            .absPressure: AxisRange(minimum: 0, maximum: 2047),
        ])

    /// The pen's logical pressure at `grams`, pressing.
    public static func pressing(_ grams: Double) -> Double {
        guard grams >= activation else { return 0 }
        let x = Swift.min(1, (grams - activation) / (fullScale - activation))
        return log(1 + 8 * x) / log(9)
    }

    /// The same, releasing: higher by up to `hysteresis` at mid-range.
    public static func releasing(_ grams: Double) -> Double {
        guard grams >= activation else { return 0 }
        let x = Swift.min(1, (grams - activation) / (fullScale - activation))
        return Swift.min(1, pressing(grams) + hysteresis * 4 * x * (1 - x))
    }

    /// Generates the session; the same seed always gives the same events.
    /// - Parameter weights: The weights placed, in order (tests give fewer than the demo's).
    public static func recording(seed: UInt64 = 0x5065_6E44_656D_6F21, weights: [Double] = DemoPen.weights) -> Recording {
        var random = SplitMix64(seed: seed)
        let pen = SyntheticPen(axisMaximum: 2047, pressing: pressing, releasing: releasing, noise: 1.5, creep: 0.003, overshoot: 0.2)
        var events: [InputEvent] = []
        var touching = false
        var lastRaw: Int32 = 0
        for frame in pen.frames(weights: weights, random: &random) {
            var changes: [(EventType, EventCode, Int32)] = []
            if frame.touching != touching {
                changes += [(.key, .btnTouch, frame.touching ? 1 : 0), (.key, .btnToolPen, frame.touching ? 1 : 0)]
                if frame.touching { changes += [(.absolute, .absX, 22000), (.absolute, .absY, 14000)] }
                touching = frame.touching
            }
            // The kernel passes on only what changed.
            if frame.raw != lastRaw {
                changes.append((.absolute, .absPressure, frame.raw))
                lastRaw = frame.raw
            }
            guard !changes.isEmpty else { continue }
            for (type, code, value) in changes {
                events.append(InputEvent(time: frame.time, type: type, code: code, value: value))
            }
            events.append(InputEvent(time: frame.time, type: .synchronization, code: .synReport, value: 0))
        }
        return Recording(device: device, events: events, comments: [
            "synthetic: generated by 'forcescale demo --pen', not a recording of real hardware",
            "weights placed one by one on a 0-2047 pen's tip, each pushed further and let go: "
                + weights.map { DemoPen.text($0) }.joined(separator: ",") + " g",
        ])
    }

    static func text(_ grams: Double) -> String {
        grams == grams.rounded() ? String(Int(grams)) : String(grams)
    }
}
