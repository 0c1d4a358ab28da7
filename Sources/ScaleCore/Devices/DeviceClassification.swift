// What kind of device an evdev node is, and which of several is the best scale. Used by
// `forcescale devices` to list candidates and by `--device` / auto-selection to pick one.
// The rules follow udev's input_id builtin and libinput's device tagging, reduced to what
// matters for weighing.

extension EventCode {
    /// The corresponding C constant is `BTN_TOOL_RUBBER`. The eraser end of a pen.
    public static let btnToolRubber = EventCode(rawValue: 0x141)
    /// The corresponding C constant is `BTN_TOOL_BRUSH`.
    public static let btnToolBrush = EventCode(rawValue: 0x142)
    /// The corresponding C constant is `BTN_TOOL_PENCIL`.
    public static let btnToolPencil = EventCode(rawValue: 0x143)
    /// The corresponding C constant is `BTN_TOOL_AIRBRUSH`.
    public static let btnToolAirbrush = EventCode(rawValue: 0x144)
    /// The corresponding C constant is `BTN_STYLUS`. The first barrel button of a pen.
    public static let btnStylus = EventCode(rawValue: 0x14b)
}

/// What an input device is, as far as weighing is concerned. The raw value is how
/// `forcescale devices` prints it.
public enum DeviceKind: String, Hashable, Sendable, CaseIterable {
    /// A touchpad whose pressure is calibrated force (`INPUT_PROP_PRESSUREPAD`): the best scale.
    case pressurePad = "pressure pad"
    /// A pen tablet or pen display: fine pressure, but only under a pen tip.
    case tablet
    /// An ordinary touchpad: pressure is mostly contact size, so it weighs coarsely.
    case touchpad
    /// A touchscreen: rarely reports pressure, and what it reports is contact size.
    case touchscreen
    /// Anything else (mice, keyboards, joysticks, unusual digitizers).
    case other

    /// The position in ``DeviceRanking``'s order, best first: the order of declaration.
    var rankingOrder: Int { Self.allCases.firstIndex(of: self)! }
}

extension DeviceDescription {
    /// The device's kind.
    ///
    /// The checks run in order, first match wins:
    /// 1. `INPUT_PROP_PRESSUREPAD`: a pressure pad, whatever else it declares.
    /// 2. A pen tool (`BTN_TOOL_PEN`, `BTN_TOOL_RUBBER`, …) or `BTN_STYLUS`: a tablet. Pen
    ///    displays are direct devices but still tablets, because pressure comes from the pen.
    /// 3. Not `INPUT_PROP_DIRECT`, with `BTN_TOOL_FINGER` or `ABS_MT_POSITION_X`: a touchpad.
    ///    udev also requires "not direct", since a direct device with fingers is a screen.
    /// 4. `INPUT_PROP_DIRECT` with `BTN_TOUCH` or `ABS_MT_POSITION_X`: a touchscreen.
    /// 5. Otherwise: other.
    public var kind: DeviceKind {
        if has(.pressurePad) { return .pressurePad }
        if hasPen { return .tablet }
        let isDirect = has(.direct)
        let hasMultitouch = supports(.absolute, .absMTPositionX)
        if !isDirect, supports(.key, .btnToolFinger) || hasMultitouch { return .touchpad }
        if isDirect, supports(.key, .btnTouch) || hasMultitouch { return .touchscreen }
        return .other
    }

    /// Whether the device declares a pen: any pen-like tool or a stylus button. Checking
    /// more than `BTN_TOOL_PEN` catches eraser-only and airbrush descriptions, as udev does
    /// with `BTN_STYLUS`.
    private var hasPen: Bool {
        let penCodes: [EventCode] = [.btnToolPen, .btnToolRubber, .btnToolBrush, .btnToolPencil, .btnToolAirbrush, .btnStylus]
        return penCodes.contains { supports(.key, $0) }
    }

    /// The pressure axes the device declares: `ABS_MT_PRESSURE` first, because
    /// ``PressureSource/select(for:)`` prefers it, then `ABS_PRESSURE`. Empty when there are
    /// none. Ranges are listed as declared, even when degenerate; ``canWeigh`` says whether
    /// they are usable.
    public var pressureAxes: [(code: EventCode, range: AxisRange)] {
        [EventCode.absMTPressure, .absPressure].compactMap { code in
            axes[code].map { (code: code, range: $0) }
        }
    }

    /// Whether the device can be used as a scale: ``PressureSource/select(for:)`` accepts it.
    public var canWeigh: Bool {
        (try? PressureSource.select(for: self)) != nil
    }
}

/// An input device found on the system, as offered to the user.
public struct DeviceCandidate: Hashable, Sendable {
    /// The event node, e.g. `/dev/input/event5`.
    public var path: String
    /// What the device declares.
    public var description: DeviceDescription
    /// Stable names for the same node, the `/dev/input/by-id/…` and `/dev/input/by-path/…`
    /// symlinks that point at it, as absolute paths.
    public var links: [String]

    /// Creates a candidate.
    /// - Parameters:
    ///   - path: The event node.
    ///   - description: The device's description.
    ///   - links: Symlinks that resolve to `path`.
    public init(path: String, description: DeviceDescription, links: [String] = []) {
        self.path = path
        self.description = description
        self.links = links
    }
}

/// Orders candidate devices so the first is the one a user most likely wants to weigh on.
public enum DeviceRanking {
    /// Best first: only devices that can weigh; pressure pads, then tablets, then touchpads,
    /// then touchscreens, then others; ties broken by the finer pressure range (larger
    /// max-min), then by path in natural order (event2 before event10).
    /// - Parameter candidates: The devices found, in any order.
    /// - Returns: Those that can weigh, ranked. Candidates that tie on everything keep their
    ///   input order, so the result is deterministic.
    public static func ranked(_ candidates: [DeviceCandidate]) -> [DeviceCandidate] {
        struct Key {
            let index: Int
            let candidate: DeviceCandidate
            let kindOrder: Int
            /// The span of the axis the pipeline would read; Int64 because max - min of two
            /// Int32 values can overflow Int32.
            let pressureSpan: Int64
        }
        let keyed: [Key] = candidates.enumerated().compactMap { index, candidate in
            guard let source = try? PressureSource.select(for: candidate.description) else { return nil }
            let span = Int64(source.axis.maximum) - Int64(source.axis.minimum)
            return Key(index: index, candidate: candidate, kindOrder: candidate.description.kind.rankingOrder, pressureSpan: span)
        }
        return keyed.sorted { lhs, rhs in
            if lhs.kindOrder != rhs.kindOrder { return lhs.kindOrder < rhs.kindOrder }
            if lhs.pressureSpan != rhs.pressureSpan { return lhs.pressureSpan > rhs.pressureSpan }
            if lhs.candidate.path != rhs.candidate.path {
                return naturalOrderPrecedes(lhs.candidate.path, rhs.candidate.path)
            }
            return lhs.index < rhs.index
        }.map(\.candidate)
    }

    /// Compares strings the way people sort file names: runs of digits compare as numbers,
    /// so `event2` comes before `event10`.
    /// - Parameters:
    ///   - lhs: The first string.
    ///   - rhs: The second string.
    /// - Returns: Whether `lhs` sorts before `rhs`. Strings that differ only in leading
    ///   zeros (`event02`, `event2`) fall back to plain ordering, so the order stays total.
    static func naturalOrderPrecedes(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.unicodeScalars[...]
        var right = rhs.unicodeScalars[...]
        while let leftFirst = left.first, let rightFirst = right.first {
            if isDigit(leftFirst), isDigit(rightFirst) {
                let leftRun = takeDigits(&left)
                let rightRun = takeDigits(&right)
                // Compare as numbers without parsing, so arbitrarily long runs cannot overflow:
                // drop leading zeros, then the longer run is larger, then compare digit by digit.
                let leftNumber = leftRun.drop { $0 == "0" }
                let rightNumber = rightRun.drop { $0 == "0" }
                if leftNumber.count != rightNumber.count { return leftNumber.count < rightNumber.count }
                if !leftNumber.elementsEqual(rightNumber) { return leftNumber.lexicographicallyPrecedes(rightNumber) }
            } else {
                if leftFirst != rightFirst { return leftFirst < rightFirst }
                left.removeFirst()
                right.removeFirst()
            }
        }
        if left.isEmpty != right.isEmpty { return left.isEmpty }
        return lhs < rhs
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    private static func takeDigits(_ scalars: inout Substring.UnicodeScalarView) -> Substring.UnicodeScalarView {
        let run = scalars.prefix { isDigit($0) }
        scalars.removeFirst(run.count)
        return run
    }
}
