import Foundation
import Testing

/// The completion scripts that `--generate-completion-script` writes, run in the real
/// shells: bash calls the function with COMP_WORDS as readline would; zsh completes a line
/// typed into an interactive zsh on a pseudo-terminal (zsh/zpty) with compinit loaded; fish
/// answers `complete -C`. scripts/setup installs zsh and fish (Debian packages).
@Suite(.serialized) struct CompletionScriptTests {
    /// Lines typed so far (the cursor at the end) and completions they must offer.
    static let cases: [(line: String, offered: [String], notOffered: [String])] = [
        ("forcescale ", ["demo", "replay", "read", "devices", "watch", "weigh", "status", "help"], ["--json"]),
        ("forcescale re", ["replay", "read", "record"], ["rumble"]),
        ("forcescale replay --u", ["--unit"], []),
        ("forcescale weigh --unit ", ["g", "kg", "oz", "lb", "ct", "N"], ["--json"]),
        ("forcescale read --contacts ", ["primary", "sum", "max"], []),
        // A value that is a subcommand's name is a value, not the subcommand.
        ("forcescale read --device read --con", ["--contacts"], []),
        ("forcescale help wa", ["watch"], ["weigh"]),
        ("forcescale watch --re", ["--reconnect"], ["--json"]),
        // Options of the default subcommand (demo) work before any subcommand.
        ("forcescale --fa", ["--fast"], []),
        ("forcescale status -", ["--json", "--socket", "--help", "-h"], ["--unit"]),
    ]

    static func script(_ shell: String, program: String = "forcescale") throws -> String {
        let result = try CLI.run(["--generate-completion-script", shell], product: program)
        #expect(result.status == 0, "\(program) --generate-completion-script \(shell): \(result.stderr)")
        return result.stdout
    }

    static func installed(_ shell: String) throws -> String {
        try #require(ManPageTests.installed(shell), "\(shell) is not installed; scripts/setup installs it")
    }

    // MARK: - bash

    /// What the bash function puts in COMPREPLY for `line`, split into words as readline does.
    static func bash(_ line: String, program: String = "forcescale") throws -> [String] {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent(program).path
        try script("bash", program: program).write(toFile: file, atomically: true, encoding: .utf8)
        var words = line.split(separator: " ").map(String.init)
        if line.hasSuffix(" ") { words.append("") }
        // The script's function is named after the program, a '-' made '_' (_forcescale_mqtt).
        let function = "_" + program.replacingOccurrences(of: "-", with: "_")
        let result = try run(try installed("bash"), ["-c", #"source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); \#(function); printf '%s\n' "${COMPREPLY[@]}""#, "bash", file] + words)
        #expect(result.status == 0 && result.stderr.isEmpty, "bash: \(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test(arguments: 0..<cases.count)
    func bashCompletes(_ index: Int) throws {
        let (line, offered, notOffered) = Self.cases[index]
        let words = try Self.bash(line)
        for word in offered { #expect(words.contains(word), "bash, '\(line)': \(words)") }
        for word in notOffered { #expect(!words.contains(word), "bash, '\(line)' offers \(word): \(words)") }
    }

    @Test func bashCompletesFileValues() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("pad.events").path
        _ = FileManager.default.createFile(atPath: recording, contents: Data())
        #expect(try Self.bash("forcescale replay \(directory.path)/pa") == [recording])
        #expect(try Self.bash("forcescale record -o \(directory.path)/pa") == [recording])
    }

    /// Every subcommand and every option its help lists is completed: the scripts come from
    /// the same declarations as --help, so they cannot drift.
    @Test func bashOffersWhatHelpLists() throws {
        let subcommands = try ManPageTests.subcommands()
        #expect(Set(try Self.bash("forcescale ")) == Set(subcommands + ["help"]))
        /// The options `forcescale PATH… --help` lists, with those of its default subcommand
        /// when it is a group (the parser takes them after the group's name); and the same
        /// for each subcommand of a group, so nested groups are covered too.
        func check(_ path: [String]) throws {
            let text = try CLI.run(path + ["--help"]).stdout
            let help = Help(text)
            var expected = Set(help.options.flatMap(\.names))
            if let line = text.split(separator: "\n").first(where: { $0.contains(" (default)") }),
               let name = line.split(separator: " ").first {
                expected.formUnion(Help(try CLI.run(path + [String(name), "--help"]).stdout).options.flatMap(\.names))
            }
            #expect(Set(try Self.bash((["forcescale"] + path).joined(separator: " ") + " -")) == expected, "forcescale \(path)")
            if !help.subcommands.isEmpty {
                #expect(Set(try Self.bash((["forcescale"] + path).joined(separator: " ") + " ")) == Set(help.subcommands + ["help"]), "forcescale \(path)")
            }
            for name in help.subcommands { try check(path + [name]) }
        }
        for name in subcommands { try check([name]) }
        let daemon = Help(try CLI.run(["--help"], product: "forcescaled").stdout)
        #expect(Set(try Self.bash("forcescaled -", program: "forcescaled")) == Set(daemon.options.flatMap(\.names)))
        #expect(try Self.bash("forcescaled --contacts ", program: "forcescaled") == ["primary", "sum", "max"])
        let web = Help(try CLI.run(["--help"], product: "forcescale-web").stdout)
        #expect(!web.options.isEmpty, "could not read the options from 'forcescale-web --help'")
        #expect(Set(try Self.bash("forcescale-web -", program: "forcescale-web")) == Set(web.options.flatMap(\.names)))
        let mqtt = Help(try CLI.run(["--help"], product: "forcescale-mqtt").stdout)
        #expect(Set(try Self.bash("forcescale-mqtt -", program: "forcescale-mqtt")) == Set(mqtt.options.flatMap(\.names)))
    }

    // MARK: - zsh

    /// Types `line` and a Tab into an interactive zsh whose compinit finds `_forcescale` in a
    /// folder on fpath; compadd is wrapped to print what it is given.
    static func zsh(_ line: String) throws -> [String] {
        let zsh = try installed("zsh")
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try script("zsh").write(to: directory.appendingPathComponent("_forcescale"), atomically: true, encoding: .utf8)
        let driver = directory.appendingPathComponent("complete.zsh")
        try #"""
            zmodload zsh/zpty
            zpty shell zsh -f -i
            zpty -w shell "PROMPT=''; RPROMPT=''; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
            zpty -w shell 'compadd () { local -a hits; builtin compadd -O hits "$@"; (( $#hits )) && print -r -- "HIT:${(j: :)hits}" >&2; builtin compadd "$@"; }'
            zpty -w shell 'zstyle ":completion:*" menu no; LISTMAX=100000; bindkey "^X^K" kill-buffer; print READY-$((6 * 7))'
            # READY-42, and the other markers below, are output only when the command runs:
            # the echo of what is typed shows $((6 * 7)).
            zpty -r shell ready '*READY-42*'
            zpty -n -w shell "$2"$'\t'
            # Then Ctrl-X Ctrl-K (the line is dropped) and a command whose output can only
            # come once the completion is over, as zsh reads its input in order. Not Ctrl-U:
            # while zsh is still between prompts, the terminal's line editing would take that
            # as its own kill character and erase the typed line before zsh read it. zpty -r
            # waits for the marker (the test's timeout bounds a completion that never ends).
            zpty -w shell $'\x18\x0bprint COMPLETION-DONE-$((6 * 7))'
            zpty -r shell output '*COMPLETION-DONE-42*'
            zpty -d shell
            print -r -- "$output" | tr -d '\r' | grep -a -o 'HIT:[^[:cntrl:]]*' | sed 's/^HIT://'
            """#.write(to: driver, atomically: true, encoding: .utf8)
        let result = try run(zsh, ["-f", driver.path, directory.path, line])
        #expect(result.exited && result.status == 0, "zsh: \(result.stderr)")
        return result.stdout.split(whereSeparator: { $0 == "\n" || $0 == " " }).map(String.init)
    }

    @Test(arguments: 0..<cases.count)
    func zshCompletes(_ index: Int) throws {
        let (line, offered, notOffered) = Self.cases[index]
        let words = try Self.zsh(line)
        for word in offered { #expect(words.contains(word), "zsh, '\(line)': \(words)") }
        for word in notOffered { #expect(!words.contains(word), "zsh, '\(line)' offers \(word): \(words)") }
    }

    // MARK: - fish

    static func fish(_ line: String) throws -> [String] {
        let fish = try installed("fish")
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("forcescale.fish").path
        try script("fish").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try run(fish, ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", file, line],
                             environment: ["HOME": directory.path])
        #expect(result.exited && result.status == 0 && result.stderr.isEmpty, "fish: \(result.stderr)")
        // "word<TAB>description" a line.
        return result.stdout.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
    }

    @Test(arguments: 0..<cases.count)
    func fishCompletes(_ index: Int) throws {
        let (line, offered, notOffered) = Self.cases[index]
        let words = try Self.fish(line)
        for word in offered { #expect(words.contains(word), "fish, '\(line)': \(words)") }
        for word in notOffered { #expect(!words.contains(word), "fish, '\(line)' offers \(word): \(words)") }
    }

    // MARK: - The option itself

    @Test func unknownShellIsAUsageError() throws {
        let result = try CLI.run(["--generate-completion-script", "tcsh"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: The value 'tcsh' is invalid for '--generate-completion-script <shell>'"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        let missing = try CLI.run(["--generate-completion-script"])
        #expect(missing.status == 64 && missing.stderr.contains("Missing value"), "\(missing.stderr)")
    }

    @Test func theOptionIsHiddenFromHelp() throws {
        #expect(!(try CLI.run(["--help"]).stdout.contains("generate-completion-script")))
    }
}
