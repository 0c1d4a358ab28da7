import ScaleCore

/// A point in time as a person types it for `--since`: an ISO 8601 date or date and time
/// (local time unless it ends in `Z` or an offset), Unix seconds, or a time ago (`30m`).
///
/// Parsing is pure; turning a local date into Unix time needs the time zone's rules and
/// "ago" needs the clock, so ``resolve(now:local:)`` takes both from the caller.
package enum TimeSpecification: Hashable, Sendable {
    /// A date and time in the local time zone (a date alone is its midnight).
    case local(LocalDateTime)
    /// An exact time: Unix seconds, or an ISO date-time with `Z` or an offset.
    case absolute(WallTime)
    /// So many microseconds before now.
    case ago(microseconds: Int64)

    /// A calendar date and a time of day, in no particular zone.
    package struct LocalDateTime: Hashable, Sendable {
        package var year: Int, month: Int, day: Int
        package var hour: Int, minute: Int, second: Int, microsecond: Int

        init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0, microsecond: Int = 0) {
            (self.year, self.month, self.day) = (year, month, day)
            (self.hour, self.minute, self.second, self.microsecond) = (hour, minute, second, microsecond)
        }
    }

    /// The forms accepted, for error messages and help.
    package static let examples = "a date (2026-11-30), a local date and time (2026-11-30T14:00 or \"2026-11-30 14:00:05\"), "
        + "one in UTC or with an offset (2026-11-30T13:00Z, 2026-11-30T14:00+01:00), Unix seconds (1764511200), "
        + "or a time ago (90s, 30m, 2h, 7d, 2w)"

    /// Reads what was typed.
    /// - Returns: The time, or `nil` when the text is none of the accepted forms (or names a
    ///   day that does not exist, such as 2026-02-30).
    package init?(_ text: String) {
        let text = text.trimmingSpaces
        guard !text.isEmpty else { return nil }
        if let ago = Self.ago(text) {
            self = .ago(microseconds: ago)
        } else if let unix = Self.unixSeconds(text) {
            self = .absolute(unix)
        } else if let iso = Self.iso8601(text) {
            self = iso
        } else {
            return nil
        }
    }

    /// The Unix time meant.
    /// - Parameters:
    ///   - now: The current time, for a time ago.
    ///   - local: Converts a local date and time to Unix time by the zone's rules.
    /// - Returns: The time, or `nil` when `local` cannot convert it.
    package func resolve(now: WallTime, local: (LocalDateTime) -> WallTime?) -> WallTime? {
        switch self {
        case .local(let dateTime): local(dateTime)
        case .absolute(let time): time
        case .ago(let microseconds): WallTime(microseconds: now.microseconds - microseconds)
        }
    }

    // MARK: - The forms

    /// `90s`, `30m`, `30min`, `2h`, `7d`, `2w`, with a whole or decimal number.
    private static func ago(_ text: String) -> Int64? {
        let units: [(suffix: String, seconds: Double)] = [
            ("min", 60), ("s", 1), ("m", 60), ("h", 3600), ("d", 86400), ("w", 604_800),
        ]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard let value = decimal(number), value >= 0 else { continue }
            let microseconds = value * unit.seconds * 1e6
            // Beyond ~290 000 years an Int64 of microseconds overflows.
            guard microseconds < 9e18 else { return nil }
            return Int64(microseconds.rounded())
        }
        return nil
    }

    /// `1764511200` or `1764511200.5`: digits only, at most six decimals.
    private static func unixSeconds(_ text: String) -> WallTime? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.count <= 12, whole.allSatisfy(\.isASCIIDigit), let seconds = Int64(whole) else { return nil }
        var micros: Int64 = 0
        if parts.count == 2 {
            guard let fraction = microseconds(parts[1]) else { return nil }
            micros = fraction
        }
        return WallTime(microseconds: seconds * 1_000_000 + micros)
    }

    /// `YYYY-MM-DD`, optionally `T` or a space and `HH:MM`, `HH:MM:SS` or `HH:MM:SS.ffffff`,
    /// optionally `Z`, `±HH:MM`, `±HHMM` or `±HH`.
    private static func iso8601(_ text: String) -> TimeSpecification? {
        let characters = Array(text)
        guard characters.count >= 10, characters[4] == "-", characters[7] == "-",
              let year = number(characters[0..<4]), let month = number(characters[5..<7]), let day = number(characters[8..<10]),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var dateTime = LocalDateTime(year: year, month: month, day: day)
        var rest = characters[10...]
        guard let separator = rest.first else { return .local(dateTime) }
        guard separator == "T" || separator == "t" || separator == " " else { return nil }
        rest = rest.dropFirst()
        // The time of day: HH:MM, then :SS, then .ffffff.
        guard rest.count >= 5, rest[rest.startIndex + 2] == ":",
              let hour = number(rest.prefix(2)), let minute = number(rest.dropFirst(3).prefix(2)),
              hour <= 23, minute <= 59
        else { return nil }
        (dateTime.hour, dateTime.minute) = (hour, minute)
        rest = rest.dropFirst(5)
        if rest.first == ":" {
            guard let second = number(rest.dropFirst().prefix(2)), rest.count >= 3, second <= 59 else { return nil }
            dateTime.second = second
            rest = rest.dropFirst(3)
            if rest.first == "." || rest.first == "," {
                let digits = rest.dropFirst().prefix { $0.isASCIIDigit }
                guard let fraction = microseconds(Substring(String(digits))) else { return nil }
                dateTime.microsecond = Int(fraction)
                rest = rest.dropFirst(1 + digits.count)
            }
        }
        guard let zone = rest.first else { return .local(dateTime) }
        // An explicit zone: the time is exact, worked out here without the zone database.
        var offsetMinutes = 0
        if zone == "Z" || zone == "z" {
            guard rest.count == 1 else { return nil }
        } else if zone == "+" || zone == "-" {
            let digits = Array(rest.dropFirst().filter { $0 != ":" })
            let colons = rest.dropFirst().filter { $0 == ":" }.count
            guard digits.count == 2 || digits.count == 4, colons <= 1, colons == 0 || rest.dropFirst().dropFirst(2).first == ":",
                  let hours = number(digits[0..<2]), hours <= 23
            else { return nil }
            let minutes = digits.count == 4 ? number(digits[2..<4]) : 0
            guard let minutes, minutes <= 59 else { return nil }
            offsetMinutes = (hours * 60 + minutes) * (zone == "-" ? -1 : 1)
        } else {
            return nil
        }
        let days = Int64(daysFromEpoch(year: year, month: month, day: day))
        let seconds = days * 86400 + Int64(dateTime.hour * 3600 + dateTime.minute * 60 + dateTime.second) - Int64(offsetMinutes * 60)
        return .absolute(WallTime(microseconds: seconds * 1_000_000 + Int64(dateTime.microsecond)))
    }

    // MARK: - Helpers

    private static func number(_ characters: some Collection<Character>) -> Int? {
        guard !characters.isEmpty, characters.allSatisfy(\.isASCIIDigit) else { return nil }
        return Int(String(characters))
    }

    /// A decimal number `12` or `1.5` (no sign, no exponent).
    private static func decimal(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCIIDigit || $0 == "." }), text.filter({ $0 == "." }).count <= 1,
              text.first != ".", text.last != "."
        else { return nil }
        return Double(text)
    }

    /// One to six digits after the point, as microseconds.
    private static func microseconds(_ digits: Substring) -> Int64? {
        guard (1...6).contains(digits.count), digits.allSatisfy(\.isASCIIDigit), let value = Int64(digits) else { return nil }
        var scaled = value
        for _ in digits.count..<6 { scaled *= 10 }
        return scaled
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar, counted year by
    /// year (the years typed here are four digits, so at most a few thousand steps).
    static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        func yearLength(_ year: Int) -> Int { daysIn(month: 2, year: year) == 29 ? 366 : 365 }
        var days = 0
        if year >= 1970 {
            for earlier in 1970..<year { days += yearLength(earlier) }
        } else {
            for later in year..<1970 { days -= yearLength(later) }
        }
        for earlierMonth in 1..<month { days += daysIn(month: earlierMonth, year: year) }
        return days + day - 1
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
