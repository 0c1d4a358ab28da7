import ScaleCore
import ScaleProtocol

/// A line of the stream that WATCH starts: the bytes the daemon sent, and the message
/// ScaleProtocol decodes from them (the same types the daemon writes the lines from).
///
/// A client that passes the stream on (forcescale-web's `/events`, `forcescale watch
/// --json`) passes ``line`` on: fields that a later daemon added and this build does not
/// decode are in it, byte for byte.
public struct StreamEvent: Hashable, Sendable {
    /// What the line says.
    public enum Message: Hashable, Sendable {
        /// A READING: the measurement and the device it came from (`device`).
        case reading(ReadingMessage)
        /// A PEAK: the frame that reached the peak threshold.
        case peak(PeakMessage)
    }

    /// The line decoded.
    public let message: Message
    /// The line as the daemon sent it, without its newline.
    public let line: [UInt8]

    /// The device the line names: its node (`event5`), or a recording's file name.
    public var device: String? {
        switch message {
        case .reading(let reading): reading.device
        case .peak(let peak): peak.device
        }
    }

    /// The event a received line holds; `nil` for a line that is not of the stream.
    /// - Parameter received: A line from the daemon.
    public init?(_ received: ReceivedLine) {
        switch received.message {
        case .reading(let reading): message = .reading(reading)
        case .peak(let peak): message = .peak(peak)
        default: return nil
        }
        line = received.bytes
    }
}
