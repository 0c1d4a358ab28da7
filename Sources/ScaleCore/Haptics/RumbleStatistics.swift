import Glibc  // log, pow only: ScaleCore does no I/O and reads no clock.

/// The rumbles of PEAKs since a start: how many played and failed, and their latencies'
/// median, 99th percentile and maximum.
///
/// The latencies go into a histogram of buckets 1 % wide (from 1 µs up; the last bucket
/// takes everything past about 7 minutes), so memory stays fixed however long the daemon
/// runs, and a quantile is the upper bound of its bucket: at most 1 % above the exact
/// value, and never above the maximum, which is kept exactly.
public struct RumbleStatistics: Hashable, Sendable {
    public private(set) var played = 0
    public private(set) var failed = 0
    /// PEAKs whose rumble could not be tried: no device could rumble, or rumble was off.
    public private(set) var notPlayed = 0
    /// The longest latency, in microseconds; `nil` before the first rumble played.
    public private(set) var maximumMicroseconds: Int64?
    private var counts: [UInt32] = []

    /// Each bucket's upper bound is this much times the one before.
    static let bucketRatio = 1.01
    static let bucketCount = 2000

    public init() {}

    /// Counts one PEAK's rumble.
    public mutating func record(_ outcome: RumbleOutcome) {
        switch outcome {
        case .played(let latency):
            played += 1
            maximumMicroseconds = max(maximumMicroseconds ?? latency, latency)
            if counts.isEmpty { counts = Array(repeating: 0, count: Self.bucketCount) }
            counts[Self.bucket(of: latency)] &+= 1
        case .failed: failed += 1
        case .unavailable, .off: notPlayed += 1
        }
    }

    /// The latency that `fraction` of the played rumbles did not exceed, in microseconds.
    /// - Parameter fraction: 0.5 for the median, 0.99 for the 99th percentile.
    /// - Returns: `nil` before the first rumble played.
    public func quantileMicroseconds(_ fraction: Double) -> Int64? {
        guard let maximumMicroseconds, played > 0 else { return nil }
        let rank = Quantile.rank(fraction, of: played)
        var seen = 0
        for (index, count) in counts.enumerated() where count > 0 {
            seen += Int(count)
            if seen >= rank { return min(maximumMicroseconds, Self.upperBound(of: index)) }
        }
        return maximumMicroseconds
    }

    static func bucket(of microseconds: Int64) -> Int {
        guard microseconds > 1 else { return 0 }
        let index = (log(Double(microseconds)) / log(bucketRatio)).rounded(.up)
        return min(bucketCount - 1, Int(index))
    }

    static func upperBound(of bucket: Int) -> Int64 {
        Int64(pow(bucketRatio, Double(bucket)).rounded(.up))
    }
}

/// Quantiles by the nearest-rank method: the value at rank ⌈fraction × count⌉ of the sorted
/// values, so the 99th percentile of 1000 plays is the 990th smallest.
public enum Quantile {
    /// The 1-based rank of the `fraction` quantile among `count` values.
    public static func rank(_ fraction: Double, of count: Int) -> Int {
        min(count, max(1, Int((fraction * Double(count)).rounded(.up))))
    }

    /// The `fraction` quantile of values already sorted ascending; `nil` when there are none.
    public static func of<Value>(_ fraction: Double, sorted values: [Value]) -> Value? {
        values.isEmpty ? nil : values[rank(fraction, of: values.count) - 1]
    }
}
