import ArgumentParsing
import ScaleCore
import ScaleOptions

/// The options that shape the pipeline and its output, shared by every command that shows
/// readings (replay, demo, and later read and watch), so they spell them the same way.
struct PipelineOptions {
    var settings = ScaleSettings()
    var json = false
    var unit = MassUnit.grams
    /// Set by the command: replay takes `--realtime`, the demo is paced unless `--fast`.
    var realtime = false

    static let json = OptionKey(flag: "json", help: "Print JSON lines in the protocol's shape instead of the gauge.")
    static let unit = OptionKey<MassUnit>("unit", valueName: "unit", help: "Unit of the gauge; JSON always carries grams.", parser: .choice, default: .grams)

    /// `--json`, `--unit` and the pipeline's settings.
    static let declarations: [any CommandOption] = [json, unit] + SettingOption.pipeline

    static let recordingDevice = OptionKey<String?>(
        "recording-device", valueName: "node|name|index",
        help: "Of a libinput record (YAML) with several devices, play this one: its node (event9), a part of its name, or its place in the list (1 is the first). An evemu recording holds one device and refuses it.",
        parser: .text)
    static let realtime = OptionKey(flag: "realtime", help: "Pace the output by the recording's timestamps instead of going as fast as possible.")

    /// Reads and checks the options.
    /// - Throws: `UsageError` for values that do not make a pipeline.
    init(_ command: ParsedCommand) throws {
        json = command[Self.json]
        unit = command[Self.unit]
        settings.contactMode = command[SettingOption.contacts]
        if let interval = command[SettingOption.intervalMilliseconds] { settings.throttleInterval = Int64(interval) * 1000 }
        if let threshold = command[SettingOption.threshold] { settings.peakThreshold = threshold }
        if let hysteresis = command[SettingOption.hysteresis] { settings.peakHysteresis = hysteresis }
        if let window = command[SettingOption.stableMilliseconds] { settings.stabilityWindow = Int64(window) * 1000 }
        if let span = command[SettingOption.stableGrams] { settings.stabilitySpan = span }
        do {
            try settings.validate()
        } catch {
            throw command.usageError(error.description)
        }
    }
}
