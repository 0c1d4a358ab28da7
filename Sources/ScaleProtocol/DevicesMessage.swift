import ScaleCore

/// The reply to DEVICES: the input devices the daemon found, in the order it ranks them.
/// Each entry follows `forcescale devices --json`.
public struct DevicesMessage: DaemonLineMessage {
    public static let className = "DEVICES"

    /// A pressure axis as DEVICES lists it. The axis is kept by its kernel name, so an axis
    /// a later daemon reports is read as well.
    public struct PressureAxis: Hashable, Sendable {
        /// The kernel's name: `ABS_MT_PRESSURE`.
        public var axis: String
        public var min: Int
        public var max: Int
        public var fuzz: Int
        public var resolution: Int

        /// An axis, field by field.
        /// - Parameters:
        ///   - axis: The kernel's name of the axis.
        ///   - min: The axis minimum.
        ///   - max: The axis maximum.
        ///   - fuzz: The kernel's noise filter width.
        ///   - resolution: Units per gram for a pressure axis; 0 when not given.
        public init(axis: String, min: Int, max: Int, fuzz: Int, resolution: Int) {
            self.axis = axis
            self.min = min
            self.max = max
            self.fuzz = fuzz
            self.resolution = resolution
        }

        /// An axis of a device description.
        /// - Parameters:
        ///   - code: The `EV_ABS` code.
        ///   - range: Its absinfo.
        public init(code: EventCode, range: AxisRange) {
            self.init(
                axis: code.absoluteAxisName, min: Int(range.minimum), max: Int(range.maximum), fuzz: Int(range.fuzz),
                resolution: Int(range.resolution))
        }

        init(fields: MessageFields) throws(ProtocolDecodeError) {
            self.init(
                axis: try fields.string("axis"), min: try fields.integer("min"), max: try fields.integer("max"),
                fuzz: try fields.integer("fuzz"), resolution: try fields.integer("resolution"))
        }

        /// `{"axis":"ABS_MT_PRESSURE","min":…,"max":…,"fuzz":…,"resolution":…}`
        public var json: JSONLineWriter {
            var entry = JSONLineWriter()
            entry.add("axis", string: axis)
            entry.add("min", integer: min)
            entry.add("max", integer: max)
            entry.add("fuzz", integer: fuzz)
            entry.add("resolution", integer: resolution)
            return entry
        }
    }

    /// One entry of DEVICES.
    public struct Device: Hashable, Sendable {
        /// The event node, `/dev/input/event5`.
        public var path: String
        /// The device's name; `nil` when it could not be opened.
        public var name: String?
        /// `bus:vendor:product` in hex (`0005:004c:0265`).
        public var id: String?
        /// Its kind, kept by name.
        public var kind: DeviceKindName?
        /// Whether this is the device the daemon reads.
        public var active: Bool
        /// The pressure axes it declares, `ABS_MT_PRESSURE` first.
        public var pressure: [PressureAxis]?
        /// Whether it can be used as a scale.
        public var canWeigh: Bool?
        /// Whether it can play rumble effects; `nil` when unknown.
        public var canRumble: Bool?
        /// Why it could not be opened.
        public var error: String?

        /// An entry, field by field as its object holds them.
        /// - Parameters:
        ///   - path: The event node.
        ///   - name: The device's name.
        ///   - id: `bus:vendor:product` in hex.
        ///   - kind: Its kind.
        ///   - active: Whether the daemon reads it.
        ///   - pressure: Its pressure axes.
        ///   - canWeigh: Whether it can be used as a scale.
        ///   - canRumble: Whether it can rumble, when known.
        ///   - error: Why it could not be opened.
        public init(
            path: String, name: String? = nil, id: String? = nil, kind: DeviceKindName? = nil, active: Bool,
            pressure: [PressureAxis]? = nil, canWeigh: Bool? = nil, canRumble: Bool? = nil, error: String? = nil
        ) {
            self.path = path
            self.name = name
            self.id = id
            self.kind = kind
            self.active = active
            self.pressure = pressure
            self.canWeigh = canWeigh
            self.canRumble = canRumble
            self.error = error
        }

        /// The entry for a device that was opened.
        /// - Parameters:
        ///   - path: Its event node.
        ///   - description: What it declares.
        ///   - active: Whether the daemon reads it.
        ///   - canRumble: Whether it can play rumble effects, when known.
        public init(path: String, description: DeviceDescription, active: Bool, canRumble: Bool? = nil) {
            self.init(
                path: path, name: description.name, id: description.identity.description, kind: DeviceKindName(description.kind),
                active: active, pressure: description.pressureAxes.map { PressureAxis(code: $0.code, range: $0.range) },
                canWeigh: description.canWeigh, canRumble: canRumble)
        }

        /// The entry for a device that could not be opened.
        /// - Parameters:
        ///   - path: Its event node.
        ///   - error: Why it could not be opened.
        public init(path: String, error: String) {
            self.init(path: path, active: false, error: error)
        }

        init(fields: MessageFields) throws(ProtocolDecodeError) {
            var pressure: [PressureAxis]?
            if let axes = try fields.optionalObjects("pressure") {
                pressure = []
                for axis in axes { pressure!.append(try PressureAxis(fields: axis)) }
            }
            self.init(
                path: try fields.string("path"), name: try fields.optionalString("name"), id: try fields.optionalString("id"),
                kind: try fields.optionalString("kind").map(DeviceKindName.init(rawValue:)), active: try fields.bool("active"),
                pressure: pressure, canWeigh: try fields.optionalBool("canWeigh"), canRumble: try fields.optionalBool("canRumble"),
                error: try fields.optionalString("error"))
        }

        /// `{"path":…,"name":…,"id":…,"kind":…,"active":…,"pressure":[…],"canWeigh":…,"canRumble":…,"error":…}`
        public var json: JSONLineWriter {
            var json = JSONLineWriter()
            json.add("path", string: path)
            json.add("name", string: name)
            json.add("id", string: id)
            json.add("kind", string: kind?.rawValue)
            json.add("active", bool: active)
            json.add("pressure", objects: pressure?.map(\.json))
            json.add("canWeigh", bool: canWeigh)
            json.add("canRumble", bool: canRumble)
            json.add("error", string: error)
            return json
        }
    }

    /// One entry per device, possibly none.
    public var devices: [Device]

    /// The reply.
    /// - Parameter devices: The devices, best first.
    public init(devices: [Device]) {
        self.devices = devices
    }

    init(fields: MessageFields) throws(ProtocolDecodeError) {
        var devices: [Device] = []
        for device in try fields.objects("devices") { devices.append(try Device(fields: device)) }
        self.init(devices: devices)
    }

    /// `{"class":"DEVICES","devices":[{"path":…,…}]}`
    public var line: String {
        var json = JSONLineWriter()
        json.add("class", string: Self.className)
        json.add("devices", objects: devices.map(\.json))
        return json.line
    }

    public init?(_ line: DaemonLine) {
        guard case .devices(let message) = line else { return nil }
        self = message
    }
}
