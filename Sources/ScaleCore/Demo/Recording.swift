/// A whole recording held in memory: a device and its events, as the built-in demo makes
/// it and small files and tests hold it. Reading and writing the files' formats is
/// ScaleRecording's (`EvemuReader`, `EvemuWriter`, the libinput record reader and writer).
public struct Recording: Hashable, Sendable {
    public var device: DeviceDescription
    public var events: [InputEvent]
    /// Lines written as `#` comments at the top when the recording is saved.
    public var comments: [String]

    public init(device: DeviceDescription, events: [InputEvent], comments: [String] = []) {
        self.device = device
        self.events = events
        self.comments = comments
    }
}
