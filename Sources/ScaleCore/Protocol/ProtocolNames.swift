/// A gram model as the protocol names it (READING's and STATUS's `model`): one this build
/// knows, or the name of a model a later daemon added, kept exactly as sent.
///
/// A client must not drop a reading because it does not know its model: the grams are the
/// daemon's, whatever model produced them. So the name is the value, and ``kind`` says
/// whether this build knows it.
public struct GramModelName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as it appears on the wire: `calibrated`, `future-model`.
    public var rawValue: String

    /// A model by its name, known or not.
    /// - Parameter rawValue: The name as the line carries it.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A model by its name, known or not.
    /// - Parameter value: The name as the line carries it.
    public init(stringLiteral value: String) { rawValue = value }

    /// The name of a model this build knows.
    /// - Parameter kind: The model.
    public init(_ kind: GramModelKind) { rawValue = kind.rawValue }

    /// The model, when this build knows it; `nil` for one a later daemon added.
    public var kind: GramModelKind? { GramModelKind(rawValue: rawValue) }

    public var description: String { rawValue }

    public static let calibrated = GramModelName(.calibrated)
    public static let physical = GramModelName(.physical)
    public static let nominal = GramModelName(.nominal)
}

/// A device kind as DEVICES names it: one this build knows, or a kind a later daemon
/// added, kept exactly as sent (see ``GramModelName`` for why nothing is dropped).
public struct DeviceKindName: RawRepresentable, Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name as it appears on the wire: `touchpad`, `pressure pad`.
    public var rawValue: String

    /// A kind by its name, known or not.
    /// - Parameter rawValue: The name as the line carries it.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A kind by its name, known or not.
    /// - Parameter value: The name as the line carries it.
    public init(stringLiteral value: String) { rawValue = value }

    /// The name of a kind this build knows.
    /// - Parameter kind: The kind.
    public init(_ kind: DeviceKind) { rawValue = kind.rawValue }

    /// The kind, when this build knows it; `nil` for one a later daemon added.
    public var kind: DeviceKind? { DeviceKind(rawValue: rawValue) }

    public var description: String { rawValue }
}
