/// Messages of the client protocol (gpsd's style: one JSON object per line with a "class").
/// docs/protocol.md documents each; tests compare them byte for byte.
public enum ProtocolMessage {
    /// Decimals of grams in readings and peaks: a touchpad resolves about 0.1 g at best.
    public static let gramDecimals = 1
    /// Decimals of force: enough for a 0–8191 pen axis.
    public static let forceDecimals = 4

    /// `{"class":"READING","device":…,"time":…,"raw":…,"force":…,"grams":…,"saturated":…,
    /// "contacts":…,"stable":…,"model":…}`
    public static func reading(_ reading: Reading, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "READING")
        json.add("device", string: device)
        json.add("time", literal: reading.time.description)
        json.add("raw", integer: Int(reading.raw))
        json.add("force", number: reading.force, decimals: forceDecimals)
        json.add("grams", number: reading.grams, decimals: gramDecimals)
        json.add("saturated", bool: reading.saturated)
        json.add("contacts", integer: reading.contacts)
        json.add("stable", bool: reading.stable)
        json.add("model", string: reading.model.rawValue)
        return json.line
    }

    /// `{"class":"PEAK","device":…,"time":…,"raw":…,"grams":…}`
    public static func peak(_ peak: Peak, device: String? = nil) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "PEAK")
        json.add("device", string: device)
        json.add("time", literal: peak.time.description)
        json.add("raw", integer: Int(peak.raw))
        json.add("grams", number: peak.grams, decimals: gramDecimals)
        return json.line
    }

    /// A pipeline output as its protocol line.
    public static func line(for output: ScaleOutput, device: String? = nil) -> String {
        switch output {
        case .reading(let value): return reading(value, device: device)
        case .peak(let value): return peak(value, device: device)
        }
    }
}
