import ScaleCore
import Testing
@testable import ScaleDisplay

/// `--since` as people type it. The expected Unix times come from GNU date
/// (`date -u -d 2026-11-30T13:00:00Z +%s`), not from this code.
@Suite struct TimeSpecificationTests {
    static func seconds(_ value: Int64, micros: Int64 = 0) -> TimeSpecification {
        .absolute(WallTime(microseconds: value * 1_000_000 + micros))
    }

    @Test(arguments: [
        ("2026-11-30T13:00Z", seconds(1_796_043_600)),
        ("2026-11-30T13:00:00Z", seconds(1_796_043_600)),
        ("2026-11-30 13:00:00z", seconds(1_796_043_600)),
        ("2026-11-30T14:30+01:30", seconds(1_796_043_600)),
        ("2026-11-30T13:00:00+01:30", seconds(1_796_038_200)),
        ("2026-11-30T13:00:00+0130", seconds(1_796_038_200)),
        ("2026-11-30T12:00:00-01", seconds(1_796_043_600)),
        ("2000-02-29T00:00:00Z", seconds(951_782_400)),
        ("1900-03-01T00:00Z", seconds(-2_203_891_200)),
        ("2026-11-30T13:00:00.25Z", seconds(1_796_043_600, micros: 250_000)),
        ("1764511200", seconds(1_764_511_200)),
        ("1764511200.000001", seconds(1_764_511_200, micros: 1)),
        ("0", seconds(0)),
    ])
    func exactTimes(_ text: String, _ expected: TimeSpecification) {
        #expect(TimeSpecification(text) == expected)
    }

    @Test func datesWithoutAZoneAreLocal() {
        #expect(TimeSpecification("2026-11-30") == .local(.init(year: 2026, month: 11, day: 30)))
        #expect(TimeSpecification("2026-11-30T14:05") == .local(.init(year: 2026, month: 11, day: 30, hour: 14, minute: 5)))
        #expect(TimeSpecification(" 2026-11-30 14:05:09.5 ") == .local(.init(year: 2026, month: 11, day: 30, hour: 14, minute: 5, second: 9, microsecond: 500_000)))
    }

    @Test(arguments: [("90s", 90.0), ("30m", 1800), ("30min", 1800), ("2h", 7200), ("1.5h", 5400), ("7d", 604_800), ("2w", 1_209_600), ("0s", 0)])
    func timesAgo(_ text: String, _ seconds: Double) {
        #expect(TimeSpecification(text) == .ago(microseconds: Int64(seconds * 1e6)))
    }

    @Test func resolvingUsesTheCallersClockAndZone() {
        let now = WallTime(microseconds: 1_000_000_000_000)
        #expect(TimeSpecification("30m")?.resolve(now: now, local: { _ in nil }) == WallTime(microseconds: 1_000_000_000_000 - 1_800_000_000))
        let local = TimeSpecification("2026-11-30")?.resolve(now: now) { dateTime in
            dateTime == .init(year: 2026, month: 11, day: 30) ? WallTime(microseconds: 42) : nil
        }
        #expect(local == WallTime(microseconds: 42))
        #expect(TimeSpecification("1764511200")?.resolve(now: now, local: { _ in nil }) == WallTime(microseconds: 1_764_511_200_000_000))
    }

    @Test(arguments: [
        "", "yesterday", "2026-13-01", "2026-02-29", "2026-04-31", "2026-11-30T24:00", "2026-11-30T12:60",
        "2026-11-30T12:00:61", "2026-11-30T12", "2026-11-30X12:00", "2026-11-30T12:00+25:00", "2026-11-30T12:00Zjunk",
        "26-11-30", "2026/11/30", "-5m", "5 m", "m", "1.2.3h", "12.", "1764511200.1234567", "3x", "0x10", "1e9",
        "2026-11-30T12:00:00.", "2026-11-30T12:00+1:00",
    ])
    func malformedTextIsRefused(_ text: String) {
        #expect(TimeSpecification(text) == nil, "'\(text)' should not parse")
    }

    @Test func daysFromEpochAgreesAcrossCenturies() {
        #expect(TimeSpecification.daysFromEpoch(year: 1970, month: 1, day: 1) == 0)
        #expect(TimeSpecification.daysFromEpoch(year: 1969, month: 12, day: 31) == -1)
        #expect(TimeSpecification.daysFromEpoch(year: 2000, month: 3, day: 1) == 11_017)
        #expect(TimeSpecification.daysFromEpoch(year: 2100, month: 3, day: 1) == 47_541)
    }
}
