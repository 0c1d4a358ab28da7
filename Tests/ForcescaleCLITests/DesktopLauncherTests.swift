import Foundation
import Glibc
import Testing

/// forcescale-web's desktop integration (desktop/): the entry, icon and AppStream metainfo
/// as `make install` stages them pass desktop-file-validate and `appstreamcli validate
/// --no-net` (scripts/check-desktop-files, which `make deb` runs on the package), and the
/// launcher opens the address systemd listens on with forcescale-web's key (through a private
/// redirecting file, never on a command line), or explains when the socket is off or the
/// user may read no key. The launcher's systemctl and browser are stand-ins that record what
/// they were asked.
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

    /// What the launcher did: its exit, what the stand-in browser was given on its command
    /// line, and the contents of the file it named then (the redirect), with that file's mode.
    struct Launch {
        var result: ProcessResult
        var opened: String?
        var openedFile: String?
        var openedMode: mode_t?
    }

    static let readKey = String(repeating: "5e", count: 32)
    static let controlKey = String(repeating: "c0", count: 32)

    /// Runs desktop/forcescale-web-open with a systemctl that answers `state` and `listen`,
    /// and an xdg-open that writes what it opens (and the file it names) to files, in a
    /// directory that `nobody` may enter, with forcescale-web's key directory holding `keys`
    /// (name: mode, owned by root and by `keyGroup`).
    /// - Parameter asUser: `setpriv` options to run it as another user (`--reuid=nobody`…).
    static func launch(
        _ arguments: [String] = [], state: String?, listen: String = "127.0.0.1:19385 (Stream)",
        keys: [String: mode_t] = ["read-key": 0o640], keyGroup: gid_t = 0, asUser: [String] = []
    ) throws -> Launch {
        let shared = try SharedWithOtherUsers()
        let bin = try shared.makeDirectory("bin")
        let record = try shared.makeDirectory("record")
        let runtime = try shared.makeDirectory("runtime")
        let keyDirectory = try shared.makeDirectory("keys")
        for (name, mode) in keys {
            let path = keyDirectory.appendingPathComponent(name).path
            try ((name == "control-key" ? controlKey : readKey) + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            #expect(chown(path, 0, keyGroup) == 0 && chmod(path, mode) == 0)
        }
        if !asUser.isEmpty {
            // The user's own runtime directory (XDG_RUNTIME_DIR is theirs alone).
            #expect(chown(runtime.path, 65534, 65534) == 0 && chmod(runtime.path, 0o700) == 0 && chmod(record.path, 0o777) == 0)
        }
        let opened = record.appendingPathComponent("opened").path
        let content = record.appendingPathComponent("content").path
        let mode = record.appendingPathComponent("mode").path
        var tools = ["xdg-open": """
            #!/bin/sh
            echo "$@" > '\(opened)'
            case $1 in file://*) cat "${1#file://}" > '\(content)'; stat -c %a "${1#file://}" > '\(mode)' ;; esac 2>/dev/null
            exit 0

            """]
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
        let script = try shared.copy(CLI.packageRoot.appendingPathComponent("desktop/forcescale-web-open"), to: "forcescale-web-open")
        // /run/systemd/system is there only where systemd runs; the launcher is told so by
        // the stand-in's absence instead (state nil).
        let environment = ["PATH": bin.path + ":/usr/bin:/bin", "FORCESCALE_TEST_SYSTEMD": "1",
                           "FORCESCALE_WEB_KEY_DIR": keyDirectory.path, "XDG_RUNTIME_DIR": runtime.path]
        let result = asUser.isEmpty
            ? try run("/bin/sh", [script] + arguments, environment: environment)
            : try run("/usr/bin/setpriv", asUser + ["/usr/bin/env"] + environment.map { "\($0)=\($1)" } + ["/bin/sh", script] + arguments)
        func read(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .newlines) }
        return Launch(result: result, opened: read(opened), openedFile: read(content), openedMode: read(mode).flatMap { mode_t($0, radix: 8) })
    }

    @Test func theLauncherOpensTheAddressTheSocketListensOnWithTheKeyInAPrivateFile() throws {
        let launch = try Self.launch(state: "active")
        #expect(launch.result.status == 0, "\(launch.result.stderr)")
        // The browser is given a file of this user's, never the key (other users see argv).
        let opened = try #require(launch.opened)
        #expect(opened.hasPrefix("file:///") && opened.hasSuffix("/forcescale-web-open.html") && !opened.contains(Self.readKey), "\(opened)")
        #expect(launch.openedMode == 0o600)
        #expect(launch.openedFile?.contains(#"content="0;url=http://127.0.0.1:19385/?key=\#(Self.readKey)""#) == true, "\(launch.openedFile ?? "")")
        // --print gives the address without the key.
        let printed = try Self.launch(["--print"], state: "active", listen: "[::]:8080 (Stream)")
        #expect(printed.result.stdout == "http://[::1]:8080/\n")
        let port = try Self.launch(["--print"], state: "active", listen: "19400 (Stream)")
        #expect(port.result.stdout == "http://127.0.0.1:19400/\n")
    }

    @Test func theLauncherTakesTheControlKeyWhenTheUserMayReadIt() throws {
        let launch = try Self.launch(state: "active", keys: ["read-key": 0o640, "control-key": 0o640])
        #expect(launch.result.status == 0, "\(launch.result.stderr)")
        #expect(launch.openedFile?.contains("?key=\(Self.controlKey)") == true)
        // nobody in the read key's group only: the read key.
        let member = try Self.launch(state: "active", keys: ["read-key": 0o640, "control-key": 0o600], keyGroup: 4242,
                                     asUser: ["--reuid=nobody", "--regid=nogroup", "--groups=4242"])
        #expect(member.result.status == 0, "\(member.result.stderr)")
        #expect(member.openedFile?.contains("?key=\(Self.readKey)") == true, "\(member.openedFile ?? "")")
        #expect(member.opened.map { !$0.contains(Self.readKey) } == true)
    }

    @Test func theLauncherRefusesClearlyAUserWhoMayReadNoKey() throws {
        let stranger = try Self.launch(state: "active", keys: ["read-key": 0o640, "control-key": 0o600], keyGroup: 4242,
                                       asUser: ["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        #expect(stranger.result.status == 77)
        #expect(stranger.result.stderr.contains("you may not read forcescale-web's keys") && stranger.result.stderr.contains("sudo adduser nobody forcescale"),
                "\(stranger.result.stderr)")
        #expect(stranger.opened == nil, "the launcher opened \(stranger.opened ?? "")")
        // No key at all (forcescale-web not running, nothing on the port to start it).
        let none = try Self.launch(state: "active", listen: "127.0.0.1:9 (Stream)", keys: [:])
        #expect(none.result.status == 69 && none.result.stderr.contains("has written no key"), "\(none.result.stderr)")
        #expect(none.opened == nil)
    }

    @Test func theLauncherExplainsWhenTheSocketIsOff() throws {
        let launch = try Self.launch(state: "inactive")
        #expect(launch.result.status == 69)
        #expect(launch.result.stderr.contains("forcescale-web.socket is not active: enable it with 'sudo systemctl enable --now forcescale-web.socket'"), "\(launch.result.stderr)")
        #expect(launch.opened == "file:///usr/local/share/forcescale-web/not-listening.html")
        let printed = try Self.launch(["--print"], state: "inactive")
        #expect(printed.result.status == 69 && printed.result.stdout.isEmpty && printed.opened == nil)
        let page = try String(contentsOfFile: CLI.packageRoot.appendingPathComponent("desktop/not-listening.html").path, encoding: .utf8)
        #expect(page.contains("sudo systemctl enable --now forcescale-web.socket"))
    }

    @Test func theLauncherRefusesWhatItDoesNotKnow() throws {
        let launch = try Self.launch(["--open"], state: "active")
        #expect(launch.result.status == 64 && launch.result.stderr.contains("Usage: forcescale-web-open [--print]") && launch.opened == nil)
    }
}
