import Foundation
import Testing

/// The live-device commands where no device is present (the host has none; the real-kernel
/// scenarios in Tests/KernelScenarios cover present devices). An empty folder stands in
/// for /dev/input, so these hold on any machine.
@Suite struct DeviceCommandTests {
    func withEmptyInputDirectory(_ body: ([String: String]) throws -> Void) throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(["FORCESCALE_INPUT_DIR": directory.path])
    }

    @Test func devicesSaysThereAreNone() throws {
        try withEmptyInputDirectory { environment in
            let result = try CLI.run(["devices"], environment: environment)
            #expect(result.status == 0)
            #expect(result.stdout.hasPrefix("No input devices in /"))
            // The way on without a device: the demo served by the daemon.
            #expect(result.stdout.hasSuffix(". Without one, try the demo: forcescale demo --write demo.events, "
                + "then forcescaled --replay demo.events --loop\n"), "\(result.stdout)")
            let json = try CLI.run(["devices", "--json"], environment: environment)
            #expect(json.status == 0 && json.stdout.isEmpty)
        }
    }

    @Test func readWithoutADeviceFailsWith69AndSaysWhatToDo() throws {
        try withEmptyInputDirectory { environment in
            let result = try CLI.run(["read", "--json"], environment: environment)
            #expect(result.status == 69)
            #expect(result.stderr.hasPrefix("error: no pressure device found"))
            #expect(result.stderr.contains("'forcescale demo' runs without one"))
            let named = try CLI.run(["read", "--device", "wacom"], environment: environment)
            #expect(named.status == 69)
            #expect(named.stderr.contains("no input device matches name containing 'wacom'"))
        }
    }

    @Test func recordWithoutADeviceFailsWith69AndWritesNothing() throws {
        try withEmptyInputDirectory { environment in
            let output = try CLI.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: output) }
            let file = output.appendingPathComponent("pad.events").path
            let result = try CLI.run(["record", "--output", file], environment: environment)
            #expect(result.status == 69)
            #expect(result.stderr.hasPrefix("error: no pressure device found"))
            // The file is only created once there is a device to record.
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }

    @Test func recordUsageErrorsExit64() throws {
        for duration in ["0", "-1", "soon"] {
            let result = try CLI.run(["record", "--duration", duration])
            #expect(result.status == 64, "--duration \(duration)")
            #expect(result.stderr.hasPrefix("Error: "), "--duration \(duration)")
        }
    }

    @Test func rumbleWithoutForceFeedbackFailsWith69() throws {
        try withEmptyInputDirectory { environment in
            let result = try CLI.run(["rumble", "success"], environment: environment)
            #expect(result.status == 69)
            #expect(result.stderr.contains("no device with force feedback (FF_RUMBLE or FF_HAPTIC) found"))
        }
    }

    @Test func rumbleListsThePatternsWithoutADevice() throws {
        let result = try CLI.run(["rumble", "--list"])
        #expect(result.status == 0)
        let names = result.stdout.split(separator: "\n").map { String($0.prefix { $0 != " " }) }
        #expect(names == ["impact-light", "impact-medium", "impact-heavy", "impact-soft", "impact-rigid", "selection", "success", "warning", "error"])
    }

    @Test func rumbleUsageErrorsExit64() throws {
        let unknown = try CLI.run(["rumble", "thud"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.hasPrefix("Error: Unknown pattern 'thud'"))
        let intensity = try CLI.run(["rumble", "--intensity", "1.5"])
        #expect(intensity.status == 64)
        #expect(intensity.stderr.hasPrefix("Error: The intensity must be between 0 and 1"))
    }

    @Test func rumbleTestUsageErrorsExit64() throws {
        for (arguments, message) in [
            (["rumble", "--count", "5"], "Error: --count and --json go with --test"),
            (["rumble", "--json"], "Error: --count and --json go with --test"),
            (["rumble", "--test", "--count", "0"], "Error: --count must be 1 or more"),
            (["rumble", "--test", "--probe"], "Error: Give either --probe or --test"),
            (["rumble", "--test", "--socket", "/nonexistent"], "Error: --socket plays a pattern through the daemon's own rumble device"),
        ] {
            let result = try CLI.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        }
    }

    @Test func rumbleTestWithoutForceFeedbackFailsWith69() throws {
        try withEmptyInputDirectory { environment in
            let result = try CLI.run(["rumble", "--test", "--json"], environment: environment)
            #expect(result.status == 69)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.contains("no device with force feedback (FF_RUMBLE or FF_HAPTIC) found"))
        }
    }

    @Test func aDeviceNodeThatIsNotAnEvdevDeviceIsReportedNotFatal() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A regular file named like a node: open works, libevdev refuses it.
        try "not a device".write(to: directory.appendingPathComponent("event3"), atomically: true, encoding: .utf8)
        let result = try CLI.run(["devices"], environment: ["FORCESCALE_INPUT_DIR": directory.path])
        #expect(result.status == 0)
        #expect(result.stdout.contains("\(directory.path)/event3  (cannot open)"))
    }
}
