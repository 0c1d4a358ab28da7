/// Reading values by the names used in the declarations, for the commands not yet declared
/// with typed keys.
extension ParsedCommand {
    package func flag(_ long: String) -> Bool {
        !occurrences(of: long).isEmpty
    }

    package func string(_ long: String) -> String? {
        occurrences(of: long).last?.value ?? declaredOption(long).defaultValue
    }

    package func strings(_ long: String) -> [String] {
        let given = occurrences(of: long).compactMap(\.value)
        if !given.isEmpty { return given }
        return declaredOption(long).defaultValue.map { [$0] } ?? []
    }

    package func int(_ long: String) throws(UsageError) -> Int? {
        try convert(long) { Int($0) }
    }

    package func double(_ long: String) throws(UsageError) -> Double? {
        try convert(long) { text in Double(text).flatMap { $0.isFinite ? $0 : nil } }
    }

    package func argument(_ name: String) -> String? {
        arguments(name).first
    }

    package func arguments(_ name: String) -> [String] {
        guard let values = argumentTexts[name] else {
            preconditionFailure("'\(stack.commandLine)' declares no argument named '\(name)'")
        }
        return values
    }

    private func convert<Value>(_ long: String, _ conversion: (String) -> Value?) throws(UsageError) -> Value? {
        guard let text = string(long) else { return nil }
        if let value = conversion(text) { return value }
        let option = declaredOption(long)
        let spelling = occurrences(of: long).last?.spelling ?? option.longSpelling
        throw .invalidValue(text, for: option, spelledAs: spelling, in: stack)
    }

    private func declaredOption(_ long: String) -> Option {
        guard let option = declaredOptions.first(where: { $0.long == long }) else {
            preconditionFailure("'\(stack.commandLine)' declares no option '--\(long)'")
        }
        return option
    }

    private func occurrences(of long: String) -> [OptionOccurrence] {
        _ = declaredOption(long)
        return occurrences[long] ?? []
    }
}
