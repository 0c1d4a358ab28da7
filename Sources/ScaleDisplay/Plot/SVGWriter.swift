/// Writes an SVG document element by element, with every text and attribute value
/// XML-escaped, so a device called `Tom & Jerry's <pad>` cannot break the file.
struct SVGWriter: Sendable {
    private var text: String
    private var depth = 0

    /// Opens the document: the XML declaration and an `<svg>` element of the given size.
    /// - Parameters:
    ///   - width: Width in pixels.
    ///   - height: Height in pixels.
    init(width: Int, height: Int) {
        text = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        text += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\">\n"
        depth = 1
    }

    /// An element without content, such as `<line x1="0" …/>`.
    /// - Parameters:
    ///   - name: The element name.
    ///   - attributes: Names and values, written in this order; values are escaped here.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String>) {
        indent()
        text += "<" + name
        append(attributes)
        text += "/>\n"
    }

    /// An element holding text, such as `<text x="5" y="9">2.5 g</text>`.
    /// - Parameters:
    ///   - name: The element name.
    ///   - attributes: Names and values, written in this order; values are escaped here.
    ///   - content: The text, escaped here.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String>, text content: String) {
        indent()
        text += "<" + name
        append(attributes)
        text += ">" + Self.escape(content) + "</" + name + ">\n"
    }

    /// Opens an element that holds others (`<g …>`); close it with ``close(_:)``.
    mutating func open(_ name: String, _ attributes: KeyValuePairs<String, String> = [:]) {
        indent()
        text += "<" + name
        append(attributes)
        text += ">\n"
        depth += 1
    }

    /// Closes the element opened last.
    mutating func close(_ name: String) {
        depth -= 1
        indent()
        text += "</" + name + ">\n"
    }

    /// The finished document.
    var document: String { text + "</svg>\n" }

    /// Text made safe for XML content and for attribute values in double quotes. Control
    /// characters other than tab and line breaks are not allowed in XML 1.0 at all, even
    /// escaped, so they become U+FFFD.
    static func escape(_ value: String) -> String {
        guard value.unicodeScalars.contains(where: { "&<>\"'".unicodeScalars.contains($0) || $0.value < 0x20 || ($0.value >= 0xFFFE && $0.value <= 0xFFFF) }) else {
            return value
        }
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped += "&#\(scalar.value);"
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
                escaped.unicodeScalars.append("\u{FFFD}")
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    private mutating func append(_ attributes: KeyValuePairs<String, String>) {
        for (name, value) in attributes {
            text += " " + name + "=\"" + Self.escape(value) + "\""
        }
    }

    private mutating func indent() {
        text += String(repeating: "  ", count: depth)
    }
}
