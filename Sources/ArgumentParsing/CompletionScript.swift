/// Shell completion scripts written from a command tree, as swift-argument-parser's
/// `--generate-completion-script bash|zsh|fish` writes them: the scripts know exactly the
/// subcommands, options and allowed values the parser knows, so they cannot drift from
/// `--help`.
///
/// What a value completes to follows from the declaration: an option's allowed values are
/// offered as words; otherwise the placeholder's conventional name decides (`file`, `path`
/// and names ending in `-file`: files; `dir`: directories; `device`: files, for event
/// nodes and their links; `group`: group names); any other value is left to the user.
enum CompletionShell: String, CaseIterable, Sendable {
    case bash, zsh, fish
}

/// What the value of an option or a positional argument completes to.
enum ValueCompletion: Equatable {
    case words([String])
    case files
    case directories
    case groups
    /// Nothing to offer (a number, a name, free text).
    case none

    init(valueName: String, allowedValues: [String]?) {
        if let allowedValues, !allowedValues.isEmpty {
            self = .words(allowedValues)
            return
        }
        switch valueName {
        case "file", "path", "device": self = .files
        case _ where valueName.hasSuffix("-file"): self = .files
        case "dir", "directory": self = .directories
        case "group": self = .groups
        default: self = .none
        }
    }
}

/// One command of the tree with what it accepts on the command line, the built-in options
/// (`-h`/`--help`, `--version`) included.
struct CompletionNode {
    let stack: CommandStack
    var command: Command { stack.leaf }
    /// The path of command names, such as `forcescale replay`.
    var path: String { stack.commandLine }

    /// The declared options, then `--version` (where a version is declared on the path)
    /// and `-h, --help`, as the help text lists them.
    var options: [Option] {
        var options = command.options
        if stack.version != nil { options.append(Option(long: "version", help: "Show the version.")) }
        options.append(Option(long: "help", short: "h", help: "Show help information."))
        return options
    }

    /// The options of the default subcommand too, which the parser accepts after a group's
    /// name (`forcescale --fast` runs `demo --fast`).
    var optionsWithDefault: [Option] {
        guard let name = command.defaultSubcommand, let subcommand = command.subcommand(named: name) else { return options }
        return options + subcommand.options.filter { option in !options.contains { $0.long == option.long } }
    }

    /// Every command of the tree below `root`, root first, depth first.
    static func all(root: Command) -> [CompletionNode] {
        var nodes: [CompletionNode] = []
        func visit(_ stack: CommandStack) {
            nodes.append(CompletionNode(stack: stack))
            for subcommand in stack.leaf.subcommands { visit(stack.appending(subcommand)) }
        }
        visit(CommandStack(root: root))
        return nodes
    }
}

extension Option {
    var valueCompletion: ValueCompletion? {
        valueName.map { ValueCompletion(valueName: $0, allowedValues: allowedValues) }
    }

    /// `--unit`, then `-u` when there is one.
    var spellings: [String] { [longSpelling] + (short.map { ["-\($0)"] } ?? []) }
}

extension Argument {
    var valueCompletion: ValueCompletion { ValueCompletion(valueName: name, allowedValues: nil) }
}

/// Writes the completion script of a tool for one shell.
///
/// - Parameters:
///   - shell: The shell the script is for.
///   - root: The tool's top-level command.
/// - Returns: The script, ending in a newline; install it as the shell expects (bash:
///   `share/bash-completion/completions/NAME`, zsh: `share/zsh/site-functions/_NAME`,
///   fish: `share/fish/vendor_completions.d/NAME.fish`).
func completionScript(for shell: CompletionShell, root: Command) -> String {
    let nodes = CompletionNode.all(root: root)
    switch shell {
    case .bash: return BashCompletion(root: root, nodes: nodes).script
    case .zsh: return ZshCompletion(root: root, nodes: nodes).script
    case .fish: return FishCompletion(root: root, nodes: nodes).script
    }
}

/// The name shell functions of the script are derived from: `forcescale-x` → `forcescale_x`.
private func identifier(_ text: String) -> String {
    String(text.map { $0.isLetter || $0.isNumber ? $0 : "_" })
}

/// `text` in single quotes for a POSIX shell (bash, zsh).
private func singleQuoted(_ text: String) -> String {
    "'" + text.replacing("'", with: #"'\''"#) + "'"
}

private func header(_ shell: CompletionShell, _ root: Command) -> String {
    """
    # \(shell.rawValue) completion for \(root.name), written by `\(root.name) --generate-completion-script \(shell.rawValue)`
    # from the program's own declarations of its subcommands and options: regenerate it
    # rather than editing it.

    """
}

// MARK: - bash

/// bash: one function that finds the subcommand on the line (skipping option values), then
/// completes the value of the option before the cursor, or the command's options,
/// subcommands and positional arguments.
private struct BashCompletion {
    let root: Command
    let nodes: [CompletionNode]

    var function: String { "_" + identifier(root.name) }

    var script: String {
        var lines: [String] = [header(.bash, root)]
        lines.append("\(function)() {")
        lines.append(#"    local cur="${COMP_WORDS[COMP_CWORD]}" prev="" path=\#(singleQuoted(root.name)) i word"#)
        lines.append(#"    (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}""#)
        lines.append("    COMPREPLY=()")
        // Walk the words before the cursor: subcommand names extend the path, and the word
        // after an option that takes a value is that value, not a subcommand.
        lines.append("    for ((i = 1; i < COMP_CWORD; i++)); do")
        lines.append(#"        word="${COMP_WORDS[i]}""#)
        lines.append(#"        case "$path:$word" in"#)
        var valueOptions: [String] = []
        var subcommandSteps: [String] = []
        for node in nodes {
            for option in node.optionsWithDefault where option.takesValue {
                valueOptions += option.spellings.map { singleQuoted("\(node.path):\($0)") }
            }
            for subcommand in node.command.subcommands {
                subcommandSteps.append("            \(singleQuoted("\(node.path):\(subcommand.name)"))) path=\(singleQuoted("\(node.path) \(subcommand.name)")) ;;")
            }
            if node.command.isGroup {
                subcommandSteps.append("            \(singleQuoted("\(node.path):help"))) path=\(singleQuoted("\(node.path) help")) ;;")
            }
        }
        if !valueOptions.isEmpty {
            lines.append("            \(valueOptions.joined(separator: "|"))) (( i++ )) ;;")
        }
        lines += subcommandSteps
        lines.append("        esac")
        lines.append("    done")

        // The value of the option just before the cursor.
        lines.append(#"    case "$path:$prev" in"#)
        for node in nodes {
            for option in node.optionsWithDefault {
                guard let completion = option.valueCompletion else { continue }
                let labels = option.spellings.map { singleQuoted("\(node.path):\($0)") }.joined(separator: "|")
                lines.append("        \(labels)) \(Self.complete(completion)); return ;;")
            }
        }
        lines.append("    esac")

        // The options, subcommands and arguments of the command reached.
        lines.append(#"    case "$path" in"#)
        for node in nodes {
            let options = node.optionsWithDefault.flatMap(\.spellings)
            var body = #"if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \#(singleQuoted(options.joined(separator: " "))) -- "$cur")); "#
            if node.command.isGroup {
                let names = node.command.subcommands.map(\.name) + ["help"]
                body += #"else COMPREPLY=($(compgen -W \#(singleQuoted(names.joined(separator: " "))) -- "$cur")); fi"#
            } else if let argument = node.command.arguments.first, argument.valueCompletion != .none {
                // The first argument's kind stands for all of them: a command's positional
                // arguments here are files or nothing.
                body += "else \(Self.complete(argument.valueCompletion)); fi"
            } else {
                body += #"else COMPREPLY=($(compgen -W \#(singleQuoted(options.joined(separator: " "))) -- "$cur")); fi"#
            }
            lines.append("        \(singleQuoted(node.path))) \(body) ;;")
            if node.command.isGroup {
                let names = node.command.subcommands.map(\.name)
                lines.append(#"        \#(singleQuoted("\(node.path) help"))) COMPREPLY=($(compgen -W \#(singleQuoted(names.joined(separator: " "))) -- "$cur")) ;;"#)
            }
        }
        lines.append("    esac")
        lines.append("}")
        lines.append("complete -F \(function) \(root.name)")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The statement that fills COMPREPLY for a value.
    static func complete(_ completion: ValueCompletion) -> String {
        switch completion {
        case let .words(words): return #"COMPREPLY=($(compgen -W \#(singleQuoted(words.joined(separator: " "))) -- "$cur"))"#
        case .files: return #"compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))"#
        case .directories: return #"compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur"))"#
        case .groups: return #"COMPREPLY=($(compgen -g -- "$cur"))"#
        case .none: return "COMPREPLY=()"
        }
    }
}

// MARK: - zsh

/// zsh: a `_arguments` function per command; a group's function hands the rest of the line
/// to its subcommand's function (the `#compdef` file of the completion system).
private struct ZshCompletion {
    let root: Command
    let nodes: [CompletionNode]

    static func function(_ node: CompletionNode) -> String { "_" + identifier(node.stack.names.joined(separator: "_")) }

    /// `text` for the inside of `[…]` in an `_arguments` spec: brackets and backslashes escaped.
    static func description(_ text: String) -> String {
        text.replacing("\\", with: "\\\\").replacing("[", with: "\\[")
            .replacing("]", with: "\\]")
    }

    static func action(_ completion: ValueCompletion) -> String {
        switch completion {
        case let .words(words): return "(" + words.joined(separator: " ") + ")"
        case .files: return "_files"
        case .directories: return "_files -/"
        case .groups: return "_groups"
        case .none: return " "
        }
    }

    static func spec(_ option: Option) -> [String] {
        let repeatable = option.isRepeatable ? "*" : ""
        var value = ""
        if let valueName = option.valueName, let completion = option.valueCompletion {
            value = ":\(valueName.replacing(":", with: "-")):\(action(completion))"
        }
        let help = "[\(description(option.helpDescription))]"
        if option.spellings.count == 1 {
            return [singleQuoted(repeatable + option.longSpelling + help + value)]
        }
        let exclusion = option.isRepeatable ? "*" : "(\(option.spellings.joined(separator: " ")))"
        return [singleQuoted(exclusion) + "{" + option.spellings.joined(separator: ",") + "}" + singleQuoted(help + value)]
    }

    var script: String {
        var lines: [String] = ["#compdef \(root.name)", header(.zsh, root)]
        for node in nodes.reversed() {
            lines.append("\(Self.function(node))() {")
            var specs = node.optionsWithDefault.flatMap(Self.spec)
            if node.command.isGroup {
                let subcommands = node.command.subcommands.map { "\($0.name):\($0.abstract)" } + ["help:Show help for a subcommand."]
                lines.append("    local -a subcommands=(")
                lines += subcommands.map { "        " + singleQuoted($0.replacing("\\", with: "\\\\")) }
                lines.append("    )")
                lines.append("    local curcontext=\"$curcontext\" state line")
                lines.append("    typeset -A opt_args")
                specs += [singleQuoted(": :->subcommand"), singleQuoted("*:: :->argument")]
                lines.append("    _arguments -C -s \\")
                lines += specs.map { "        \($0) \\" }
                lines.append("        && return")
                lines.append("    case $state in")
                lines.append("        subcommand) _describe -t commands \(singleQuoted("\(node.path) subcommand")) subcommands ;;")
                lines.append("        argument)")
                lines.append("            curcontext=\"${curcontext%:*:*}:\(identifier(node.path))-$words[1]:\"")
                lines.append("            case $words[1] in")
                for subcommand in node.command.subcommands {
                    lines.append("                \(subcommand.name)) \(Self.function(CompletionNode(stack: node.stack.appending(subcommand)))) ;;")
                }
                lines.append("                help) _describe -t commands \(singleQuoted("\(node.path) subcommand")) subcommands ;;")
                lines.append("            esac ;;")
                lines.append("    esac")
            } else {
                for argument in node.command.arguments {
                    let prefix = argument.isRepeating ? "*" : (argument.isOptional ? ":" : "")
                    specs.append(singleQuoted("\(prefix):\(argument.name):\(Self.action(argument.valueCompletion))"))
                }
                lines.append("    _arguments -s \\")
                lines += specs.dropLast().map { "        \($0) \\" }
                lines += specs.suffix(1).map { "        \($0)" }
            }
            lines.append("}")
            lines.append("")
        }
        lines.append("\(Self.function(nodes[0])) \"$@\"")
        return lines.joined(separator: "\n") + "\n"
    }
}

// MARK: - fish

/// fish: `complete` lines whose conditions ask a helper function which command the line is
/// at, found as bash's function finds it.
private struct FishCompletion {
    let root: Command
    let nodes: [CompletionNode]

    var helper: String { "__\(identifier(root.name))_at" }

    /// `text` in fish's single quotes, where only `\` and `'` are special.
    static func quoted(_ text: String) -> String {
        "'" + text.replacing("\\", with: "\\\\").replacing("'", with: "\\'") + "'"
    }

    var script: String {
        var lines: [String] = [header(.fish, root)]
        // The helper: true when the words before the cursor lead to the command path $argv[1].
        lines.append("function \(helper)")
        lines.append("    set -l path \(Self.quoted(root.name))")
        lines.append("    set -l words (commandline -opc)")
        lines.append("    set -l skip 0")
        lines.append("    for word in $words[2..-1]")
        lines.append("        if test $skip -eq 1")
        lines.append("            set skip 0")
        lines.append("            continue")
        lines.append("        end")
        lines.append("        switch \"$path:$word\"")
        var valueOptions: [String] = []
        for node in nodes {
            for option in node.optionsWithDefault where option.takesValue {
                valueOptions += option.spellings.map { Self.quoted("\(node.path):\($0)") }
            }
        }
        if !valueOptions.isEmpty {
            lines.append("            case \(valueOptions.joined(separator: " "))")
            lines.append("                set skip 1")
        }
        for node in nodes {
            let steps = node.command.subcommands.map(\.name) + (node.command.isGroup ? ["help"] : [])
            for name in steps {
                lines.append("            case \(Self.quoted("\(node.path):\(name)"))")
                lines.append("                set path \(Self.quoted("\(node.path) \(name)"))")
            }
        }
        lines.append("        end")
        lines.append("    end")
        lines.append("    test \"$path\" = \"$argv[1]\"")
        lines.append("end")
        lines.append("")
        lines.append("complete -c \(root.name) -f")
        for node in nodes {
            let condition = "-n " + Self.quoted("\(helper) \(Self.quoted(node.path))")
            for option in node.optionsWithDefault {
                var parts = ["complete -c \(root.name)", condition, "-l \(option.long)"]
                if let short = option.short { parts.append("-s \(short)") }
                if let completion = option.valueCompletion {
                    switch completion {
                    case let .words(words): parts.append("-x -a " + Self.quoted(words.joined(separator: " ")))
                    case .files, .directories: parts.append("-r -F")
                    case .groups: parts.append("-x -a '(__fish_complete_groups)'")
                    case .none: parts.append("-x")
                    }
                }
                parts.append("-d " + Self.quoted(option.help))
                lines.append(parts.joined(separator: " "))
            }
            for subcommand in node.command.subcommands {
                lines.append("complete -c \(root.name) \(condition) -a \(subcommand.name) -d \(Self.quoted(subcommand.abstract))")
            }
            if node.command.isGroup {
                lines.append("complete -c \(root.name) \(condition) -a help -d 'Show help for a subcommand.'")
                let helpCondition = "-n " + Self.quoted("\(helper) \(Self.quoted("\(node.path) help"))")
                for subcommand in node.command.subcommands {
                    lines.append("complete -c \(root.name) \(helpCondition) -a \(subcommand.name) -d \(Self.quoted(subcommand.abstract))")
                }
            } else if let argument = node.command.arguments.first, argument.valueCompletion == .files || argument.valueCompletion == .directories {
                lines.append("complete -c \(root.name) \(condition) -F")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
