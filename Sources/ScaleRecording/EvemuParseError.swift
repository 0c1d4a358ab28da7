import ScaleCore

/// A line of an evemu recording that could not be read, reported as `file:line: problem`
/// like a compiler does, so editors can jump to it.
package struct EvemuParseError: Error, Equatable, Sendable, CustomStringConvertible {
    package var file: String
    package var line: Int
    package var problem: String

    package init(file: String, line: Int, problem: String) {
        self.file = file
        self.line = line
        self.problem = problem
    }

    package var description: String { "\(file):\(line): \(problem)" }
}
