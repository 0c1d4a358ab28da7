/// The syntax of forcescale's configuration files (`forcescale.conf`, and the files of the
/// programs beside the daemon, such as forcescale-mqtt's): `key = value` lines, `#`
/// comments, blank lines, double quotes to keep a `#` or edge spaces in a value. One
/// parser for all of them, so that every file reads the same way; what the keys mean is
/// each program's business.
///
/// - Whitespace around keys, `=` and values is ignored; so is a `\r` before the newline.
/// - A `#` starts a comment at the start of a line, or after whitespace within one
///   (`interval-ms = 20  # faster`); inside double quotes `\"` and `\\` stand for `"` and `\`.
package enum ConfigurationSyntax {
    /// What one line of a configuration file holds.
    package enum Line: Equatable, Sendable {
        case blank
        case entry(key: String, value: String)
        case problem(String)
    }

    /// Reads one line.
    /// - Parameter line: The line without its newline.
    /// - Returns: `.blank` for a blank or comment line, the key and the value (unquoted)
    ///   for an entry, or what is wrong with it. Whether the key is known is the caller's
    ///   question.
    package static func parseLine(_ line: Substring) -> Line {
        let trimmed = line.trimmingBlanks
        if trimmed.isEmpty || trimmed.hasPrefix("#") { return .blank }
        guard let equals = trimmed.firstIndex(of: "=") else {
            return .problem("expected 'key = value', found '\(trimmed.shortened)'")
        }
        let key = trimmed[..<equals].trimmingBlanks
        guard !key.isEmpty else { return .problem("no key before '='") }
        guard key.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else {
            return .problem("'\(key.shortened)' is not a key: keys are lower-case words joined by '-', such as 'interval-ms'")
        }
        var rest = trimmed[trimmed.index(after: equals)...].trimmingBlanks
        guard rest.hasPrefix("\"") else {
            // A '#' after whitespace starts a comment.
            var previous: Character = " "
            if let hash = rest.indices.first(where: { index in
                defer { previous = rest[index] }
                return rest[index] == "#" && (previous == " " || previous == "\t")
            }) {
                rest = rest[..<hash].trimmingBlanks
            }
            return .entry(key: String(key), value: String(rest))
        }
        rest = rest.dropFirst()
        var value = ""
        var escaped = false
        while let character = rest.first {
            rest = rest.dropFirst()
            if escaped {
                guard character == "\"" || character == "\\" else {
                    return .problem("unknown escape '\\\(character)' in quotes: only \\\" and \\\\ are known")
                }
                value.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                let after = rest.trimmingBlanks
                guard after.isEmpty || after.hasPrefix("#") else {
                    return .problem("unexpected '\(after.shortened)' after the closing quote of '\(key)'")
                }
                return .entry(key: String(key), value: value)
            } else {
                value.append(character)
            }
        }
        return .problem("the quoted value of '\(key)' has no closing quote")
    }
}

extension Substring {
    /// Without spaces, tabs and a carriage return at either end.
    package var trimmingBlanks: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !blank($0) }), let end = lastIndex(where: { !blank($0) }) else { return self[endIndex...] }
        return self[start...end]
    }

    /// At most 60 characters, for quoting in a message.
    package var shortened: String { count > 60 ? prefix(59) + "…" : String(self) }
}
