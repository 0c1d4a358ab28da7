import Glibc

/// The wall-clock time as text for people and file headers.
public enum WallClockText {
    /// Now, in local time with its UTC offset: `2026-11-30T10:41:07+0000`.
    public static func now() -> String {
        var seconds = time(nil)
        var parts = tm()
        localtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
