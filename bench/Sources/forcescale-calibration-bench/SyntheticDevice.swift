import BenchSupport
import Glibc
import ScaleCore

/// A pressure device whose response is known exactly, for the accuracy study: grams in, a
/// noisy, quantised raw reading out, as a real sensor gives them.
struct SyntheticDevice: Sendable {
    /// A short name for the tables and the command line (`log-pen-2047`).
    var key: String
    /// What the tables print.
    var label: String
    /// What the device declares (kind, pressure axis), as its recording's header says.
    var description: DeviceDescription
    /// The exact raw pressure, before noise and rounding, for a weight in grams.
    var response: @Sendable (Double) -> Double
    /// Standard deviation of the sensor's noise in raw units.
    var noise: Double
    /// Frames per second while pressed.
    var rate: Int

    var axis: AxisRange { description.axes[.absPressure]! }
    var kind: DeviceKind { description.kind }

    /// One reading of a weight: the response plus Gaussian noise, rounded to a whole unit
    /// and held inside the axis, as the kernel reports it.
    func reading(grams: Double, random: inout Noise) -> Int32 {
        let value = (response(grams) + noise * random.gaussian()).rounded()
        return Int32(Swift.min(Double(axis.maximum), Swift.max(Double(axis.minimum), value)))
    }

    /// The weight an exact raw value means, by bisection on the rising response (the truth
    /// that readings are judged against).
    func grams(forRaw raw: Double) -> Double {
        var low = 0.0
        var high = 2000.0
        for _ in 0..<100 {
            let middle = (low + high) / 2
            if response(middle) < raw { low = middle } else { high = middle }
        }
        return (low + high) / 2
    }

    /// The devices of the study: two logarithmic pens, a power-law pad, a linear pad whose
    /// axis starts above 0, a coarse 0–255 pad, and two devices whose response is not the
    /// family their kind usually has (a pen with a power-law response, a pad with a
    /// logarithmic one), where two points take the wrong family. Each saturates above 385 g
    /// so that the whole sweep is on the axis; each has at least a raw unit of noise.
    static let all: [SyntheticDevice] = [
        logarithmicPen(key: "log-pen-2047", maximum: 2047, knee: 25, saturation: 450, noise: 1.0, product: 0x2047),
        logarithmicPen(key: "log-pen-8191", maximum: 8191, knee: 40, saturation: 500, noise: 3.0, product: 0x8191),
        pad(key: "power-pad-4095", label: "power-law pad 0–4095 (b 1.6)", minimum: 0, maximum: 4095, noise: 2.0, product: 0x4095) { grams, span in
            span * pow(grams / 420, 1 / 1.6)
        },
        pad(key: "linear-pad-100", label: "linear pad 100–1123", minimum: 100, maximum: 1123, noise: 1.0, product: 0x1123) { grams, span in
            100 + span * grams / 400
        },
        pad(key: "coarse-pad-255", label: "coarse pad 0–255 (b 1.3)", minimum: 0, maximum: 255, noise: 1.0, product: 0x0255) { grams, span in
            span * pow(grams / 400, 1 / 1.3)
        },
        pen(key: "power-pen-1023", label: "power-law pen 0–1023 (b 1.6)", maximum: 1023, noise: 2.0, product: 0x1023) { grams, span in
            span * pow(grams / 450, 1 / 1.6)
        },
        pad(key: "log-pad-1023", label: "logarithmic pad 0–1023", minimum: 0, maximum: 1023, noise: 1.0, product: 0x0123) { grams, span in
            span * log1p(grams / 30) / log1p(450 / 30)
        },
    ]

    static func named(_ key: String) -> SyntheticDevice? { all.first { $0.key == key } }

    /// A pen whose raw pressure grows with the logarithm of force:
    /// `raw = span · ln(1 + g/knee) / ln(1 + saturation/knee)`.
    private static func logarithmicPen(key: String, maximum: Int32, knee: Double, saturation: Double, noise: Double, product: UInt16) -> SyntheticDevice {
        pen(key: key, label: "logarithmic pen 0–\(maximum)", maximum: maximum, noise: noise, product: product) { grams, span in
            span * log1p(grams / knee) / log1p(saturation / knee)
        }
    }

    /// A pen with a pressure axis `0…maximum` and the given response.
    private static func pen(
        key: String, label: String, maximum: Int32, noise: Double, product: UInt16,
        response: @escaping @Sendable (Double, Double) -> Double
    ) -> SyntheticDevice {
        let span = Double(maximum)
        let description = DeviceDescription(
            name: "forcescale synthetic pen 0-\(maximum) (\(label.hasPrefix("logarithmic") ? "logarithmic" : "power law"))",
            identity: DeviceIdentity(bus: 0x06, vendor: 0x0fce, product: product, version: 1),
            properties: BitSet([Int(InputProperty.direct.rawValue)]),
            supportedCodes: [
                .synchronization: BitSet([0]),
                .key: BitSet([Int(EventCode.btnToolPen.rawValue), Int(EventCode.btnTouch.rawValue)]),
                .absolute: BitSet([0x00, 0x01, 0x18]),
            ],
            axes: [
                .absX: AxisRange(minimum: 0, maximum: 20000, resolution: 100),
                .absY: AxisRange(minimum: 0, maximum: 15000, resolution: 100),
                .absPressure: AxisRange(minimum: 0, maximum: maximum),
            ])
        return SyntheticDevice(
            key: key, label: label, description: description, response: { response($0, span) }, noise: noise, rate: 200)
    }

    /// A touchpad with a pressure axis `minimum…maximum` and the given response.
    private static func pad(
        key: String, label: String, minimum: Int32, maximum: Int32, noise: Double, product: UInt16,
        response: @escaping @Sendable (Double, Double) -> Double
    ) -> SyntheticDevice {
        let span = Double(maximum - minimum)
        let description = DeviceDescription(
            name: "forcescale synthetic \(label.split(separator: " ").prefix(2).joined(separator: " ")) \(minimum)-\(maximum)",
            identity: DeviceIdentity(bus: 0x06, vendor: 0x0fce, product: product, version: 1),
            properties: BitSet([Int(InputProperty.pointer.rawValue), Int(InputProperty.buttonPad.rawValue)]),
            supportedCodes: [
                .synchronization: BitSet([0]),
                .key: BitSet([0x110, Int(EventCode.btnToolFinger.rawValue), Int(EventCode.btnTouch.rawValue)]),
                .absolute: BitSet([0x00, 0x01, 0x18]),
            ],
            axes: [
                .absX: AxisRange(minimum: 0, maximum: 1600, resolution: 16),
                .absY: AxisRange(minimum: 0, maximum: 900, resolution: 15),
                .absPressure: AxisRange(minimum: minimum, maximum: maximum),
            ])
        return SyntheticDevice(
            key: key, label: label, description: description, response: { response($0, span) }, noise: noise, rate: 100)
    }
}

/// Weights as a person has them at hand, and the sets used for 1, 2, 3 and 5 points.
enum HouseholdWeights {
    static let names: [Double: String] = [
        5.7: "coin", 20: "letter", 57: "egg", 180: "apple", 300: "mug of water",
    ]
    /// One weight: the apple (a single point is best taken near the middle of the range);
    /// two: a letter and the apple; three: a coin too; five: an egg and a mug as well.
    static let sets: [Int: [Double]] = [
        1: [180], 2: [20, 180], 3: [5.7, 20, 180], 5: [5.7, 20, 57, 180, 300],
    ]
    static func describe(_ weights: [Double]) -> String {
        weights.map { "\(names[$0] ?? "") \(format($0, $0 == $0.rounded() ? 0 : 1)) g" }.joined(separator: ", ")
    }
}
