import ArgumentParsing
import ScaleCore

/// The options that set the measuring pipeline, for every program that takes them
/// (`forcescale replay`, `demo`, `read`; `forcescaled` and its configuration keys), so
/// they are spelt, explained and defaulted the same way everywhere: made from the settings'
/// declarations (`Setting.pipeline`).
package enum PipelineOptionDeclarations {
    package static let all: [Option] = Setting.pipeline.compactMap(\.option)
}
