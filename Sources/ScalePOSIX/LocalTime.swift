import Glibc
import ScaleCore

/// The wall clock and the local time zone (`TZ`, else /etc/localtime), for showing logged
/// times to people and reading the times they type.
public enum LocalTime {
    /// The current Unix time (`CLOCK_REALTIME`) in microseconds.
    public static func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1_000)
    }

    /// A time as local date and time to the second: `2026-11-30 10:15:03`, with the zone's
    /// offset after it when `offset` is set: `2026-11-30 10:15:03 +0100`.
    public static func text(_ time: WallTime, offset: Bool = false) -> String {
        // Floor division, so that 0.5 s before the epoch is 23:59:59, not 00:00:00.
        var seconds = time_t(time.microseconds >= 0 ? time.microseconds / 1_000_000 : (time.microseconds - 999_999) / 1_000_000)
        var parts = tm()
        guard localtime_r(&seconds, &parts) != nil else { return time.description }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, offset ? "%Y-%m-%d %H:%M:%S %z" : "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The Unix time of a local date and time, as `mktime` finds it (daylight saving time
    /// decided by the zone's rules for that date).
    /// - Parameters: The date (month and day from 1) and the time of day.
    /// - Returns: The time, or `nil` when the C library cannot represent it.
    public static func wallTime(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, microsecond: Int = 0) -> WallTime? {
        guard let year32 = Int32(exactly: year - 1900) else { return nil }
        var parts = tm()
        parts.tm_year = year32
        parts.tm_mon = Int32(clamping: month - 1)
        parts.tm_mday = Int32(clamping: day)
        parts.tm_hour = Int32(clamping: hour)
        parts.tm_min = Int32(clamping: minute)
        parts.tm_sec = Int32(clamping: second)
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        // -1 is also one second before the epoch in UTC: only an error when that is not what was asked.
        if seconds == -1, !(year == 1969 && month == 12 && day == 31) { return nil }
        return WallTime(microseconds: Int64(seconds) * 1_000_000 + Int64(microsecond))
    }
}
