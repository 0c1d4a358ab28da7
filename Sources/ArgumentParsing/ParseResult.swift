/// What a command line asks for.
enum ParseResult: Sendable {
    /// Run a command with the given values.
    case run(ParsedCommand)
    /// Print this help text on standard output (with `print`) and exit successfully.
    case help(String)
    /// Print this version on standard output and exit successfully.
    case version(String)
    /// Print this shell completion script on standard output (it ends in a newline) and
    /// exit successfully.
    case completionScript(String)
}
