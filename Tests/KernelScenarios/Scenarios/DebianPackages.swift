import Foundation
import KernelTestSupport
import Glibc

/// o. The Debian packages of `make deb`, as a user installs them: into a systemd manager
/// (scripts/systemd-namespace --packages: PID 1 of its own namespaces, /etc, /usr and /var
/// copy-on-write) with dpkg, which runs their maintainer scripts against that manager. Then:
/// the users exist, the two sockets listen and no service runs; `forcescale weigh` (the
/// package's) on a pressure pad starts forcescaled through its socket and gets a stable
/// reading; forcescale-web answers on its socket with that pad's reading in /metrics; a TARE
/// writes a calibration. `dpkg --remove` stops every unit and leaves only the conffiles and
/// the calibrations; `dpkg --purge` leaves no file of the packages and nothing they made.
///
/// The packages come from FORCESCALE_DEBS (default: dist/ of the repository): `make test`
/// runs `make deb` first. They are installed from a copy in a folder under /tmp with a space
/// in its name, so that every run shows where they are does not matter. That udev starts the service when a pad appears is not covered
/// here: the namespace's manager gets no device events (scenario i checks the rule); the VM's
/// udevd applies the repository's rule to the pad (UdevRule.install), which the packaged
/// daemon, in no group input, needs to open it.
enum DebianPackages {
    typealias Manager = SandboxedService.Manager
    static let packages = ["forcescale", "forcescale-web", "forcescale-mqtt"]
    static let helper = "scripts/systemd-namespace"

    static func run(_ programs: Programs) {
        let repository = FileManager.default.currentDirectoryPath
        let folder = ProcessInfo.processInfo.environment["FORCESCALE_DEBS"] ?? repository + "/dist"
        let found = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let debs = packages.map { name in found.sorted().last { $0.hasPrefix(name + "_") && $0.hasSuffix(".deb") }.map { folder + "/" + $0 } }
        guard debs.allSatisfy({ $0 != nil }) else {
            check(false, "o: the packages \(packages.joined(separator: ", ")) are in \(folder)",
                  "found \(found.filter { $0.hasSuffix(".deb") }); run 'make deb' first (make test does)")
            return
        }
        // Where the packages are must not matter: they are taken from a folder under /tmp with
        // a space in its name (a checkout under /tmp once hid them from the namespace, whose
        // /tmp is its own), which scripts/systemd-namespace copies them from.
        let moved = NSTemporaryDirectory() + "/forcescale o packages \(getpid())"
        try? FileManager.default.removeItem(atPath: moved)
        defer { try? FileManager.default.removeItem(atPath: moved) }
        do {
            try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
            for deb in debs.map({ $0! }) {
                try FileManager.default.copyItem(atPath: deb, toPath: moved + "/" + (deb as NSString).lastPathComponent)
            }
        } catch {
            check(false, "o: copy the packages to '\(moved)'", "\(error)")
            return
        }
        let given = ProcessInfo.processInfo.environment["FORCESCALE_DEBS"]
        setenv("FORCESCALE_DEBS", moved, 1)
        defer {
            if let given { setenv("FORCESCALE_DEBS", given, 1) } else { unsetenv("FORCESCALE_DEBS") }
        }
        let files = debs.map { moved + "/" + ($0! as NSString).lastPathComponent }
        guard let nsenter = findProgram("nsenter"), let dpkgDeb = findProgram("dpkg-deb") else {
            check(false, "o: nsenter and dpkg-deb are there", "apt-get install util-linux dpkg")
            return
        }

        // The packaged daemon reads the pad because the udev rule gives it to its user; the
        // namespace's manager gets no device events, so the VM's udevd applies the rule.
        guard let rule = UdevRule.install(scenario: "o") else { return }
        defer { rule.remove() }
        guard let pad = makeDevice(Tables.pressurePad, scenario: "o") else { return }
        defer { pad.destroy() }
        guard UdevRule.settle(rule.udevadm, scenario: "o") else { return }
        let nodeName = (pad.node as NSString).lastPathComponent

        // 1. A systemd manager with nothing of forcescale in it.
        guard let (namespace, manager) = SandboxedService.startManager(
            [repository + "/" + helper, "--packages"], scenario: "o", nsenter: nsenter) else { return }
        // SIGKILL: unshare, which the script becomes, ignores SIGTERM while it waits for the
        // manager (a SIGTERM stop waited the whole Limits.exit), and its --kill-child takes
        // the manager, and with it the namespace, along when it dies.
        defer { namespace.stop(SIGKILL) }

        // What the packages hold: their files (md5sums, which leaves out the conffiles), their
        // conffiles, and every directory above those; and which of those paths the system had
        // before (shared directories such as /usr/bin): after the purge, each must be as it
        // was. Read from the control parts, which dpkg-deb gets without unpacking the data.
        var packageFiles: [String] = []
        for file in files {
            let (ended, control) = runToEnd("dpkg-deb --info", ["/bin/sh", "-c", "'\(dpkgDeb)' --info \"$0\" md5sums && { '\(dpkgDeb)' --info \"$0\" conffiles 2>/dev/null; true; }", file],
                                            timeout: Limits.command)
            let paths = (control?.output ?? []).compactMap { line -> String? in
                if line.hasPrefix("/") { return line }
                return line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true).last.map { "/" + $0.trimmingCharacters(in: .whitespaces) }
            }
            check(ended == .exited(0) && !paths.isEmpty, "o: dpkg-deb lists the files \((file as NSString).lastPathComponent) holds", "\(ended.map(\.description) ?? "timeout") \(control?.errorText ?? "")")
            packageFiles += paths
        }
        var allPaths = packageFiles
        for path in packageFiles {
            var folder = (path as NSString).deletingLastPathComponent
            while folder != "/" && !allPaths.contains(folder) {
                allPaths.append(folder)
                folder = (folder as NSString).deletingLastPathComponent
            }
        }
        let before = Set(allPaths.filter { fileExists(manager.root($0)) })

        // 2. Install, as dpkg does it on a machine that systemd runs.
        // As the namespace has them: copied before its fresh /tmp covered the checkout's.
        let inside = files.map { "/run/forcescale-namespace/debs/" + ($0 as NSString).lastPathComponent }
        let installed = manager.run(["dpkg", "--install"] + inside, timeout: Limits.packages)
        check(installed.ended == .exited(0), "o: dpkg --install of the three packages exits 0 (their maintainer scripts ran against the manager)",
              "\(installed.ended.map(\.description) ?? "timeout")\n\(installed.output)")
        guard installed.ended == .exited(0) else { return }
        note("o: installed in \(String(format: "%.1f", installed.seconds)) s")

        let group = manager.groupID("forcescale")
        let users = ["forcescale", "forcescale-web", "forcescale-mqtt"].map { ($0, manager.userID($0)) }
        let mqttGroups = manager.run(["id", "-nG", "forcescale-mqtt"], timeout: Limits.command).output.split(separator: " ").map(String.init)
        check(group != nil && users.allSatisfy { $0.1 != nil } && mqttGroups.contains("forcescale"),
              "o: postinst made the group forcescale and the users forcescale, forcescale-web and forcescale-mqtt (in group forcescale), from sysusers.d",
              "group \(group.map(String.init) ?? "none"), users \(users), forcescale-mqtt's groups \(mqttGroups)")
        let states = manager.states(["forcescaled.socket", "forcescale-web.socket", "forcescaled.service", "forcescale-web.service", "forcescale-mqtt.service"])
        check(states["forcescaled.socket"] == "active" && states["forcescale-web.socket"] == "active",
              "o: postinst started forcescaled.socket and forcescale-web.socket", "\(states)")
        check(states["forcescaled.service"] == "inactive" && states["forcescale-web.service"] == "inactive" && states["forcescale-mqtt.service"] == "inactive",
              "o: no service was started by the install: each waits for its socket (or udev); forcescale-mqtt for its broker", "\(states)")
        let enabled = manager.systemctl(["is-enabled", "forcescaled.socket", "forcescale-web.socket", "forcescale-mqtt.service"]).output
            .split(separator: "\n").map(String.init)
        check(enabled == ["enabled", "enabled", "disabled"], "o: the sockets are enabled (they listen again after a reboot), forcescale-mqtt.service is not",
              "systemctl is-enabled says \(enabled)")
        let conffiles = manager.run(["dpkg-query", "--showformat", "${Conffiles}\n", "--show", "forcescale", "forcescale-mqtt"], timeout: Limits.command).output
        check(conffiles.contains("/etc/forcescale/forcescale.conf ") && conffiles.contains("/etc/forcescale/mqtt.conf "),
              "o: /etc/forcescale/forcescale.conf and mqtt.conf are conffiles", conffiles)

        // The force log on, as a user switches it on: the conffile's `log = on`, before the
        // first request starts the daemon. forcescale-web reads it where it is by default.
        let configuration = manager.root("/etc/forcescale/forcescale.conf")
        if let handle = FileHandle(forWritingAtPath: configuration) {
            handle.seekToEndOfFile()
            handle.write(Data("log = on\n".utf8))
            handle.closeFile()
        } else {
            check(false, "o: switch the log on in \(configuration)", String(cString: strerror(errno)))
        }

        // 3. forcescale-web on its socket: the first request starts it, and it starts watching
        // the daemon (whose socket starts forcescaled). It answers before any reading.
        let webUnit = SandboxedService.UnitFile(path: manager.root("/lib/systemd/system/forcescale-web.socket"))
        let listen = webUnit?.values("ListenStream", in: "Socket").last ?? ""
        var metrics = ""
        expect("o: forcescale-web, started by its socket (\(listen)), answers GET /metrics with 200",
               within: Limits.reaction, waitingFor: "an HTTP 200 from \(listen)", {
            metrics = Self.get("/metrics", from: listen, keyFile: manager.root("/run/forcescale-web/read-key"))
            return metrics.hasPrefix("HTTP/1.1 200")
        }, saw: "\(metrics.prefix(300))\n\(manager.journal("forcescale-web.service"))")

        // The desktop launcher names the address systemd listens on for the socket.
        let launcher = manager.run(["/usr/bin/forcescale-web-open", "--print"], timeout: Limits.command)
        check(launcher.ended == .exited(0) && launcher.output == "http://\(listen)/",
              "o: the package's desktop launcher, forcescale-web-open --print, gives the socket's address (http://\(listen)/)",
              "\(launcher.ended.map(\.description) ?? "timeout"): \(launcher.output)")

        // 4. The package's forcescale weighs on the pad.
        let socketPath = manager.root("/run/forcescale/forcescale.sock")
        let forcescale = manager.root("/usr/bin/forcescale")
        let weigh: Child
        do {
            weigh = try Child("forcescale weigh", [forcescale, "weigh", "--json", "--timeout", String(Int(Limits.readerStart)), "--socket", socketPath])
        } catch {
            check(false, "o: start \(forcescale) weigh", "\(error)")
            return
        }
        // A weight held still: pressure 100 and 101 in turn (the kernel drops a value that
        // does not change), a frame every 50 ms: this paces injected input, it waits for
        // nothing. At 40 units a gram the two are 0.025 g apart, within stable-grams.
        pad.press(100, down: true)
        var frames = 1
        while weigh.isRunning && Double(frames) * 0.05 < Limits.readerStart {
            Clock.sleep(0.05)
            pad.press(100 + Int32(frames % 2))
            frames += 1
        }
        let weighed = weigh.wait(Limits.exit)
        let line = weigh.output.first { $0.contains(Marker.reading) } ?? ""
        let reading = OutputLine(line)
        check(weighed == .exited(0) && line.contains("\"device\":\"\(nodeName)\"") && line.contains("\"stable\":true")
                && (reading?.raw == 100 || reading?.raw == 101) && line.contains("\"model\":\"physical\""),
              "o: the package's 'forcescale weigh' gets a stable reading of the pad (\(nodeName), raw 100 or 101, the physical model: 40 units a gram)",
              "\(ending(weighed, waited: Limits.exit)) after \(frames) frames; output \(weigh.output) \(weigh.errorText)\n\(manager.journal("forcescaled.service"))")
        let daemon = manager.properties("forcescaled.service", ["ActiveState", "SubState", "MainPID"])
        let daemonPID = manager.outerPID(of: pid_t(daemon["MainPID"] ?? "") ?? 0)
        let daemonUID = daemonPID.flatMap { SandboxedService.statusFields(of: $0)["Uid"]?.split(separator: "\t").first.flatMap { UInt32($0) } }
        check(daemon["ActiveState"] == "active" && daemon["SubState"] == "running" && daemonUID != nil && daemonUID == users[0].1,
              "o: forcescaled.service runs, started through its socket, as the user forcescale", "\(daemon), uid \(daemonUID.map(String.init) ?? "?")")
        // forcescaled is a link to the multi-call forcescale, which holds forcescale-web and
        // forcescale-mqtt too: their libraries are loaded only by them, never by the daemon.
        let daemonMaps = daemonPID.flatMap { SandboxedService.read("/proc/\($0)/maps") } ?? ""
        let foreign = ["libmicrohttpd", "libmosquitto", "libssl", "libcrypto"].filter { daemonMaps.contains($0) }
        let mapsProgram = { (maps: String) in maps.split(separator: "\n").contains { $0.hasSuffix("/usr/bin/forcescale") } }
        check(mapsProgram(daemonMaps) && foreign.isEmpty,
              "o: forcescaled runs the multi-call /usr/bin/forcescale and maps none of libmicrohttpd, libmosquitto, libssl, libcrypto",
              "maps \(foreign), \(daemonMaps.split(separator: "\n").filter { $0.contains("/usr/") }.map { $0.split(separator: " ").last ?? "" }.joined(separator: " "))")

        // 5. forcescale-web got the readings through the daemon's socket.
        let served = expect("o: forcescale-web's /metrics carry the pad's reading",
                            within: Limits.reaction, waitingFor: "forcescale_raw{device=\"\(nodeName)\"} 100 or 101 in /metrics", {
            metrics = Self.get("/metrics", from: listen, keyFile: manager.root("/run/forcescale-web/read-key"))
            return metrics.hasPrefix("HTTP/1.1 200") && (metrics.contains("forcescale_raw{device=\"\(nodeName)\"} 100\n") || metrics.contains("forcescale_raw{device=\"\(nodeName)\"} 101\n"))
        }, saw: "\(metrics.prefix(600))\n\(manager.journal("forcescale-web.service"))")
        if served {
            let web = manager.properties("forcescale-web.service", ["ActiveState", "MainPID"])
            let webUID = manager.outerPID(of: pid_t(web["MainPID"] ?? "") ?? 0).flatMap { SandboxedService.statusFields(of: $0)["Uid"]?.split(separator: "\t").first.flatMap { UInt32($0) } }
            check(web["ActiveState"] == "active" && webUID != nil && webUID == users[1].1, "o: forcescale-web.service runs as the user forcescale-web", "\(web), uid \(webUID.map(String.init) ?? "?")")
            let webMaps = manager.outerPID(of: pid_t(web["MainPID"] ?? "") ?? 0).flatMap { SandboxedService.read("/proc/\($0)/maps") } ?? ""
            check(mapsProgram(webMaps) && webMaps.contains("libmicrohttpd.so.12"),
                  "o: forcescale-web runs the multi-call /usr/bin/forcescale, which loaded libmicrohttpd.so.12 (package libmicrohttpd12, a dependency of forcescale-web)",
                  "\(webMaps.split(separator: "\n").filter { $0.contains("/usr/") }.map { $0.split(separator: " ").last ?? "" })")
        }

        // 6. A calibration to keep: TARE with the weight still on.
        if let client = SocketClient(path: socketPath) {
            pad.press(102)
            client.send(#"{"class":"TARE"}"#)
            let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
            client.close()
            check(tare?.hasPrefix(#"{"class":"TARE""#) == true, "o: TARE is answered", "saw \(tare ?? "nothing")")
        } else {
            check(false, "o: connect to \(socketPath)", String(cString: strerror(errno)))
        }
        pad.release()
        let stateDirectory = manager.root("/var/lib/forcescale")
        var calibrations: [String] = []
        expect("o: the tare is kept in /var/lib/forcescale", within: Limits.reaction, waitingFor: "a .json file there", {
            calibrations = ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
            return !calibrations.isEmpty
        }, saw: "\(calibrations)")

        // The touch just lifted is a session of the log, and forcescale-web, sandboxed as
        // its unit has it (read-only /var/lib, another user in group forcescale), reads it
        // from the daemon's log by default: the History view works as installed.
        var sessions = ""
        expect("o: forcescale-web's /api/sessions lists the pad's touch from the daemon's log, /var/lib/forcescale/log.sqlite",
               within: Limits.reaction, waitingFor: "an HTTP 200 listing a session that ended", {
            sessions = Self.get("/api/sessions", from: listen, keyFile: manager.root("/run/forcescale-web/read-key"))
            return sessions.hasPrefix("HTTP/1.1 200") && sessions.contains(#""session":1,"#) && sessions.contains(#""ended":1"#)
        }, saw: "\(sessions.prefix(600))\n\(manager.journal("forcescale-web.service"))\n\(manager.journal("forcescaled.service"))")

        // 7. Remove: every unit stopped, only the conffiles and the calibrations left.
        let removed = manager.run(["dpkg", "--remove"] + packages.reversed(), timeout: Limits.packages)
        check(removed.ended == .exited(0), "o: dpkg --remove of the three packages exits 0", "\(removed.ended.map(\.description) ?? "timeout")\n\(removed.output)")
        note("o: removed in \(String(format: "%.1f", removed.seconds)) s")
        let afterRemove = manager.runningUnits()
        check(afterRemove.isEmpty, "o: after the removal no forcescale unit is active or activating", "\(afterRemove)")
        let programsLeft = manager.processes { $0.contains("forcescale") }
        check(programsLeft.isEmpty, "o: after the removal no process of the packages' programs runs", "\(programsLeft)")
        let conffilePaths = ["/etc/forcescale/forcescale.conf", "/etc/forcescale/mqtt.conf"]
        let leftFiles = allPaths.filter { path in
            !before.contains(path) && !conffilePaths.contains(path) && Self.isFile(manager.root(path))
        }
        check(leftFiles.isEmpty && conffilePaths.allSatisfy { fileExists(manager.root($0)) },
              "o: remove takes every file of the packages but the conffiles, which stay", "left: \(leftFiles)")
        let kept = calibrations.filter { fileExists(stateDirectory + "/" + $0) }
        check(!calibrations.isEmpty && kept == calibrations, "o: remove keeps the calibrations in /var/lib/forcescale", "kept \(kept) of \(calibrations)")

        // 8. Purge: nothing of the packages left, nor what their scripts and units made.
        let purged = manager.run(["dpkg", "--purge"] + packages.reversed(), timeout: Limits.packages)
        check(purged.ended == .exited(0), "o: dpkg --purge of the three packages exits 0", "\(purged.ended.map(\.description) ?? "timeout")\n\(purged.output)")
        note("o: purged in \(String(format: "%.1f", purged.seconds)) s")
        let changed = allPaths.filter { fileExists(manager.root($0)) != before.contains($0) }
        check(changed.isEmpty, "o: after the purge each path of the packages is as before the install (\(allPaths.count) paths: shared directories stay, the rest is gone)",
              "differ: \(changed)")
        let made = ["/var/lib/forcescale", "/run/forcescale", "/etc/forcescale"].filter { fileExists(manager.root($0)) }
        let links = Self.find(["/etc/systemd/system", "/var/lib/systemd/deb-systemd-helper-enabled", "/var/lib/systemd/deb-systemd-helper-masked"].map(manager.root)) { $0.contains("forcescale") && !$0.contains("forcescale-namespace") }
        check(made.isEmpty && links.isEmpty, "o: the purge leaves no state directory, runtime directory, configuration directory or enablement of the units",
              "left: \(made) \(links)")
        // The sockets' enablement links went with the purge; systemd lists the units as
        // "not-found" until its next reload, none may run.
        let afterPurge = manager.runningUnits()
        check(afterPurge.isEmpty, "o: after the purge no forcescale unit is active or activating", "\(afterPurge)")
    }

    /// An HTTP/1.0 GET of `path` from `address` (host:port), through bash's /dev/tcp, with
    /// forcescale-web's read key from `keyFile`, its runtime directory as the manager's
    /// namespace sees it (none before the first request has started it: that one gets 401):
    /// the whole response, or "" when nothing answered.
    static func get(_ path: String, from address: String, keyFile: String) -> String {
        guard let colon = address.lastIndex(of: ":") else { return "" }
        let host = address[..<colon]
        let port = address[address.index(after: colon)...]
        let script = "exec 3<>/dev/tcp/\(host)/\(port) && printf 'GET \(path) HTTP/1.0\\r\\nHost: \(host)\\r\\nAuthorization: Bearer %s\\r\\n\\r\\n' \"$(cat '\(keyFile)' 2>/dev/null)\" >&3 && cat <&3"
        let (ended, child) = runToEnd("GET \(path)", ["/bin/bash", "-c", script], timeout: Limits.command)
        guard ended == .exited(0) else { return "" }
        return (child?.output ?? []).map { $0.hasSuffix("\r") ? String($0.dropLast()) : $0 }.joined(separator: "\n") + "\n"
    }

    static func isFile(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && status.st_mode & S_IFMT != S_IFDIR
    }

    /// Paths under the folders whose name matches (the folders may be missing).
    static func find(_ folders: [String], _ matches: (String) -> Bool) -> [String] {
        folders.flatMap { folder in
            (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String] ?? []).filter(matches).map { folder + "/" + $0 }
        }
    }
}

extension Limits {
    /// dpkg installing, removing or purging the three packages in the emulated VM: it reads
    /// the whole package database of the host (over 9p) and unpacks 37 MB.
    static let packages = 600.0
}

/// What scenario o asks of the manager of scenario j besides.
extension SandboxedService.Manager {
    /// Runs a command in the manager's mount and PID namespaces: output and error
    /// together, and how long it took.
    func run(_ arguments: [String], timeout: Double) -> (ended: Termination?, output: String, seconds: Double) {
        let started = Clock.now()
        let (ended, child) = runToEnd(arguments[0], [nsenter, "--target", String(pid), "--mount", "--pid", "--",
                                                     "/usr/bin/env", "DEBIAN_FRONTEND=noninteractive"] + arguments, timeout: timeout)
        let text = ((child?.output ?? []) + (child?.errors ?? [])).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return (ended, text, Clock.now() - started)
    }

    /// `ActiveState` of each unit.
    func states(_ units: [String]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: units.map { ($0, properties($0, ["ActiveState"])["ActiveState"] ?? "?") })
    }

    /// forcescale units that are active, activating, reloading or deactivating.
    func runningUnits() -> [String] {
        systemctl(["list-units", "--all", "--plain", "--no-legend", "forcescale*"]).output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 3, !fields[0].hasPrefix("forcescale-namespace"), fields[2] != "inactive", fields[2] != "failed" else { return nil }
            return String(line)
        }
    }

    /// Processes of the manager's PID namespace whose program path matches.
    func processes(_ matches: (String) -> Bool) -> [String] {
        guard let namespace = SandboxedService.link("/proc/\(pid)/ns/pid") else { return ["(no namespace)"] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard pid_t(entry) != nil, SandboxedService.link("/proc/\(entry)/ns/pid") == namespace,
                  let program = SandboxedService.link("/proc/\(entry)/exe"), matches(program) else { return nil }
            return "\(entry): \(program)"
        }
    }

    func journal(_ unit: String) -> String {
        run(["journalctl", "--no-pager", "-n", "30", "-u", unit], timeout: Limits.command).output
            .split(separator: "\n").map { "journal: " + $0 }.joined(separator: "\n")
    }
}
