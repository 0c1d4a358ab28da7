/// The range of one absolute axis, as in `struct input_absinfo`.
public struct AxisRange: Hashable, Sendable {
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    /// Units per millimetre for position axes; for pressure axes the kernel documents units
    /// per gram. Zero when the driver does not say.
    public var resolution: Int32

    public init(minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0, resolution: Int32 = 0) {
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }
}

/// Bus, vendor, product and version, as in `struct input_id`.
public struct DeviceIdentity: Hashable, Sendable, CustomStringConvertible {
    public var bus: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16

    public init(bus: UInt16, vendor: UInt16, product: UInt16, version: UInt16) {
        self.bus = bus
        self.vendor = vendor
        self.product = product
        self.version = version
    }

    /// `bus:vendor:product` in hex, the way `lsusb` and udev print it.
    public var description: String {
        [bus, vendor, product].map { hex4($0) }.joined(separator: ":")
    }
}

package func hex4(_ value: UInt16) -> String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// A set of small non-negative integers (event codes, property bits) kept as a bitmask, the
/// way the kernel reports capabilities.
public struct BitSet: Hashable, Sendable {
    public private(set) var words: [UInt64] = []

    public init() {}

    public init<S: Sequence>(_ bits: S) where S.Element == Int {
        for bit in bits { insert(bit) }
    }

    public func contains(_ bit: Int) -> Bool {
        guard bit >= 0, bit / 64 < words.count else { return false }
        return words[bit / 64] & (1 << UInt64(bit % 64)) != 0
    }

    public mutating func insert(_ bit: Int) {
        precondition(bit >= 0, "bit numbers are non-negative")
        while words.count <= bit / 64 { words.append(0) }
        words[bit / 64] |= 1 << UInt64(bit % 64)
    }

    public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// The set bits in increasing order.
    public var members: [Int] {
        var result: [Int] = []
        for (index, word) in words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 { result.append(index * 64 + bit) }
        }
        return result
    }
}

/// What a device is: its name, identity, properties, the codes it can send and its axis
/// ranges. Built from an evemu description or read from a live device.
public struct DeviceDescription: Hashable, Sendable {
    public var name: String
    public var identity: DeviceIdentity
    public var properties: BitSet
    /// The codes each event type can send, keyed by type.
    public var supportedCodes: [EventType: BitSet]
    public var axes: [EventCode: AxisRange]

    public init(
        name: String,
        identity: DeviceIdentity = DeviceIdentity(bus: 0, vendor: 0, product: 0, version: 0),
        properties: BitSet = BitSet(),
        supportedCodes: [EventType: BitSet] = [:],
        axes: [EventCode: AxisRange] = [:]
    ) {
        self.name = name
        self.identity = identity
        self.properties = properties
        self.supportedCodes = supportedCodes
        self.axes = axes
    }

    public func supports(_ type: EventType, _ code: EventCode) -> Bool {
        if type == .absolute, axes[code] != nil { return true }
        return supportedCodes[type]?.contains(Int(code.rawValue)) ?? false
    }

    public func has(_ property: InputProperty) -> Bool {
        properties.contains(Int(property.rawValue))
    }
}
