import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// j. `forcescaled` as its systemd unit runs it, on the FF pad. A real systemd manager
/// (PID 1 of its own PID, mount and cgroup namespaces: scripts/systemd-namespace) gets the
/// repository's systemd/forcescaled.service and .socket, the sysusers.d file applied with
/// systemd-sysusers, and the daemon at the unit's ExecStart path. `systemctl start
/// forcescaled.socket` alone; the first client starts the service (socket activation), and
/// it must then: name the pad in STATUS, give READING + PEAK on a press to the maximum with
/// one play on the device, play RUMBLE success, write its tare into the state directory;
/// and show, seen from outside, that the settings of the unit's [Service] section are in
/// force (user, groups, no capabilities, no new privileges, seccomp, read-only system,
/// private /tmp and network, umask, the device policy). Expectations are read from the
/// unit file at run time, so the test follows the unit and fails when a setting the issue
/// asks for is dropped from it or not applied.
enum SandboxedService {
    static let unitPath = "systemd/forcescaled.service"
    static let socketUnitPath = "systemd/forcescaled.socket"
    static let helper = "scripts/systemd-namespace"

    static func run(_ programs: Programs) {
        let binDirectory = (programs.forcescale as NSString).deletingLastPathComponent
        let repository = FileManager.default.currentDirectoryPath
        guard let unit = UnitFile(path: repository + "/" + unitPath) else {
            check(false, "j: \(unitPath) can be read", "run the kernel tests from the repository root (scripts/kernel-tests does)")
            return
        }
        guard let nsenter = findProgram("nsenter") else {
            check(false, "j: nsenter is there", "apt-get install util-linux")
            return
        }
        guard let socketUnit = UnitFile(path: repository + "/" + socketUnitPath),
              let listenPath = socketUnit.values("ListenStream", in: "Socket").last else {
            check(false, "j: \(socketUnitPath) can be read and has a ListenStream=", "")
            return
        }

        // The daemon is in no group that reads input devices: it opens the pad because the
        // udev rule gave it to the daemon's user, so the rule is in place before the pad comes.
        guard let rule = UdevRule.install(scenario: "j") else { return }
        defer { rule.remove() }
        guard let pad = makeDevice(Tables.rumblePad, scenario: "j") else { return }
        defer { pad.destroy() }
        guard UdevRule.settle(rule.udevadm, scenario: "j") else { return }
        let nodeName = (pad.node as NSString).lastPathComponent

        // 1. A systemd manager with the units installed, up and idle.
        guard let (namespace, manager) = startManager([repository + "/" + helper, binDirectory], scenario: "j", nsenter: nsenter) else { return }
        // SIGKILL: unshare, which the script becomes, ignores SIGTERM while it waits for the
        // manager (a SIGTERM stop waited the whole Limits.exit), and its --kill-child takes
        // the manager, and with it the namespace, along when it dies.
        defer { namespace.stop(SIGKILL) }
        let installed = try? String(contentsOfFile: manager.root("/etc/systemd/system/forcescaled.service"), encoding: .utf8)
        check(installed == unit.text, "j: the manager has the repository's \(unitPath), unchanged", "installed: \(installed ?? "nothing")")
        let before = manager.systemctl(["is-active", "forcescaled.service"]).output

        // 2. Socket activation: the socket unit alone, then a client starts the service.
        let started = manager.systemctl(["start", "forcescaled.socket"])
        check(started.ended == .exited(0), "j: systemctl start forcescaled.socket", "\(started.ended.map(\.description) ?? "timeout")\n\(started.output)")
        let socketPath = manager.root(listenPath)
        var socketStatus = stat()
        let bound = stat(socketPath, &socketStatus) == 0
        let socketGroupName = socketUnit.values("SocketGroup", in: "Socket").last ?? "root"
        let socketGroup = manager.groupID(socketGroupName)
        let socketMode = socketUnit.values("SocketMode", in: "Socket").last ?? "0666"
        check(bound && socketStatus.st_mode & S_IFMT == S_IFSOCK && mode_t(socketMode, radix: 8) == socketStatus.st_mode & 0o777
                && socketGroup != nil && socketStatus.st_gid == socketGroup!,
              "j: systemd bound \(listenPath), a socket \(socketMode) of group \(socketGroupName) (gid \(socketGroup.map(String.init) ?? "?")) as the socket unit says",
              bound ? "mode \(String(socketStatus.st_mode, radix: 8)), gid \(socketStatus.st_gid)" : String(cString: strerror(errno)))
        let idle = manager.systemctl(["is-active", "forcescaled.service"]).output
        check(before == "inactive" && idle == "inactive", "j: forcescaled.service is not running before a client comes",
              "before the socket: \(before), after: \(idle)")

        let (statusLine, attempts) = DaemonOnDevice.firstStatus(programs, socketPath: socketPath, pause: 1) { namespace.isRunning }
        let answered = !statusLine.isEmpty
        check(answered, "j: the first client starts forcescaled.service through the socket and gets STATUS",
              "after \(attempts) attempts\n\(manager.journal())")
        guard answered else { return }
        check(statusLine.contains("\"device\":\"\(nodeName)\"") && statusLine.contains("\"rumble\":"),
              "j: STATUS names the device (\(nodeName)) and a rumble device", "saw \(statusLine)\n\(manager.journal())")
        let show = manager.properties("forcescaled.service", ["ActiveState", "SubState", "MainPID"])
        check(show["ActiveState"] == "active" && show["SubState"] == "running",
              "j: the service is active (running): its READY=1 reached systemd (Type=notify)", "saw \(show)")
        let innerPID = pid_t(show["MainPID"] ?? "") ?? 0
        guard let daemonPID = manager.outerPID(of: innerPID) else {
            check(false, "j: find the daemon's process (MainPID \(innerPID)) from outside", "\(show)")
            return
        }
        note("j: manager pid \(manager.pid), forcescaled pid \(daemonPID) (\(innerPID) in the namespace)")

        // The daemon serves on the listener systemd bound, not on one of its own.
        let listeners = manager.listeningInodes(path: listenPath)
        let held = Self.socketInodes(of: daemonPID)
        check(listeners.count == 1 && held.contains(listeners[0]),
              "j: the daemon holds the listening socket systemd bound (socket activation), and there is no other",
              "listening on \(listenPath): \(listeners); the daemon's sockets: \(held.sorted())")

        // 3. The sandbox, as the unit says, seen from outside.
        checkSandbox(unit, daemonPID: daemonPID, manager: manager)

        // 4. The peak effect uploaded at open; a press to the maximum: READING, PEAK, one play.
        // The daemon opens its device, uploading the effect, before its loop answers STATUS,
        // and the device side records an upload before answering it: all uploads at open
        // are in the log by now.
        let prepared = waitFor("the peak effect's upload at open", within: Limits.reaction) { pad.forceFeedback.uploads.count >= 1 }
        let opened = pad.forceFeedback
        expect("j: exactly one FF_RUMBLE upload at open (the peak effect), through the sandbox", after: prepared,
               opened.uploads.count == 1 && opened.uploads.allSatisfy { $0.type == UInt16(FF_RUMBLE) && $0.length > 0 },
               saw: "\(opened.uploads)\n\(manager.journal())")
        let id = opened.uploads.first?.effectID ?? -1
        guard let client = SocketClient(path: socketPath) else {
            check(false, "j: connect to \(socketPath)", String(cString: strerror(errno)))
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)
        let watching = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"WATCH""#) } != nil
        check(watching, "j: WATCH is answered", client.tail())
        DaemonOnDevice.pressToPeak(pad, client: client, effect: id,
                                   "j: a press to the maximum gives READING raw 255 and a PEAK; the device plays effect \(id) once")

        // 5. RUMBLE success (root may): its 2 segments play.
        client.send(#"{"class":"RUMBLE","pattern":"success"}"#)
        let reply = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"RUMBLE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        check(reply == #"{"class":"RUMBLE","pattern":"success"}"#, "j: RUMBLE success is answered in kind", "saw \(reply ?? "nothing")\n\(client.tail())")
        // Counted at the end, after the stop's erase: only that bounds a stray play that the
        // pattern's timer could still make.
        let restored = waitFor("the pattern's 2 plays and the peak effect's upload back", within: Limits.reaction) {
            pad.forceFeedback.plays >= 3 && pad.forceFeedback.uploads.count >= 4
        }

        // 6. TARE: the daemon writes the state directory, as its user and with the unit's umask.
        pad.press(100, down: true)
        let pressed = client.waitFor(Limits.reaction) { $0.contains(Marker.reading) && $0.contains("\"raw\":100,") } != nil
        client.send(#"{"class":"TARE"}"#)
        let tare = client.waitFor(Limits.reaction) { $0.hasPrefix(#"{"class":"TARE""#) || $0.hasPrefix(#"{"class":"ERROR""#) }
        pad.release()
        check(pressed && tare?.hasPrefix(#"{"class":"TARE""#) == true, "j: TARE is answered", "saw \(tare ?? "nothing")\n\(client.tail())")
        if let stateName = unit.values("StateDirectory", in: "Service").last?.split(separator: " ").first {
            let stateDirectory = manager.root("/var/lib/\(stateName)")
            var files: [String] = []
            let written = waitFor("a .json file in the state directory", within: Limits.reaction) {
                files = ((try? FileManager.default.contentsOfDirectory(atPath: stateDirectory)) ?? []).filter { $0.hasSuffix(".json") }
                return !files.isEmpty
            }
            var fileStatus = stat()
            let statted = files.first.map { stat(stateDirectory + "/" + $0, &fileStatus) == 0 } ?? false
            let user = unit.values("User", in: "Service").last.flatMap(manager.userID)
            let umask = unit.values("UMask", in: "Service").last.flatMap { mode_t($0, radix: 8) } ?? 0o022
            // The calibration store asks for 0600; the umask can only take bits away.
            check(statted && user != nil && fileStatus.st_uid == user! && fileStatus.st_mode & 0o777 == 0o600 & ~umask,
                  "j: the tare lands in /var/lib/\(stateName) (StateDirectory=), owned by the unit's user, mode \(String(0o600 & ~umask, radix: 8)) (UMask=)",
                  statted ? "\(files): uid \(fileStatus.st_uid), mode \(String(fileStatus.st_mode & 0o777, radix: 8))" : "\(written.account): no .json file in \(stateDirectory)")
            // The directory itself: the unit's mode (group forcescale may read the force log).
            if let wanted = unit.values("StateDirectoryMode", in: "Service").last.flatMap({ mode_t($0, radix: 8) }) {
                var directoryStatus = stat()
                let found = stat(stateDirectory, &directoryStatus) == 0
                check(found && directoryStatus.st_mode & 0o777 == wanted && directoryStatus.st_uid == user ?? 0,
                      "j: /var/lib/\(stateName) has StateDirectoryMode=\(String(wanted, radix: 8)) and belongs to the unit's user",
                      found ? "mode \(String(directoryStatus.st_mode & 0o777, radix: 8)), uid \(directoryStatus.st_uid)" : String(cString: strerror(errno)))
            }
        }

        // 7. systemctl stop (it returns once the daemon has exited): a clean exit, and the
        // effect erased. Every request the daemon made was answered, so recorded, before it
        // exited; its plays came before them on the uinput fd.
        // A marker on the FF stream first: what the daemon asked of the device before it, it
        // asked while serving.
        client.close()
        let marker = pad.queueMarker()
        let stopped = manager.systemctl(["stop", "forcescaled.service"])
        let result = manager.properties("forcescaled.service", ["Result", "ExecMainStatus", "ActiveState"])
        check(stopped.ended == .exited(0) && result["Result"] == "success" && result["ExecMainStatus"] == "0" && result["ActiveState"] == "inactive",
              "j: systemctl stop forcescaled.service: the daemon exits 0", "\(stopped.output)\n\(result)\n\(manager.journal())")
        let erased = waitFor("the FF marker and the stop's erase at the device", within: Limits.reaction) {
            (marker.map(pad.hasRecorded(marker:)) ?? false) && !pad.forceFeedback.erases.isEmpty
        }
        let final = pad.forceFeedback
        let beforeStop = final.markers.first { $0.number == marker }
        expect("j: RUMBLE success plays its 2 segments on the device", after: erased, restored.held && final.plays == 3,
               saw: "\(final.plays - 1) plays after the press's one (\(restored.account)): \(final.sequence)")
        expect("j: stopping the service erases effect \(id)", after: erased, final.erases == [Int32(id)] && beforeStop?.erases == 0,
               saw: "erases \(final.erases) (\(beforeStop.map { "\($0.erases)" } ?? "?") before the stop)")
        expect("j: every FF request was answered", after: erased, final.problems.isEmpty, saw: "\(final.problems)")
    }

    /// The unit's sandbox settings, each checked on the running daemon. A setting the issue
    /// requires fails when the unit lacks it; the others are checked when the unit has them.
    static func checkSandbox(_ unit: UnitFile, daemonPID: pid_t, manager: Manager) {
        let service = { (key: String) in unit.values(key, in: "Service").last }
        let status = Self.statusFields(of: daemonPID)
        let ids = { (key: String) in (status[key] ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) } }

        let user = service("User")
        let uid = user.flatMap(manager.userID)
        check(user != nil && user != "root" && uid != nil && ids("Uid").count == 4 && ids("Uid").allSatisfy { $0 == uid },
              "j: the daemon runs as the unit's User=\(user ?? "(none)") (uid \(uid.map(String.init) ?? "?"), from sysusers.d), not root",
              "Uid: \(status["Uid"] ?? "?")")
        if let group = service("Group") {
            let gid = manager.groupID(group)
            check(gid != nil && ids("Gid").allSatisfy { $0 == gid }, "j: its group is the unit's Group=\(group) (gid \(gid.map(String.init) ?? "?"))", "Gid: \(status["Gid"] ?? "?")")
        }
        let supplementary = unit.values("SupplementaryGroups", in: "Service").flatMap { $0.split(separator: " ").map(String.init) }
        let input = manager.groupID("input")
        check(!supplementary.contains("input") && input != nil && !ids("Groups").contains(input!) && !ids("Gid").contains(input!),
              "j: the daemon is not in group input (gid \(input.map(String.init) ?? "?")), which reads every keyboard: it reads the pad the udev rule gave its user",
              "unit: \(supplementary), Groups: \(status["Groups"] ?? "?")")
        check(service("NoNewPrivileges") == "yes" && status["NoNewPrivs"] == "1",
              "j: NoNewPrivileges=yes: NoNewPrivs is 1", "unit: \(service("NoNewPrivileges") ?? "unset"), NoNewPrivs: \(status["NoNewPrivs"] ?? "?")")
        let noCapabilities = ["CapBnd", "CapEff", "CapPrm", "CapAmb"].allSatisfy { (status[$0].flatMap { UInt64($0, radix: 16) }) == 0 }
        check(service("CapabilityBoundingSet") == "" && noCapabilities,
              "j: CapabilityBoundingSet= (empty): no capability bounded, effective, permitted or ambient",
              "unit: \(service("CapabilityBoundingSet").map { "'\($0)'" } ?? "unset"), \(["CapBnd", "CapEff", "CapPrm", "CapAmb"].map { "\($0) \(status[$0] ?? "?")" })")
        check(!unit.values("SystemCallFilter", in: "Service").isEmpty && status["Seccomp"] == "2",
              // Seccomp: 2 says a filter is there, not which: SystemCallArchitectures=,
              // MemoryDenyWriteExecute= and the Restrict*= settings add filters too.
              "j: the unit has a SystemCallFilter= and the daemon runs under seccomp filters (Seccomp: 2)", "Seccomp: \(status["Seccomp"] ?? "?")")
        if let umask = service("UMask") {
            check(status["Umask"].flatMap { mode_t($0, radix: 8) } == mode_t(umask, radix: 8),
                  "j: UMask=\(umask) is the daemon's umask", "Umask: \(status["Umask"] ?? "?")")
        }

        // Files: writes outside the state directory fail in the daemon's view of the tree.
        let root = "/proc/\(daemonPID)/root"
        let protect = service("ProtectSystem")
        let systemWrite = Self.tryCreate(root + "/etc/forcescale-sandbox-probe")
        let usrWrite = Self.tryCreate(root + "/usr/local/forcescale-sandbox-probe")
        check(protect == "strict" && systemWrite == EROFS && usrWrite == EROFS,
              "j: ProtectSystem=strict: creating a file in /etc or /usr/local in the daemon's namespace fails with EROFS",
              "unit: \(protect ?? "unset"); /etc: \(Self.describe(systemWrite)), /usr/local: \(Self.describe(usrWrite))")
        if let state = service("StateDirectory")?.split(separator: " ").first {
            let stateWrite = Self.tryCreate(root + "/var/lib/\(state)/sandbox-probe")
            check(stateWrite == 0, "j: StateDirectory=\(state): /var/lib/\(state) stays writable in that namespace", Self.describe(stateWrite))
        }
        if service("PrivateTmp") == "yes" {
            check(Self.sameFile(root + "/tmp", manager.root("/tmp")) == false,
                  "j: PrivateTmp=yes: the daemon's /tmp is not the manager's", "")
        }
        if service("ProtectHome") == "yes" {
            let homes = ((try? FileManager.default.contentsOfDirectory(atPath: root + "/root")) ?? ["?"])
            check(homes.isEmpty && Self.sameFile(root + "/root", manager.root("/root")) == false,
                  "j: ProtectHome=yes: /root is an empty, different directory for the daemon", "saw \(homes)")
        }
        if service("PrivateNetwork") == "yes" {
            check(Self.link("/proc/\(daemonPID)/ns/net") != Self.link("/proc/\(manager.pid)/ns/net"),
                  "j: PrivateNetwork=yes: the daemon has a network namespace of its own", "")
        }

        // Devices: a process in the service's cgroup may open an event node, not /dev/uinput.
        let policy = service("DevicePolicy")
        let allow = unit.values("DeviceAllow", in: "Service")
        let cgroup = (Self.read("/proc/\(daemonPID)/cgroup") ?? "").split(separator: "\n").first { $0.hasPrefix("0::") }.map { String($0.dropFirst(3)) }
        guard policy == "closed", allow.contains("char-input rw"), let cgroup else {
            check(false, "j: the unit says DevicePolicy=closed and DeviceAllow=char-input rw", "DevicePolicy: \(policy ?? "unset"), DeviceAllow: \(allow), cgroup \(cgroup ?? "?")")
            return
        }
        let procs = "/sys/fs/cgroup\(cgroup)/cgroup.procs"
        let (ended, probe) = runToEnd("device probe", ["/bin/sh", "-c", """
            echo $$ > '\(procs)' || exit 3
            if (exec 3<> /dev/uinput) 2>/dev/null; then echo uinput opened; else echo uinput denied; fi
            if (exec 4< /dev/null) 2>/dev/null; then echo null opened; fi
            """], timeout: Limits.command)
        let said = probe?.outputText ?? ""
        check(ended == .exited(0) && said.contains("uinput denied") && said.contains("null opened"),
              "j: DevicePolicy=closed: in the service's cgroup root cannot open /dev/uinput (only char-input and the standard nodes)",
              "\(ended.map(\.description) ?? "timeout"): \(said) \(probe?.errorText ?? "")")
    }

    // MARK: - Reading the unit

    /// A systemd unit file: sections of `Key=value` lines, a key given again adds a value.
    struct UnitFile {
        let text: String
        private var entries: [(section: String, key: String, value: String)] = []

        init?(path: String) {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            self.text = text
            var section = ""
            var pending = ""
            for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
                var line = pending + raw.trimmingCharacters(in: .whitespaces)
                pending = ""
                if line.hasPrefix("#") || line.hasPrefix(";") || line.isEmpty { continue }
                if line.hasSuffix("\\") {
                    line.removeLast()
                    pending = line + " "
                    continue
                }
                if line.hasPrefix("[") && line.hasSuffix("]") {
                    section = String(line.dropFirst().dropLast())
                } else if let equals = line.firstIndex(of: "=") {
                    entries.append((section, line[..<equals].trimmingCharacters(in: .whitespaces),
                                    line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)))
                }
            }
        }

        /// Every value of `key` in `section`, in order (an empty value resets a list in
        /// systemd; the caller takes `.last` for single-valued settings).
        func values(_ key: String, in section: String) -> [String] {
            entries.filter { $0.section == section && $0.key == key }.map(\.value)
        }
    }

    // MARK: - The manager

    /// The systemd manager in its namespaces, seen from outside.
    struct Manager {
        let pid: pid_t
        let nsenter: String

        /// A path in the manager's view of the tree.
        func root(_ path: String) -> String { "/proc/\(pid)/root" + path }

        /// Runs `systemctl` in the manager's mount and PID namespaces.
        func systemctl(_ arguments: [String]) -> (ended: Termination?, output: String) {
            let (ended, child) = runToEnd("systemctl", [nsenter, "--target", String(pid), "--mount", "--pid", "systemctl", "--no-pager"] + arguments,
                                          timeout: Limits.command)
            let output = (child?.output ?? []).joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            return (ended, output.isEmpty ? (child?.errorText ?? "") : output)
        }

        func properties(_ unit: String, _ names: [String]) -> [String: String] {
            var values: [String: String] = [:]
            for line in systemctl(["show", unit] + names.flatMap { ["-p", $0] }).output.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                values[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return values
        }

        /// The service's journal, for a failure's detail.
        func journal() -> String {
            let (_, child) = runToEnd("journalctl", [nsenter, "--target", String(pid), "--mount", "--pid", "journalctl", "--no-pager", "-n", "30", "-u", "forcescaled.service"],
                                      timeout: Limits.command)
            return (child?.output ?? []).map { "journal: " + $0 }.joined(separator: "\n")
        }

        func userID(_ name: String) -> UInt32? { Self.lookUp(name, in: root("/etc/passwd")) }
        func groupID(_ name: String) -> UInt32? { Self.lookUp(name, in: root("/etc/group")) }

        private static func lookUp(_ name: String, in database: String) -> UInt32? {
            let lines = (SandboxedService.read(database) ?? "").split(separator: "\n")
            return lines.lazy.map { $0.split(separator: ":", omittingEmptySubsequences: false) }
                .first { $0.count > 2 && $0[0] == name }.flatMap { UInt32($0[2]) }
        }

        /// The PID outside of a process that has `inner` in the manager's PID namespace.
        func outerPID(of inner: pid_t) -> pid_t? {
            guard inner > 0, let namespace = SandboxedService.link("/proc/\(pid)/ns/pid") else { return nil }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            for entry in entries {
                guard let candidate = pid_t(entry), SandboxedService.link("/proc/\(entry)/ns/pid") == namespace else { continue }
                let nsPIDs = SandboxedService.statusFields(of: candidate)["NSpid"]?.split(separator: "\t").compactMap { pid_t($0) } ?? []
                if nsPIDs.last == inner { return candidate }
            }
            return nil
        }

        /// Inodes of the listening Unix sockets bound to `path` in the manager's network
        /// namespace (`/proc/net/unix`: flag 00010000 is `__SO_ACCEPTCON`, a listener).
        func listeningInodes(path: String) -> [UInt64] {
            (SandboxedService.read("/proc/\(pid)/net/unix") ?? "").split(separator: "\n").dropFirst().compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count >= 8, fields[7] == path, fields[3] == "00010000" else { return nil }
                return UInt64(fields[6])
            }
        }
    }

    // MARK: - /proc

    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// `/proc/PID/status` as key → value (the value's leading tabs removed).
    static func statusFields(of pid: pid_t) -> [String: String] {
        var fields: [String: String] = [:]
        for line in (read("/proc/\(pid)/status") ?? "").split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }

    /// Starts scripts/systemd-namespace with `arguments` (the script first) and waits until
    /// the systemd manager in its namespaces runs, checking that it does as `scenario`'s.
    /// - Returns: The script and the manager; `nil` (the script stopped) when it never ran.
    static func startManager(_ arguments: [String], scenario: String, nsenter: String) -> (namespace: Child, manager: Manager)? {
        let namespace: Child
        let started = ([helper] + arguments.dropFirst().filter { $0.hasPrefix("--") }).joined(separator: " ")
        do {
            namespace = try Child("systemd-namespace", arguments)
        } catch {
            check(false, "\(scenario): start \(started)", "\(error)")
            return nil
        }
        // The manager is the child of unshare (which the script becomes) in another PID
        // namespace; children before that are the script's own commands.
        var managerPID: pid_t = 0
        let ourNamespace = link("/proc/self/ns/pid")
        let spawned = waitFor("the systemd manager's process in a PID namespace of its own", within: Limits.readerStart) {
            managerPID = children(of: namespace.pid).first { child in
                link("/proc/\(child)/ns/pid").map { $0 != ourNamespace } ?? false
            } ?? 0
            return managerPID != 0 || !namespace.isRunning
        }
        let manager = Manager(pid: managerPID, nsenter: nsenter)
        var state = ""
        let askedSince = Clock.now()
        // Asked every 2 s: each question is an nsenter + systemctl process, which the
        // manager's own start needs the CPU for.
        retry(Limits.managerStart, pause: 2) {
            guard managerPID > 0, namespace.isRunning else { return true }
            state = manager.systemctl(["is-system-running"]).output
            return state == "running" || state == "degraded"
        }
        let up = state == "running" || state == "degraded"
        check(up, "\(scenario): systemd runs as PID 1 of its namespace and reaches its target",
              "\(spawned.held ? "" : spawned.account + "; ")asked 'systemctl is-system-running' for \(String(format: "%.0f", Clock.now() - askedSince)) s (limit \(Int(Limits.managerStart)) s): "
                  + "manager pid \(managerPID), state '\(state)', \(namespace.ended.map(\.description) ?? "running")\n\(namespace.tail(20))")
        guard up else {
            namespace.stop(SIGKILL)
            return nil
        }
        return (namespace, manager)
    }

    static func children(of pid: pid_t) -> [pid_t] {
        (read("/proc/\(pid)/task/\(pid)/children") ?? "").split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func socketInodes(of pid: pid_t) -> Set<UInt64> {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(entries.compactMap { link("/proc/\(pid)/fd/\($0)") }.compactMap { target in
            guard target.hasPrefix("socket:[") else { return nil }
            return UInt64(target.dropFirst(8).dropLast())
        })
    }

    /// Creates and removes `path`: 0 when that worked, else the errno of the creation.
    static func tryCreate(_ path: String) -> Int32 {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return errno }
        close(descriptor)
        unlink(path)
        return 0
    }

    static func describe(_ error: Int32) -> String { error == 0 ? "created" : String(cString: strerror(error)) }

    static func sameFile(_ one: String, _ other: String) -> Bool? {
        var first = stat()
        var second = stat()
        guard stat(one, &first) == 0, stat(other, &second) == 0 else { return nil }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }
}

extension Limits {
    /// From starting scripts/systemd-namespace to `systemctl is-system-running` saying
    /// running: 22–40 s measured under emulation.
    static let managerStart = 180.0
}
