/// Text that someone else chose (a device's name, a recording's strings, a file name, an HTTP
/// header), made safe to print on a terminal or write to a log.
///
/// A terminal acts on control characters: an escape sequence sets its title, writes its
/// clipboard (OSC 52) or colours what follows, and a newline in a logged name starts a
/// journal record of its own (journald reads a service's standard error a line a record,
/// `<N>` first). So every control character, and every character that reorders or hides
/// text (the bidirectional overrides and isolates, the zero-width ones), is written as a
/// visible escape, as systemd's `cescape` does: `\n`, `\t`, `\e` for ESC, `\x07` for others
/// below U+0020 and DEL, `\u{202E}` above. A backslash is doubled, so that an escape in the
/// output always means an escape, never a name that spelled one out.
package enum UntrustedText {
    /// `text` with every character a terminal or a log would act on written as an escape.
    /// - Parameter text: Text from outside.
    /// - Returns: The same text when it holds nothing to escape; otherwise its escaped form,
    ///   always on one line.
    package static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x5C: result += "\\\\"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x1B: result += "\\e"
            case 0x07: result += "\\a"
            case 0x08: result += "\\b"
            case 0x00..<0x20, 0x7F: result += "\\x" + hex(scalar.value, digits: 2)
            default: result += "\\u{" + hex(scalar.value, digits: 4) + "}"
            }
        }
        return result
    }

    /// A cell of a CSV file that a spreadsheet will open: text that starts with `=`, `+`,
    /// `-`, `@`, a tab or a carriage return is a formula there (OWASP's CSV injection), so it
    /// gets a leading `'`, which spreadsheets show as text. Only for cells of text from
    /// outside; numbers are written as they are.
    /// - Parameter text: The cell's text, before the CSV quoting.
    /// - Returns: The text, prefixed when it would be taken for a formula.
    package static func spreadsheetSafe(_ text: String) -> String {
        guard let first = text.unicodeScalars.first else { return text }
        switch first {
        case "=", "+", "-", "@", "\t", "\r": return "'" + text
        default: return text
        }
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x5C, 0x7F, 0x80..<0xA0: return true
        // Zero-width and bidirectional formatting: LRM, RLM, ZWSP…ZWJ, LRE…RLO, LRI…PDI,
        // the word joiner and invisible operators, ALM, the BOM; line and paragraph
        // separators, which some terminals and logs take as line ends.
        case 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0x061C, 0xFEFF: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension DefaultStringInterpolation {
    /// Interpolates text from outside as ``UntrustedText/escaped(_:)`` writes it, for a line
    /// a person reads: `"\(untrusted: device.name)"`.
    /// - Parameter text: Text from outside (a device's name, a file name, a daemon's reply).
    package mutating func appendInterpolation(untrusted text: some StringProtocol) {
        appendLiteral(UntrustedText.escaped(String(text)))
    }
}
