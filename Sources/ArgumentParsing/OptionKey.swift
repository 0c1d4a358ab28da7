/// An option as a command declares it in its configuration: an ``OptionKey``.
package protocol CommandOption: Sendable {
    /// What help, usage lines, errors and completion scripts show of the option, and how
    /// its value is made.
    var option: Option { get }
}

/// A positional argument as a command declares it in its configuration: an ``ArgumentKey``.
package protocol CommandArgument: Sendable {
    /// What help, usage lines and errors show of the argument, and how its value is made.
    var argument: Argument { get }
}

/// A named option or flag declared once, as a value that is also the key its parsed value
/// is read by, with its type: a command lists it in its configuration (which makes the
/// help, the usage line, the man pages' source and the completion scripts) and reads
/// `command[key]` in its run. A name mistyped at either place does not compile, and the
/// value arrives converted and checked (`--timeout abc` is a usage error before the
/// command runs).
///
///     static let timeout = OptionKey<Double>("timeout", valueName: "seconds", help: "…", parser: .number, default: 30)
///     static let json = OptionKey(flag: "json", help: "Print JSON.")
///     …
///     let seconds = command[Self.timeout]
///
/// As with swift-argument-parser's `@Option`, the type says what happens when the option
/// is not given: an optional value is `nil` (or the default given), a value with a default
/// is that default, a value with neither must be given, and an array collects every
/// appearance of a repeatable option.
package struct OptionKey<Value: Sendable>: CommandOption {
    package let option: Option

    private init(option: Option) {
        self.option = option
    }
}

extension OptionKey where Value == Bool {
    /// A flag: `true` when given.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - help: One line for the `OPTIONS` section.
    package init(flag long: String, short: Character? = nil, help: String) {
        self.init(option: Option(long: long, short: short, help: help) { occurrences in !occurrences.isEmpty })
    }
}

extension OptionKey {
    /// An option that may be left out: the last value given, else `defaultValue`, else `nil`.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder, shown as `<valueName>`.
    ///   - help: One line for the `OPTIONS` section.
    ///   - parser: Reads the value.
    ///   - defaultValue: The value when the option is not given.
    ///   - shownDefault: The default as help shows it, when not as the parser writes it.
    package init<Wrapped>(
        _ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Wrapped>,
        default defaultValue: Wrapped? = nil, shownDefault: String? = nil
    ) where Value == Wrapped? {
        self.init(option: Option(
            long: long, short: short, valueName: valueName, help: help,
            defaultValue: shownDefault ?? defaultValue.map(parser.describe), allowedValues: parser.allowedValues
        ) { occurrences throws(OptionValueError) in
            try occurrences.map { occurrence throws(OptionValueError) in try parse(occurrence, with: parser) }.last ?? defaultValue
        })
    }

    /// An option with a default: the last value given, else `defaultValue`.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder, shown as `<valueName>`.
    ///   - help: One line for the `OPTIONS` section.
    ///   - parser: Reads the value.
    ///   - defaultValue: The value when the option is not given.
    ///   - shownDefault: The default as help shows it, when not as the parser writes it
    ///     (`60` for the number 60.0).
    package init(
        _ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Value>,
        default defaultValue: Value, shownDefault: String? = nil
    ) {
        self.init(option: Option(
            long: long, short: short, valueName: valueName, help: help,
            defaultValue: shownDefault ?? parser.describe(defaultValue), allowedValues: parser.allowedValues
        ) { occurrences throws(OptionValueError) in
            try occurrences.map { occurrence throws(OptionValueError) in try parse(occurrence, with: parser) }.last ?? defaultValue
        })
    }

    /// An option the command cannot run without: parsing stops with a usage error when it
    /// is not given (`Missing expected argument '--weights <list>'`).
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder, shown as `<valueName>`.
    ///   - help: One line for the `OPTIONS` section.
    ///   - parser: Reads the value.
    package init(_ long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Value>) {
        self.init(option: Option(
            long: long, short: short, valueName: valueName, help: help, allowedValues: parser.allowedValues, isRequired: true
        ) { occurrences throws(OptionValueError) in
            guard let last = try occurrences.map({ occurrence throws(OptionValueError) in try parse(occurrence, with: parser) }).last else {
                preconditionFailure("--\(long) is required: parsing stops with a usage error when it is not given")
            }
            return last
        })
    }

    /// A repeatable option: every value given, in order; none when it is not given.
    ///
    /// - Parameters:
    ///   - long: The long name without dashes.
    ///   - short: An optional one-letter name.
    ///   - valueName: The value's placeholder, shown as `<valueName>`.
    ///   - help: One line for the `OPTIONS` section.
    ///   - parser: Reads each value.
    package init<Element>(
        repeating long: String, short: Character? = nil, valueName: String, help: String, parser: ValueParser<Element>
    ) where Value == [Element] {
        self.init(option: Option(
            long: long, short: short, valueName: valueName, help: help, allowedValues: parser.allowedValues, isRepeatable: true
        ) { occurrences throws(OptionValueError) in
            try occurrences.map { occurrence throws(OptionValueError) in try parse(occurrence, with: parser) }
        })
    }
}

/// The value of one appearance of an option.
private func parse<Value>(_ occurrence: OptionOccurrence, with parser: ValueParser<Value>) throws(OptionValueError) -> Value {
    do throws(InvalidValue) {
        return try parser.parse(occurrence.value ?? "")
    } catch {
        throw OptionValueError(occurrence: occurrence, problem: error)
    }
}

/// A positional argument declared once, as a value that is also the key its parsed value
/// is read by, with its type: `command[Self.file]`. Its type says whether it may be left
/// out (an optional) or takes every remaining value (an array).
package struct ArgumentKey<Value: Sendable>: CommandArgument {
    package let argument: Argument

    private init(argument: Argument) {
        self.argument = argument
    }

    /// An argument the command cannot run without.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line for the `ARGUMENTS` section.
    ///   - parser: Reads the value.
    package init(_ name: String, help: String, parser: ValueParser<Value>) {
        self.init(argument: Argument(name: name, help: help) { texts throws(ArgumentValueError) in
            guard let text = texts.first else {
                preconditionFailure("<\(name)> is required: parsing stops with a usage error when it is not given")
            }
            return try parse(text, with: parser)
        })
    }

    /// An argument that may be left out: `nil` then.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line for the `ARGUMENTS` section.
    ///   - parser: Reads the value.
    package init<Wrapped>(_ name: String, help: String, parser: ValueParser<Wrapped>) where Value == Wrapped? {
        self.init(argument: Argument(name: name, help: help, isOptional: true) { texts throws(ArgumentValueError) in
            guard let text = texts.first else { return Wrapped?.none }
            return Wrapped?.some(try parse(text, with: parser))
        })
    }

    /// An argument that takes every remaining value; declare it last.
    ///
    /// - Parameters:
    ///   - name: The name shown as `<name>`.
    ///   - help: One line for the `ARGUMENTS` section.
    ///   - isOptional: Whether the command runs without any value.
    ///   - parser: Reads each value.
    package init<Element>(repeating name: String, help: String, isOptional: Bool, parser: ValueParser<Element>) where Value == [Element] {
        self.init(argument: Argument(name: name, help: help, isOptional: isOptional, isRepeating: true) { texts throws(ArgumentValueError) in
            try texts.map { text throws(ArgumentValueError) in try parse(text, with: parser) }
        })
    }
}

/// The value of one text taken by a positional argument.
private func parse<Value>(_ text: String, with parser: ValueParser<Value>) throws(ArgumentValueError) -> Value {
    do throws(InvalidValue) {
        return try parser.parse(text)
    } catch {
        throw ArgumentValueError(text: text, problem: error)
    }
}
