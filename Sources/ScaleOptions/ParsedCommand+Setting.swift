import ArgumentParsing

/// Reading a setting's option by its declaration rather than by a name spelt again: a
/// command declares `Setting.intervalMilliseconds.options` and reads
/// `command.int(.intervalMilliseconds)`.
extension ParsedCommand {
    /// Whether the setting's `--name <value>` option was given.
    /// - Parameter setting: A setting the command declares.
    package func given(_ setting: Setting) -> Bool { flag(setting.name) }

    /// Whether a flag of the setting standing for `value` was given (`--no-rumble` for
    /// `rumble` `off`).
    /// - Parameters:
    ///   - setting: A setting the command declares.
    ///   - value: The value as the configuration file spells it.
    package func flagGiven(_ setting: Setting, for value: String) -> Bool {
        setting.flags.contains { $0.value == value && flag($0.long) }
    }

    /// The option's value: the last one given, else the default.
    package func string(_ setting: Setting) -> String? { string(setting.name) }

    /// The option's value as a whole number.
    /// - Throws: `UsageError` when it is not one.
    package func int(_ setting: Setting) throws(UsageError) -> Int? { try int(setting.name) }

    /// The option's value as a finite number.
    /// - Throws: `UsageError` when it is not one.
    package func double(_ setting: Setting) throws(UsageError) -> Double? { try double(setting.name) }
}
