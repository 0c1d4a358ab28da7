import ScaleCore

/// A name the protocol carries for one of a fixed set of things this build knows (a gram
/// model, a device kind), or the name of one a later daemon added, kept exactly as sent.
///
/// A client must not drop a line because it does not know a name in it: a reading's grams
/// are the daemon's, whatever model produced them, and a device of a new kind is still a
/// device. So the name is the value, and ``kind`` says whether this build knows it.
public struct ProtocolName<Known: RawRepresentable & Sendable>: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral where Known.RawValue == String {
    /// The name as it appears on the wire: `calibrated`, `future-model`, `touchpad`.
    public var rawValue: String

    /// A name, known or not.
    /// - Parameter rawValue: The name as the line carries it.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A name, known or not.
    /// - Parameter value: The name as the line carries it.
    public init(stringLiteral value: String) { rawValue = value }

    /// The name of something this build knows.
    /// - Parameter known: The model, kind, ….
    public init(_ known: Known) { rawValue = known.rawValue }

    /// What the name stands for, when this build knows it; `nil` for one a later daemon added.
    public var kind: Known? { Known(rawValue: rawValue) }

    public var description: String { rawValue }
}

/// A gram model as the protocol names it (READING's and STATUS's `model`).
public typealias GramModelName = ProtocolName<GramModelKind>

/// A device kind as DEVICES names it.
public typealias DeviceKindName = ProtocolName<DeviceKind>

extension ProtocolName where Known == GramModelKind {
    public static var calibrated: GramModelName { GramModelName(.calibrated) }
    public static var physical: GramModelName { GramModelName(.physical) }
    public static var nominal: GramModelName { GramModelName(.nominal) }
}
