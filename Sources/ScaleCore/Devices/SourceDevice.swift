/// The device a reading or PEAK came from: its event node (or, for a recording served as a
/// device, the recording's file) and what it declares. Sources hand it over with each output,
/// so whoever forwards the output names the device that produced it, not whichever device
/// happens to be open by the time the output is sent.
///
/// Its fields live in one shared, immutable box: the daemon copies the value, and compares it
/// with the last device, for every reading it sends, and a copy of the fields themselves
/// would retain and release each string and array of the description every time.
public struct SourceDevice: Hashable, Sendable {
    private final class Storage: Sendable {
        let path: String
        let nodeName: String
        let description: DeviceDescription

        init(path: String, nodeName: String, description: DeviceDescription) {
            self.path = path
            self.nodeName = nodeName
            self.description = description
        }
    }

    private var storage: Storage

    /// Creates the value for one device.
    /// - Parameters:
    ///   - path: The event node or recording file.
    ///   - description: What the device declares.
    public init(path: String, description: DeviceDescription) {
        self.init(path: path, name: SourceDevice.nodeName(of: path), description: description)
    }

    /// Creates the value for one device with a name of its own: a second recording whose
    /// file has the name of another (`pen.evemu#2`).
    /// - Parameters:
    ///   - path: The event node or recording file.
    ///   - name: The name the protocol uses for it.
    ///   - description: What the device declares.
    public init(path: String, name: String, description: DeviceDescription) {
        storage = Storage(path: path, nodeName: name, description: description)
    }

    /// `/dev/input/event5`, or the path of a recording.
    public var path: String {
        get { storage.path }
        set { storage = Storage(path: newValue, nodeName: SourceDevice.nodeName(of: newValue), description: storage.description) }
    }

    /// What the device declares: its name, identity and axes.
    public var description: DeviceDescription {
        get { storage.description }
        set { storage = Storage(path: storage.path, nodeName: storage.nodeName, description: newValue) }
    }

    /// The name the protocol uses for the device: `event5` for `/dev/input/event5`, the file
    /// name for a recording. READING's `device` and WATCH's device filter use it.
    /// Kept with `path` rather than worked out on each use: the daemon names the device in
    /// every READING line it sends.
    public var nodeName: String { storage.nodeName }

    /// The last component of `path`, or the whole path when it has none.
    /// - Parameter path: An event node or a file path.
    /// - Returns: `event5` for `/dev/input/event5`.
    public static func nodeName(of path: String) -> String {
        String(path.split(separator: "/").last ?? Substring(path))
    }

    /// Equal when path, name and description are; the same box is equal without looking further.
    public static func == (lhs: SourceDevice, rhs: SourceDevice) -> Bool {
        lhs.storage === rhs.storage || (lhs.path == rhs.path && lhs.nodeName == rhs.nodeName && lhs.description == rhs.description)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(description)
    }
}
