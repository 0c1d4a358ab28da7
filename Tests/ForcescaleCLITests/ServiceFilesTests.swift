import Foundation
import Glibc
import Testing

/// The files that make forcescaled a system service (systemd/, udev/, sysusers.d/) and
/// `make install`, checked with the real tools: systemd-analyze verify and security, the udev
/// helper run by /bin/sh, and make itself. The udev rule under a running systemd-udevd is
/// kernel scenario i; socket activation as the unit does it is in DaemonServiceTests.
@Suite(.serialized) struct ServiceFilesTests {
    static let root = CLI.packageRoot
    static let helper = root.appendingPathComponent("udev/forcescale-udev-pressure").path
    static let serviceUnit = root.appendingPathComponent("systemd/forcescaled.service").path
    static let socketUnit = root.appendingPathComponent("systemd/forcescaled.socket").path
    static let mqttUnit = root.appendingPathComponent("systemd/forcescale-mqtt.service").path
    static let systemdAnalyze = "/usr/bin/systemd-analyze"

    // MARK: - The udev helper

    /// capabilities/abs as the kernel prints it (input_print_bitmap: hex words of a `long`,
    /// highest first, no leading zeros), and what the helper must make of it.
    static let bitmasks: [(words: [String], pressure: Bool, device: String)] = [
        (["660800011000003"], true, "Synaptics clickpad: ABS_PRESSURE and ABS_MT_PRESSURE"),
        (["6608000", "11000003"], true, "the same pad on a 32-bit kernel (two words)"),
        (["1000003"], true, "pressure pad or pen: X, Y and ABS_PRESSURE"),
        (["f000003"], true, "pen tablet: ABS_PRESSURE, DISTANCE, TILT_X, TILT_Y"),
        (["660800000000003"], true, "Magic Trackpad 2: ABS_MT_PRESSURE only (bit 0x3a)"),
        (["4000000", "3"], true, "ABS_MT_PRESSURE only, 32-bit kernel: bit 26 of the high word"),
        (["260800000000003"], false, "I2C touchpad without pressure"),
        (["2608000", "3"], false, "the same, 32-bit kernel"),
        (["0"], false, "mouse: no absolute axis"),
        (["3"], false, "touchscreen with X and Y only"),
        (["800000"], false, "bit 23 (ABS_HAT3Y) beside ABS_PRESSURE"),
        (["2000000"], false, "bit 25 (ABS_DISTANCE) beside ABS_PRESSURE"),
        (["200000000000000"], false, "bit 57 (ABS_MT_TRACKING_ID) beside ABS_MT_PRESSURE"),
        (["800000000000000"], false, "bit 59 (ABS_MT_DISTANCE) beside ABS_MT_PRESSURE"),
        (["FFFFFFFFFFFFFFFF"], true, "every bit, upper-case digits"),
    ]

    @Test(arguments: 0..<bitmasks.count)
    func udevHelperFindsThePressureBits(_ index: Int) throws {
        let (words, pressure, device) = Self.bitmasks[index]
        // Run as udev runs it: the file itself, through its #! line.
        let result = try run(Self.helper, words)
        #expect(result.exited && result.status == 0, "\(device): exit \(result.status), \(result.stderr)")
        #expect(result.stdout == "FORCESCALE_PRESSURE=\(pressure ? 1 : 0)\n", "\(device): \(words.joined(separator: " ")) gave \(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test(arguments: [
        ([], "got 0 arguments"),
        (["1", "2", "3"], "got 3 arguments"),
        (["0x1000003"], "'0x1000003' is not a hexadecimal word"),
        (["10000-3"], "'10000-3' is not a hexadecimal word"),
        (["11000003660800011"], "more than 16 hexadecimal digits"),
        (["123456789", "0"], "more than 8 hexadecimal digits"),
    ] as [([String], String)])
    func udevHelperRefusesWhatIsNoBitmask(_ words: [String], _ message: String) throws {
        let result = try run(Self.helper, words)
        #expect(result.exited && result.status == 2, "\(words): exit \(result.status)")
        #expect(result.stdout.isEmpty, "\(words): printed \(result.stdout)")
        #expect(result.stderr.contains(message), "\(words): \(result.stderr)")
    }

    @Test func udevRuleAsksForTheServiceWithoutUaccess() throws {
        let rule = try String(contentsOfFile: Self.root.appendingPathComponent("udev/70-forcescale.rules").path, encoding: .utf8)
        let active = rule.split(separator: "\n").filter { !$0.hasPrefix("#") }.joined(separator: "\n")
        #expect(active.contains(#"ENV{SYSTEMD_WANTS}+="forcescaled.service""#))
        #expect(active.contains(#"TAG+="systemd""#))
        #expect(active.contains(#"ENV{FORCESCALE_DEVICE}="1""#))
        #expect(!active.contains("uaccess"), "the rule must not give the desktop user the raw events")
        // The daemon's user gets the pressure devices and rumbling gamepads, and no more: no
        // GROUP= or MODE= that would open them to others, and OWNER= only after the tests.
        #expect(!active.contains("GROUP=") && !active.contains("MODE="), "the rule changes only the owner")
        let owners = active.split(separator: "\n").filter { $0.contains(#"OWNER="forcescale""#) }
        #expect(owners.count == 2, "\(owners)")
        #expect(owners.contains { $0.contains(#"ENV{ID_INPUT_JOYSTICK}=="1""#) && $0.contains("ATTRS{capabilities/ff}") })
        let pressure = try #require(active.range(of: #"ENV{FORCESCALE_PRESSURE}!="1", GOTO="forcescale_end""#))
        let owned = try #require(active.range(of: "\nOWNER=\"forcescale\"\n"))
        #expect(owned.lowerBound > pressure.upperBound, "pressure devices are given to the daemon only once known to have pressure")
        // make install rewrites this path to $(UDEVDIR)/forcescale-udev-pressure.
        #expect(active.contains(#"IMPORT{program}="/usr/local/lib/udev/forcescale-udev-pressure %s{capabilities/abs}""#))
    }

    // MARK: - The units

    @Test func serviceExposureIsAtMostOnePointFive() throws {
        let (figure, line) = try Self.exposure(of: Self.serviceUnit)
        print("systemd-analyze security --offline=yes systemd/forcescaled.service: exposure \(figure)")
        #expect(figure <= 1.5, "\(line)")
        // What the sandbox must keep allowing, or the daemon cannot read and rumble.
        let unit = try UnitFile(path: Self.serviceUnit)
        #expect(unit.values("Service", "DeviceAllow") == ["char-input rw"])
        #expect(unit.values("Service", "DevicePolicy") == ["closed"])
        #expect(unit.values("Service", "PrivateDevices").isEmpty, "PrivateDevices hides /dev/input")
        // Not group input, which reads every keyboard: the udev rule gives it its devices.
        #expect(unit.values("Service", "SupplementaryGroups").isEmpty)
        #expect(unit.values("Service", "MemoryMax") == ["128M"])
        #expect(unit.values("Service", "Type") == ["notify"])
    }

    /// `systemd-analyze security --offline` of a service file: the overall exposure and the
    /// line that gives it.
    static func exposure(of path: String) throws -> (Double, String) {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let result = try run(systemdAnalyze, ["security", "--offline=yes", "--no-pager", path])
        let line = try #require(result.stdout.split(separator: "\n").first { $0.contains("Overall exposure level for \(name):") },
                                "systemd-analyze security printed no overall level: \(result.stdout.suffix(300)) \(result.stderr)")
        // "→ Overall exposure level for forcescaled.service: 0.6 SAFE 😀" (the face may be ":-}").
        let afterName = line.components(separatedBy: "\(name):").last ?? ""
        let figure = try #require(afterName.split(separator: " ").first.flatMap { Double($0) }, "cannot read \(line)")
        return (figure, String(line))
    }

    /// forcescale-mqtt's unit: a network client, so it keeps IP, and the rest locked down.
    @Test func mqttServiceExposureIsAtMostOnePointFive() throws {
        let (figure, line) = try Self.exposure(of: Self.mqttUnit)
        print("systemd-analyze security --offline=yes systemd/forcescale-mqtt.service: exposure \(figure)")
        #expect(figure <= 1.5, "\(line)")
        let unit = try UnitFile(path: Self.mqttUnit)
        #expect(unit.values("Service", "User") == ["forcescale-mqtt"])
        // Read only: the daemon's socket is group forcescale's, control is forcescale-control's.
        #expect(unit.values("Service", "SupplementaryGroups") == ["forcescale"], "the daemon's socket is group forcescale's")
        #expect(unit.values("Service", "MemoryMax") == ["64M"])
        #expect(unit.values("Service", "RestrictAddressFamilies") == ["AF_UNIX AF_INET AF_INET6"])
        #expect(unit.values("Service", "PrivateNetwork").isEmpty, "it must reach the broker")
        #expect(unit.values("Install", "WantedBy") == ["multi-user.target"])
    }

    /// The installed units, verified where they point: `systemd-analyze verify` wants the
    /// programs of ExecStart= to exist and (with --man=yes) the man pages of Documentation=
    /// to be found, so the staged copies are re-rooted at the staging directory.
    @Test func installedUnitsPassSystemdAnalyzeVerify() throws {
        let stage = try Staging()
        let install = try stage.make(["install"])
        #expect(install.exited && install.status == 0, "make install: \(install.stdout) \(install.stderr)")
        let units = stage.path("/usr/local/lib/systemd/system")
        let check = stage.directory.appendingPathComponent("verify")
        try FileManager.default.createDirectory(at: check, withIntermediateDirectories: true)
        var copies: [String] = []
        for name in ["forcescaled.service", "forcescaled.socket", "forcescale-web.service", "forcescale-web.socket", "forcescale-mqtt.service"] {
            let text = try String(contentsOfFile: units + "/" + name, encoding: .utf8)
            let copy = check.appendingPathComponent(name).path
            try text.replacingOccurrences(of: "=/usr/local/", with: "=" + stage.path("/usr/local/")).write(toFile: copy, atomically: true, encoding: .utf8)
            copies.append(copy)
        }
        let verify = try run(Self.systemdAnalyze, ["verify", "--man=yes"] + copies,
                             environment: ["MANPATH": stage.path("/usr/local/share/man")], timeout: 60)
        #expect(verify.exited && verify.status == 0, "systemd-analyze verify exited \(verify.status): \(verify.stderr)")
        // Unknown or misspelt keys are only warnings (status 0), so there must be none at all.
        #expect(verify.stderr.isEmpty && verify.stdout.isEmpty, "systemd-analyze verify: \(verify.stdout) \(verify.stderr)")

        // And it can fail: a misspelt key and a missing program are reported.
        let broken = check.appendingPathComponent("forcescaled.service").path
        let text = try String(contentsOfFile: broken, encoding: .utf8)
        try text.replacingOccurrences(of: "ProtectSystem=strict", with: "ProtectSystm=strict")
            .replacingOccurrences(of: stage.path("/usr/local/bin/forcescaled"), with: stage.path("/usr/local/bin/forcescaled-missing"))
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let failed = try run(Self.systemdAnalyze, ["verify", "--man=no", broken], timeout: 60)
        #expect(failed.stderr.contains("ProtectSystm") && failed.stderr.contains("forcescaled-missing"), "\(failed.stderr)")
    }

    /// systemd-sysusers itself, into an empty root: the unit's User= and the socket's
    /// SocketGroup= are what the file makes, a system user that cannot log in.
    @Test func sysusersFileMakesTheUnitsUserAndGroup() throws {
        let root = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("etc"), withIntermediateDirectories: true)
        let file = Self.root.appendingPathComponent("sysusers.d/forcescale.conf").path
        let result = try run("/usr/bin/systemd-sysusers", ["--root=\(root.path)", file])
        #expect(result.exited && result.status == 0, "systemd-sysusers: \(result.stderr)")
        let passwd = try String(contentsOfFile: root.path + "/etc/passwd", encoding: .utf8).split(separator: "\n")
        let group = try String(contentsOfFile: root.path + "/etc/group", encoding: .utf8).split(separator: "\n")
        let user = try #require(passwd.first { $0.hasPrefix("forcescale:") }, "\(passwd)").split(separator: ":", omittingEmptySubsequences: false)
        #expect(user.count == 7)
        #expect(Int(user[2]).map { $0 > 0 && $0 < 1000 } == true, "a system user: \(user)")
        #expect(user[5] == "/var/lib/forcescale" && user[6].hasSuffix("nologin"), "\(user)")
        #expect(group.contains { $0.hasPrefix("forcescale:") }, "\(group)")
        // The control group, empty: nobody controls until the admin adds them.
        let control = try #require(group.first { $0.hasPrefix("forcescale-control:") }, "\(group)").split(separator: ":", omittingEmptySubsequences: false)
        #expect(control.count == 4 && Int(control[2]).map { $0 > 0 && $0 < 1000 } == true && control[3].isEmpty, "\(control)")
        // The daemon's user is in neither group input nor the control group.
        #expect(!group.contains { $0.hasPrefix("input:") && $0.split(separator: ":", omittingEmptySubsequences: false).last?.split(separator: ",").contains("forcescale") == true })
        let service = try UnitFile(path: Self.serviceUnit)
        let socket = try UnitFile(path: Self.socketUnit)
        #expect(service.values("Service", "User") == ["forcescale"] && service.values("Service", "Group") == ["forcescale"])
        #expect(socket.values("Socket", "SocketGroup") == ["forcescale"] && socket.values("Socket", "SocketMode") == ["0660"])
    }

    /// forcescale-mqtt's user, made by its own file: a system user of its own, a member of
    /// group forcescale (the daemon's socket), whichever file systemd-sysusers reads first.
    @Test func sysusersFileMakesTheMQTTUserAMemberOfForcescale() throws {
        let root = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("etc"), withIntermediateDirectories: true)
        let files = ["sysusers.d/forcescale.conf", "sysusers.d/forcescale-mqtt.conf"].map { Self.root.appendingPathComponent($0).path }
        let result = try run("/usr/bin/systemd-sysusers", ["--root=\(root.path)"] + files)
        #expect(result.exited && result.status == 0, "systemd-sysusers: \(result.stderr)")
        let passwd = try String(contentsOfFile: root.path + "/etc/passwd", encoding: .utf8).split(separator: "\n")
        let group = try String(contentsOfFile: root.path + "/etc/group", encoding: .utf8).split(separator: "\n")
        let user = try #require(passwd.first { $0.hasPrefix("forcescale-mqtt:") }, "\(passwd)").split(separator: ":", omittingEmptySubsequences: false)
        #expect(Int(user[2]).map { $0 > 0 && $0 < 1000 } == true, "a system user: \(user)")
        #expect(user[6].hasSuffix("nologin"), "\(user)")
        let forcescale = try #require(group.first { $0.hasPrefix("forcescale:") }, "\(group)")
        #expect(forcescale.split(separator: ":", omittingEmptySubsequences: false).last?.split(separator: ",").contains("forcescale-mqtt") == true, "\(forcescale)")
        // It reads; it may not control.
        let control = try #require(group.first { $0.hasPrefix("forcescale-control:") }, "\(group)")
        #expect(control.split(separator: ":", omittingEmptySubsequences: false).last?.isEmpty == true, "\(control)")
    }

    // MARK: - make install and uninstall

    /// Everything `make install` puts in place, for PREFIX=/usr/local and SYSCONFDIR=/etc.
    static let installedFiles: [(path: String, mode: Int)] = [
        ("/usr/local/bin/forcescale", 0o755),
        ("/usr/local/bin/forcescaled", 0o755),
        ("/usr/local/bin/forcescale-web", 0o755),
        ("/usr/local/bin/forcescale-mqtt", 0o755),
        ("/usr/local/bin/forcescale-web-open", 0o755),
        ("/usr/local/share/man/man1/forcescale-web-open.1", 0o644),
        ("/usr/local/share/forcescale-web/not-listening.html", 0o644),
        ("/usr/local/share/applications/example.a_seed_40262d30.Forcescale.desktop", 0o644),
        ("/usr/local/share/metainfo/example.a_seed_40262d30.Forcescale.metainfo.xml", 0o644),
        ("/usr/local/share/icons/hicolor/scalable/apps/example.a_seed_40262d30.Forcescale.svg", 0o644),
        ("/usr/local/lib/systemd/system/forcescale-mqtt.service", 0o644),
        ("/usr/local/lib/sysusers.d/forcescale-mqtt.conf", 0o644),
        ("/usr/local/share/man/man1/forcescale-mqtt.1", 0o644),
        ("/usr/local/share/bash-completion/completions/forcescale-mqtt", 0o644),
        ("/usr/local/share/zsh/site-functions/_forcescale-mqtt", 0o644),
        ("/usr/local/share/fish/vendor_completions.d/forcescale-mqtt.fish", 0o644),
        ("/usr/local/lib/systemd/system/forcescaled.service", 0o644),
        ("/usr/local/lib/systemd/system/forcescaled.socket", 0o644),
        ("/usr/local/lib/systemd/system/forcescale-web.service", 0o644),
        ("/usr/local/lib/systemd/system/forcescale-web.socket", 0o644),
        ("/usr/local/lib/udev/rules.d/70-forcescale.rules", 0o644),
        ("/usr/local/lib/udev/forcescale-udev-pressure", 0o755),
        ("/usr/local/lib/sysusers.d/forcescale.conf", 0o644),
        ("/usr/local/lib/sysusers.d/forcescale-web.conf", 0o644),
        ("/usr/local/share/man/man1/forcescale.1", 0o644),
        ("/usr/local/share/man/man1/forcescale-web.1", 0o644),
        ("/usr/local/share/man/man5/forcescale.conf.5", 0o644),
        ("/usr/local/share/man/man8/forcescaled.8", 0o644),
        ("/usr/local/share/bash-completion/completions/forcescale", 0o644),
        ("/usr/local/share/bash-completion/completions/forcescaled", 0o644),
        ("/usr/local/share/bash-completion/completions/forcescale-web", 0o644),
        ("/usr/local/share/zsh/site-functions/_forcescale", 0o644),
        ("/usr/local/share/zsh/site-functions/_forcescaled", 0o644),
        ("/usr/local/share/zsh/site-functions/_forcescale-web", 0o644),
        ("/usr/local/share/fish/vendor_completions.d/forcescale.fish", 0o644),
        ("/usr/local/share/fish/vendor_completions.d/forcescaled.fish", 0o644),
        ("/usr/local/share/fish/vendor_completions.d/forcescale-web.fish", 0o644),
        ("/etc/forcescale/forcescale.conf", 0o644),
        ("/etc/forcescale/mqtt.conf", 0o644),
    ] + pythonModuleFiles.map { (pythonDirectory + "/forcescale/" + $0, 0o644) }

    /// Where make install puts the Python module under /usr/local: on Debian's python3's path.
    static let pythonDirectory = "/usr/local/lib/python3.11/dist-packages"
    /// The module's files, as the checkout has them (python/forcescale: its sources and py.typed).
    static var pythonModuleFiles: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("python/forcescale").path)) ?? []
        return names.filter { $0.hasSuffix(".py") || $0 == "py.typed" }.sorted()
    }

    /// Staged as an unprivileged user (nobody) into a folder of its own: no chown, no
    /// useradd, no reload is needed or tried, and uninstall takes it all back but an edited
    /// configuration file.
    @Test func installStagesEverythingAndUninstallTakesItBack() throws {
        let stage = try Staging(owner: "nobody")
        let install = try stage.make(["install"])
        #expect(install.exited && install.status == 0, "make install as nobody: \(install.stdout) \(install.stderr)")
        #expect(!install.stdout.contains("systemd-sysusers") && !install.stdout.contains("daemon-reload"),
                "with DESTDIR nothing is run on this machine: \(install.stdout)")
        for (path, mode) in Self.installedFiles {
            let attributes = try? FileManager.default.attributesOfItem(atPath: stage.path(path))
            #expect((attributes?[.posixPermissions] as? Int) == mode, "\(path): \(attributes.map { "mode \(String(($0[.posixPermissions] as? Int) ?? 0, radix: 8))" } ?? "missing")")
        }
        // Exactly those files: nothing else lands anywhere.
        let staged = try stage.files()
        #expect(Set(staged) == Set(Self.installedFiles.map(\.path)), "unexpected: \(Set(staged).subtracting(Self.installedFiles.map(\.path)))")

        // The installed copies name the installed paths.
        let service = try UnitFile(path: stage.path("/usr/local/lib/systemd/system/forcescaled.service"))
        #expect(service.values("Service", "ExecStart") == ["/usr/local/bin/forcescaled"])
        let webService = try UnitFile(path: stage.path("/usr/local/lib/systemd/system/forcescale-web.service"))
        #expect(webService.values("Service", "ExecStart") == ["/usr/local/bin/forcescale-web"])
        let rule = try String(contentsOfFile: stage.path("/usr/local/lib/udev/rules.d/70-forcescale.rules"), encoding: .utf8)
        #expect(rule.contains(#"IMPORT{program}="/usr/local/lib/udev/forcescale-udev-pressure "#))
        // The completions are what the programs write.
        for program in ["forcescale", "forcescaled", "forcescale-web", "forcescale-mqtt"] {
            let bash = try run(CLI.binDirectory.appendingPathComponent(program).path, ["--generate-completion-script", "bash"])
            let installed = try String(contentsOfFile: stage.path("/usr/local/share/bash-completion/completions/\(program)"), encoding: .utf8)
            #expect(bash.status == 0 && !installed.isEmpty && installed == bash.stdout, "\(program)'s bash completion")
        }
        let shipped = try String(contentsOfFile: Self.root.appendingPathComponent("etc/forcescale.conf").path, encoding: .utf8)
        #expect(try String(contentsOfFile: stage.path("/etc/forcescale/forcescale.conf"), encoding: .utf8) == shipped)

        // An edited configuration survives a second install and the uninstall.
        let edited = shipped + "interval-ms = 20\n"
        try edited.write(toFile: stage.path("/etc/forcescale/forcescale.conf"), atomically: true, encoding: .utf8)
        let again = try stage.make(["install"])
        #expect(again.status == 0 && again.stdout.contains("kept"), "second install: \(again.stdout) \(again.stderr)")
        #expect(try String(contentsOfFile: stage.path("/etc/forcescale/forcescale.conf"), encoding: .utf8) == edited)
        let uninstall = try stage.make(["uninstall"])
        #expect(uninstall.exited && uninstall.status == 0, "make uninstall: \(uninstall.stdout) \(uninstall.stderr)")
        #expect(uninstall.stdout.contains("kept"), "uninstall says it kept the edited file: \(uninstall.stdout)")
        #expect(try stage.files() == ["/etc/forcescale/forcescale.conf"])

        // An unedited one goes with the rest.
        _ = try stage.make(["install"])
        try FileManager.default.removeItem(atPath: stage.path("/etc/forcescale/forcescale.conf"))
        _ = try stage.make(["install"])
        let clean = try stage.make(["uninstall"])
        #expect(clean.status == 0, "\(clean.stderr)")
        let left = try stage.files()
        #expect(left == [], "left behind: \(left)")
    }

    /// debian/rules' install step (its `make install` part, install-programs; pybuild installs
    /// the Python module), from a checkout whose path has a blank (`make deb` once
    /// failed there: DESTDIR was split at it). With Debian's paths, nothing of the Python
    /// module is staged by make install: python3-forcescale is pybuild's. The programs are this build's: the stand-in for
    /// scripts/release-build only says where they are, so no release build is made here.
    @Test func theDebianInstallStepWorksFromACheckoutWithABlank() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkout = directory.appendingPathComponent("a checkout")
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: true)
        for name in ["Makefile", "debian", "desktop", "etc", "man", "systemd", "sysusers.d", "udev"] {
            try FileManager.default.copyItem(at: Self.root.appendingPathComponent(name), to: checkout.appendingPathComponent(name))
        }
        let releaseBuild = directory.appendingPathComponent("release-build").path
        try "#!/bin/sh\necho '\(CLI.binDirectory.path)'\n".write(toFile: releaseBuild, atomically: true, encoding: .utf8)
        #expect(chmod(releaseBuild, 0o755) == 0)
        let install = try run("/usr/bin/make", ["--no-print-directory", "-C", checkout.path, "-f", "debian/rules",
                                                "install-programs", "RELEASE_BUILD=\(releaseBuild)"], timeout: 120)
        #expect(install.exited && install.status == 0, "debian/rules install-programs: \(install.stdout) \(install.stderr)")
        let staged = checkout.appendingPathComponent("debian/tmp").path
        #expect(FileManager.default.isExecutableFile(atPath: staged + "/usr/bin/forcescaled"), "staged in \(staged)")
        let service = try UnitFile(path: staged + "/lib/systemd/system/forcescaled.service")
        #expect(service.values("Service", "ExecStart") == ["/usr/bin/forcescaled"])
        #expect(!FileManager.default.fileExists(atPath: staged + "/usr/lib/python3"), "make install left the Python module to pybuild")
    }

    /// The release build's layout, one multi-call program and links to it, is installed as
    /// it is: the links as links (one copy of the program, not four). The stand-in program is
    /// this build's forcescale under each name, which is enough for the completions step.
    @Test func installKeepsTheMultiCallProgramsLinksAsLinks() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let programs = directory.appendingPathComponent("programs")
        try FileManager.default.createDirectory(at: programs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.binDirectory.appendingPathComponent("forcescale"), to: programs.appendingPathComponent("forcescale"))
        for name in ["forcescaled", "forcescale-web", "forcescale-mqtt"] {
            try FileManager.default.createSymbolicLink(atPath: programs.appendingPathComponent(name).path, withDestinationPath: "forcescale")
        }
        let destination = directory.appendingPathComponent("destdir")
        let install = try run("/usr/bin/make", ["--no-print-directory", "-C", CLI.packageRoot.path, "install",
                                                "DESTDIR=\(destination.path)", "INSTALL_BIN_DIR=\(programs.path)"], timeout: 120)
        #expect(install.exited && install.status == 0, "\(install.stderr)")
        let bin = destination.path + "/usr/local/bin/"
        #expect(FileManager.default.isExecutableFile(atPath: bin + "forcescale"))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: bin + "forcescale")) == nil, "forcescale is the program itself")
        for name in ["forcescaled", "forcescale-web", "forcescale-mqtt"] {
            #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: bin + name)) == "forcescale", "\(name) links to forcescale")
        }
    }

    /// `make deb`'s guard on the installed size: under the limit it prints the sizes and
    /// passes; over it, it fails naming each package, the largest first, and by how much.
    /// The packages are real ones, made by dpkg-deb, that only claim their sizes.
    @Test func theInstalledSizeGuardNamesThePackagesOverTheLimit() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var debs: [String] = []
        for (package, size) in [("forcescale", 8_000), ("forcescale-web", 2_000), ("forcescale-mqtt", 1_500)] {
            let root = directory.appendingPathComponent(package)
            try FileManager.default.createDirectory(at: root.appendingPathComponent("DEBIAN"), withIntermediateDirectories: true)
            try """
                Package: \(package)
                Version: 0.1.0
                Architecture: all
                Maintainer: Test <test@example.org>
                Installed-Size: \(size)
                Description: a stand-in of \(package)

                """.write(to: root.appendingPathComponent("DEBIAN/control"), atomically: true, encoding: .utf8)
            let deb = directory.appendingPathComponent("\(package).deb").path
            let built = try run("/usr/bin/dpkg-deb", ["--root-owner-group", "--build", root.path, deb])
            try #require(built.status == 0, "dpkg-deb --build: \(built.stderr)")
            debs.append(deb)
        }
        let guardScript = CLI.packageRoot.appendingPathComponent("scripts/check-installed-size").path
        let under = try run(guardScript, debs)
        #expect(under.status == 0, "\(under.stderr)")
        #expect(under.stdout.contains("11500 KiB  together (limit 12288 KiB)"), "\(under.stdout)")
        let over = try run(guardScript, ["--limit", "11000"] + debs)
        #expect(over.status == 1)
        #expect(over.stderr.contains("install 11500 KiB together, over the limit of 11000 KiB by 500 KiB: forcescale 8000 KiB, forcescale-web 2000 KiB, forcescale-mqtt 1500 KiB"),
                "\(over.stderr)")
        let garbage = try run(guardScript, ["--limit", "twelve"] + debs)
        #expect(garbage.status == 64 && garbage.stderr.contains("'twelve' is not a number of KiB"), "\(garbage.stderr)")
    }

    @Test func prefixMovesEverythingButTheConfiguration() throws {
        let stage = try Staging()
        let install = try stage.make(["install", "PREFIX=/usr"])
        #expect(install.exited && install.status == 0, "\(install.stderr)")
        // The Python module goes where Debian's own python3 packages are, not to a versioned directory.
        let expected = Self.installedFiles.map {
            $0.path.replacingOccurrences(of: Self.pythonDirectory + "/", with: "/usr/lib/python3/dist-packages/")
                .replacingOccurrences(of: "/usr/local/", with: "/usr/")
        }
        #expect(Set(try stage.files()) == Set(expected))
        let service = try UnitFile(path: stage.path("/usr/lib/systemd/system/forcescaled.service"))
        #expect(service.values("Service", "ExecStart") == ["/usr/bin/forcescaled"])
        let webService = try UnitFile(path: stage.path("/usr/lib/systemd/system/forcescale-web.service"))
        #expect(webService.values("Service", "ExecStart") == ["/usr/bin/forcescale-web"])
        let rule = try String(contentsOfFile: stage.path("/usr/lib/udev/rules.d/70-forcescale.rules"), encoding: .utf8)
        #expect(rule.contains(#"IMPORT{program}="/usr/lib/udev/forcescale-udev-pressure "#))
    }
}

/// A DESTDIR for `make install`, removed at the end. It installs the binaries of this build
/// (INSTALL_BIN_DIR), so that the test does not make a release build of its own.
final class Staging {
    let directory: URL
    let destination: URL
    let owner: String?
    /// Where make runs, and the programs it installs: the checkout and this build, or for
    /// another user copies of them that the user can reach (see SharedWithOtherUsers).
    private let packageRoot: URL
    private let binDirectory: URL
    private let shared: SharedWithOtherUsers?

    /// - Parameter owner: Run make as this user (through setpriv), with the folder theirs.
    init(owner: String? = nil) throws {
        self.owner = owner
        if owner != nil {
            let shared = try SharedWithOtherUsers()
            self.shared = shared
            directory = try shared.makeDirectory("stage")
            packageRoot = try shared.repositoryForMakeInstall()
            try shared.program("forcescale")
            try shared.program("forcescaled")
            try shared.program("forcescale-web")
            try shared.program("forcescale-mqtt")
            binDirectory = URL(fileURLWithPath: shared.path("bin"))
        } else {
            shared = nil
            directory = try CLI.temporaryDirectory()
            packageRoot = CLI.packageRoot
            binDirectory = CLI.binDirectory
        }
        destination = directory.appendingPathComponent("destdir")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        if let owner {
            let chown = try run("/bin/chown", ["-R", owner, destination.path])
            #expect(chown.status == 0, "chown \(owner): \(chown.stderr)")
        }
    }

    deinit {
        // A shared directory removes itself, the stage in it included.
        if shared == nil { try? FileManager.default.removeItem(at: directory) }
    }

    /// `path` inside the staging folder.
    func path(_ path: String) -> String { destination.path + path }

    /// `make TARGET… DESTDIR=… INSTALL_BIN_DIR=…` in the package root.
    func make(_ arguments: [String]) throws -> ProcessResult {
        let make = ["/usr/bin/make", "--no-print-directory", "-C", packageRoot.path,
                    "DESTDIR=\(destination.path)", "INSTALL_BIN_DIR=\(binDirectory.path)"] + arguments
        if let owner {
            return try run("/usr/bin/setpriv", ["--reuid=\(owner)", "--regid=nogroup", "--clear-groups"] + make, timeout: 120)
        }
        return try run(make[0], Array(make.dropFirst()), timeout: 120)
    }

    /// The files in the staging folder (not the folders), as absolute paths once installed.
    func files() throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: destination.path) else { return [] }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: destination.path + "/" + relative, isDirectory: &isDirectory), !isDirectory.boolValue {
                files.append("/" + relative)
            }
        }
        return files.sorted()
    }
}

/// A systemd unit file read back: `Key=Value` lines by section (a key may repeat).
struct UnitFile {
    private var entries: [(section: String, key: String, value: String)] = []

    init(path: String) throws {
        var section = ""
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty || text.hasPrefix("#") || text.hasPrefix(";") { continue }
            if text.hasPrefix("["), text.hasSuffix("]") {
                section = String(text.dropFirst().dropLast())
                continue
            }
            guard let equals = text.firstIndex(of: "=") else { continue }
            entries.append((section, String(text[..<equals]), String(text[text.index(after: equals)...])))
        }
    }

    /// Every value of `key` in `section`, in order.
    func values(_ section: String, _ key: String) -> [String] {
        entries.filter { $0.section == section && $0.key == key }.map(\.value)
    }
}
