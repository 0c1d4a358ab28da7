/// Points of a calibration that contradict the others, found before they are fitted or
/// saved, with a sentence for a person that names them by their weight.
///
/// Two kinds: points out of order (a heavier weight that pressed less than a lighter one:
/// `200` typed for `20`, or a weight put on the wrong place), which no rising curve can
/// pass through; and points off the curve that the others agree on (``CalibrationFit``'s
/// `expected`), found by leave-one-out.
public enum CalibrationReview {
    /// A point named as wrong, and why.
    public struct Finding: Hashable, Sendable {
        /// The index of the point in the list reviewed.
        public var index: Int
        /// The point.
        public var point: CalibrationPoint
        /// One or two sentences naming the point and what to do.
        public var message: String
    }

    /// The point that most pairs put out of order, if any pair is: the one whose removal
    /// leaves the most of the others rising.
    /// - Parameter points: The points as taken, in any order.
    /// - Returns: The finding, or `nil` when every heavier weight pressed harder.
    public static func outOfOrder(_ points: [CalibrationPoint]) -> Finding? {
        var conflicts = [Int](repeating: 0, count: points.count)
        var partners = [[Int]](repeating: [], count: points.count)
        for first in points.indices {
            for second in points.indices where second > first {
                let (a, b) = (points[first], points[second])
                // Rising means: more raw, more grams; equal in either is out of order too.
                let consistent = (a.raw < b.raw && a.grams < b.grams) || (a.raw > b.raw && a.grams > b.grams)
                guard !consistent else { continue }
                conflicts[first] += 1
                conflicts[second] += 1
                partners[first].append(second)
                partners[second].append(first)
            }
        }
        guard let worst = conflicts.indices.max(by: { conflicts[$0] < conflicts[$1] || (conflicts[$0] == conflicts[$1] && $0 > $1) }),
              conflicts[worst] > 0
        else { return nil }
        let point = points[worst]
        let others = partners[worst].sorted { points[$0].grams < points[$1].grams }.map { grams(points[$0].grams) }
        let lighterPressedHarder = partners[worst].contains { points[$0].grams < point.grams }
        let relation = lighterPressedHarder ? "pressed less than" : "pressed harder than"
        let message = "The \(grams(point.grams)) point (raw \(rounded(point.raw))) \(relation) \(list(others)): "
            + "was the weight really \(grams(point.grams)), and alone on the pad? Take it again or leave it out."
        return Finding(index: worst, point: point, message: message)
    }

    /// The points that a fit finds off the curve the others agree on.
    /// - Parameter fit: A fit of the points.
    /// - Returns: One finding per point the fit names, in the fit's order.
    public static func offCurve(_ fit: CalibrationFit) -> [Finding] {
        fit.points.indices.compactMap { index in
            let entry = fit.points[index]
            guard let expected = entry.expected else { return nil }
            return offCurve(point: entry.point, expected: expected, index: index)
        }
    }

    /// The finding for one point that the others put elsewhere.
    /// - Parameters:
    ///   - point: The point.
    ///   - expected: What the others say it weighs.
    ///   - index: Its index in the list reviewed.
    /// - Returns: The finding, with a sentence that names the point.
    public static func offCurve(point: CalibrationPoint, expected: Double, index: Int) -> Finding {
        let message = "The \(grams(point.grams)) point disagrees with the others: they put it at \(grams(expected)). "
            + "Was the weight really \(grams(point.grams)), and alone on the pad? Take it again or leave it out."
        return Finding(index: index, point: point, message: message)
    }

    private static func grams(_ value: Double) -> String {
        MassUnit.sentence(grams: value)
    }

    /// A number with at most one decimal, none when whole: `20`, `5.7`, `152.4`.
    private static func rounded(_ value: Double) -> String {
        let tenths = (value * 10).rounded()
        return tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int(tenths / 10)) : String(tenths / 10)
    }

    private static func list(_ items: [String]) -> String {
        switch items.count {
        case 0: return ""
        case 1: return items[0]
        default: return items.dropLast().joined(separator: ", ") + " and " + items.last!
        }
    }
}

/// Why a weight is not yet steady, for a person watching a calibration: the readings of
/// the last stability window, their spread, and how much of the window has held still. It
/// mirrors the daemon's rule for a calibration point (``SensorSteadiness`` on raw pressure,
/// whatever grams the curve gives) from the READING lines a client sees, so that it can say
/// "still moving by 3.1 g" while the daemon waits.
public struct SettlingMonitor: Sendable {
    /// What the monitor sees.
    public enum State: Hashable, Sendable {
        /// No contact: nothing on the pad.
        case empty
        /// The readings within the window spread more than the sensor's noise, by this many
        /// grams in all.
        case moving(spread: Double)
        /// The daemon sees the weight moving steadily, this many grams a second (READING's
        /// `drift`): no point is taken until it stops.
        case drifting(gramsPerSecond: Double)
        /// Within the noise; `progress` is the part of the window held so far, 0…1.
        case settling(progress: Double)
        /// Steady for a whole window: the daemon takes the point.
        case steady
    }

    /// The window in microseconds.
    public let window: Int64
    private var samples: [(time: Int64, raw: Int32, grams: Double)] = []
    private var calmSince: Int64?

    /// A monitor.
    /// - Parameter window: The stability window in microseconds (500 ms by default, the daemon's).
    public init(window: Int64 = ScaleSettings().stabilityWindow) {
        self.window = window
    }

    /// Takes one reading.
    /// - Parameters:
    ///   - time: Its event time in microseconds.
    ///   - raw: Its raw pressure.
    ///   - grams: Its grams, for the spread shown.
    ///   - contacts: Its contacts; 0 is a release.
    ///   - drift: Its drift in grams a second, when the daemon sent one: the trend half of
    ///     the rule, which a client cannot judge from the readings it is sent.
    /// - Returns: The state after it.
    public mutating func add(time: Int64, raw: Int32, grams: Double, contacts: Int, drift: Double? = nil) -> State {
        guard contacts > 0 else {
            samples.removeAll()
            calmSince = nil
            return .empty
        }
        samples.append((time, raw, grams))
        samples.removeAll { $0.time < time - window }
        if let drift {
            calmSince = nil
            return .drifting(gramsPerSecond: drift)
        }
        let raws = samples.map(\.raw)
        let span = Double(Int64(raws.max()!) - Int64(raws.min()!))
        guard span <= SensorSteadiness.allowedSpan(readings: raws, fuzz: 0) else {
            calmSince = nil
            let grams = samples.map(\.grams)
            return .moving(spread: grams.max()! - grams.min()!)
        }
        let since = calmSince ?? samples.first?.time ?? time
        calmSince = since
        let progress = Swift.min(1, Double(time - since) / Double(window))
        return progress >= 1 ? .steady : .settling(progress: progress)
    }
}
