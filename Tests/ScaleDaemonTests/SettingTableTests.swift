import ArgumentParsing
import ScaleCore
import ScaleOptions
import Testing
@testable import ScaleDaemon

/// The settings' declarations against what the daemon does with them: the configuration
/// file's keys, their defaults, their checks and the values of their flags.
@Suite struct SettingTableTests {
    /// The settings' typed options (`SettingOption`, which the programs declare and read)
    /// are the table's: forcescaled's every option and flag of its settings in the table's
    /// order, repeatable where the table says so, the pipeline's `Setting.pipeline`; each
    /// with its setting's help, default and values. Making them also checks that each
    /// reads its setting's kind and its declared default.
    @Test func theSettingsOptionsAreTheTables() throws {
        let forcescaled = Setting.all.filter { $0.programs.contains(.forcescaled) }
        #expect(SettingOption.forcescaled.map(\.option.long) == forcescaled.flatMap { setting in
            (setting.valueName == nil ? [] : [setting.name]) + setting.flags.map(\.long)
        })
        #expect(SettingOption.forcescaled.filter(\.option.isRepeatable).map(\.option.long)
            == forcescaled.filter { $0.repeatsIn.contains(.forcescaled) }.map(\.name))
        #expect(SettingOption.pipeline.map(\.option.long) == Setting.pipeline.map(\.name))
        for declared in SettingOption.forcescaled.map(\.option) {
            if let setting = Setting.named(declared.long), setting.valueName != nil {
                #expect(declared.valueName == setting.valueName)
                #expect(declared.defaultValue == setting.defaultValue, "--\(declared.long)")
                #expect(declared.allowedValues == setting.choices, "--\(declared.long)")
                #expect(declared.help.hasPrefix(setting.help), "--\(declared.long)")
            } else {
                let flag = try #require(Setting.all.flatMap(\.flags).first { $0.long == declared.long }, "--\(declared.long) is no setting's")
                #expect(declared.help == flag.help && declared.short == flag.short && declared.valueName == nil)
            }
        }
    }

    @Test func theFilesKeysAreTheTablesInItsOrder() {
        #expect(ConfigurationKey.allCases.map(\.rawValue) == Setting.all.filter(\.isInConfigurationFile).map(\.name))
        #expect(ConfigurationKey.allCases.map(\.rawValue) == [
            "device", "interval-ms", "threshold", "hysteresis", "contacts", "unit", "stable-ms", "stable-grams", "rumble",
            "rumble-device", "rumble-intensity", "socket", "state-dir", "group", "control-group", "max-clients", "log-level",
            "log", "log-db", "log-keep-days", "log-keep-readings",
        ])
        for key in ConfigurationKey.allCases {
            #expect(ConfigurationKey(rawValue: key.rawValue) == key)
        }
        #expect(ConfigurationKey(rawValue: "interval_ms") == nil)
    }

    /// The defaults the table declares (and `--help`, the man pages and the shipped file
    /// show) are the ones the daemon runs with.
    @Test(arguments: ConfigurationKey.allCases)
    func theDeclaredDefaultIsTheDaemonsDefault(_ key: ConfigurationKey) {
        guard let declared = key.setting.defaultValue else { return }
        #expect(DaemonConfiguration().text(for: key) == declared)
        // And the file takes it as written.
        var layer = ConfigurationLayer()
        #expect(throws: Never.self) { try layer.set(key, from: declared) }
        #expect(layer.sets(key))
        #expect(DaemonConfiguration(layers: [layer]).text(for: key) == declared)
    }

    @Test func everyKeyHasAFieldInTheLayer() throws {
        // One value each key takes; every key must land in its own field.
        let examples = [
            "device": "pad", "interval-ms": "20", "threshold": "0.5", "hysteresis": "0.1", "contacts": "sum", "unit": "oz",
            "stable-ms": "750", "stable-grams": "1.5", "rumble": "off", "rumble-device": "pad", "rumble-intensity": "0.5",
            "socket": "/run/x.sock", "state-dir": "/var/lib/x", "group": "x", "control-group": "y", "max-clients": "8",
            "log-level": "debug", "log": "on",
            "log-db": "/var/lib/x/log.sqlite", "log-keep-days": "7", "log-keep-readings": "100",
        ]
        var layer = ConfigurationLayer()
        for key in ConfigurationKey.allCases {
            let text = try #require(examples[key.rawValue], "no example for \(key)")
            #expect(!layer.sets(key))
            try layer.set(key, from: text)
            #expect(layer.sets(key), "\(key)")
            #expect(DaemonConfiguration(layers: [layer]).text(for: key) == text, "\(key)")
        }
    }

    @Test func theLevelsAreTheLogsLevels() {
        #expect(Setting.logLevel.choices == DaemonLog.Level.allCases.map(\.name))
        for flag in Setting.logLevel.flags {
            #expect(DaemonLog.Level(name: flag.value) != nil, "--\(flag.long)")
        }
    }

    @Test(arguments: Setting.all)
    func everyFlagSetsAValueItsSettingTakes(_ setting: Setting) {
        for flag in setting.flags {
            #expect(setting.parse(flag.value) != nil, "--\(flag.long) sets \(setting.name) to '\(flag.value)'")
        }
    }

    /// The range checks the file applies come from the declarations; the words too.
    @Test func rangesAndTheirWords() {
        #expect(Setting.intervalMilliseconds.parse("0") == .integer(0))
        #expect(Setting.intervalMilliseconds.parse("86400001") == nil)
        #expect(Setting.stableMilliseconds.parse("0") == nil)
        #expect(Setting.threshold.parse("0") == nil && Setting.threshold.parse("1") == .number(1))
        #expect(Setting.hysteresis.parse("0") == .number(0) && Setting.hysteresis.parse("1.01") == nil)
        #expect(Setting.stableGrams.parse("1e9") == .number(1e9) && Setting.stableGrams.parse("-0.1") == nil)
        #expect(Setting.stableGrams.parse("nan") == nil && Setting.threshold.parse("inf") == nil)
        #expect(Setting.logKeepReadings.parse("1") == .integer(1) && Setting.logKeepReadings.parse("0") == nil)
        #expect(Setting.group.parse("a:b") == nil && Setting.socket.parse("relative.sock") == nil)
        #expect(ConfigurationKey.allCases.map(\.accepted) == [
            "a device path, a part of the device's name, or vendor:product in hex (several separated by commas)",
            "a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)",
            "a force fraction greater than 0 and at most 1",
            "a force fraction from 0 to the threshold",
            "primary, sum or max",
            "g, kg, oz, lb, ct or N",
            "a whole number of milliseconds from 1 to 86400000",
            "a number of grams, 0 or more",
            "on or off",
            "a device path, a part of the device's name, or vendor:product in hex",
            "a fraction from 0 to 1",
            "an absolute path",
            "an absolute path",
            "a group name",
            "a group name",
            "a whole number of clients from 1 to 100000",
            "error, warning, notice, info or debug",
            "on or off",
            "an absolute path",
            "a whole number of days from 1 to 36500",
            "a whole number of readings, 1 or more",
        ])
    }

    @Test func whenAReloadAppliesEachKey() {
        let byReach = Dictionary(grouping: ConfigurationKey.allCases, by: \.reach).mapValues { $0.map(\.rawValue) }
        #expect(byReach[.source] == ["device", "interval-ms", "threshold", "hysteresis", "contacts", "stable-ms", "stable-grams", "rumble", "rumble-device", "rumble-intensity"])
        #expect(byReach[.immediate] == ["log-level", "log-keep-days", "log-keep-readings"])
        #expect(byReach[.stored] == ["unit"])
        #expect(byReach[.restart] == ["socket", "state-dir", "group", "control-group", "max-clients", "log", "log-db"])
        #expect(ConfigurationKey.allCases.filter(\.isPipelineSetting).map(\.rawValue)
            == ["interval-ms", "threshold", "hysteresis", "contacts", "stable-ms", "stable-grams"])
    }
}
