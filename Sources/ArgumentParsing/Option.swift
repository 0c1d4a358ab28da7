/// A named option (`--unit kg`) or flag (`--json`) of a command, declared as data.
package struct Option: Sendable {
    /// The long name without dashes, such as `interval-ms`.
    package var long: String
    /// An optional one-letter name, given as `-o`.
    package var short: Character?
    /// The placeholder for the value, shown as `<n>`; `nil` makes the option a flag.
    package var valueName: String?
    /// One line describing the option, shown in the `OPTIONS` section.
    package var help: String
    /// The value used when the option is not given, shown as `(default: 10)`.
    package var defaultValue: String?
    /// The only values accepted, checked while parsing and shown as `(values: a, b)`.
    package var allowedValues: [String]?
    /// Whether the option may be given several times to collect several values.
    package var isRepeatable: Bool
    /// Whether the command refuses to run without the option (and without a default).
    package var isRequired: Bool

    /// Declares an option or flag.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder; `nil` declares a flag.
    ///   - help: One line describing the option.
    ///   - defaultValue: The value used when the option is not given.
    ///   - allowedValues: The only values accepted.
    ///   - isRepeatable: Whether the option collects several values.
    ///   - isRequired: Whether the option must be given.
    package init(
        long: String,
        short: Character? = nil,
        valueName: String? = nil,
        help: String = "",
        defaultValue: String? = nil,
        allowedValues: [String]? = nil,
        isRepeatable: Bool = false,
        isRequired: Bool = false
    ) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.allowedValues = allowedValues
        self.isRepeatable = isRepeatable
        self.isRequired = isRequired
    }
}

extension Option {
    /// Whether the option reads a value, as opposed to being a flag.
    var takesValue: Bool { valueName != nil }

    /// Whether the command cannot run without the option being typed.
    var mustBeGiven: Bool { isRequired && takesValue && defaultValue == nil }

    /// The long spelling, such as `--unit`.
    var longSpelling: String { "--\(long)" }

    /// The option as error messages name it, using the spelling the user typed.
    ///
    /// - Parameter spelling: `--unit` or `-u`, as typed.
    /// - Returns: The spelling followed by the value placeholder, such as `--unit <unit>`.
    func synopsis(spelledAs spelling: String) -> String {
        valueName.map { "\(spelling) <\($0)>" } ?? spelling
    }

    /// The label of the option in the `OPTIONS` section, such as `-o, --output <file>`.
    var helpLabel: String {
        let names = [short.map { "-\($0)" }, longSpelling].compactMap { $0 }.joined(separator: ", ")
        return valueName.map { "\(names) <\($0)>" } ?? names
    }

    /// The option as it appears on the `USAGE` line, such as `[--unit <unit>]`.
    var usageSynopsis: String {
        var synopsis = synopsis(spelledAs: longSpelling)
        if isRepeatable { synopsis += " ..." }
        return mustBeGiven ? synopsis : "[\(synopsis)]"
    }

    /// The text of the `OPTIONS` entry: the help followed by the allowed and default values.
    var helpDescription: String {
        let values = (allowedValues ?? []).filter { !$0.isEmpty }
        let defaultText = defaultValue ?? ""
        let annotation: String
        switch (values.isEmpty, defaultText.isEmpty) {
        case (true, true): annotation = ""
        case (false, true): annotation = "(values: \(values.joined(separator: ", ")))"
        case (true, false): annotation = "(default: \(defaultText))"
        case (false, false): annotation = "(values: \(values.joined(separator: ", ")); default: \(defaultText))"
        }
        return [help, annotation].filter { !$0.isEmpty }.joined(separator: " ")
    }
}
