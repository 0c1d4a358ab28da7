/// One measurement as clients see it.
public struct Reading: Hashable, Sendable {
    public var time: EventTime
    public var raw: Int32
    /// Normalised force, 0…1.
    public var force: Double
    public var grams: Double
    /// Raw pressure at or beyond the axis maximum ("100%+").
    public var saturated: Bool
    public var contacts: Int
    public var stable: Bool
    public var model: GramModelKind

    public init(
        time: EventTime, raw: Int32, force: Double, grams: Double, saturated: Bool,
        contacts: Int, stable: Bool, model: GramModelKind
    ) {
        self.time = time
        self.raw = raw
        self.force = force
        self.grams = grams
        self.saturated = saturated
        self.contacts = contacts
        self.stable = stable
        self.model = model
    }
}

/// The moment a press reached the peak threshold: the cue to rumble.
public struct Peak: Hashable, Sendable {
    public var time: EventTime
    public var raw: Int32
    public var force: Double
    public var grams: Double

    public init(time: EventTime, raw: Int32, force: Double, grams: Double) {
        self.time = time
        self.raw = raw
        self.force = force
        self.grams = grams
    }
}

/// What the pipeline emits, in order.
public enum ScaleOutput: Hashable, Sendable {
    case reading(Reading)
    case peak(Peak)
}
