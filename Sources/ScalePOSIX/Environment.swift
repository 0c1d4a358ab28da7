import Glibc

/// What the environment says about how output should look.
public enum Environment {
    /// The working directory, for relative paths given on a command line ("." when it
    /// cannot be read).
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "." }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// `NO_COLOR` set to anything non-empty turns colour off (no-color.org).
    public static var prefersNoColor: Bool { !(value("NO_COLOR") ?? "").isEmpty }

    /// Whether the locale's character set is UTF-8, so block characters will show.
    public static var usesUTF8: Bool {
        let locale = value("LC_ALL").flatMap { $0.isEmpty ? nil : $0 }
            ?? value("LC_CTYPE").flatMap { $0.isEmpty ? nil : $0 }
            ?? value("LANG") ?? ""
        let lowered = locale.lowercased()
        return lowered.contains("utf-8") || lowered.contains("utf8")
    }
}
