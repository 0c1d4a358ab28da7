import Glibc

// What the host benchmarks (forcescale-bench, forcescale-log-bench) share: a clock, a way
// to give up, and numbers formatted for their result lines.

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
