/// The raw readings of the current touch within the last stability window, so that a
/// calibration point is the mean of the window that was judged stable, with its spread,
/// rather than whichever single reading happened to end it.
///
/// Readings arrive at most every throttle interval (10 ms), so a 500 ms window holds about
/// fifty: the statistics are computed over them when asked, in one pass, not kept running.
public struct StableWindow: Sendable {
    /// The window's length in microseconds of event time.
    public let window: Int64
    private var times: [Int64] = []
    private var raws: [Int32] = []
    private var head = 0

    /// An empty window.
    /// - Parameter window: Its length in microseconds, the stability detector's.
    public init(window: Int64) {
        self.window = window
    }

    /// The mean, spread and count of the readings in the window.
    public struct Statistics: Hashable, Sendable {
        /// The mean raw pressure.
        public var mean: Double
        /// The sample standard deviation (0 with a single reading).
        public var standardDeviation: Double
        /// How many readings were averaged.
        public var count: Int

        /// The statistics.
        /// - Parameters:
        ///   - mean: The mean raw pressure.
        ///   - standardDeviation: The readings' sample standard deviation.
        ///   - count: How many readings there were.
        public init(mean: Double, standardDeviation: Double, count: Int) {
            self.mean = mean
            self.standardDeviation = standardDeviation
            self.count = count
        }
    }

    /// Forgets every reading: the touch ended, or readings now come from another device.
    public mutating func reset() {
        times.removeAll(keepingCapacity: true)
        raws.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Adds a reading of the current touch, or forgets the touch on a release.
    /// - Parameter reading: A reading as the pipeline sent it.
    public mutating func add(_ reading: Reading) {
        guard reading.contacts > 0 else {
            reset()
            return
        }
        times.append(reading.time.microseconds)
        raws.append(reading.raw)
        let start = reading.time.microseconds - window
        while head < times.count, times[head] < start { head += 1 }
        // Reclaim the consumed prefix once it is most of the storage.
        if head > 64, head * 2 > times.count {
            times.removeFirst(head)
            raws.removeFirst(head)
            head = 0
        }
    }

    /// The statistics of the readings now in the window; `nil` when it is empty.
    public var statistics: Statistics? {
        let count = raws.count - head
        guard count > 0 else { return nil }
        var sum = 0.0
        for index in head..<raws.count { sum += Double(raws[index]) }
        let mean = sum / Double(count)
        var squares = 0.0
        for index in head..<raws.count {
            let deviation = Double(raws[index]) - mean
            squares += deviation * deviation
        }
        let deviation = count > 1 ? (squares / Double(count - 1)).squareRoot() : 0
        return Statistics(mean: mean, standardDeviation: deviation, count: count)
    }
}
