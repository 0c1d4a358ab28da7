/// The settings a characterized pen gets in the tools that configure pens, each with the
/// command that applies it.
///
/// - The pressure curve (xsetwacom's `PressureCurve`, GNOME's `pressure-curve`): the Bézier
///   that makes the pressure applications get proportional to force over the measured span:
///   0 at the IAF, and at the span's top what the pen read there or up to a tenth less
///   (the curve still ends at (100, 100)). Its largest difference from a straight line over
///   that span is said.
/// - The activation threshold (OpenTabletDriver's tip threshold, the minimum of libinput's
///   pressure range): the least logical pressure that stays above the noise the pen showed
///   with its lightest registered weight resting (three standard deviations, at least one raw
///   unit), so the tip activates from about the IAF on and noise alone does not toggle it. No
///   setting can lower a pen's IAF: the sensor reports nothing below it.
public struct PenSettings: Hashable, Sendable {
    public let curve: PressureCurve
    /// The curve's largest error over the measured span, in % of the range.
    public let curveErrorPercent: Double
    /// The activation threshold as a fraction of the logical range.
    public let threshold: Double
    /// A weight and the logical pressure it read, in % of the range.
    public struct Record: Hashable, Sendable {
        public var grams: Double
        public var percent: Double
    }

    /// The measured records, lightest first: a weight that did not register reads 0 %.
    public let records: [Record]
    /// Why no curve is given, when fewer than 3 weights registered: a Bézier through fewer
    /// points is a guess (with one it is the straight line, whatever the pen does).
    public let curveWithheld: String?

    /// The fewest registered weights a curve is given for.
    public static let weightsForACurve = 3

    public init(_ pen: PenCharacterization) {
        // The wanted output at 41 even steps of force over the measured span (the curve is
        // judged against force: where the response is flat, a step of force moves the
        // pressure little and the curve must be steep there).
        let reach = pen.reach
        let lift = pen.reachLift
        let samples = lift > 0
            ? (0...40).map { step -> (x: Double, y: Double) in
                (pen.fraction(atGrams: pen.activation.grams + lift * Double(step) / 40), reach * Double(step) / 40)
            }
            : [(x: 0, y: 0), (x: reach, y: reach)]
        (curve, curveErrorPercent) = PressureCurve.fitted(to: samples)
        let span = Double(Int64(pen.axis.upperBound) - Int64(pen.axis.lowerBound))
        let noise = pen.points.first.map { 3 * $0.spread } ?? 0
        threshold = Swift.min(1, Swift.max(1, noise.rounded(.up)) / span)
        let registered = pen.points.map { Record(grams: $0.grams, percent: $0.fraction * 100) }
        records = (pen.unregistered.map { Record(grams: $0, percent: 0) } + registered).sorted { $0.grams < $1.grams }
        let count = pen.points.count
        curveWithheld = count >= Self.weightsForACurve ? nil
            : "no curve: \(count) weight\(count == 1 ? "" : "s") registered, and a curve needs at least \(Self.weightsForACurve); add weights between the activation force and full scale"
    }

    /// The threshold in % of the range, to two decimals.
    public var thresholdPercent: Double { (threshold * 10_000).rounded() / 100 }

    /// `xsetwacom set "NAME stylus" PressureCurve x1 y1 x2 y2`, for the kernel device
    /// `device`. xf86-input-wacom names the X device of a tablet's pen tool after the kernel
    /// device with " stylus" appended, whatever the name ends in ("Wacom Intuos S Pen" gives
    /// "Wacom Intuos S Pen stylus": wcmPreInit and wcmOptionDupConvert append the type to the
    /// name as it is), and xsetwacom matches names exactly.
    public func xsetwacomCommand(device: String) -> String {
        "xsetwacom set \(Self.doubleQuoted(Self.xDeviceName(device))) PressureCurve \(curve.values.map(String.init).joined(separator: " "))"
    }

    /// The X device of the pen tool xf86-input-wacom makes for the kernel device `device`.
    public static func xDeviceName(_ device: String) -> String { device + " stylus" }

    /// What applies libinput's pressure range: nothing on libinput before 1.26 (Debian 12 has
    /// 1.22); from 1.26 a compositor, through its tablet settings where it offers them.
    /// libinput keeps no setting of its own. Its tablet code does read a quirk,
    /// `AttrPressureRange`, as a pen's tip-down and tip-up thresholds in raw units, but it
    /// documents quirks as internal API for temporary workarounds, not configuration, so
    /// none is printed (docs/weighing.md says so).
    public static let libinputApplies =
        "set by a compositor's tablet settings where they offer one (libinput 1.26 and later; Debian 12's 1.22 has none); libinput keeps no setting of its own"

    /// GNOME's setting for the pen, at the path GNOME gives a pen without a serial number on
    /// a tablet with this USB id (a pen with one uses its serial in hexadecimal instead).
    public func gnomeCommand(vendor: UInt16, product: UInt16) -> String {
        "gsettings set org.gnome.desktop.peripherals.tablet.stylus:\(Self.gnomePath(vendor: vendor, product: product)) pressure-curve \"[\(curve.values.map(String.init).joined(separator: ", "))]\""
    }

    static func gnomePath(vendor: UInt16, product: UInt16) -> String {
        "/org/gnome/desktop/peripherals/stylus/default-\(hex4(vendor)):\(hex4(product))/"
    }

    /// libinput's pressure range, `min:max` as fractions of the range (the minimum rounded
    /// up, to four decimals).
    public var libinputRange: String { PenNumbers.trimmed((threshold * 10_000).rounded(.up) / 10_000, decimals: 4) + ":1" }

    /// libinput's own tool with the range, to try it: it holds for that debug session only.
    public var libinputTrial: String { "libinput debug-events --set-pressure-range=\(libinputRange)" }

    static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// A shell word in double quotes, with what the shell expands inside them escaped.
    static func doubleQuoted(_ text: String) -> String {
        var out = "\""
        for character in text {
            if "\"\\$`".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out + "\""
    }
}
