import ArgumentParsing
import ScaleCore

extension ValueParser where Value == [Double] {
    /// Known weights in grams, greater than 0, separated by commas (`--weights` of
    /// `calibrate` and `characterize`): an item that is not one is named, with what the
    /// option takes and an example.
    /// - Parameter example: A list to show, such as `20,50,100,200`.
    static func weights(example: String) -> ValueParser<[Double]> {
        ValueParser(describe: { $0.map { "\($0)" }.joined(separator: ",") }) { text throws(InvalidValue) in
            var weights: [Double] = []
            for item in text.split(separator: ",", omittingEmptySubsequences: false) {
                let word = String(item.trimmingSpaces)
                guard let grams = Double(word), grams.isFinite, grams > 0 else {
                    let shown = word.isEmpty ? "An empty item" : UntrustedText.escaped(word)
                    throw .message("\(shown) is not a weight: --weights lists weights in grams greater than 0, separated by commas: \(example)")
                }
                weights.append(grams)
            }
            return weights
        }
    }
}
