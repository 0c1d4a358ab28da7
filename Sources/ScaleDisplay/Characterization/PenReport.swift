import ScaleCore
import ScaleProtocol

/// A characterized pen as `forcescale characterize` shows it: a table for a person, one
/// JSON object for programs, and an SVG plot of its response.
package struct PenReport: Sendable {
    package let pen: PenCharacterization
    package let settings: PenSettings
    /// The device's name, and its USB ids (for GNOME's settings path).
    package let device: String
    package let vendor: UInt16
    package let product: UInt16

    package init(pen: PenCharacterization, device: String, vendor: UInt16, product: UInt16) {
        self.pen = pen
        settings = PenSettings(pen)
        self.device = device
        self.vendor = vendor
        self.product = product
    }

    // MARK: - Text

    /// The device's name is written as ``UntrustedText`` escapes it (the JSON keeps it as it is).
    package var text: String {
        let device = UntrustedText.escaped(device)
        var lines: [String] = []
        lines.append("Pen: \(device) (pressure \(pen.axis.lowerBound)–\(pen.axis.upperBound))")
        let activation = pen.activation
        var bounds = "registered from \(Self.grams(activation.lightestRegistered))"
        if let below = activation.heaviestUnregistered { bounds += "; \(Self.grams(below)) did not" }
        lines.append("Initial activation force (IAF): \(Self.grams(activation.grams)) ± \(Self.grams(activation.uncertainty))  (\(bounds))")
        lines.append("")
        lines.append("  weight       raw   logical   spread   releasing")
        var rows: [(grams: Double, text: String)] = pen.unregistered.map { ($0, "\(Self.column(Self.grams($0), 9))  not registered") }
        rows += pen.unmeasured.map { ($0, "\(Self.column(Self.grams($0), 9))  lifted before it rested: not measured") }
        for point in pen.points {
            var row = Self.column(Self.grams(point.grams), 9) + Self.column(fixed(point.raw, decimals: 1), 9)
                + Self.column(fixed(point.fraction * 100, decimals: 2) + " %", 10) + Self.column(fixed(point.spread, decimals: 1), 9)
            if let releasing = point.releasingRaw, let fraction = point.releasingFraction {
                row += "   " + fixed(releasing, decimals: 1) + " (" + fixed(fraction * 100, decimals: 2) + " %)"
            }
            if point.saturated { row += "   at the top of the range" }
            rows.append((point.grams, row))
        }
        lines += rows.sorted { $0.grams < $1.grams }.map { "  " + $0.text }
        lines.append("")
        let tenths = pen.pValues.enumerated().map { tenth, value in
            "P\(tenth == 0 ? "00" : String(tenth * 10)) " + (value.map(Self.grams) ?? "—")
        }
        lines.append("Force at each tenth of the range: " + tenths.prefix(6).joined(separator: "  "))
        lines.append(String(repeating: " ", count: 34) + tenths.dropFirst(6).joined(separator: "  "))
        if pen.pValues.contains(where: { $0 == nil }) {
            lines.append("  (— past \(fixed(pen.reach * 100, decimals: 1)) %, the most a weight below full scale reached)")
        }
        lines.append("Hysteresis: " + (pen.hysteresisPercent.map { fixed($0, decimals: 2) + " % of the range (the largest at one weight, releasing against pressing)" }
            ?? "not measured (press each weight a little further and let go)"))
        lines.append("Saturation: " + (pen.saturationGrams.map { "the top of the range with \(Self.grams($0))" } ?? "not reached"))
        lines.append("")
        lines.append("Settings (docs/weighing.md, \"Characterize a pen\", says which versions take them):")
        if let withheld = settings.curveWithheld {
            lines.append("  xsetwacom, GNOME \(withheld)")
        } else {
            lines.append("  xsetwacom        \(settings.xsetwacomCommand(device: device))")
            lines.append("                   linear in force within \(fixed(settings.curveErrorPercent, decimals: 1)) % of the range over the measured span")
            lines.append("                   (X with xf86-input-wacom, which names the pen's X device NAME stylus: 'xsetwacom --list devices')")
            lines.append("  GNOME            \(settings.gnomeCommand(vendor: vendor, product: product))")
        }
        lines.append("  libinput         pressure range \(settings.libinputRange), \(PenSettings.libinputApplies);")
        lines.append("                   to try it for one session: \(settings.libinputTrial)")
        lines.append("  OpenTabletDriver tip activation threshold \(fixed(settings.thresholdPercent, decimals: 2)) %")
        lines.append("  PenPressureData  \(settings.records.count) records (grams-force, logical %) in --json")
        return lines.joined(separator: "\n") + "\n"
    }

    package static func grams(_ value: Double) -> String { fixed(value, decimals: value < 100 ? 2 : 1) + " g" }

    static func column(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    // MARK: - JSON

    package var json: String {
        var object = JSONLineWriter()
        object.add("class", string: "CHARACTERIZATION")
        object.add("device", string: device)
        var axis = JSONLineWriter()
        axis.add("minimum", integer: Int(pen.axis.lowerBound))
        axis.add("maximum", integer: Int(pen.axis.upperBound))
        object.add("axis", object: axis)
        object.add("iaf_grams", number: pen.activation.grams, decimals: 2)
        object.add("iaf_uncertainty_grams", number: pen.activation.uncertainty, decimals: 2)
        object.add("lightest_registered_grams", number: pen.activation.lightestRegistered, decimals: 2)
        object.add("heaviest_unregistered_grams", literal: Self.number(pen.activation.heaviestUnregistered, 2))
        object.add("points", objects: pen.points.map { point in
            var entry = JSONLineWriter()
            entry.add("grams", number: point.grams, decimals: 2)
            entry.add("raw", number: point.raw, decimals: 1)
            entry.add("fraction", number: point.fraction, decimals: 4)
            entry.add("spread", number: point.spread, decimals: 2)
            entry.add("releasing_raw", literal: Self.number(point.releasingRaw, 1))
            entry.add("releasing_fraction", literal: Self.number(point.releasingFraction, 4))
            entry.add("saturated", bool: point.saturated)
            return entry
        })
        object.add("unregistered", literal: Self.numbers(pen.unregistered, 2))
        object.add("unmeasured", literal: Self.numbers(pen.unmeasured, 2))
        var tenths = JSONLineWriter()
        for (tenth, value) in pen.pValues.enumerated() {
            tenths.add(Self.tenthKeys[tenth], literal: Self.number(value, 2))
        }
        object.add("p", object: tenths)
        object.add("reach_fraction", number: pen.reach, decimals: 4)
        object.add("hysteresis_percent", literal: Self.number(pen.hysteresisPercent, 2))
        object.add("saturation_grams", literal: Self.number(pen.saturationGrams, 2))

        var exports = JSONLineWriter()
        var xsetwacom = JSONLineWriter()
        var gnome = JSONLineWriter()
        if let withheld = settings.curveWithheld {
            // No curve and no command: only why.
            xsetwacom.add("withheld", string: withheld)
            gnome.add("withheld", string: withheld)
        } else {
            xsetwacom.add("curve", literal: "[" + settings.curve.values.map(String.init).joined(separator: ",") + "]")
            xsetwacom.add("max_error_percent", number: settings.curveErrorPercent, decimals: 2)
            xsetwacom.add("device", string: PenSettings.xDeviceName(device))
            xsetwacom.add("command", string: settings.xsetwacomCommand(device: device))
            gnome.add("curve", literal: "[" + settings.curve.values.map(String.init).joined(separator: ",") + "]")
            gnome.add("command", string: settings.gnomeCommand(vendor: vendor, product: product))
        }
        exports.add("xsetwacom", object: xsetwacom)
        exports.add("gnome", object: gnome)
        var libinput = JSONLineWriter()
        libinput.add("range", string: settings.libinputRange)
        libinput.add("applied_by", string: PenSettings.libinputApplies)
        libinput.add("trial_command", string: settings.libinputTrial)
        exports.add("libinput", object: libinput)
        var openTabletDriver = JSONLineWriter()
        openTabletDriver.add("tip_threshold_percent", number: settings.thresholdPercent, decimals: 2)
        exports.add("opentabletdriver", object: openTabletDriver)
        var records = JSONLineWriter()
        records.add("pen", string: device)
        records.add("records", literal: "[" + settings.records.map { record in
            "[" + Self.number(record.grams, 2) + "," + Self.number(record.percent, 2) + "]"
        }.joined(separator: ",") + "]")
        exports.add("penpressuredata", object: records)
        object.add("exports", object: exports)
        return object.line
    }

    static let tenthKeys: [StaticString] = ["P00", "P10", "P20", "P30", "P40", "P50", "P60", "P70", "P80", "P90", "P100"]

    /// A JSON number rounded to `decimals` (trailing zeros dropped), or `null`.
    static func number(_ value: Double?, _ decimals: Int) -> String {
        guard let value, value.isFinite else { return "null" }
        var text = fixed(value, decimals: decimals)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    static func numbers(_ values: [Double], _ decimals: Int) -> String {
        "[" + values.map { number($0, decimals) }.joined(separator: ",") + "]"
    }
}
