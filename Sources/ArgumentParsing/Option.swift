/// A named option (`--unit kg`) or flag (`--json`) of a command: what help, usage lines,
/// errors and completion scripts show of it, and how what was typed for it becomes the
/// value the command reads. A command declares it through an ``OptionKey``, which reads
/// that value back with its type.
package struct Option: Sendable {
    /// The long name without dashes, such as `interval-ms`.
    package internal(set) var long: String
    /// An optional one-letter name, given as `-o`.
    package internal(set) var short: Character?
    /// The placeholder for the value, shown as `<n>`; `nil` makes the option a flag.
    package internal(set) var valueName: String?
    /// One line describing the option, shown in the `OPTIONS` section.
    package internal(set) var help: String
    /// The value used when the option is not given, as help shows it: `(default: 10)`.
    package internal(set) var defaultValue: String?
    /// The only values accepted, checked while parsing and shown as `(values: a, b)`.
    package internal(set) var allowedValues: [String]?
    /// Whether the option may be given several times to collect several values.
    package internal(set) var isRepeatable: Bool
    /// Whether the command refuses to run without the option (and without a default).
    package internal(set) var isRequired: Bool
    /// The value the command reads, made from every appearance of the option, in order
    /// (none when it was not given), while the command line is parsed.
    let value: @Sendable ([OptionOccurrence]) throws(OptionValueError) -> any Sendable

    /// Declares an option or flag whose value is, for a flag, whether it was given, and
    /// for an option the last text given, else the default.
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
    init(
        long: String,
        short: Character? = nil,
        valueName: String? = nil,
        help: String = "",
        defaultValue: String? = nil,
        allowedValues: [String]? = nil,
        isRepeatable: Bool = false,
        isRequired: Bool = false
    ) {
        let takesValue = valueName != nil
        self.init(
            long: long, short: short, valueName: valueName, help: help, defaultValue: defaultValue,
            allowedValues: allowedValues, isRepeatable: isRepeatable, isRequired: isRequired
        ) { occurrences in
            guard takesValue else { return !occurrences.isEmpty }
            return occurrences.last?.value ?? defaultValue
        }
    }

    /// Declares an option or flag whose value is made by `value`.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder; `nil` declares a flag.
    ///   - help: One line describing the option.
    ///   - defaultValue: The value used when the option is not given, as help shows it.
    ///   - allowedValues: The only values accepted.
    ///   - isRepeatable: Whether the option collects several values.
    ///   - isRequired: Whether the option must be given.
    ///   - value: Makes the value from the appearances.
    init(
        long: String,
        short: Character? = nil,
        valueName: String? = nil,
        help: String = "",
        defaultValue: String? = nil,
        allowedValues: [String]? = nil,
        isRepeatable: Bool = false,
        isRequired: Bool = false,
        value: @escaping @Sendable ([OptionOccurrence]) throws(OptionValueError) -> any Sendable
    ) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.allowedValues = allowedValues
        self.isRepeatable = isRepeatable
        self.isRequired = isRequired
        self.value = value
    }
}

/// An appearance of an option whose text is not a value of the option's type.
struct OptionValueError: Error {
    /// The appearance, with the spelling and the text as typed.
    var occurrence: OptionOccurrence
    /// What is wrong with the text.
    var problem: InvalidValue
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
