/// Why the text typed for an option or an argument is not a value of its type.
///
/// Parsing reports it as swift-argument-parser reports a value that does not convert:
///
///     Error: The value 'abc' is invalid for '--timeout <seconds>': not a number
package enum InvalidValue: Error, Sendable, Equatable {
    /// The standard message, naming the value and the option, then `: ` and the reason
    /// when there is one (`not a number`).
    case reason(String?)
    /// A message of its own in place of the standard one, for a command whose values need
    /// more words (`ten is not a weight: --weights lists weights in grams…`); it names the
    /// value and the option itself.
    case message(String)
}

/// How the text typed for an option or a positional argument becomes a value of its type,
/// as swift-argument-parser's `ExpressibleByArgument` does it: checked while the command
/// line is parsed, so that a command reads values that are already of their type.
package struct ValueParser<Value: Sendable>: Sendable {
    /// The only words accepted, which help, errors and completion scripts list; `nil` when
    /// any text may convert.
    package let allowedValues: [String]?
    /// The value as help shows a default: `10`, `1.0`, `g`.
    let describe: @Sendable (Value) -> String
    private let conversion: @Sendable (String) throws(InvalidValue) -> Value

    /// A parser of its own.
    ///
    /// - Parameters:
    ///   - allowedValues: The only words accepted, or `nil`.
    ///   - describe: The value as help shows a default.
    ///   - conversion: The value of a text, or why there is none.
    package init(
        allowedValues: [String]? = nil,
        describe: @escaping @Sendable (Value) -> String = { "\($0)" },
        _ conversion: @escaping @Sendable (String) throws(InvalidValue) -> Value
    ) {
        self.allowedValues = allowedValues
        self.describe = describe
        self.conversion = conversion
    }

    /// The value of a text.
    ///
    /// - Parameter text: The text as typed.
    /// - Throws: ``InvalidValue`` when the text is not a value of the type.
    package func parse(_ text: String) throws(InvalidValue) -> Value {
        try conversion(text)
    }
}

extension ValueParser where Value == String {
    /// Any text, as typed.
    package static var text: ValueParser<String> { ValueParser { $0 } }

    /// One of these words (the others are refused while parsing, with the list).
    ///
    /// - Parameter words: The words accepted, in the order help lists them.
    package static func oneOf(_ words: [String]) -> ValueParser<String> {
        ValueParser(allowedValues: words) { text throws(InvalidValue) in
            guard words.contains(text) else { throw .reason(nil) }
            return text
        }
    }
}

extension ValueParser where Value == Int {
    /// A whole number, such as `10` or `-3`.
    package static var integer: ValueParser<Int> {
        ValueParser { text throws(InvalidValue) in
            guard let value = Int(text) else { throw .reason("not a whole number") }
            return value
        }
    }
}

extension ValueParser where Value == Double {
    /// A finite number, such as `0.5`, `-2e3` or `7`; not `nan` or `inf`.
    package static var number: ValueParser<Double> {
        ValueParser { text throws(InvalidValue) in
            guard let value = Double(text) else { throw .reason("not a number") }
            guard value.isFinite else { throw .reason("not a finite number") }
            return value
        }
    }
}

extension ValueParser where Value: CaseIterable & RawRepresentable, Value.RawValue == String {
    /// One of the type's cases, by its raw value; help and errors list them in the type's order.
    package static var choice: ValueParser<Value> {
        ValueParser(allowedValues: Value.allCases.map(\.rawValue), describe: \.rawValue) { text throws(InvalidValue) in
            guard let value = Value(rawValue: text) else { throw .reason(nil) }
            return value
        }
    }
}

extension ValueParser {
    /// Items separated by commas (spaces around each are ignored), each read by `element`:
    /// `2.3,5.74,8.5`.
    ///
    /// - Parameter element: Reads one item; an item it refuses is named in the error
    ///   (`'ten' is not a number`).
    package static func list<Element>(of element: ValueParser<Element>) -> ValueParser<[Element]> where Value == [Element] {
        ValueParser<[Element]>(describe: { $0.map(element.describe).joined(separator: ",") }) { text throws(InvalidValue) in
            var values: [Element] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                let word = String(item.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
                do throws(InvalidValue) {
                    values.append(try element.parse(word))
                } catch {
                    switch error {
                    case .message: throw error
                    case .reason(let reason):
                        let shown = word.isEmpty ? "an empty item" : UsageError.typed(word)
                        throw .reason("\(shown) is \(reason ?? "not a valid item")")
                    }
                }
            }
            return values
        }
    }
}
