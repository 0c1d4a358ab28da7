import Foundation
import Testing

/// `make test`'s short fuzz pass: every target of forcescale-fuzz over its seed corpus
/// (Tests/Fuzz/corpus, where an input that once failed is kept) and a few thousand seeded
/// mutations of it; the evemu target over the shared recordings too. A crash, a hang or a
/// broken invariant fails the test with the target's output. `make fuzz` runs the same
/// targets coverage-guided with libFuzzer for as long as asked.
@Suite struct FuzzPassTests {
    static let targets = ["evemu", "libinput", "request", "reply", "config", "http", "logtime", "mqtt"]

    @Test(arguments: targets)
    func aShortPassFindsNothing(target: String) throws {
        var corpora = [CLI.packageRoot.appendingPathComponent("Tests/Fuzz/corpus/" + target).path]
        if target == "evemu" {
            corpora += ["tablets", "touchpads"].map { CLI.recordings.appendingPathComponent($0).path }
        }
        let result = try CLI.run([target] + corpora + ["-runs=3000"], product: "forcescale-fuzz")
        #expect(result.status == 0, "\(target): status \(result.status)\n\(result.stderr)")
        #expect(result.stdout.hasPrefix("forcescale-fuzz \(target): ") && result.stdout.contains("and 3000 mutations, no failure"),
                "\(result.stdout)")
    }

    /// Each target's seeds are there: a pass over an empty corpus would prove little.
    @Test func everyTargetHasSeedsAndTheProgramListsTheTargets() throws {
        for target in Self.targets {
            let seeds = try FileManager.default.contentsOfDirectory(atPath: CLI.packageRoot.appendingPathComponent("Tests/Fuzz/corpus/" + target).path)
            #expect(!seeds.isEmpty, "\(target) has no seeds")
        }
        let usage = try CLI.run([], product: "forcescale-fuzz")
        #expect(usage.status == 64)
        for target in Self.targets { #expect(usage.stderr.contains("\n  \(target) "), "\(target) missing from \(usage.stderr)") }
    }
}
