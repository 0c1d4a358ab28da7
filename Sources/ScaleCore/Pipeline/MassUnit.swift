/// Units a reading can be shown in. Grams are the pipeline's unit; the rest are views.
public enum MassUnit: String, CaseIterable, Sendable {
    case grams = "g"
    case kilograms = "kg"
    case ounces = "oz"
    case pounds = "lb"
    case carats = "ct"
    /// The force the mass exerts under standard gravity: what the pad actually measures.
    case newtons = "N"

    /// Standard gravity, m/s², exact by definition (CGPM 1901).
    public static let standardGravity = 9.80665

    /// How many grams one of this unit is (for newtons: the mass that weighs one newton).
    public var gramsPerUnit: Double {
        switch self {
        case .grams: return 1
        case .kilograms: return 1000
        case .ounces: return 28.349523125      // avoirdupois, exact
        case .pounds: return 453.59237         // international pound, exact
        case .carats: return 0.2               // metric carat, exact
        case .newtons: return 1000 / Self.standardGravity
        }
    }

    /// Decimals worth showing, matched to the ≈0.1 g steps of a touchpad.
    public var displayDecimals: Int {
        switch self {
        case .grams, .carats: return 1
        case .ounces: return 3
        case .kilograms, .pounds, .newtons: return 4
        }
    }

    /// The unit's name in words, plural, as a menu of units offers it: `ounces`.
    public var name: String {
        switch self {
        case .grams: return "grams"
        case .kilograms: return "kilograms"
        case .ounces: return "ounces"
        case .pounds: return "pounds"
        case .carats: return "carats"
        case .newtons: return "newtons"
        }
    }

    public func fromGrams(_ grams: Double) -> Double { grams / gramsPerUnit }

    /// A weight in grams as a person writes it in a sentence: `20 g`, `5.7 g` (to 0.1 g,
    /// no decimal when whole).
    public static func sentence(grams: Double) -> String {
        let tenths = (grams * 10).rounded()
        guard tenths.magnitude < 1e15 else { return "\(grams) g" }
        return (tenths.truncatingRemainder(dividingBy: 10) == 0 ? String(Int64(tenths / 10)) : String(tenths / 10)) + " g"
    }
}
