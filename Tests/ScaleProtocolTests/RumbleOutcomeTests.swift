import Testing
import ScaleCore
import ScaleProtocol

@Suite struct RumbleOutcomeTests {
    private static let time = EventTime(seconds: 1_364_787_582, microseconds: 957_445)

    @Test func aPeakLineCarriesItsRumbleAndDecodesToTheSame() throws {
        let cases: [(RumbleOutcome?, String)] = [
            (.played(latencyMicroseconds: 412), #","rumble":"played","rumble_latency":0.000412}"#),
            (.played(latencyMicroseconds: 1_250_003), #","rumble":"played","rumble_latency":1.250003}"#),
            (.failed(errno: 5), #","rumble":"failed","rumble_errno":5}"#),
            (.unavailable, #","rumble":"unavailable"}"#),
            (.off, #","rumble":"off"}"#),
            (nil, "}"),
        ]
        for (outcome, ending) in cases {
            let peak = Peak(time: Self.time, raw: 255, force: 1, grams: 385, rumble: outcome)
            let line = PeakMessage(peak, device: "event5").line
            #expect(line == #"{"class":"PEAK","device":"event5","time":1364787582.957445,"raw":255,"grams":385.0"# + ending + "\n")
            let decoded = try #require(PeakMessage(try DaemonLine.decode(line: line)))
            #expect(decoded == PeakMessage(peak, device: "event5"))
            #expect(decoded.rumbleOutcome == outcome)
        }
    }

    @Test func aRumbleThisBuildDoesNotKnowIsKeptByName() throws {
        let line = #"{"class":"PEAK","time":1.000000,"raw":255,"grams":385.0,"rumble":"queued","rumble_latency":0.5}"#
        let decoded = try #require(PeakMessage(try DaemonLine.decode(line: line)))
        #expect(decoded.rumble == "queued")
        #expect(decoded.rumbleOutcome == nil)
        #expect(decoded.line == line + "\n")
    }

    @Test func statisticsCountOutcomesAndGiveQuantilesWithinOnePercent() {
        var statistics = RumbleStatistics()
        #expect(StatusMessage.RumbleSummary(statistics) == nil)
        // 1000 latencies of a busy machine: 300–700 µs, a tail of ten slow ones.
        var generator = SplitMix64(seed: 29)
        var latencies: [Int64] = (0..<990).map { _ in 300 + Int64(generator.next() % 400) }
        latencies += (0..<10).map { 5_000 + Int64($0) * 1_000 }
        for latency in latencies { statistics.record(.played(latencyMicroseconds: latency)) }
        statistics.record(.failed(errno: 19))
        statistics.record(.unavailable)
        statistics.record(.off)
        #expect(statistics.played == 1000 && statistics.failed == 1 && statistics.notPlayed == 2)
        let sorted = latencies.sorted()
        for fraction in [0.5, 0.99] {
            let exact = Double(Quantile.of(fraction, sorted: sorted)!)
            let reported = Double(statistics.quantileMicroseconds(fraction)!)
            #expect(reported >= exact && reported <= exact * 1.01 + 1, "quantile \(fraction): \(reported) for \(exact)")
        }
        #expect(statistics.maximumMicroseconds == 14_000)
        #expect(statistics.quantileMicroseconds(1) == 14_000)
        let summary = StatusMessage.RumbleSummary(statistics)
        #expect(summary?.played == 1000 && summary?.failed == 1 && summary?.max == 0.014)
    }

    @Test func statusCarriesTheRumblesOnceThereAreAny() throws {
        var statistics = RumbleStatistics()
        let quiet = StatusMessage(release: "0.1.0", uptimeSeconds: 1, clients: 1, rumbles: statistics)
        #expect(!quiet.line.contains("rumbles"))
        statistics.record(.played(latencyMicroseconds: 250))
        statistics.record(.failed(errno: 5))
        let status = StatusMessage(release: "0.1.0", uptimeSeconds: 1, clients: 1, rumbles: statistics)
        #expect(status.line.hasSuffix(#","rumbles":{"played":1,"failed":1,"p50":0.00025,"p99":0.00025,"max":0.00025}}"# + "\n"))
        #expect(StatusMessage(try DaemonLine.decode(line: status.line)) == status)
    }

    @Test func quantilesTakeTheNearestRank() {
        #expect(Quantile.rank(0.99, of: 1000) == 990)
        #expect(Quantile.rank(0.5, of: 3) == 2)
        #expect(Quantile.rank(0.01, of: 3) == 1)
        #expect(Quantile.of(0.5, sorted: [Int]()) == nil)
    }
}
