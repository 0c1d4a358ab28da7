import ArgumentParsing

/// One setting of forcescale, declared once: its name (the long option and the
/// configuration file's key), the kind and range of its values, its default, its help, the
/// programs that take it, the flags that set it and how a reload reaches it. The command
/// lines' `Option`s, `--help`, the configuration file parser's keys and range checks come
/// from here; the man pages and `etc/forcescale.conf` are checked against it by tests.
package struct Setting: Hashable, Sendable, CustomStringConvertible {
    /// A program (or subcommand) that takes settings on its command line.
    package enum Program: String, CaseIterable, Hashable, Sendable {
        case demo, replay, read, record, rumble
        case forcescaled

        /// How the man pages and help name it: `forcescale read`, `forcescaled`.
        package var commandName: String {
            self == .forcescaled ? "forcescaled" : "forcescale \(rawValue)"
        }
    }

    /// What values a setting takes; this also decides what the configuration file's error
    /// says the key accepts.
    package enum Kind: Hashable, Sendable {
        /// A whole number of `unit` from `minimum` to `maximum` (without one, any above).
        case wholeNumber(of: String, minimum: Int, maximum: Int?, note: String? = nil)
        /// A number named by `noun` (`a force fraction`): above `minimum` (or at it, when
        /// `minimumIncluded`), at most `maximum`. `maximumName` names an upper limit that
        /// another setting sets (`the threshold`); `maximum` is then the widest it can be.
        case number(noun: String, minimum: Double, minimumIncluded: Bool, maximum: Double?, maximumName: String? = nil)
        /// One of these words.
        case choice([String])
        /// `on` or `off`.
        case onOff
        /// A device as `--device` names one: a path, a part of its name, vendor:product.
        case device
        /// An absolute path.
        case absolutePath
        /// A group's name: no `:`, `/` or blanks.
        case groupName
        /// Any text that is not empty and has no control characters, described by `noun`
        /// (`a host name or address, with an optional :port`); the program checks the rest.
        case text(noun: String)
    }

    /// When a change of the setting takes effect in a running `forcescaled` (SIGHUP).
    package enum Reload: Hashable, Sendable {
        /// The device is reopened (or the recording started over) with the new value.
        case source
        /// Applied at once.
        case immediate
        /// Kept for clients; nothing to apply in the daemon.
        case stored
        /// Takes effect when the daemon restarts.
        case restart
    }

    /// A flag that sets the setting to one value (`--no-rumble` sets `rumble` to `off`).
    package struct Flag: Hashable, Sendable {
        /// The long name without dashes.
        package var long: String
        package var short: Character?
        /// One line for `--help`.
        package var help: String
        /// The value it sets, as the configuration file would spell it.
        package var value: String

        /// - Parameters:
        ///   - long: The long name without dashes.
        ///   - short: An optional one-letter name.
        ///   - help: One line for `--help`.
        ///   - value: The setting's value the flag stands for.
        package init(_ long: String, short: Character? = nil, help: String, sets value: String) {
            self.long = long
            self.short = short
            self.help = help
            self.value = value
        }

        /// The flag as a command declares and reads it.
        package var option: OptionKey<Bool> { OptionKey(flag: long, short: short, help: help) }
    }

    /// A value read from text, checked against the setting's kind and range.
    package enum Value: Hashable, Sendable {
        case integer(Int)
        case number(Double)
        /// A choice, a device, a path or a group name, as written.
        case text(String)
        case toggle(Bool)

        /// The whole number, for `.integer`.
        package var integer: Int? { if case .integer(let value) = self { value } else { nil } }
        /// The number, for `.number`.
        package var number: Double? { if case .number(let value) = self { value } else { nil } }
        /// The text, for `.text`.
        package var text: String? { if case .text(let value) = self { value } else { nil } }
        /// On or off, for `.toggle`.
        package var toggle: Bool? { if case .toggle(let value) = self { value } else { nil } }
    }

    /// The option's long name without dashes, and the configuration file's key.
    package let name: String
    /// The placeholder of `--name <value>`; `nil` when the command line sets the setting
    /// only through `flags` (or not at all).
    package let valueName: String?
    package let kind: Kind
    /// The default as `--help`, the man pages and `etc/forcescale.conf` write it; `nil` when
    /// it is not one value (it depends on the user, or means "none").
    package let defaultValue: String?
    /// The default in words, when there is no `defaultValue`: `keep them`.
    package let defaultDescription: String?
    /// One sentence: `--help`'s line, and the first words of each man page's entry.
    package let help: String
    /// Whether `forcescale.conf` takes the setting, under its `name`.
    package let isInConfigurationFile: Bool
    /// The programs whose command lines take it (by `--name` or by its flags).
    package let programs: Set<Program>
    /// Flags that stand for one of its values.
    package let flags: [Flag]
    /// When a reload applies a change of it.
    package let reload: Reload
    /// The programs whose `--name` may be given several times, each value adding one (the
    /// configuration file then takes a comma-separated list).
    package let repeatsIn: Set<Program>

    /// Declares a setting.
    /// - Parameters:
    ///   - name: The long option's name and the configuration key.
    ///   - valueName: The value's placeholder; `nil` for a setting without `--name <value>`.
    ///   - kind: Its values.
    ///   - defaultValue: The default as written.
    ///   - defaultDescription: The default in words, when it is not one value.
    ///   - help: One sentence.
    ///   - inConfigurationFile: Whether `forcescale.conf` has the key.
    ///   - programs: Who takes it on the command line.
    ///   - flags: Flags for some of its values.
    ///   - reload: When a reload applies it.
    ///   - repeatsIn: The programs that take it several times.
    package init(
        _ name: String, valueName: String?, kind: Kind, defaultValue: String? = nil, defaultDescription: String? = nil,
        help: String, inConfigurationFile: Bool = true, programs: Set<Program>, flags: [Flag] = [], reload: Reload,
        repeatsIn: Set<Program> = []
    ) {
        self.name = name
        self.valueName = valueName
        self.kind = kind
        self.defaultValue = defaultValue
        self.defaultDescription = defaultDescription
        self.help = help
        self.isInConfigurationFile = inConfigurationFile
        self.programs = programs
        self.flags = flags
        self.reload = reload
        self.repeatsIn = repeatsIn
    }

    /// The configuration file's key, when the file takes the setting.
    package var configurationKey: String? { isInConfigurationFile ? name : nil }

    package var description: String { name }

    // MARK: - The command line

    /// `--name <value>` as a typed key read by `parser`: the last value given, else the
    /// default, else `nil`. The help names a default that is not one value in words, as
    /// `(default: keep them)`.
    ///
    /// The parser must read the setting's kind (whole numbers as `Int`, numbers as
    /// `Double`, a choice's words): a key that does not is a declaration that no command
    /// line could use, and stops the program when it is made.
    /// - Parameter parser: Reads the value.
    package func option<Value>(_ parser: ValueParser<Value>) -> OptionKey<Value?> {
        switch kind {
        case .wholeNumber: precondition(Value.self == Int.self, "the setting '\(name)' takes whole numbers, read as Int")
        case .number: precondition(Value.self == Double.self, "the setting '\(name)' takes numbers, read as Double")
        case .choice(let words): precondition(parser.allowedValues == words, "the setting '\(name)' takes the words \(words)")
        case .onOff, .device, .absolutePath, .groupName, .text: break
        }
        return key(parser)
    }

    /// `--name <value>` as its text, for a program that reads its settings' values the way
    /// its configuration file reads them (forcescale-mqtt): the last text given, else the
    /// default, else `nil`.
    package var textOption: OptionKey<String?> {
        key(choices.map(ValueParser.oneOf) ?? .text)
    }

    /// `--name <value>`, given several times for several values: every value given, in order.
    /// - Parameter parser: Reads each value.
    package func repeatingOption<Value>(_ parser: ValueParser<Value>) -> OptionKey<[Value]> {
        guard let valueName else { preconditionFailure("the setting '\(name)' has no --\(name) <value>") }
        return OptionKey(repeating: name, valueName: valueName, help: help + defaultWords, parser: parser)
    }

    /// The key of `--name <value>`.
    private func key<Value>(_ parser: ValueParser<Value>) -> OptionKey<Value?> {
        guard let valueName else { preconditionFailure("the setting '\(name)' has no --\(name) <value>") }
        let typedDefault = defaultValue.map { text in
            do throws(InvalidValue) {
                return try parser.parse(text)
            } catch {
                preconditionFailure("the default '\(text)' of the setting '\(name)' is not a value of its option")
            }
        }
        return OptionKey(name, valueName: valueName, help: help + defaultWords, parser: parser, default: typedDefault, shownDefault: defaultValue)
    }

    /// ` (default: keep them)`: the default in words, for a setting whose default is not one value.
    private var defaultWords: String {
        defaultValue == nil ? defaultDescription.map { " (default: \($0))" } ?? "" : ""
    }

    /// The words of a `choice`, `nil` for other kinds.
    package var choices: [String]? {
        if case .choice(let words) = kind { return words }
        return nil
    }

    // MARK: - Values

    /// Reads a value as the configuration file writes it.
    /// - Parameter text: The value, trimmed.
    /// - Returns: The value, or `nil` when the setting does not take it (empty, malformed or
    ///   out of range); `accepted` then says what it takes.
    package func parse(_ text: String) -> Value? {
        guard !text.isEmpty else { return nil }
        switch kind {
        case .wholeNumber(_, let minimum, let maximum, _):
            guard let value = Int(text), value >= minimum, maximum.map({ value <= $0 }) ?? true else { return nil }
            return .integer(value)
        case .number:
            guard let value = Double(text), accepts(value) else { return nil }
            return .number(value)
        case .choice(let words):
            return words.contains(text) ? .text(text) : nil
        case .onOff:
            switch text {
            case "on": return .toggle(true)
            case "off": return .toggle(false)
            default: return nil
            }
        case .device:
            return .text(text)
        case .absolutePath:
            return text.hasPrefix("/") ? .text(text) : nil
        case .groupName:
            return text.contains(where: { $0 == ":" || $0 == "/" || $0.isWhitespace }) ? nil : .text(text)
        case .text:
            return text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) ? nil : .text(text)
        }
    }

    /// Whether a number is within the setting's range; command lines check their values
    /// with it too (with their own messages).
    /// - Parameter value: The number.
    /// - Returns: `true` when the setting takes it; `false` for infinities, NaN, values out
    ///   of range, and for settings that take no numbers.
    package func accepts(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        switch kind {
        case .wholeNumber(_, let minimum, let maximum, _):
            return value == value.rounded() && value >= Double(minimum) && maximum.map { value <= Double($0) } ?? true
        case .number(_, let minimum, let minimumIncluded, let maximum, _):
            return (minimumIncluded ? value >= minimum : value > minimum) && maximum.map { value <= $0 } ?? true
        default:
            return false
        }
    }

    /// The largest whole number the setting takes, for settings of whole numbers.
    package var maximumWholeNumber: Int? {
        if case .wholeNumber(_, _, let maximum, _) = kind { return maximum }
        return nil
    }

    /// What the setting takes, in the words of the configuration file's errors:
    /// `a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)`.
    package var accepted: String {
        switch kind {
        case .wholeNumber(let unit, let minimum, let maximum, let note):
            let range = maximum.map { "a whole number of \(unit) from \(minimum) to \($0)" } ?? "a whole number of \(unit), \(minimum) or more"
            return range + (note.map { " (\($0))" } ?? "")
        case .number(let noun, let minimum, let minimumIncluded, let maximum, let maximumName):
            let low = Self.shortest(minimum)
            guard let maximum else { return "\(noun), \(low) or more" }
            let high = maximumName ?? Self.shortest(maximum)
            return minimumIncluded ? "\(noun) from \(low) to \(high)" : "\(noun) greater than \(low) and at most \(high)"
        case .choice(let words):
            return Self.spelledOut(words)
        case .onOff:
            return "on or off"
        case .device:
            return "a device path, a part of the device's name, or vendor:product in hex" + (repeatsIn.isEmpty ? "" : " (several separated by commas)")
        case .absolutePath:
            return "an absolute path"
        case .groupName:
            return "a group name"
        case .text(let noun):
            return noun
        }
    }

    /// `0` for 0.0, `0.5` for 0.5: a bound as a person writes it.
    static func shortest(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : "\(number)"
    }

    /// `a, b or c`.
    /// - Parameter words: The words, in order.
    /// - Returns: The words joined by commas, the last by "or".
    package static func spelledOut(_ words: [String]) -> String {
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words.last!
    }

    package static func == (lhs: Setting, rhs: Setting) -> Bool { lhs.name == rhs.name }
    package func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
