import ArgumentParsing
import ScaleCore

/// The options that set the measuring pipeline, declared once for every program that takes
/// them (`forcescale replay`, `demo`, `read`; `forcescaled` and its configuration keys), so
/// they are spelt, explained and defaulted the same way everywhere.
public enum PipelineOptionDeclarations {
    public static let all: [Option] = [
        Option(long: "interval-ms", valueName: "ms", help: "Minimum time between two readings; 0 lets every frame through.", defaultValue: "10"),
        Option(long: "threshold", valueName: "force", help: "Force (0 to 1) at which a PEAK fires; 1 is saturation.", defaultValue: "1.0"),
        Option(long: "hysteresis", valueName: "force", help: "How far force must fall below the threshold before the next PEAK.", defaultValue: "0.05"),
        Option(long: "contacts", valueName: "mode", help: "Which contacts make the force: the oldest, their sum or the hardest.", defaultValue: "primary", allowedValues: ContactMode.allCases.map(\.rawValue)),
        Option(long: "stable-ms", valueName: "ms", help: "How long a weight must hold still to be stable.", defaultValue: "500"),
        Option(long: "stable-grams", valueName: "grams", help: "The largest spread that still counts as holding still.", defaultValue: "2.0"),
    ]
}
