import ScaleCore

extension DeviceDescription {
    /// The name under which the daemon keeps this device's state:
    /// `bus-vendor-product-name`, e.g. `0003-056a-00b9-wacom-intuos4-6x9-pen`.
    ///
    /// Bus, vendor and product (lowercase hex, four digits) tell models apart; the name,
    /// reduced to `[a-z0-9-]`, tells apart the several nodes one device often has (pen and
    /// finger, touchpad and its mouse). The version is left out on purpose, so that a
    /// firmware update does not lose the calibration. The result is safe as a file name:
    /// no `/`, no leading dot, at most 79 bytes.
    var stateIdentity: String {
        let id = [identity.bus, identity.vendor, identity.product].map(Self.hex4).joined(separator: "-")
        return id + "-" + Self.sanitised(name)
    }

    /// Lowercase letters and digits kept, runs of anything else one `-`, no `-` at either
    /// end, at most 64 characters; `unnamed` when nothing is left.
    static func sanitised(_ name: String) -> String {
        var result = ""
        var pendingDash = false
        for byte in name.utf8 {
            let character: UInt8
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): character = byte
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): character = byte + 32
            default:
                pendingDash = true
                continue
            }
            let dash = pendingDash && !result.isEmpty
            if result.utf8.count + (dash ? 2 : 1) > 64 { break }
            if dash { result.append("-") }
            pendingDash = false
            result.unicodeScalars.append(Unicode.Scalar(character))
        }
        return result.isEmpty ? "unnamed" : result
    }

    private static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}
