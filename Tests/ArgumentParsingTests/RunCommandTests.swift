import ArgumentParsing
import Testing

/// What a run printed and how it ended.
private struct Run {
    var status: Int32 = -1
    var output = ""
    var error = ""
    var ranWith: [String]?
}

/// Runs the sample tool on some arguments, capturing both streams.
private func run(_ arguments: [String], body: (ParsedCommand) throws -> Int32 = { _ in 0 }) -> Run {
    var result = Run()
    result.status = runCommand(
        root: Sample.root(),
        arguments: arguments,
        standardOutput: { result.output += $0 },
        standardError: { result.error += $0 },
        body: { command in
            result.ranWith = command.path
            return try body(command)
        })
    return result
}

private struct DiskFull: Error, CustomStringConvertible {
    var description: String { "The disk is full." }
}

@Suite struct RunCommandTests {
    @Test func helpGoesToStandardOutputWithStatusZero() {
        let result = run(["replay", "--help"])
        #expect(result.status == 0)
        #expect(result.output == helpText(for: ["forcescale", "replay"], root: Sample.root()) + "\n")
        #expect(result.output.hasSuffix("Show help information.\n\n"))
        #expect(result.error.isEmpty)
        #expect(result.ranWith == nil)
    }

    @Test func versionGoesToStandardOutputWithStatusZero() {
        let result = run(["--version"])
        #expect(result.status == 0)
        #expect(result.output == "1.2.3\n")
    }

    @Test func usageErrorsGoToStandardErrorWithStatus64() {
        let result = run(["replay"])
        #expect(result.status == 64)
        #expect(result.output.isEmpty)
        #expect(result.error == usageErrorText(["replay"])! + "\n")
        #expect(result.ranWith == nil)
    }

    @Test func usageErrorsFromTheBodyAlsoExitWith64() {
        let result = run(["replay", "rec.txt", "--interval-ms", "soon"]) { command in
            _ = try command.int("interval-ms")
            return 0
        }
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: The value 'soon' is invalid for '--interval-ms <n>'\n"))
    }

    @Test func otherErrorsFromTheBodyExitWith1() {
        let result = run(["demo"]) { _ in throw DiskFull() }
        #expect(result.status == 1)
        #expect(result.error == "Error: The disk is full.\n")
    }

    @Test func theBodyStatusIsTheExitStatus() {
        let result = run(["replay", "rec.txt"]) { _ in 3 }
        #expect(result.status == 3)
        #expect(result.ranWith == ["forcescale", "replay"])
        #expect(result.output.isEmpty && result.error.isEmpty)
    }

    @Test func theAsynchronousVariantBehavesTheSame() async {
        var output = ""
        let status = await runCommand(
            root: Sample.root(), arguments: ["demo", "--threshold", "-2"],
            standardOutput: { output += $0 },
            body: { command async throws in
                await Task.yield()
                return try command.double("threshold") == -2 ? 7 : 0
            })
        #expect(status == 7)
        #expect(output.isEmpty)
    }
}
