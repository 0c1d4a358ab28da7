import Foundation
import Glibc
import Testing

/// forcescale-web's desktop integration (desktop/): the entry, icon and AppStream metainfo
/// as `make install` stages them pass desktop-file-validate and `appstreamcli validate
/// --no-net` (scripts/check-desktop-files, which `make deb` runs on the package), and the
/// launcher opens the address systemd listens on, or explains when the socket is off. The
/// launcher's systemctl and browser are stand-ins that record what they were asked.
@Suite struct DesktopLauncherTests {
    @Test func theStagedDesktopFilesPassTheValidators() throws {
        let stage = try Staging()
        let install = try stage.make(["install", "PREFIX=/usr"])
        #expect(install.exited && install.status == 0, "\(install.stderr)")
        let check = try run(CLI.packageRoot.appendingPathComponent("scripts/check-desktop-files").path, [stage.destination.path])
        #expect(check.status == 0, "\(check.stdout)\n\(check.stderr)")
        #expect(check.stdout.contains("pass"))
        // The installed launcher shows the page the package installs, not the checkout's.
        let launcher = try String(contentsOfFile: stage.path("/usr/bin/forcescale-web-open"), encoding: .utf8)
        #expect(launcher.contains("NOT_LISTENING=/usr/share/forcescale-web/not-listening.html"))
    }

    /// Runs desktop/forcescale-web-open with a systemctl that answers `state` and `listen`,
    /// and an xdg-open that writes what it opens to a file.
    static func launch(_ arguments: [String] = [], state: String?, listen: String = "127.0.0.1:19385 (Stream)") throws -> (ProcessResult, opened: String?) {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opened = directory.appendingPathComponent("opened").path
        var tools = ["xdg-open": "#!/bin/sh\necho \"$1\" > '\(opened)'\n"]
        if let state {
            tools["systemctl"] = """
                #!/bin/sh
                case $1 in
                    is-active) echo '\(state)'; [ '\(state)' = active ] ;;
                    show) echo '\(listen)' ;;
                    *) exit 1 ;;
                esac

                """
        }
        for (name, text) in tools {
            let path = bin.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(chmod(path, 0o755) == 0)
        }
        // /run/systemd/system is there only where systemd runs; the launcher is told so by
        // the stand-in's absence instead (state nil).
        let script = CLI.packageRoot.appendingPathComponent("desktop/forcescale-web-open").path
        let result = try run("/bin/sh", [script] + arguments, environment: ["PATH": bin.path + ":/usr/bin:/bin", "FORCESCALE_TEST_SYSTEMD": "1"])
        return (result, try? String(contentsOfFile: opened, encoding: .utf8).trimmingCharacters(in: .newlines))
    }

    @Test func theLauncherOpensTheAddressTheSocketListensOn() throws {
        let (result, opened) = try Self.launch(state: "active")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(opened == "http://127.0.0.1:19385/")
        let (printed, _) = try Self.launch(["--print"], state: "active", listen: "[::]:8080 (Stream)")
        #expect(printed.stdout == "http://[::1]:8080/\n")
        let (port, _) = try Self.launch(["--print"], state: "active", listen: "19400 (Stream)")
        #expect(port.stdout == "http://127.0.0.1:19400/\n")
    }

    @Test func theLauncherExplainsWhenTheSocketIsOff() throws {
        let (result, opened) = try Self.launch(state: "inactive")
        #expect(result.status == 69)
        #expect(result.stderr.contains("forcescale-web.socket is not active: enable it with 'sudo systemctl enable --now forcescale-web.socket'"), "\(result.stderr)")
        #expect(opened == "file:///usr/local/share/forcescale-web/not-listening.html")
        let (printed, nothing) = try Self.launch(["--print"], state: "inactive")
        #expect(printed.status == 69 && printed.stdout.isEmpty && nothing == nil)
        let page = try String(contentsOfFile: CLI.packageRoot.appendingPathComponent("desktop/not-listening.html").path, encoding: .utf8)
        #expect(page.contains("sudo systemctl enable --now forcescale-web.socket"))
    }

    @Test func theLauncherRefusesWhatItDoesNotKnow() throws {
        let (result, opened) = try Self.launch(["--open"], state: "active")
        #expect(result.status == 64 && result.stderr.contains("Usage: forcescale-web-open [--print]") && opened == nil)
    }
}
