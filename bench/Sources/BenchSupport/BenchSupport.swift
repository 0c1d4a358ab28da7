import Glibc
import ScaleCore

// What the host benchmarks share: a clock, a way to give up, numbers formatted for their
// result lines, and seeded Gaussian noise.

/// CLOCK_MONOTONIC in nanoseconds.
public func nanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// Prints `PROGRAM: message` on standard error and exits 2 (the bench scripts' "could not
/// run at all").
public func fail(_ message: String) -> Never {
    let program = CommandLine.arguments.first.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? "bench"
    var line = "\(program): \(message)\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

/// `value` with `decimals` digits after the point, as printf's `%.Nf` writes it.
public func format(_ value: Double, _ decimals: Int) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.\(decimals)f", $0) }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// ScaleCore's SplitMix64 with its Gaussian draws taken one at a time: the same seed, the same study.
public struct Noise {
    private var generator: SplitMix64
    private var spare: Double?

    public init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    public mutating func unit() -> Double { generator.nextUnit() }

    public mutating func gaussian() -> Double {
        if let spare {
            self.spare = nil
            return spare
        }
        let (first, second) = generator.nextGaussianPair()
        spare = second
        return first
    }
}
