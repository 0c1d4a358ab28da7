import Foundation
import KernelTestSupport
import Glibc

/// i. udev/70-forcescale.rules under the real systemd-udevd: touchpads and tablets with a
/// pressure axis get FORCESCALE_DEVICE=1, the systemd tag and SYSTEMD_WANTS on
/// forcescaled.service; a mouse and a touchpad without pressure get none of it. And who may
/// open what (issue 60): with the packaged users made from sysusers.d, the rule makes user
/// forcescale the owner of the pressure devices and of a gamepad that rumbles, and of
/// nothing else; that user, with the groups the unit gives the daemon (none beyond its own),
/// opens a pressure pad and cannot open a keyboard.
///
/// The rule and its helper are installed into /run (udev reads /run/udev/rules.d; nothing is
/// left behind in /etc on a native run), with the helper's path rewritten as `make install`
/// rewrites it; ``install(scenario:)`` does that for the scenarios that run the packaged
/// daemon on a device too (j, o), since it can open a device only once the rule gave it.
enum UdevRule {
    static let ruleName = "70-forcescale.rules"
    static let helperName = "forcescale-udev-pressure"
    /// Where the rule in the repository expects the helper (PREFIX=/usr/local).
    static let helperPathInRule = "/usr/local/lib/udev/" + helperName
    static let rulesDirectory = "/run/udev/rules.d"
    static let helperDirectory = "/run/forcescale-kernel-tests"
    /// The daemon's user, as sysusers.d/forcescale.conf makes it and the rule names it.
    static let daemonUser = "forcescale"

    struct Expectation {
        var table: DeviceTable
        /// The udev property that shows udev's input_id classified the device as expected.
        var classification: String
        var weighs: Bool
        /// Whether the daemon's user may open it: the pressure devices, and gamepads that rumble.
        var givenToTheDaemon: Bool
    }

    static let devices: [Expectation] = [
        Expectation(table: Tables.pressurePad, classification: "ID_INPUT_TOUCHPAD", weighs: true, givenToTheDaemon: true),
        Expectation(table: Tables.synapticsPad, classification: "ID_INPUT_TOUCHPAD", weighs: true, givenToTheDaemon: true),
        Expectation(table: Tables.multitouchPressurePad, classification: "ID_INPUT_TOUCHPAD", weighs: true, givenToTheDaemon: true),
        Expectation(table: Tables.pen2047, classification: "ID_INPUT_TABLET", weighs: true, givenToTheDaemon: true),
        Expectation(table: Tables.pressurelessPad, classification: "ID_INPUT_TOUCHPAD", weighs: false, givenToTheDaemon: false),
        Expectation(table: Tables.mouse, classification: "ID_INPUT_MOUSE", weighs: false, givenToTheDaemon: false),
        Expectation(table: Tables.keyboard, classification: "ID_INPUT_KEYBOARD", weighs: false, givenToTheDaemon: false),
        Expectation(table: Tables.rumblingGamepad, classification: "ID_INPUT_JOYSTICK", weighs: false, givenToTheDaemon: true),
    ]

    /// The rule installed for the whole of a scenario; `remove()` takes it away again.
    final class Installation {
        let udevadm: String
        private var removed = false

        init(udevadm: String) { self.udevadm = udevadm }

        func remove() {
            guard !removed else { return }
            removed = true
            unlink(UdevRule.rulesDirectory + "/" + UdevRule.ruleName)
            unlink(UdevRule.helperDirectory + "/" + UdevRule.helperName)
            rmdir(UdevRule.helperDirectory)
            _ = runToEnd("udevadm control --reload", [udevadm, "control", "--reload"], timeout: Limits.command)
        }

        deinit { remove() }
    }

    /// Makes the packaged users and groups (systemd-sysusers on the repository's
    /// sysusers.d files: in the VM /etc is copy-on-write, so they stay in the guest), then
    /// installs the rule and its helper into /run and has udev read them. Devices made after
    /// this get the rule, the daemon's user included.
    /// - Returns: The installation, or `nil` after a failed check.
    static func install(scenario: String) -> Installation? {
        guard let udevadm = findProgram("udevadm"), let sysusers = findProgram("systemd-sysusers") else {
            check(false, "\(scenario): udevadm and systemd-sysusers are installed", "the udev and systemd packages (scripts/setup installs them) are missing")
            return nil
        }
        let (ping, pinger) = runToEnd("udevadm control --ping", [udevadm, "control", "--ping"], timeout: Limits.command)
        guard check(ping == .exited(0), "\(scenario): systemd-udevd is running", "udevadm control --ping: \(ending(ping, waited: Limits.command)) \(pinger?.errorText ?? "")") else { return nil }

        // The repository's files: scripts/kernel-tests runs this in the repository root.
        let repository = FileManager.default.currentDirectoryPath
        let userFiles = ["forcescale.conf", "forcescale-web.conf", "forcescale-mqtt.conf"].map { repository + "/sysusers.d/" + $0 }
        // In the VM virtme-ng bind-mounts a file over /etc/shadow, which sysusers then cannot
        // replace (EBUSY, exit status 1) after it has written /etc/passwd and /etc/group: what
        // the rule and the checks need is that the users and groups exist.
        let (made, maker) = runToEnd("systemd-sysusers", [sysusers] + userFiles, timeout: Limits.command)
        if made != .exited(0) { note("\(scenario): systemd-sysusers: \(ending(made, waited: Limits.command)) \(maker?.errorText ?? "")") }
        guard check(getpwnam(daemonUser) != nil && getgrnam("forcescale-control") != nil && getgrnam("forcescale") != nil,
                    "\(scenario): systemd-sysusers makes the packaged users and groups from sysusers.d (user forcescale, groups forcescale and forcescale-control)",
                    "\(ending(made, waited: Limits.command)) \(maker?.errorText ?? "")") else { return nil }
        guard let rule = try? String(contentsOfFile: repository + "/udev/" + ruleName, encoding: .utf8),
              let helper = FileManager.default.contents(atPath: repository + "/udev/" + helperName) else {
            check(false, "\(scenario): read udev/\(ruleName) and udev/\(helperName)", "not found under \(repository)")
            return nil
        }
        guard check(rule.contains(helperPathInRule), "\(scenario): the rule calls the helper at \(helperPathInRule)") else { return nil }
        let installation = Installation(udevadm: udevadm)
        do {
            try FileManager.default.createDirectory(atPath: rulesDirectory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: helperDirectory, withIntermediateDirectories: true)
            let installedHelper = helperDirectory + "/" + helperName
            guard FileManager.default.createFile(atPath: installedHelper, contents: helper, attributes: [.posixPermissions: 0o755]) else {
                throw DeviceError("cannot write \(installedHelper)")
            }
            try rule.replacingOccurrences(of: helperPathInRule, with: installedHelper)
                .write(toFile: rulesDirectory + "/" + ruleName, atomically: true, encoding: .utf8)
        } catch {
            check(false, "\(scenario): install the rule into \(rulesDirectory) and the helper into \(helperDirectory)", "\(error)")
            installation.remove()
            return nil
        }
        // The reload resolves the rule's OWNER= user, which exists by now.
        let (reload, reloader) = runToEnd("udevadm control --reload", [udevadm, "control", "--reload"], timeout: Limits.command)
        guard check(reload == .exited(0), "\(scenario): udevadm control --reload", reloader?.errorText ?? "") else {
            installation.remove()
            return nil
        }
        return installation
    }

    /// Waits for udev to have handled every event so far (the rule applied to new devices).
    static func settle(_ udevadm: String, scenario: String) -> Bool {
        let (settle, settler) = runToEnd("udevadm settle", [udevadm, "settle", "--timeout=120"], timeout: 150)
        return check(settle == .exited(0), "\(scenario): udevadm settle", settler?.errorText ?? "")
    }

    static func run(_ programs: Programs) {
        guard let installation = install(scenario: "i") else { return }
        defer { installation.remove() }
        let udevadm = installation.udevadm

        var made: [(Expectation, VirtualDevice)] = []
        defer { made.forEach { $0.1.destroy() } }
        for expectation in devices {
            guard let device = makeDevice(expectation.table, scenario: "i") else { return }
            made.append((expectation, device))
        }
        guard settle(udevadm, scenario: "i") else { return }
        let daemonUID = getpwnam(daemonUser).map { $0.pointee.pw_uid }

        for (expectation, device) in made {
            let name = "\(expectation.table.name) (\(device.node))"
            let abs = (try? String(contentsOfFile: "/sys/class/input/\(device.sysname)/capabilities/abs", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            note("i: \(name): capabilities/abs \(abs)")
            guard let properties = udevProperties(udevadm, device.node) else {
                check(false, "i: udevadm info \(name)")
                continue
            }
            let shown = properties.filter { $0.key.hasPrefix("ID_INPUT") || $0.key.hasPrefix("FORCESCALE") || $0.key.hasPrefix("SYSTEMD") || $0.key.hasSuffix("TAGS") }
                .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            check(properties[expectation.classification] == "1", "i: udev's input_id calls \(name) \(expectation.classification)", shown)
            let tags = (properties["TAGS"] ?? "") + (properties["CURRENT_TAGS"] ?? "")
            let wants = (properties["SYSTEMD_WANTS"] ?? "").split(separator: " ").map(String.init)
            if expectation.weighs {
                check(properties["FORCESCALE_DEVICE"] == "1", "i: \(name) has FORCESCALE_DEVICE=1", shown)
                check(properties["TAGS"]?.contains(":systemd:") == true && properties["CURRENT_TAGS"]?.contains(":systemd:") == true,
                      "i: \(name) is tagged systemd (TAGS and CURRENT_TAGS)", shown)
                check(wants.contains("forcescaled.service"), "i: \(name) wants forcescaled.service", shown)
                check(!tags.contains(":uaccess:"), "i: \(name) has no uaccess tag", shown)
            } else {
                check(properties["FORCESCALE_DEVICE"] == nil, "i: \(name) has no FORCESCALE_DEVICE", shown)
                check(!wants.contains("forcescaled.service"), "i: \(name) does not want forcescaled.service", shown)
            }
            var status = stat()
            let owner = stat(device.node, &status) == 0 ? status.st_uid : nil
            let mode = String(status.st_mode & 0o777, radix: 8)
            if expectation.givenToTheDaemon {
                check(owner != nil && owner == daemonUID, "i: \(name) belongs to user \(daemonUser) (uid \(daemonUID.map(String.init) ?? "?"))",
                      "owner \(owner.map(String.init) ?? "?"), mode \(mode)")
            } else {
                check(owner != nil && owner != daemonUID, "i: \(name) does not belong to user \(daemonUser)", "owner \(owner.map(String.init) ?? "?"), mode \(mode)")
            }
        }

        // The daemon's user, with the unit's groups (its own, none supplementary), opens the
        // pressure pad for reading and writing (rumble) and cannot open the keyboard at all.
        guard let setpriv = findProgram("setpriv") else {
            check(false, "i: setpriv is installed", "apt-get install util-linux")
            return
        }
        for (expectation, device) in made where expectation.table.name == Tables.pressurePad.name || expectation.table.name == Tables.keyboard.name {
            let (ended, child) = runToEnd("open \(device.node) as \(daemonUser)", [
                setpriv, "--reuid=\(daemonUser)", "--regid=\(daemonUser)", "--clear-groups", "/bin/sh", "-c",
                "if (exec 3<> \"$1\") 2>/dev/null; then echo opened; else echo refused; fi; id", "sh", device.node,
            ], timeout: Limits.command)
            let said = child?.outputText ?? ""
            let expected = expectation.givenToTheDaemon ? "opened" : "refused"
            check(ended == .exited(0) && said.hasPrefix(expected) && !said.contains("(input)"),
                  "i: user \(daemonUser), in no group input, \(expected) \(expectation.table.name) (\(device.node))",
                  "\(ended.map(\.description) ?? "timeout"): \(said) \(child?.errorText ?? "")")
        }
    }

    /// `udevadm info --query=property` of a node, as a dictionary.
    static func udevProperties(_ udevadm: String, _ node: String) -> [String: String]? {
        let (status, child) = runToEnd("udevadm info \(node)", [udevadm, "info", "--query=property", "--name=" + node], timeout: Limits.command)
        guard status == .exited(0), let child else { return nil }
        var properties: [String: String] = [:]
        for line in child.output {
            guard let equals = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return properties
    }
}
