/// A line of an evemu recording that could not be read, reported as `file:line: problem`
/// like a compiler does, so editors can jump to it.
public struct EvemuParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var problem: String

    public init(file: String, line: Int, problem: String) {
        self.file = file
        self.line = line
        self.problem = problem
    }

    public var description: String { "\(file):\(line): \(problem)" }
}
