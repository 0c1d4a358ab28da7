/// The device a reading or PEAK came from: its event node (or, for a recording served as a
/// device, the recording's file) and what it declares. Sources hand it over with each output,
/// so whoever forwards the output names the device that produced it, not whichever device
/// happens to be open by the time the output is sent.
public struct SourceDevice: Hashable, Sendable {
    /// `/dev/input/event5`, or the path of a recording.
    public var path: String {
        didSet { nodeName = Self.nodeName(of: path) }
    }
    /// What the device declares: its name, identity and axes.
    public var description: DeviceDescription

    /// Creates the value for one device.
    /// - Parameters:
    ///   - path: The event node or recording file.
    ///   - description: What the device declares.
    public init(path: String, description: DeviceDescription) {
        self.path = path
        self.description = description
        nodeName = Self.nodeName(of: path)
    }

    /// The name the protocol uses for the device: `event5` for `/dev/input/event5`, the file
    /// name for a recording. READING's `device` and WATCH's device filter use it.
    /// Kept with `path` rather than worked out on each use: the daemon names the device in
    /// every READING line it sends.
    public private(set) var nodeName: String

    /// The last component of `path`, or the whole path when it has none.
    /// - Parameter path: An event node or a file path.
    /// - Returns: `event5` for `/dev/input/event5`.
    public static func nodeName(of path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }
}
