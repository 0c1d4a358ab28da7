/// "Did you mean …?": the one rule every parser of forcescale's uses for a word it does not
/// know (a subcommand, an option, a configuration key, a key of a libinput record).
package enum Suggestion {
    /// The candidate closest to a mistyped word, when it is close enough to be a typo of it:
    /// at most a third of the candidate's length in edits (one at least, three at most),
    /// as swift-argument-parser caps it at three; the first of equally close candidates.
    /// - Parameters:
    ///   - word: The word as written.
    ///   - candidates: The known spellings.
    /// - Returns: The candidate meant, or `nil` when none is that close.
    package static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = editDistance(candidate, word)
            if distance <= min(3, max(1, candidate.count / 2)), distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// The number of single-character insertions, deletions and substitutions that turn one
    /// string into another (Levenshtein).
    /// - Parameters:
    ///   - source: The first string.
    ///   - target: The second string.
    /// - Returns: The distance between them.
    package static func editDistance(_ source: String, _ target: String) -> Int {
        let source = Array(source)
        let target = Array(target)
        // Only the previous row of the distance table is needed to compute the next.
        var previous = Array(0...target.count)
        for (sourceIndex, sourceCharacter) in source.enumerated() {
            var current = [sourceIndex + 1]
            current.reserveCapacity(target.count + 1)
            for (targetIndex, targetCharacter) in target.enumerated() {
                let substitution = previous[targetIndex] + (sourceCharacter == targetCharacter ? 0 : 1)
                let deletion = previous[targetIndex + 1] + 1
                let insertion = current[targetIndex] + 1
                current.append(min(substitution, deletion, insertion))
            }
            previous = current
        }
        return previous[target.count]
    }
}
