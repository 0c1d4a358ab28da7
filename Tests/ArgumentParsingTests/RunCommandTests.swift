@testable import ArgumentParsing
import Testing

/// What a run printed and how it ended.
private struct Run {
    var status: Int32 = -1
    var output = ""
    var error = ""
}

/// Runs the sample tool on some arguments, capturing both streams.
private func run(_ arguments: [String], root: Command = Sample.root()) -> Run {
    var result = Run()
    result.status = runCommand(
        root,
        arguments: arguments,
        standardOutput: { result.output += $0 },
        standardError: { result.error += $0 })
    return result
}

@Suite struct RunCommandTests {
    @Test func helpGoesToStandardOutputWithStatusZero() {
        let result = run(["replay", "--help"])
        #expect(result.status == 0)
        #expect(result.output == helpText(for: ["forcescale", "replay"], root: Sample.root()) + "\n")
        #expect(result.output.hasSuffix("Show help information.\n\n"))
        #expect(result.error.isEmpty)
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
    }

    @Test func valueErrorsExitWith64BeforeTheCommandRuns() {
        let result = run(["replay", "rec.txt", "--interval-ms", "soon"])
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: The value 'soon' is invalid for '--interval-ms <n>': not a whole number\n"))
    }

    @Test func usageErrorsFromTheRunAlsoExitWith64() {
        let result = run(["replay", "usage-error"])
        #expect(result.status == 64)
        #expect(result.error.hasPrefix("Error: The file is empty.\nUsage: forcescale replay <file>"))
    }

    @Test func otherErrorsFromTheRunExitWith1() {
        let result = run(["replay", "disk-full"])
        #expect(result.status == 1)
        #expect(result.error == "Error: The disk is full.\n")
    }

    @Test func theRunStatusIsTheExitStatus() {
        let result = run(["replay", "rec.txt"])
        #expect(result.status == SampleReplay.status)
        #expect(result.output.isEmpty && result.error.isEmpty)
    }
}
