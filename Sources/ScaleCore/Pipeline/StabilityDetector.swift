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
/// in an array with a moving head so that pushes and pops do not shift elements. One array
/// of pairs rather than one per field: each change to an array checks that it is the only
/// owner, and this runs for every frame.
struct SampleQueue: Sendable {
    private struct Sample: Sendable {
        var time: Int64
        var grams: Double
    }

    private var samples: [Sample] = []
    private var head = 0

    var first: Double? { head < samples.count ? samples[head].grams : nil }

    mutating func removeAll() {
        samples.removeAll(keepingCapacity: true)
        head = 0
    }

    /// Drops from the back every sample that `dominated` says the new one makes irrelevant,
    /// then appends the new one.
    mutating func pushKeepingMonotonic(time: Int64, grams value: Double, dominated: (Double) -> Bool) {
        while samples.count > head, dominated(samples[samples.count - 1].grams) {
            samples.removeLast()
        }
        samples.append(Sample(time: time, grams: value))
    }

    mutating func dropOlder(than start: Int64) {
        while head < samples.count, samples[head].time < start { head += 1 }
        // Reclaim the consumed prefix once it dominates the storage.
        if head > 64, head * 2 > samples.count {
            samples.removeFirst(head)
            head = 0
        }
    }
}
