import Foundation
import Testing

/// `devices` and `rumble` through the daemon (`--socket`), against a recording it serves.
@Suite struct DaemonDeviceCommandTests {
    @Test func devicesThroughTheDaemonNameWhatItReads() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let text = try CLI.run(["devices", "--socket", daemon.socketPath])
        #expect(text.status == 0)
        #expect(text.stdout.contains("Wacom Intuos4 6x9  (tablet)  ← read by forcescaled"))
        let json = try CLI.run(["devices", "--json", "--socket", daemon.socketPath])
        #expect(json.stdout.hasPrefix(#"{"class":"DEVICES","devices":[{"path":""#))
        #expect(json.stdout.contains(#""active":true"#))
    }

    @Test func rumbleThroughTheDaemonReportsItsRefusal() throws {
        let daemon = try DaemonUnderTest(recording: DaemonRecordings.intuos)
        defer { daemon.cleanUp() }
        let result = try CLI.run(["rumble", "success", "--socket", daemon.socketPath])
        #expect(result.status == 1)
        #expect(result.stderr.contains("rumble unavailable") && result.stderr.contains("a recording cannot rumble"))
        let mixed = try CLI.run(["rumble", "--probe", "--socket", daemon.socketPath])
        #expect(mixed.status == 64)
    }

    @Test func withoutADaemonTheyExit69() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("none.sock").path
        let devices = try CLI.run(["devices", "--socket", socket])
        #expect(devices.status == 69)
        #expect(devices.stderr.contains("no forcescaled is listening on \(socket)"))
    }
}
