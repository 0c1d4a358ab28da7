/// One appearance of an option on the command line.
struct OptionOccurrence: Sendable {
    /// The name as typed, `--unit` or `-u`, so errors can quote it back.
    var spelling: String
    /// The value given, or `nil` for a flag.
    var value: String?
}

/// The options declared along a command chain and what was typed for each.
struct OptionValues: Sendable {
    /// The declared options by long name; a subcommand's declaration replaces its parent's.
    private(set) var declared: [String: Option] = [:]
    /// Every appearance of each option by long name, in command-line order.
    private(set) var occurrences: [String: [OptionOccurrence]] = [:]

    /// Makes a command's options known, shadowing any parent option of the same long name.
    ///
    /// - Parameter options: The command's declared options.
    mutating func declare(_ options: [Option]) {
        for option in options {
            declared[option.long] = option
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
    mutating func record(_ option: Option, spelledAs spelling: String, value: String?) {
        occurrences[option.long, default: []].append(OptionOccurrence(spelling: spelling, value: value))
    }
}
