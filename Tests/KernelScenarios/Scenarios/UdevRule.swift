import Foundation
import KernelTestSupport
import Glibc

/// i. udev/70-forcescale.rules under the real systemd-udevd: touchpads and tablets with a
/// pressure axis get FORCESCALE_DEVICE=1, the systemd tag and SYSTEMD_WANTS on
/// forcescaled.service; a mouse and a touchpad without pressure get none of it. The rule and
/// its helper are installed into /run (udev reads /run/udev/rules.d; nothing is left behind
/// in /etc on a native run), with the helper's path rewritten as `make install` rewrites it.
enum UdevRule {
    static let ruleName = "70-forcescale.rules"
    static let helperName = "forcescale-udev-pressure"
    /// Where the rule in the repository expects the helper (PREFIX=/usr/local).
    static let helperPathInRule = "/usr/local/lib/udev/" + helperName
    static let rulesDirectory = "/run/udev/rules.d"
    static let helperDirectory = "/run/forcescale-kernel-tests"

    struct Expectation {
        var table: DeviceTable
        /// The udev property that shows udev's input_id classified the device as expected.
        var classification: String
        var weighs: Bool
    }

    static let devices: [Expectation] = [
        Expectation(table: Tables.pressurePad, classification: "ID_INPUT_TOUCHPAD", weighs: true),
        Expectation(table: Tables.synapticsPad, classification: "ID_INPUT_TOUCHPAD", weighs: true),
        Expectation(table: Tables.multitouchPressurePad, classification: "ID_INPUT_TOUCHPAD", weighs: true),
        Expectation(table: Tables.pen2047, classification: "ID_INPUT_TABLET", weighs: true),
        Expectation(table: Tables.pressurelessPad, classification: "ID_INPUT_TOUCHPAD", weighs: false),
        Expectation(table: Tables.mouse, classification: "ID_INPUT_MOUSE", weighs: false),
    ]

    static func run(_ programs: Programs) {
        guard let udevadm = findProgram("udevadm") else {
            check(false, "i: udevadm is installed", "the udev package (scripts/setup installs it) is missing")
            return
        }
        let (ping, pinger) = runToEnd("udevadm control --ping", [udevadm, "control", "--ping"], timeout: Limits.command)
        guard check(ping == .exited(0), "i: systemd-udevd is running", "udevadm control --ping: \(ending(ping, waited: Limits.command)) \(pinger?.errorText ?? "")") else { return }

        // The repository's files: scripts/kernel-tests runs this in the repository root.
        let repository = FileManager.default.currentDirectoryPath
        guard let rule = try? String(contentsOfFile: repository + "/udev/" + ruleName, encoding: .utf8),
              let helper = FileManager.default.contents(atPath: repository + "/udev/" + helperName) else {
            check(false, "i: read udev/\(ruleName) and udev/\(helperName)", "not found under \(repository)")
            return
        }
        guard check(rule.contains(helperPathInRule), "i: the rule calls the helper at \(helperPathInRule)") else { return }
        let installedRule = rulesDirectory + "/" + ruleName
        let installedHelper = helperDirectory + "/" + helperName
        defer {
            unlink(installedRule)
            unlink(installedHelper)
            rmdir(helperDirectory)
            _ = runToEnd("udevadm control --reload", [udevadm, "control", "--reload"], timeout: Limits.command)
        }
        do {
            try FileManager.default.createDirectory(atPath: rulesDirectory, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: helperDirectory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: installedHelper, contents: helper, attributes: [.posixPermissions: 0o755]) else {
                throw DeviceError("cannot write \(installedHelper)")
            }
            try rule.replacingOccurrences(of: helperPathInRule, with: installedHelper)
                .write(toFile: installedRule, atomically: true, encoding: .utf8)
        } catch {
            check(false, "i: install the rule into \(rulesDirectory) and the helper into \(helperDirectory)", "\(error)")
            return
        }
        let (reload, reloader) = runToEnd("udevadm control --reload", [udevadm, "control", "--reload"], timeout: Limits.command)
        guard check(reload == .exited(0), "i: udevadm control --reload", reloader?.errorText ?? "") else { return }

        var made: [(Expectation, VirtualDevice)] = []
        defer { made.forEach { $0.1.destroy() } }
        for expectation in devices {
            guard let device = makeDevice(expectation.table, scenario: "i") else { return }
            made.append((expectation, device))
        }
        let (settle, settler) = runToEnd("udevadm settle", [udevadm, "settle", "--timeout=120"], timeout: 150)
        guard check(settle == .exited(0), "i: udevadm settle", settler?.errorText ?? "") else { return }

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
