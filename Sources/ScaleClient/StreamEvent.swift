import ScaleCore
import ScaleProtocol

/// A line of the stream that WATCH starts, as ScaleCore decodes it: the same types the
/// daemon writes the lines from, so that the two sides have one definition of each field.
public enum StreamEvent: Hashable, Sendable {
    /// A READING: the measurement and the node it came from (`device`; `nil` for replays).
    case reading(ReadingMessage)
    /// A PEAK: the frame that reached the peak threshold.
    case peak(PeakMessage)

    /// The event a decoded line holds; `nil` for a line that is not of the stream.
    /// - Parameter line: A line from the daemon, decoded.
    public init?(_ line: DaemonLine) {
        switch line {
        case .reading(let reading): self = .reading(reading)
        case .peak(let peak): self = .peak(peak)
        default: return nil
        }
    }
}
