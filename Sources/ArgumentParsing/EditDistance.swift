/// The number of single-character insertions, deletions and substitutions that turn one string into another.
///
/// - Parameters:
///   - source: The first string.
///   - target: The second string.
/// - Returns: The Levenshtein distance between them.
package func editDistance(_ source: String, _ target: String) -> Int {
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
