/// Wraps text to a terminal width, indenting every line that is not empty.
///
/// Explicit line breaks are kept. Each line is broken at the last space that
/// falls within the columns left after the indent, which is how
/// swift-argument-parser wraps: only a line's last piece may fill every
/// column, and a word wider than the columns stays whole on its own line.
///
/// - Parameters:
///   - text: The text to wrap.
///   - width: The terminal width in characters.
///   - indent: Spaces put before every non-empty line.
/// - Returns: The wrapped lines joined with newlines, without a final newline.
func wrap(_ text: String, toWidth width: Int, indent: Int = 0) -> String {
    // A terminal narrower than the indent still gets one character per line.
    let columns = max(width - indent, 1)
    let margin = String(repeating: " ", count: indent)
    return text.split(separator: "\n", omittingEmptySubsequences: false)
        .flatMap { pieces(of: $0, columns: columns) }
        .map { $0.isEmpty ? "" : margin + $0 }
        .joined(separator: "\n")
}

/// Breaks one line (no newline inside) into pieces that fit the columns.
///
/// - Parameters:
///   - line: The line to break.
///   - columns: The characters available for each piece.
/// - Returns: The pieces, in order; the spaces broken at are dropped.
private func pieces(of line: Substring, columns: Int) -> [Substring] {
    var result: [Substring] = []
    var rest = line
    while rest.count > columns {
        let breakAt = rest.prefix(columns).lastIndex(of: " ") ?? rest.firstIndex(of: " ")
        guard let breakAt else { break }
        result.append(rest[..<breakAt])
        rest = rest[rest.index(after: breakAt)...]
    }
    result.append(rest)
    return result
}
