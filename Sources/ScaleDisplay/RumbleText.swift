import Glibc  // strerror only
import ScaleCore
import ScaleProtocol

/// Rumbles and their latencies in words, for `forcescale status`, `log sessions` and
/// `rumble --test`.
package enum RumbleText {
    /// A latency in milliseconds with two decimals (10 µs): `0.41 ms`.
    package static func latency(seconds: Double) -> String {
        fixed(seconds * 1000, decimals: 2) + " ms"
    }

    /// A latency in microseconds, as ``latency(seconds:)`` writes it.
    package static func latency(microseconds: Int64) -> String {
        latency(seconds: Double(microseconds) / 1e6)
    }

    /// An errno as the C library says it, with its number: `input/output error (errno 5)`.
    package static func errno(_ value: Int32) -> String {
        String(cString: strerror(value)).lowercased() + " (errno \(value))"
    }

    /// One PEAK's rumble: `played in 0.41 ms`, `failed: input/output error (errno 5)`,
    /// `no rumble device`, `rumble off`.
    package static func describe(_ outcome: RumbleOutcome) -> String {
        switch outcome {
        case .played(let latency): "played in " + self.latency(microseconds: latency)
        case .failed(let errno): "failed: " + self.errno(errno)
        case .unavailable: "no rumble device"
        case .off: "rumble off"
        }
    }

    /// `12 played, 1 failed; latency p50 0.41 ms, p99 0.93 ms, max 1.20 ms`.
    package static func summary(_ rumbles: StatusMessage.RumbleSummary) -> String {
        var text = "\(rumbles.played) played, \(rumbles.failed) failed"
        if let p50 = rumbles.p50, let p99 = rumbles.p99, let max = rumbles.max {
            text += "; latency p50 \(latency(seconds: p50)), p99 \(latency(seconds: p99)), max \(latency(seconds: max))"
        }
        return text
    }

    /// What became of the rumbles of one session's PEAKs: `played in 0.41 ms` for one,
    /// `3 played (max 0.52 ms), 1 failed` for several, `-` for none tried.
    package static func sessionSummary(_ outcomes: [RumbleOutcome]) -> String {
        guard !outcomes.isEmpty else { return "-" }
        if outcomes.count == 1 { return describe(outcomes[0]) }
        var parts: [String] = []
        let latencies = outcomes.compactMap(\.latencyMicroseconds)
        if let longest = latencies.max() { parts.append("\(latencies.count) played (max \(latency(microseconds: longest)))") }
        for name in ["failed", "unavailable", "off"] {
            let count = outcomes.filter { $0.name == name }.count
            if count > 0 { parts.append("\(count) \(name)") }
        }
        return parts.joined(separator: ", ")
    }
}
