/// READING and PEAK lines of pipeline output, as text (gpsd's style: one JSON object per
/// line with a "class"). The lines are written by ``ReadingMessage`` and ``PeakMessage``,
/// which clients decode too; docs/protocol.md documents them and tests compare them byte
/// for byte.
public enum ProtocolMessage {
    /// Decimals of grams in readings and peaks: a touchpad resolves about 0.1 g at best.
    public static let gramDecimals = 1
    /// Decimals of force: enough for a 0–8191 pen axis.
    public static let forceDecimals = 4

    /// A reading's line.
    /// - Parameters:
    ///   - reading: The reading.
    ///   - device: The evdev node's name; left out when `nil` (replays).
    /// - Returns: The line of ``ReadingMessage``, newline included.
    public static func reading(_ reading: Reading, device: String? = nil) -> String {
        ReadingMessage(reading, device: device).line
    }

    /// A peak's line.
    /// - Parameters:
    ///   - peak: The peak.
    ///   - device: The evdev node's name; left out when `nil` (replays).
    /// - Returns: The line of ``PeakMessage``, newline included.
    public static func peak(_ peak: Peak, device: String? = nil) -> String {
        PeakMessage(peak, device: device).line
    }

    /// A pipeline output as its protocol line.
    /// - Parameters:
    ///   - output: A reading or a peak.
    ///   - device: The evdev node's name; left out when `nil` (replays).
    /// - Returns: Its READING or PEAK line, newline included.
    public static func line(for output: ScaleOutput, device: String? = nil) -> String {
        json(for: output, device: device).line
    }

    /// A pipeline output's line, newline included, appended to `bytes` as UTF-8: for output
    /// that is bytes anyway (``OutputChannel``), with no `String` made of each line.
    public static func appendLine(for output: ScaleOutput, device: String? = nil, to bytes: inout [UInt8]) {
        json(for: output, device: device).appendLine(to: &bytes)
    }

    /// A pipeline output's line, newline included, as UTF-8 in an array of its own: for a
    /// line that goes to clients' sockets (the daemon's), with no `String` made of it.
    public static func lineBytes(for output: ScaleOutput, device: String? = nil) -> [UInt8] {
        json(for: output, device: device).lineBytes()
    }

    private static func json(for output: ScaleOutput, device: String?) -> JSONLineWriter {
        switch output {
        case .reading(let value): ReadingMessage(value, device: device).json
        case .peak(let value): PeakMessage(value, device: device).json
        }
    }
}
