/// Parses a command line against a tree of declared commands.
struct CommandParser {
    /// The tool's top-level command.
    let root: Command
    /// The width help text is wrapped to.
    let terminalWidth: Int

    /// Parses the arguments that follow the program name.
    ///
    /// - Parameter arguments: The command-line arguments without `argv[0]`.
    /// - Returns: What the command line asks for.
    /// - Throws: ``UsageError`` when the command line cannot be run.
    func parse(_ arguments: [String]) throws(UsageError) -> ParseResult {
        let rootStack = CommandStack(root: root)
        // Hidden, as in swift-argument-parser: the option that writes the shell completion
        // scripts, given first.
        if arguments.first == completionScriptOption.longSpelling {
            return try completionScript(arguments.dropFirst(), stack: rootStack)
        }
        // Like swift-argument-parser, only a root with subcommands gets the
        // `help` subcommand; elsewhere `help` may be an ordinary value.
        if root.isGroup, arguments.first == "help", root.subcommand(named: "help") == nil {
            // `help <subcommand>…`: a name that is no subcommand's is a usage error, as
            // when the subcommand itself is mistyped.
            var stack = rootStack
            for name in arguments.dropFirst() {
                guard let next = stack.leaf.subcommand(named: name) else {
                    throw UsageError.unknownSubcommand(name, in: stack) ?? UsageError("Unknown subcommand \(UsageError.typed(name))", in: stack)
                }
                stack = stack.appending(next)
            }
            return help(stack)
        }
        return try parse(arguments[...], stack: rootStack, values: OptionValues())
    }

    /// Parses the tokens that follow a command's name.
    ///
    /// - Parameters:
    ///   - tokens: The tokens after the command's name.
    ///   - stack: The command and its parents.
    ///   - values: The options parsed for the parents so far.
    /// - Returns: What the command line asks for.
    /// - Throws: ``UsageError`` when the command line cannot be run.
    private func parse(
        _ tokens: ArraySlice<String>, stack: CommandStack, values: OptionValues
    ) throws(UsageError) -> ParseResult {
        var values = values
        values.declare(stack.leaf.options)
        if stack.leaf.isGroup {
            return try parseGroup(tokens, stack: stack, values: values)
        }
        if let request = builtInRequest(in: tokens, stack: stack) {
            return request
        }
        return .run(try parseLeaf(tokens, stack: stack, values: values))
    }

    /// Reads a group's own options up to the subcommand name, then hands over to the subcommand.
    ///
    /// Anything that is neither a known option nor a subcommand name goes to
    /// the default subcommand when there is one.
    private func parseGroup(
        _ tokens: ArraySlice<String>, stack: CommandStack, values: OptionValues
    ) throws(UsageError) -> ParseResult {
        let group = stack.leaf
        var values = values
        var remaining = tokens
        while let token = remaining.first {
            if isHelpFlag(token) { return help(stack) }
            if token == "--version", let version = stack.version { return .version(version) }
            if let subcommand = group.subcommand(named: token) {
                return try parse(remaining.dropFirst(), stack: stack.appending(subcommand), values: values)
            }
            guard case let .matched(option, spelling, inlineValue) = matchOption(token, in: group) else { break }
            let position = remaining.startIndex
            remaining.removeFirst()
            let value = try readValue(of: option, spelledAs: spelling, inlineValue: inlineValue, remaining: &remaining, in: stack)
            values.record(option, spelledAs: spelling, value: value, at: position)
        }
        let defaultSubcommand = group.defaultSubcommand.map { name in
            guard let subcommand = group.subcommand(named: name) else {
                preconditionFailure("'\(stack.commandLine)' names '\(name)' as its default subcommand but has none by that name")
            }
            return subcommand
        }
        // A word where a subcommand's name goes, which no default subcommand would take as
        // an argument, and close to a subcommand's name, is a mistyped subcommand
        // (`forcescale wiegh`): say so, rather than "Unexpected argument".
        if let word = remaining.first, !word.hasPrefix("-"), defaultSubcommand?.arguments.isEmpty ?? true,
           let error = UsageError.unknownSubcommand(word, in: stack) {
            throw error
        }
        if let defaultSubcommand {
            return try parse(remaining, stack: stack.appending(defaultSubcommand), values: values)
        }
        // The rest can only be mistakes (a group takes no positional values);
        // parsing it reports them in swift-argument-parser's words. A group
        // given no subcommand shows its help, as a command without `run()`
        // does in swift-argument-parser.
        if let request = builtInRequest(in: remaining, stack: stack) {
            return request
        }
        _ = try parseLeaf(remaining, stack: stack, values: values)
        return help(stack)
    }

    /// Reads a runnable command's options and positional arguments, and makes their values.
    private func parseLeaf(
        _ tokens: ArraySlice<String>, stack: CommandStack, values: OptionValues
    ) throws(UsageError) -> ParsedCommand {
        let command = stack.leaf
        var values = values
        var positionals: [String] = []
        var remaining = tokens
        while let token = remaining.first {
            let position = remaining.startIndex
            remaining.removeFirst()
            if token == "--" {
                positionals += remaining
                break
            }
            switch matchOption(token, in: command) {
            case .notAnOption:
                positionals.append(token)
            case let .unknown(spelling):
                throw .unknownOption(spelling, in: stack)
            case let .matched(option, spelling, inlineValue):
                let value = try readValue(of: option, spelledAs: spelling, inlineValue: inlineValue, remaining: &remaining, in: stack)
                values.record(option, spelledAs: spelling, value: value, at: position)
            }
        }
        let declaredArguments = command.isGroup ? [] : command.arguments
        let arguments = try bindPositionals(positionals, to: declaredArguments, in: stack)
        if let missing = command.options.first(where: { $0.mustBeGiven && values.occurrences[$0.long] == nil }) {
            throw .missingOption(missing, in: stack)
        }
        // The values, converted once everything typed is known to fit the declarations, as
        // swift-argument-parser converts them: the options' first, in command-line order.
        let optionValues: [String: any Sendable]
        do throws(ValueConversionError) {
            optionValues = try values.values()
        } catch {
            let occurrence = error.error.occurrence
            throw .invalidValue(occurrence.value ?? "", for: error.option, spelledAs: occurrence.spelling, in: stack, problem: error.error.problem)
        }
        var argumentValues: [String: any Sendable] = [:]
        for argument in declaredArguments {
            do throws(ArgumentValueError) {
                argumentValues[argument.name] = try argument.value(arguments[argument.name] ?? [])
            } catch {
                throw .invalidValue(error.text, for: argument, in: stack, problem: error.problem)
            }
        }
        return ParsedCommand(stack: stack, optionValues: optionValues, occurrences: values.occurrences, argumentValues: argumentValues)
    }

    /// Looks for `-h`, `--help` or `--version` among the tokens before `--`.
    ///
    /// They win over any mistake elsewhere on the line, as in swift-argument-parser.
    ///
    /// - Returns: The help or version result, or `nil` when neither was asked for.
    private func builtInRequest(in tokens: ArraySlice<String>, stack: CommandStack) -> ParseResult? {
        let options = tokens.prefix { $0 != "--" }
        if options.contains(where: isHelpFlag) { return help(stack) }
        if let version = stack.version, options.contains("--version") { return .version(version) }
        return nil
    }

    /// `--generate-completion-script <shell>`: not listed in any help, like swift-argument-parser's.
    private var completionScriptOption: Option {
        Option(long: "generate-completion-script", valueName: "shell", help: "Write the completion script for a shell.",
               allowedValues: CompletionShell.allCases.map(\.rawValue))
    }

    /// The completion script the shell after `--generate-completion-script` asks for.
    private func completionScript(_ rest: ArraySlice<String>, stack: CommandStack) throws(UsageError) -> ParseResult {
        let option = completionScriptOption
        guard let name = rest.first else { throw .missingValue(for: option, spelledAs: option.longSpelling, in: stack) }
        guard let shell = CompletionShell(rawValue: name) else {
            throw .invalidValue(name, for: option, spelledAs: option.longSpelling, in: stack)
        }
        if rest.count > 1 { throw .unexpectedArguments(Array(rest.dropFirst()), in: stack) }
        return .completionScript(ArgumentParsing.completionScript(for: shell, root: root))
    }

    /// The help of a command, as a parse result.
    private func help(_ stack: CommandStack) -> ParseResult {
        .help(HelpRenderer(stack: stack, width: terminalWidth).render())
    }
}

/// Parses a command line against a declared command tree.
///
/// - Parameters:
///   - arguments: The command-line arguments without the program name (`argv[0]`).
///   - root: The tool's top-level command.
///   - terminalWidth: The width help text is wrapped to.
/// - Returns: The command to run with its values, or the help or version text to print.
/// - Throws: ``UsageError`` when the command line cannot be run.
func parse(_ arguments: [String], root: Command, terminalWidth: Int = 80) throws(UsageError) -> ParseResult {
    try CommandParser(root: root, terminalWidth: terminalWidth).parse(arguments)
}
