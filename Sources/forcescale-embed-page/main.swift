// forcescale-embed-page OUTPUT NAME=FILE...: writes OUTPUT, a Swift source declaring
// `enum EmbeddedPage` with one `static let NAME: String` per file, holding the file's text.
// The EmbedPage build-tool plugin runs it on Sources/ScaleWeb/Page, so that the page's HTML,
// CSS and JavaScript are files of their own that tools read as what they are, and are still
// built into forcescale-web (nothing is read from disk at run time).
import Foundation

/// A Swift raw string literal of `text`, multi-line, its delimiter one `#` longer than any
/// run of `#` in the text, so that nothing in it can end the literal or start an escape.
func literal(_ text: String) -> String {
    var longest = 0, run = 0
    for character in text {
        if character == "#" { run += 1; longest = max(longest, run) } else { run = 0 }
    }
    let hashes = String(repeating: "#", count: longest + 1)
    // The closing delimiter at column 0: no indentation is stripped. A text that ends
    // without a newline keeps it that way (the line before the delimiter ends the text).
    return hashes + "\"\"\"\n" + text + (text.hasSuffix("\n") ? "\n" : "") + "\"\"\"" + hashes
}

let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first, arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: forcescale-embed-page OUTPUT NAME=FILE...\n".utf8))
    exit(64)
}
var source = "// Made at build time by forcescale-embed-page (the EmbedPage plugin): edit the files it names.\n\n"
source += "/// The page's files, as the build found them.\nenum EmbeddedPage {\n"
for argument in arguments.dropFirst() {
    guard let equals = argument.firstIndex(of: "="), !argument[..<equals].isEmpty else {
        FileHandle.standardError.write(Data("forcescale-embed-page: '\(argument)' is not NAME=FILE\n".utf8))
        exit(64)
    }
    let name = String(argument[..<equals]), path = String(argument[argument.index(after: equals)...])
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        FileHandle.standardError.write(Data("forcescale-embed-page: \(path): cannot be read as UTF-8 text\n".utf8))
        exit(66)
    }
    source += "    /// \(URL(fileURLWithPath: path).lastPathComponent)\n    static let \(name): String = " + literal(text) + "\n"
}
source += "}\n"
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("forcescale-embed-page: \(output): \(error.localizedDescription)\n".utf8))
    exit(73)
}
