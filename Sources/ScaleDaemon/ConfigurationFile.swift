import ScaleCore
import ScaleOptions
import ScalePOSIX

/// Why a configuration file cannot be used: every problem found, each with its line
/// (none for the file as a whole: missing, unreadable, too big).
package struct ConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    struct Problem: Equatable, Sendable, CustomStringConvertible {
        var line: Int?
        var message: String
        init(line: Int?, message: String) {
            self.line = line
            self.message = message
        }
        var description: String { line.map { "\($0): \(message)" } ?? message }
    }

    var path: String
    var problems: [Problem]

    init(path: String, problems: [Problem]) {
        self.path = path
        self.problems = problems
    }

    init(path: String, line: Int?, message: String) {
        self.init(path: path, problems: [Problem(line: line, message: message)])
    }

    /// One `FILE:LINE: message` per problem, for the log.
    package var lines: [String] { problems.map { "\(path):\($0.line.map { "\($0):" } ?? "") \($0.message)" } }

    package var description: String { lines.joined(separator: "\n") }
}

/// `forcescale.conf`: `key = value` lines, `#` comments, blank lines.
///
/// - Whitespace around keys, `=` and values is ignored; so is a `\r` before the newline.
/// - A `#` starts a comment at the start of a line, or after whitespace within one
///   (`interval-ms = 20  # faster`); to keep a `#` or edge spaces in a value, put the
///   value in double quotes (`device = "Pad #2"`), where `\"` and `\\` stand for `"` and `\`.
/// - Each key may appear once. Keys are case-sensitive.
package struct ConfigurationFile: Equatable, Sendable {
    var path: String
    package var layer: ConfigurationLayer
    /// The line each key was set on.
    var lines: [ConfigurationKey: Int]

    /// Larger than this is not a configuration file.
    static let maximumSize = 1 << 20

    /// Reads the file at `path`.
    /// - Parameter mustExist: Whether a missing file is an error (a path given with
    ///   `--config`); otherwise a missing file is no file, and the defaults hold.
    /// - Returns: The file, or `nil` when it is missing and need not exist.
    /// - Throws: `ConfigurationError` for a file that cannot be read or has problems.
    package static func load(path: String, mustExist: Bool) throws(ConfigurationError) -> ConfigurationFile? {
        var bytes: [UInt8] = []
        do {
            let input = try FileInput(path: path)
            try input.forEachChunk(size: 64 << 10) { chunk in
                guard bytes.count + chunk.count <= maximumSize else { throw TooLarge() }
                bytes.append(contentsOf: chunk)
            }
        } catch let error as SystemError {
            if error.errno == .noSuchFile, !mustExist { return nil }
            let advice = switch error.errno {
            case .noSuchFile: "no such file (give an existing file to --config, or leave --config out)"
            case .permissionDenied: "permission denied (forcescaled must be able to read it)"
            case .isDirectory: "is a directory (give the configuration file)"
            default: error.errno.description
            }
            throw ConfigurationError(path: path, line: nil, message: advice)
        } catch is TooLarge {
            throw ConfigurationError(path: path, line: nil, message: "larger than \(maximumSize >> 20) MiB: not a configuration file")
        } catch {
            throw ConfigurationError(path: path, line: nil, message: "\(error)")
        }
        return try parse(String(decoding: bytes, as: UTF8.self), path: path)
    }

    private struct TooLarge: Error {}

    /// Reads the text of a configuration file.
    /// - Parameter path: For messages.
    /// - Throws: `ConfigurationError` with every problem found, by line.
    package static func parse(_ text: String, path: String) throws(ConfigurationError) -> ConfigurationFile {
        var file = ConfigurationFile(path: path, layer: ConfigurationLayer(), lines: [:])
        var problems: [ConfigurationError.Problem] = []
        var text = Substring(text)
        if text.hasPrefix("\u{FEFF}") { text = text.dropFirst() }
        // "\r\n" is one Character in Swift: both end a line.
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, rawLine) in lines.enumerated() {
            let number = index + 1
            switch ConfigurationSyntax.parseLine(rawLine) {
            case .blank:
                continue
            case .problem(let message):
                problems.append(.init(line: number, message: message))
            case .entry(let name, let value):
                guard let key = ConfigurationKey(rawValue: name) else {
                    problems.append(.init(line: number, message: unknownKey(name)))
                    continue
                }
                if let earlier = file.lines[key] {
                    problems.append(.init(line: number, message: "'\(key)' is set twice (first on line \(earlier)); keep one"))
                    continue
                }
                do throws(ConfigurationValueError) {
                    try file.layer.set(key, from: value)
                    file.lines[key] = number
                } catch {
                    problems.append(.init(line: number, message: error.description))
                }
            }
        }
        // The one check that needs two keys: the hysteresis reaches at most the threshold.
        let defaults = DaemonConfiguration().settings
        let threshold = file.layer.threshold ?? defaults.peakThreshold
        let hysteresis = file.layer.hysteresis ?? defaults.peakHysteresis
        if hysteresis > threshold {
            if let line = file.lines[.hysteresis] {
                let from = file.lines[.threshold].map { "the threshold on line \($0)" } ?? "the default threshold"
                problems.append(.init(line: line, message: "'hysteresis' \(hysteresis) is more than \(from), \(threshold); it takes \(ConfigurationKey.hysteresis.accepted)"))
            } else if let line = file.lines[.threshold] {
                problems.append(.init(line: line, message: "'threshold' \(threshold) is below the default hysteresis, \(hysteresis); set 'hysteresis' too, from 0 to the threshold"))
            }
        }
        if problems.isEmpty {
            // Whatever ScaleSettings itself would refuse (nothing, once the keys passed).
            do throws(SettingsError) {
                try DaemonConfiguration(layers: [file.layer]).settings.validate()
            } catch {
                problems.append(.init(line: nil, message: error.description))
            }
        }
        guard problems.isEmpty else { throw ConfigurationError(path: path, problems: problems.sorted { ($0.line ?? 0) < ($1.line ?? 0) }) }
        return file
    }

    static func unknownKey(_ name: String) -> String {
        var message = "unknown key '\(name)'"
        if let suggestion = ConfigurationKey.suggestion(for: name) { message += " (did you mean '\(suggestion)'?)" }
        return message + "; the keys are " + ConfigurationKey.allCases.map(\.rawValue).spelledOut
    }
}
