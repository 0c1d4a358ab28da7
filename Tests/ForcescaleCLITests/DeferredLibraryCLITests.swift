import Foundation
import Glibc
import Testing

/// forcescale-web and forcescale-mqtt load libmicrohttpd and libmosquitto themselves, when
/// they first call them (Sources/CDeferredLibrary), so that the multi-call release program
/// does not load them into the daemon. When the library is not there, the program says which
/// library and which Debian package, and exits 127 as the dynamic loader would. The library
/// is hidden from the program alone: /dev/null is bind-mounted over it in a mount namespace
/// of the program's own (unshare; root, as the tests run).
@Suite struct DeferredLibraryCLITests {
    static func hiding(_ library: String, running product: String, _ arguments: [String]) throws -> ProcessResult {
        let path = "/usr/lib/\(Self.multiarch)/\(library)"
        try #require(FileManager.default.fileExists(atPath: path), "\(path) is not installed (scripts/setup test)")
        let program = CLI.binDirectory.appendingPathComponent(product).path
        return try run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", #"mount --bind /dev/null "$0" && exec "$@""#, path, program] + arguments)
    }

    static let multiarch: String = {
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: name.machine) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        return "\(machine)-linux-gnu"
    }()

    @Test func forcescaleWebWithoutLibmicrohttpdNamesItAndItsPackage() throws {
        let keys = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: keys) }
        let web = try Self.hiding(
            "libmicrohttpd.so.12", running: "forcescale-web", ["--socket", "/nonexistent/forcescaled.sock", "--listen", "127.0.0.1:0", "--key-dir", keys.path])
        #expect(web.exited && web.status == 127, "status \(web.status): \(web.stderr)")
        #expect(web.stderr.contains("Error: forcescale-web: cannot load libmicrohttpd.so.12 ("), "\(web.stderr)")
        #expect(web.stderr.contains("; install Debian's libmicrohttpd12\n"), "\(web.stderr)")
    }

    @Test func forcescaleMQTTWithoutLibmosquittoNamesItAndItsPackage() throws {
        let mqtt = try Self.hiding("libmosquitto.so.1", running: "forcescale-mqtt",
                                   ["--config", "/dev/null", "--socket", "/nonexistent/forcescaled.sock", "--broker", "127.0.0.1:1"])
        #expect(mqtt.exited && mqtt.status == 127, "status \(mqtt.status): \(mqtt.stderr)")
        #expect(mqtt.stderr.contains("Error: forcescale-mqtt: cannot load libmosquitto.so.1 ("), "\(mqtt.stderr)")
        #expect(mqtt.stderr.contains("; install Debian's libmosquitto1\n"), "\(mqtt.stderr)")
    }
}
