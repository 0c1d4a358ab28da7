/// One appearance of an option on the command line.
struct OptionOccurrence: Sendable {
    /// The name as typed, `--unit` or `-u`, so errors can quote it back.
    var spelling: String
    /// The value given, or `nil` for a flag.
    var value: String?
    /// Where it was typed among the command line's tokens, so that the first wrong value
    /// typed is the one reported.
    var position: Int
}

/// The options declared along a command chain and what was typed for each.
struct OptionValues: Sendable {
    /// The declared options by long name, in the order they were declared; a subcommand's
    /// declaration replaces its parent's.
    private(set) var declared: [Option] = []
    /// Every appearance of each option by long name, in command-line order.
    private(set) var occurrences: [String: [OptionOccurrence]] = [:]

    /// Makes a command's options known, shadowing any parent option of the same long name.
    ///
    /// - Parameter options: The command's declared options.
    mutating func declare(_ options: [Option]) {
        for option in options {
            declared.removeAll { $0.long == option.long }
            declared.append(option)
            // A parent's values belong to the parent's option, not to this one.
            occurrences[option.long] = nil
        }
    }

    /// Records one appearance of an option.
    ///
    /// - Parameters:
    ///   - option: The declared option.
    ///   - spelling: The name as typed.
    ///   - value: The value given, or `nil` for a flag.
    ///   - position: Where it was typed.
    mutating func record(_ option: Option, spelledAs spelling: String, value: String?, at position: Int) {
        occurrences[option.long, default: []].append(OptionOccurrence(spelling: spelling, value: value, position: position))
    }

    /// The value of every declared option, each made from its appearances by its declaration.
    ///
    /// - Returns: The values by long name.
    /// - Throws: The error of the first text typed, in command-line order, that is not a
    ///   value of its option's type, with the option.
    func values() throws(ValueConversionError) -> [String: any Sendable] {
        var values: [String: any Sendable] = [:]
        var first: ValueConversionError?
        for option in declared {
            do throws(OptionValueError) {
                values[option.long] = try option.value(occurrences[option.long] ?? [])
            } catch {
                if error.occurrence.position < first?.error.occurrence.position ?? .max {
                    first = ValueConversionError(option: option, error: error)
                }
            }
        }
        if let first { throw first }
        return values
    }
}

/// A text typed for an option that is not a value of its type, with the option.
struct ValueConversionError: Error {
    var option: Option
    var error: OptionValueError
}
