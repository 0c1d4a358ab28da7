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

    static let declarations: [Option] = [
        Option(long: "json", help: "Print JSON lines in the protocol's shape instead of the gauge."),
        Option(long: "unit", valueName: "unit", help: "Unit of the gauge; JSON always carries grams.", defaultValue: "g", allowedValues: MassUnit.allCases.map(\.rawValue)),
    ] + PipelineOptionDeclarations.all

    static let recordingDeviceDeclaration = Option(
        long: "recording-device", valueName: "node|name|index",
        help: "Of a libinput record (YAML) with several devices, play this one: its node (event9), a part of its name, or its place in the list (1 is the first). An evemu recording holds one device and refuses it.")
    static let realtimeDeclaration = Option(long: "realtime", help: "Pace the output by the recording's timestamps instead of going as fast as possible.")

    /// Reads and checks the options.
    /// - Throws: `UsageError` for a value that is malformed or out of range.
    init(_ command: ParsedCommand) throws {
        json = command.flag("json")
        unit = MassUnit(rawValue: command.string("unit") ?? "g") ?? .grams
        settings.contactMode = command.string(.contacts).flatMap(ContactMode.init(rawValue:))
        if let interval = try command.int(.intervalMilliseconds) { settings.throttleInterval = Int64(interval) * 1000 }
        if let threshold = try command.double(.threshold) { settings.peakThreshold = threshold }
        if let hysteresis = try command.double(.hysteresis) { settings.peakHysteresis = hysteresis }
        if let window = try command.int(.stableMilliseconds) { settings.stabilityWindow = Int64(window) * 1000 }
        if let span = try command.double(.stableGrams) { settings.stabilitySpan = span }
        do {
            try settings.validate()
        } catch {
            throw command.usageError(error.description)
        }
    }
}
