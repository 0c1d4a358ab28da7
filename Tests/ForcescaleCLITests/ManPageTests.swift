import Foundation
import Testing

/// The man pages in `man/` against what the programs say about themselves, so that the two
/// cannot drift apart: every subcommand of `forcescale help` has its section in
/// forcescale(1), every option and argument of `forcescale help <subcommand>` (and of
/// `forcescale <subcommand> --help`) appears in that section and is described with its
/// default and its values, every option of `forcescaled --help` in forcescaled(8); and the
/// other way round, no page describes an option or a subcommand that no longer exists.
/// Each page must also format without a single warning from `groff -man -ww` (groff-base
/// is one of the packages scripts/setup installs).
@Suite struct ManPageTests {
    static let manDirectory = CLI.packageRoot.appendingPathComponent("man")
    static let pages = ["forcescale.1", "forcescaled.8", "forcescale.conf.5", "forcescale-web.1", "forcescale-web-open.1", "forcescale-mqtt.1"]

    // MARK: - forcescale(1)

    @Test func everySubcommandHasItsSection() throws {
        let page = try ManPage(named: "forcescale.1")
        let subcommands = try Self.subcommands()
        #expect(subcommands.count >= 10, "could not read the subcommands from 'forcescale help'")
        for name in subcommands {
            #expect(page.section(titled: "forcescale \(name)") != nil,
                    "man/forcescale.1 has no section '.SS \"forcescale \(name)\"' for the subcommand '\(name)'")
        }
        // And no section for a subcommand that is gone ('help' is the parser's own).
        for title in page.sections.map(\.title) where title.hasPrefix("forcescale ") {
            let name = String(title.dropFirst("forcescale ".count))
            #expect(subcommands.contains(name) || name == "help",
                    "man/forcescale.1 has a section '\(title)', but 'forcescale help' lists no '\(name)'")
        }
    }

    @Test(arguments: ["demo", "replay", "read", "devices", "rumble", "record", "watch", "weigh", "tare", "calibrate", "status"])
    func subcommandSectionMatchesItsHelp(_ name: String) throws {
        let page = try ManPage(named: "forcescale.1")
        let help = try Self.help(of: name)
        let section = try #require(page.section(titled: "forcescale \(name)"), "no section for '\(name)' in man/forcescale.1")
        // --help and --version, which every subcommand takes, are described once, in OPTIONS.
        let everywhere = Set(try Self.help(of: nil).options.flatMap(\.names))
        for option in help.options {
            #expect(everywhere.contains(option.name) || option.names.contains(where: section.mentions),
                    "'forcescale \(name)' takes \(option.name), but its section in man/forcescale.1 does not show it")
            // Described in the subcommand's own section, or among the options shared by several.
            let entries = page.entries(for: option, in: [section] + page.optionSections)
            #expect(!entries.isEmpty, "man/forcescale.1 describes no \(option.name) (a .TP entry) for 'forcescale \(name)'")
            for expected in option.documentedWords {
                #expect(entries.contains { $0.mentions(expected) },
                        "'forcescale help \(name)' gives \(option.name) '\(expected)' (a default or a value), which its entry in man/forcescale.1 does not mention")
            }
        }
        for argument in help.arguments {
            #expect(section.mentions(argument), "'forcescale \(name)' takes <\(argument)>, but its section in man/forcescale.1 does not show it")
        }
        // Every option the section describes still exists.
        for described in section.describedOptions {
            #expect(help.options.contains { $0.names.contains(described) },
                    "the section of 'forcescale \(name)' in man/forcescale.1 describes \(described), which 'forcescale help \(name)' does not list")
        }
    }

    @Test func sharedOptionsExist() throws {
        let page = try ManPage(named: "forcescale.1")
        var known = Set(try Self.help(of: nil).options.flatMap(\.names))
        for name in try Self.subcommands() { known.formUnion(try Self.help(of: name).options.flatMap(\.names)) }
        for section in page.optionSections {
            for described in section.describedOptions {
                #expect(known.contains(described), "man/forcescale.1 (\(section.title)) describes \(described), which no subcommand takes")
            }
        }
    }

    @Test func everyExitStatusIsListed() throws {
        let page = try ManPage(named: "forcescale.1")
        let section = try #require(page.section(titled: "EXIT STATUS"), "man/forcescale.1 has no EXIT STATUS")
        let listed = Set(section.entries.flatMap(\.tags))
        // 64 comes from the argument parser; the others are the constants of ArgumentParsing's
        // ExitStatus table (shared by every program) that Sources/forcescale names, or
        // declares itself.
        func matches(_ pattern: String, in text: String) throws -> [[String]] {
            try NSRegularExpression(pattern: pattern).matches(in: text, range: NSRange(text.startIndex..., in: text)).map { match in
                (1..<match.numberOfRanges).map { String(text[Range(match.range(at: $0), in: text)!]) }
            }
        }
        let table = try String(contentsOf: CLI.packageRoot.appendingPathComponent("Sources/ArgumentParsing/RunMain.swift"), encoding: .utf8)
        let values = Dictionary(try matches(#"static let (\w+): Int32 = (\d+)"#, in: table).map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
        var statuses: Set<String> = ["0", "64"]
        let sources = CLI.packageRoot.appendingPathComponent("Sources/forcescale")
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for name in try matches(#"ExitStatus\.(\w+)"#, in: text) { if let value = values[name[0]] { statuses.insert(value) } }
            for value in try matches(#"static let \w+: Int32 = (\d+)"#, in: text) { statuses.insert(value[0]) }
        }
        #expect(statuses.count >= 8, "could not read the exit statuses from Sources/forcescale")
        for status in statuses {
            #expect(listed.contains(status), "forcescale can exit with \(status), which EXIT STATUS in man/forcescale.1 does not list")
        }
    }

    // MARK: - forcescaled(8)

    @Test func daemonOptionsMatchItsHelp() throws {
        try Self.optionsMatchHelp(of: "forcescaled", page: "forcescaled.8", atLeast: 10)
    }

    // MARK: - forcescale-web(1)

    @Test func webOptionsMatchItsHelp() throws {
        try Self.optionsMatchHelp(of: "forcescale-web", page: "forcescale-web.1", atLeast: 3)
    }

    /// Every option of `PROGRAM --help` in the SYNOPSIS and OPTIONS of its page, with its
    /// default and values, and no option there that the program no longer takes.
    static func optionsMatchHelp(of program: String, page name: String, atLeast: Int) throws {
        let page = try ManPage(named: name)
        let help = Help(try Self.output(["--help"], product: program))
        #expect(help.options.count >= atLeast, "could not read the options from '\(program) --help'")
        let synopsis = try #require(page.section(titled: "SYNOPSIS"))
        for option in help.options {
            #expect(option.names.contains(where: synopsis.mentions), "\(program) takes \(option.name), which the SYNOPSIS of man/\(name) does not show")
            let entries = page.entries(for: option, in: page.optionSections)
            #expect(!entries.isEmpty, "\(program) takes \(option.name), which OPTIONS in man/\(name) does not describe")
            for expected in option.documentedWords {
                #expect(entries.contains { $0.mentions(expected) },
                        "'\(program) --help' gives \(option.name) '\(expected)' (a default or a value), which its entry in man/\(name) does not mention")
            }
        }
        for section in page.optionSections {
            for described in section.describedOptions {
                #expect(help.options.contains { $0.names.contains(described) },
                        "man/\(name) (\(section.title)) describes \(described), which '\(program) --help' does not list")
            }
        }
    }

    // MARK: - forcescale-mqtt(1)

    @Test func mqttOptionsMatchItsHelp() throws {
        try Self.optionsMatchHelp(of: "forcescale-mqtt", page: "forcescale-mqtt.1", atLeast: 10)
    }

    // MARK: - All pages

    @Test func versionsMatchTheRelease() throws {
        let version = try Self.output(["--version"]).trimmingCharacters(in: .whitespacesAndNewlines)
        let daemonVersion = try Self.output(["--version"], product: "forcescaled").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version == daemonVersion)
        let webVersion = try Self.output(["--version"], product: "forcescale-web").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version == webVersion)
        for name in Self.pages {
            let header = try #require(try ManPage(named: name).lines.first { $0.hasPrefix(".TH ") }, "\(name) has no .TH line")
            #expect(header.contains("\"forcescale \(version)\""), "the .TH line of man/\(name) does not name forcescale \(version): \(header)")
        }
    }

    @Test(arguments: pages)
    func groffFindsNothingToWarnAbout(_ name: String) throws {
        let groff = try #require(Self.installed("groff"), "groff is not installed; scripts/setup installs it (groff-base)")
        let path = Self.manDirectory.appendingPathComponent(name).path
        let result = try run(groff, ["-man", "-ww", "-z", path])
        #expect(result.exited && result.status == 0, "groff -man -ww -z man/\(name) exited with \(result.status)")
        #expect(result.stderr.isEmpty, "groff -man -ww -z man/\(name):\n\(result.stderr)")
        // man(1) itself, where man-db is installed: what `man -l` shows a reader.
        if let man = Self.installed("man") {
            let shown = try run(man, ["--warnings", "-l", path], environment: ["MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80"])
            #expect(shown.exited && shown.status == 0, "man --warnings -l man/\(name) exited with \(shown.status)")
            #expect(shown.stderr.isEmpty, "man --warnings -l man/\(name):\n\(shown.stderr)")
            #expect(shown.stdout.contains("NAME"), "man -l man/\(name) showed nothing")
        }
    }

    // MARK: - The programs' help

    /// The subcommands `forcescale help` lists.
    static func subcommands() throws -> [String] {
        Help(try output(["help"])).subcommands
    }

    /// What `forcescale help <name>` and `forcescale <name> --help` say, together; the
    /// root command's help for `nil`.
    static func help(of name: String?) throws -> Help {
        guard let name else { return Help(try output(["--help"])) }
        var help = Help(try output(["help", name]))
        for option in Help(try output([name, "--help"])).options where !help.options.contains(where: { $0.names == option.names }) {
            help.options.append(option)
        }
        return help
    }

    static func output(_ arguments: [String], product: String = "forcescale") throws -> String {
        let result = try CLI.run(arguments, product: product)
        #expect(result.status == 0, "\(product) \(arguments.joined(separator: " ")) exited with \(result.status): \(result.stderr)")
        return result.stdout
    }

    static func installed(_ program: String) -> String? {
        ["/usr/bin", "/bin", "/usr/local/bin"].map { "\($0)/\(program)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

/// A help text of the argument parser, read back: its options (`-v`, `--verbose`) with
/// their defaults and allowed values, its arguments and its subcommands.
struct Help {
    struct Option {
        /// `["-v", "--verbose"]`, or just `["--json"]`.
        var names: [String]
        var defaultValue: String?
        var values: [String] = []

        /// The long name, for messages.
        var name: String { names.last ?? "" }

        /// What the option's entry in a man page must mention: its allowed values, and its
        /// default when that is one word (a longer one, such as a path that depends on the
        /// user, is written in the page's own words).
        var documentedWords: [String] {
            var words = values
            if let defaultValue, !defaultValue.contains(" ") { words.append(defaultValue) }
            return words
        }
    }

    var options: [Option] = []
    var arguments: [String] = []
    var subcommands: [String] = []

    init(_ text: String) {
        var heading = ""
        var current: (names: [String], text: String)?
        func finish() {
            guard let entry = current else { return }
            current = nil
            let defaultValue = Self.firstMatch(#"default: ([^)]*)\)"#, in: entry.text)
            let values = Self.firstMatch(#"\(values: ([^;)]*)"#, in: entry.text)?
                .components(separatedBy: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
            options.append(Option(names: entry.names, defaultValue: defaultValue, values: values))
        }
        for line in text.components(separatedBy: "\n") {
            if !line.hasPrefix(" "), line.hasSuffix(":") {
                finish()
                heading = line
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            switch heading {
            case "OPTIONS:":
                // "  -v, --verbose          Log every…"; continuation lines are indented further.
                if line.hasPrefix("  -") {
                    finish()
                    let head = trimmed.components(separatedBy: "  ").first ?? trimmed
                    let names = head.components(separatedBy: CharacterSet(charactersIn: ", ")).filter { $0.hasPrefix("-") }
                    current = (names, String(trimmed.dropFirst(head.count)))
                } else if current != nil {
                    current!.text += " " + trimmed
                }
            case "ARGUMENTS:":
                if line.hasPrefix("  <"), let end = trimmed.firstIndex(of: ">") {
                    arguments.append(String(trimmed[trimmed.index(after: trimmed.startIndex)..<end]))
                }
            case "SUBCOMMANDS:":
                // "  demo (default)   Weigh…"; not the closing "  See 'forcescale help…'".
                if line.hasPrefix("  "), !line.hasPrefix("   "), let name = trimmed.components(separatedBy: " ").first,
                   !name.isEmpty, name.allSatisfy({ ("a"..."z").contains($0) || $0 == "-" }) {
                    subcommands.append(name)
                }
            default:
                break
            }
        }
        finish()
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
              let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
              let range = Range(match.range(at: 1), in: text) else { return nil }
        return String(text[range])
    }
}

/// A man page's source, in sections (`.SH` and `.SS`) and the `.TP` entries within them,
/// with the troff escapes that matter here taken out (`\-` is `-`, fonts are dropped).
struct ManPage {
    struct Entry {
        var tags: [String]
        var body: String
        func mentions(_ word: String) -> Bool { ManPage.contains(word, in: tags.joined(separator: " ") + " " + body) }
    }

    struct Section {
        var title: String
        var lines: [String]
        func mentions(_ word: String) -> Bool { ManPage.contains(word, in: lines.joined(separator: "\n")) }

        var entries: [Entry] {
            var entries: [Entry] = []
            var expectingTag = false
            var inEntry = false
            for line in lines {
                if line == ".TP" || line == ".TQ" {
                    if line == ".TP" { entries.append(Entry(tags: [], body: "")) }
                    expectingTag = !entries.isEmpty
                    inEntry = !entries.isEmpty
                } else if expectingTag {
                    entries[entries.count - 1].tags.append(ManPage.words(ofMacroLine: line))
                    expectingTag = false
                } else if [".PP", ".P", ".LP", ".IP", ".RS", ".RE"].contains(where: { line == $0 || line.hasPrefix($0 + " ") }) {
                    inEntry = false
                } else if inEntry {
                    entries[entries.count - 1].body += " " + ManPage.words(ofMacroLine: line)
                }
            }
            return entries
        }

        /// The options that `.TP` entries of this section describe (`--json`, `-v`).
        var describedOptions: [String] {
            entries.flatMap(\.tags).flatMap(ManPage.options(in:))
        }
    }

    let name: String
    let lines: [String]
    let sections: [Section]

    init(named name: String) throws {
        self.name = name
        let source = try String(contentsOf: ManPageTests.manDirectory.appendingPathComponent(name), encoding: .utf8)
        lines = source.components(separatedBy: "\n").filter { !$0.hasPrefix(".\\\"") }.map(Self.plain)
        var sections: [Section] = []
        for line in lines {
            if line.hasPrefix(".SH ") || line.hasPrefix(".SS ") {
                sections.append(Section(title: Self.words(ofMacroLine: line), lines: []))
            } else if !sections.isEmpty {
                sections[sections.count - 1].lines.append(line)
            }
        }
        self.sections = sections
    }

    func section(titled title: String) -> Section? { sections.first { $0.title == title } }

    /// Sections of options shared by several commands: OPTIONS, PIPELINE OPTIONS…
    var optionSections: [Section] { sections.filter { $0.title.lowercased().contains("options") } }

    /// The entries that describe `option`, by any of its names, in the given sections.
    func entries(for option: Help.Option, in sections: [Section]) -> [Entry] {
        sections.flatMap(\.entries).filter { entry in
            entry.tags.contains { !Set(Self.options(in: $0)).isDisjoint(with: option.names) }
        }
    }

    /// The source line with the escapes taken out: `\-` → `-`, font changes and
    /// zero-width characters dropped, special characters as text.
    static func plain(_ line: String) -> String {
        var text = line
        for (escape, replacement) in [
            ("\\-", "-"), ("\\%", ""), ("\\&", ""), ("\\:", ""), ("\\|", ""), ("\\^", ""), ("\\ ", " "), ("\\~", " "),
            ("\\(dq", "\""), ("\\(aq", "'"), ("\\(em", "—"), ("\\(en", "–"), ("\\(lq", "“"), ("\\(rq", "”"), ("\\(bu", "•"),
        ] {
            text = text.replacingOccurrences(of: escape, with: replacement)
        }
        text = text.replacingOccurrences(of: #"\\f(\[[^\]]*\]|\(..|.)"#, with: "", options: .regularExpression)
        return text.replacingOccurrences(of: "\\e", with: "\\")
    }

    /// A line's words: without the macro name (`.BR`, `.TP`…), and without the quotes
    /// that group macro arguments.
    static func words(ofMacroLine line: String) -> String {
        var text = line
        if text.hasPrefix(".") { text = String(text.drop { $0 != " " }) }
        return text.replacingOccurrences(of: "\"", with: "").trimmingCharacters(in: .whitespaces)
    }

    /// `-v` and `--verbose` tokens in a text.
    static func options(in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: #"(?<![A-Za-z0-9-])(--?[A-Za-z][A-Za-z0-9-]*)"#) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } }
    }

    /// Whether `word` occurs in `text` as a whole word: not as part of a longer option, name
    /// or number (`--unit` is not in `--units`, `1.0` is not in `11.05`).
    static func contains(_ word: String, in text: String) -> Bool {
        let wordCharacter: (Character) -> Bool = { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
        var searchStart = text.startIndex
        while let range = text.range(of: word, range: searchStart..<text.endIndex) {
            let before = range.lowerBound == text.startIndex ? nil : text[text.index(before: range.lowerBound)]
            let after = range.upperBound == text.endIndex ? nil : text[range.upperBound]
            // A '.' ends a sentence unless a digit follows it (1.0 is not 1).
            let afterIsPartOfNumber = after == "." && range.upperBound < text.index(before: text.endIndex)
                && text[text.index(after: range.upperBound)].isNumber
            if !(before.map(wordCharacter) ?? false) && before != "." && !(after.map(wordCharacter) ?? false) && !afterIsPartOfNumber {
                return true
            }
            searchStart = text.index(after: range.lowerBound)
        }
        return false
    }
}
