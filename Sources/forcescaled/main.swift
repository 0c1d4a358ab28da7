import ArgumentParsing

// The daemon is not built yet: this stub says so instead of pretending to serve.
let root = Command(
    name: "forcescaled",
    abstract: "The forcescale daemon (not implemented yet).",
    discussion: "This release has no daemon; use 'forcescale replay' or 'forcescale demo'.",
    version: "0.1.0")

runMain(root: root) { _ in
    writeToStandardError("forcescaled: not implemented yet; use 'forcescale replay FILE' or 'forcescale demo'\n")
    return 69  // EX_UNAVAILABLE
}
