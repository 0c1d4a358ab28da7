import Foundation
import ScaleOptions
import Testing

/// The settings' declarations (`Setting.all`) against everything that describes them
/// outside the code, so that none of it can drift: each man page's entry for an option or a
/// key gives the declared help sentence and default, the shipped `etc/forcescale.conf`
/// shows every key with its default, and each program's `--help` takes exactly the
/// settings the table says it takes.
@Suite struct SettingDocumentationTests {
    // MARK: - Man pages

    /// forcescaled(8) and forcescale(1): the entry of every option and flag of a setting,
    /// for every program that takes it.
    @Test(arguments: Setting.all)
    func optionEntriesGiveTheDeclaredHelpAndDefault(_ setting: Setting) throws {
        for program in Setting.Program.allCases where setting.programs.contains(program) {
            let (page, sections) = try Self.optionSections(for: program)
            if setting.valueName != nil {
                let entries = Self.entries(for: "--\(setting.name)", in: sections, of: page)
                #expect(!entries.isEmpty, "man/\(page.name) has no entry for --\(setting.name) of '\(program.commandName)'")
                for entry in entries {
                    Self.expect(entry, in: page, of: "--\(setting.name)", says: setting.help)
                    if let value = setting.defaultValue {
                        Self.expect(entry, in: page, of: "--\(setting.name)", says: "Default: \(value).")
                    }
                }
            }
            for flag in setting.flags {
                let entries = Self.entries(for: "--\(flag.long)", in: sections, of: page)
                #expect(!entries.isEmpty, "man/\(page.name) has no entry for --\(flag.long) of '\(program.commandName)'")
                for entry in entries { Self.expect(entry, in: page, of: "--\(flag.long)", says: flag.help) }
            }
        }
    }

    /// forcescale.conf(5): one entry per key, with the declared help and default, and no
    /// entry for a key the file does not take.
    @Test func keyEntriesGiveTheDeclaredHelpAndDefault() throws {
        let page = try ManPage(named: "forcescale.conf.5")
        var described: [String: [ManPage.Entry]] = [:]
        for entry in page.sections.flatMap(\.entries) {
            guard let tag = entry.tags.first, let key = Self.key(inTag: tag) else { continue }
            described[key, default: []].append(entry)
        }
        let keys = Setting.all.compactMap(\.configurationKey)
        for key in described.keys {
            #expect(keys.contains(key), "man/forcescale.conf.5 describes the key '\(key)', which the configuration file does not take")
        }
        for setting in Setting.all {
            guard let key = setting.configurationKey else { continue }
            let entries = described[key] ?? []
            #expect(entries.count == 1, "man/forcescale.conf.5 has \(entries.count) entries for '\(key) = …'")
            for entry in entries {
                Self.expect(entry, in: page, of: key, says: setting.help)
                if let value = setting.defaultValue { Self.expect(entry, in: page, of: key, says: "Default: \(value).") }
            }
        }
    }

    // MARK: - The shipped configuration file

    /// `etc/forcescale.conf`: every key, commented out, the first time with its default
    /// when it has one; nothing set, and no key the parser does not know.
    @Test func theShippedFileShowsEveryKeyWithItsDefault() throws {
        let text = try String(contentsOf: CLI.packageRoot.appendingPathComponent("etc/forcescale.conf"), encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"^(#?)([a-z][a-z0-9-]*) = (.*)$"#)
        var shown: [(key: String, value: String)] = []
        for line in text.components(separatedBy: "\n") {
            guard let match = pattern.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) else { continue }
            let part = { (index: Int) in String(line[Range(match.range(at: index), in: line)!]) }
            #expect(part(1) == "#", "etc/forcescale.conf sets '\(line)'; every key there is commented out")
            shown.append((part(2), part(3)))
        }
        let keys = Setting.all.compactMap(\.configurationKey)
        for (key, _) in shown {
            #expect(keys.contains(key), "etc/forcescale.conf shows '\(key)', which is not a key of the configuration file")
        }
        for setting in Setting.all {
            guard let key = setting.configurationKey else { continue }
            let values = shown.filter { $0.key == key }.map(\.value)
            #expect(!values.isEmpty, "etc/forcescale.conf does not show the key '\(key)'")
            if let value = setting.defaultValue {
                #expect(values.first == value, "etc/forcescale.conf shows '#\(key) = \(values.first ?? "")', but its default is \(value)")
            }
        }
        // In the table's order, as the parser lists the keys.
        var seen: [String] = []
        for (key, _) in shown where seen.last != key { seen.append(key) }
        #expect(seen == keys, "etc/forcescale.conf shows the keys in another order than the table")
    }

    // MARK: - The programs' help

    /// Each program's `--help` lists the options and flags of exactly the settings the
    /// table gives it, with the declared defaults and values.
    @Test(arguments: Setting.Program.allCases)
    func eachProgramTakesItsSettings(_ program: Setting.Program) throws {
        let help = program == .forcescaled
            ? Help(try ManPageTests.output(["--help"], product: "forcescaled"))
            : try ManPageTests.help(of: program.rawValue)
        #expect(!help.options.isEmpty, "could not read the options of '\(program.commandName) --help'")
        for setting in Setting.all {
            let names = (setting.valueName == nil ? [] : [setting.name]) + setting.flags.map(\.long)
            for name in names {
                let listed = help.options.first { $0.names.contains("--\(name)") }
                if setting.programs.contains(program) {
                    #expect(listed != nil, "'\(program.commandName) --help' does not list --\(name), which the table gives it")
                } else if listed != nil, Self.otherMeanings[program]?.contains(name) != true {
                    Issue.record("'\(program.commandName) --help' lists --\(name), but the table does not give \(program) the setting '\(setting.name)'")
                }
                // The defaults and values are the option's; a flag of the same name has none.
                guard let listed, name == setting.name, setting.valueName != nil, setting.programs.contains(program) else { continue }
                #expect(listed.defaultValue == setting.defaultValue ?? setting.defaultDescription,
                        "'\(program.commandName) --help' gives --\(name) the default \(listed.defaultValue ?? "none")")
                #expect(listed.values == (setting.choices ?? []), "'\(program.commandName) --help' gives --\(name) the values \(listed.values)")
            }
        }
    }

    /// Options that share a setting's name but mean something else there: the unit of the
    /// gauge (not the unit the daemon suggests to its clients), the socket of the daemon to
    /// play through (not the one to listen on).
    static let otherMeanings: [Setting.Program: Set<String>] = [
        .demo: ["unit"], .replay: ["unit"], .read: ["unit"], .rumble: ["socket"],
    ]

    // MARK: - Reading the pages

    /// The page and its sections where a program's options are described: forcescaled's
    /// OPTIONS and "Pipeline options"; a subcommand's own section, then the options shared
    /// by several.
    static func optionSections(for program: Setting.Program) throws -> (ManPage, [[ManPage.Section]]) {
        if program == .forcescaled {
            let page = try ManPage(named: "forcescaled.8")
            return (page, [page.optionSections])
        }
        let page = try ManPage(named: "forcescale.1")
        let own = try #require(page.section(titled: program.commandName), "man/forcescale.1 has no section '\(program.commandName)'")
        return (page, [[own], page.optionSections])
    }

    /// The entries for an option in the first group of sections that has any.
    static func entries(for option: String, in groups: [[ManPage.Section]], of page: ManPage) -> [ManPage.Entry] {
        for sections in groups {
            let found = page.entries(for: Help.Option(names: [option]), in: sections)
            if !found.isEmpty { return found }
        }
        return []
    }

    /// `interval-ms` for the tag `interval-ms = ms`.
    static func key(inTag tag: String) -> String? {
        guard let range = tag.range(of: #"^[a-z][a-z0-9-]* ="#, options: .regularExpression) else { return nil }
        return String(tag[range].dropLast(2))
    }

    /// Expects the entry's text to contain `words`, spaces and line breaks aside.
    static func expect(_ entry: ManPage.Entry, in page: ManPage, of subject: String, says words: String) {
        let body = normalized(entry.body)
        #expect(body.contains(normalized(words)), "man/\(page.name), the entry of \(subject), does not say \"\(words)\": \(body)")
    }

    /// The text with runs of blanks made one space, and none before `.,;:)` or after `(`:
    /// how a man page's source reads once its macros are taken out.
    static func normalized(_ text: String) -> String {
        var result = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).joined(separator: " ")
        for (spaced, tight) in [(" .", "."), (" ,", ","), (" ;", ";"), (" :", ":"), (" )", ")"), ("( ", "(")] {
            result = result.replacingOccurrences(of: spaced, with: tight)
        }
        return result
    }
}

extension Setting: CustomTestStringConvertible {
    public var testDescription: String { name }
}
