/// Decides whether a weight has settled: the touch has lasted the whole window and the
/// grams seen within the window spread no more than the allowed span.
///
/// Keeps the running minimum and maximum of the window in two monotonic queues, so each
/// frame costs O(1) amortised however fast the device reports.
public struct StabilityDetector: Sendable {
    public let window: Int64
    public let maximumSpan: Double
    private var touchStart: EventTime?
    private var minimums = SampleQueue()
    private var maximums = SampleQueue()

    public init(window: Int64, maximumSpan: Double) {
        self.window = window
        self.maximumSpan = maximumSpan
    }

    /// Forgets the touch; the next `update` starts a new one.
    public mutating func reset() {
        touchStart = nil
        minimums.removeAll()
        maximums.removeAll()
    }

    /// Adds a frame of the current touch.
    /// - Returns: Whether the reading at `time` is stable.
    public mutating func update(time: EventTime, grams: Double) -> Bool {
        if touchStart == nil { touchStart = time }
        let windowStart = time.microseconds - window
        minimums.pushKeepingMonotonic(time: time.microseconds, grams: grams) { $0 >= grams }
        maximums.pushKeepingMonotonic(time: time.microseconds, grams: grams) { $0 <= grams }
        minimums.dropOlder(than: windowStart)
        maximums.dropOlder(than: windowStart)
        guard let start = touchStart, time.microseconds - start.microseconds >= window,
              let low = minimums.first, let high = maximums.first
        else { return false }
        return high - low <= maximumSpan
    }
}

/// A queue of (time, grams) that only grows at the back and shrinks at either end, stored
/// in an array with a moving head so that pushes and pops do not shift elements.
struct SampleQueue: Sendable {
    private var times: [Int64] = []
    private var grams: [Double] = []
    private var head = 0

    var first: Double? { head < grams.count ? grams[head] : nil }

    mutating func removeAll() {
        times.removeAll(keepingCapacity: true)
        grams.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Drops from the back every sample that `dominated` says the new one makes irrelevant,
    /// then appends the new one.
    mutating func pushKeepingMonotonic(time: Int64, grams value: Double, dominated: (Double) -> Bool) {
        while grams.count > head, dominated(grams[grams.count - 1]) {
            times.removeLast()
            grams.removeLast()
        }
        times.append(time)
        grams.append(value)
    }

    mutating func dropOlder(than start: Int64) {
        while head < times.count, times[head] < start { head += 1 }
        // Reclaim the consumed prefix once it dominates the storage.
        if head > 64, head * 2 > times.count {
            times.removeFirst(head)
            grams.removeFirst(head)
            head = 0
        }
    }
}
