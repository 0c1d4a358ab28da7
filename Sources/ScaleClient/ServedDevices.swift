import ScaleProtocol

extension StatusMessage {
    /// A device the daemon serves, as STATUS names it.
    public struct Served: Hashable, Sendable {
        /// Its name on the wire, as READING's `device` gives it (`event5`, `pen.evemu`).
        public var device: String
        /// The name the device gives itself, when STATUS says.
        public var name: String?
        /// The gram model of its readings (`calibrated`, `physical`, `nominal`).
        public var model: String?

        public init(device: String, name: String? = nil, model: String? = nil) {
            self.device = device
            self.name = name
            self.model = model
        }
    }

    /// Every device the daemon serves: STATUS's `devices` (protocol 1.5), or an older
    /// daemon's one `device`; empty when it serves none.
    public var servedDevices: [Served] {
        if let devices {
            return devices.map { Served(device: $0.device, name: $0.name, model: $0.model?.rawValue) }
        }
        return device.map { [Served(device: $0, name: nil, model: model?.rawValue)] } ?? []
    }
}
