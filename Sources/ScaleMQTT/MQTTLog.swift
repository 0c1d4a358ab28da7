import ScaleCore

/// forcescale-mqtt's log: standard error with syslog priority prefixes, which journald files
/// by level, as forcescaled's. Its messages name devices as the daemon reports them (names
/// someone else chose), so each is written whole as ``UntrustedText/escaped(_:)`` writes it:
/// one record, one line, no control character.
package enum MQTTLog {
    /// `<6>message\n`: the line a record is written as, its message escaped.
    /// - Parameters:
    ///   - priority: The syslog priority, 3 (error) to 7 (debug).
    ///   - message: The message, raw.
    /// - Returns: The line, ending in a newline.
    package static func record(_ priority: Int, _ message: String) -> String {
        "<\(priority)>\(UntrustedText.escaped(message))\n"
    }
}
