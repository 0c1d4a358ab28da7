import ArgumentParsing
import ScaleCore

/// The settings' command-line options as typed keys, each declared once from its setting
/// (its name, help and default), for the programs to declare and read: a command lists
/// `SettingOption.threshold` among its options and reads `command[SettingOption.threshold]`.
package enum SettingOption {
    package static let device: OptionKey<String?> = Setting.device.option(.text)
    /// `--device`, as forcescaled takes it: several times for several devices.
    package static let devices: OptionKey<[String]> = Setting.device.repeatingOption(.text)
    package static let intervalMilliseconds: OptionKey<Int?> = Setting.intervalMilliseconds.option(.integer)
    package static let threshold: OptionKey<Double?> = Setting.threshold.option(.number)
    package static let hysteresis: OptionKey<Double?> = Setting.hysteresis.option(.number)
    package static let contacts: OptionKey<ContactMode?> = Setting.contacts.option(.choice)
    package static let unit: OptionKey<MassUnit?> = Setting.unit.option(.choice)
    package static let stableMilliseconds: OptionKey<Int?> = Setting.stableMilliseconds.option(.integer)
    package static let stableGrams: OptionKey<Double?> = Setting.stableGrams.option(.number)
    package static let rumbleDevice: OptionKey<String?> = Setting.rumbleDevice.option(.text)
    package static let rumbleIntensity: OptionKey<Double?> = Setting.rumbleIntensity.option(.number)
    package static let socket: OptionKey<String?> = Setting.socket.option(.text)
    package static let stateDirectory: OptionKey<String?> = Setting.stateDirectory.option(.text)
    package static let group: OptionKey<String?> = Setting.group.option(.text)
    package static let controlGroup: OptionKey<String?> = Setting.controlGroup.option(.text)
    package static let maximumClients: OptionKey<Int?> = Setting.maximumClients.option(.integer)
    package static let logDatabase: OptionKey<String?> = Setting.logDatabase.option(.text)
    package static let logKeepDays: OptionKey<Int?> = Setting.logKeepDays.option(.integer)
    package static let logKeepReadings: OptionKey<Int?> = Setting.logKeepReadings.option(.integer)

    /// The options that set the measuring pipeline, for every program that takes them
    /// (`forcescale replay`, `demo`, `read`; `forcescaled`), so that they are spelt,
    /// explained and defaulted the same way everywhere: `Setting.pipeline`, in its order.
    package static let pipeline: [any CommandOption] = [
        intervalMilliseconds, threshold, hysteresis, contacts, stableMilliseconds, stableGrams,
    ]

    /// Every option and flag of forcescaled's settings, in the table's order (each
    /// setting's `--name <value>`, then its flags): what `Setting.all` gives forcescaled.
    package static let forcescaled: [any CommandOption] = [
        devices, intervalMilliseconds, threshold, hysteresis, contacts, unit, stableMilliseconds, stableGrams,
        Setting.Flag.noRumble.option, rumbleDevice, rumbleIntensity, socket, stateDirectory, group, controlGroup, maximumClients,
        Setting.Flag.verbose.option, Setting.Flag.quiet.option, Setting.Flag.log.option, Setting.Flag.noLog.option,
        logDatabase, logKeepDays, logKeepReadings,
    ]
}
