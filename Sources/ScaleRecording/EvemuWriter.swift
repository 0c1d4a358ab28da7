import ScaleCore

/// Writes recordings in the evemu 1.3 text format, the format evemu-device, evemu-play and
/// the evemu-devices collection use, so what forcescale writes other tools can replay.
package enum EvemuWriter {
    /// The description lines (`# EVEMU 1.3`, comments, `N:`, `I:`, `P:`, `B:`, `A:`).
    ///
    /// The name is the device's own choice, so it is written escaped (``UntrustedText``): a
    /// newline in it would otherwise end the `N:` line and start one of the name's making
    /// (an `E:` event, an `A:` axis) in the recording.
    package static func header(for device: DeviceDescription, comments: [String] = []) -> String {
        var out = "# EVEMU 1.3\n"
        for comment in comments { out += "# \(UntrustedText.escaped(comment))\n" }
        out += "N: \(UntrustedText.escaped(device.name))\n"
        let id = device.identity
        out += "I: \([id.bus, id.vendor, id.product, id.version].map(hex4).joined(separator: " "))\n"
        for row in byteRows(of: device.properties, minimumBytes: 8) { out += "P: \(row)\n" }
        for type in device.supportedCodes.keys.sorted() {
            guard let codes = device.supportedCodes[type] else { continue }
            for row in byteRows(of: codes, minimumBytes: 8) {
                out += "B: \(hex2(UInt8(type.rawValue))) \(row)\n"
            }
        }
        for code in device.axes.keys.sorted() {
            let axis = device.axes[code]!
            out += "A: \(hex2(UInt8(code.rawValue))) \(axis.minimum) \(axis.maximum) \(axis.fuzz) \(axis.flat) \(axis.resolution)\n"
        }
        return out
    }

    /// One `E:` line, newline included.
    package static func line(for event: InputEvent) -> String {
        "E: \(event.time) \(hex4(event.type.rawValue)) \(hex4(event.code.rawValue)) \(event.value)\n"
    }

    /// A whole recording as text.
    package static func text(of recording: Recording) -> String {
        var out = header(for: recording.device, comments: recording.comments)
        for event in recording.events { out += line(for: event) }
        return out
    }

    private static func hex2(_ byte: UInt8) -> String {
        byte < 16 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
    }

    /// The bitmask as rows of eight hex bytes, as evemu writes it.
    private static func byteRows(of bits: BitSet, minimumBytes: Int) -> [String] {
        var bytes = [UInt8](repeating: 0, count: max(minimumBytes, bits.words.count * 8))
        for bit in bits.members { bytes[bit / 8] |= 1 << UInt8(bit % 8) }
        let rowCount = (bytes.count + 7) / 8
        return (0..<rowCount).map { row in
            bytes[(row * 8)..<min(bytes.count, row * 8 + 8)].map(hex2).joined(separator: " ")
        }
    }
}
