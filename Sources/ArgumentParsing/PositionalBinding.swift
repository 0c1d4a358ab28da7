/// Hands positional values to a command's declared arguments, in order.
///
/// Each argument takes one value, or every remaining value when it repeats;
/// an optional argument is skipped when the values have run out.
///
/// - Parameters:
///   - values: The positional values typed, in order.
///   - arguments: The command's declared arguments.
///   - stack: The command being parsed, for error messages.
/// - Returns: The values taken by each argument, by argument name.
/// - Throws: ``UsageError`` for values left over or a required argument left without one.
func bindPositionals(
    _ values: [String], to arguments: [Argument], in stack: CommandStack
) throws(UsageError) -> [String: [String]] {
    var remaining = values[...]
    var bound: [String: [String]] = [:]
    for argument in arguments {
        let taken = argument.isRepeating ? remaining : remaining.prefix(1)
        remaining = remaining.dropFirst(taken.count)
        bound[argument.name] = Array(taken)
    }
    // swift-argument-parser reports extra values before missing ones.
    if !remaining.isEmpty {
        throw .unexpectedArguments(Array(remaining), in: stack)
    }
    if let missing = arguments.first(where: { !$0.isOptional && bound[$0.name, default: []].isEmpty }) {
        throw .missingArgument(missing, in: stack)
    }
    return bound
}
