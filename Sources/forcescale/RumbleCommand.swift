import ArgumentParsing
import ScaleCore
import ScaleEvdev
import ScaleOptions
import ScalePOSIX
import ScaleProtocol

enum RumbleCommand: ParsableCommand {
    static let pattern = ArgumentKey<String?>("pattern", help: "The pattern to play.", parser: .text)
    static let intensity = OptionKey<Double>("intensity", valueName: "fraction", help: "Strength from 0 to 1.", parser: .number, default: 1)
    static let list = OptionKey(flag: "list", help: "List the patterns and exit.")
    static let probe = OptionKey(flag: "probe", help: "Report the device's force feedback and try each effect type.")
    static let test = OptionKey(flag: "test", help: "Check force feedback end to end, timing every request; exit 0 only when all works.")
    static let count = OptionKey<Int>("count", valueName: "rounds", help: "Rounds of --test.", parser: .integer, default: RumbleTestCommand.defaultRounds)
    static let json = OptionKey(flag: "json", help: "Print --test's report as one JSON object.")
    static let socket = OptionKey<String?>("socket", valueName: "path", help: "Play through the forcescaled listening on this socket.", parser: .text)

    static let configuration = CommandConfiguration(
        name: "rumble",
        abstract: "Play a haptic pattern on a force-feedback device, or probe what it can do.",
        discussion: """
            Patterns follow iOS's feedback generators on FF_RUMBLE: impact-light, \
            impact-medium, impact-heavy, impact-soft, impact-rigid, selection, success, \
            warning and error. Without --device the first device that can rumble is used. \
            --probe lists the device's force-feedback capabilities and tries each effect \
            type, as fftest does. --test checks force feedback end to end: each effect \
            type the device lists, as many effects at once as it claims, FF_GAIN, then \
            --count rounds of every pattern's rumbles uploaded, played, stopped and erased, \
            each request timed (p50, p99, max) and its failures counted; it exits 0 only \
            when everything the device claims works, 1 when something does not, 69 when \
            the device cannot rumble at all. With --socket, asks forcescaled to play the \
            pattern on the device it rumbles (needs root or the daemon's group).
            """,
        arguments: [pattern],
        options: [SettingOption.device, intensity, list, probe, test, count, json, socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let output = OutputChannel.standardOutput
        if command[Self.list] {
            return reportingFailures {
                for pattern in HapticPattern.all {
                    try output.write(pattern.name.padding(15) + " \(pattern.totalMilliseconds) ms".padding(9) + "  \(pattern.summary)\n")
                }
                try output.flush()
            }
        }
        let intensity = command[Self.intensity]
        guard intensity >= 0, intensity <= 1 else { throw command.usageError("The intensity must be between 0 and 1") }
        let name = command[Self.pattern] ?? "impact-medium"
        guard let pattern = HapticPattern.named(name) else {
            throw command.usageError("Unknown pattern \(UsageError.typed(name)); 'forcescale rumble --list' shows them")
        }
        let rounds = command[Self.count]
        guard rounds >= 1 else { throw command.usageError("--count must be 1 or more") }
        let test = command[Self.test]
        let probing = command[Self.probe]
        let json = command[Self.json]
        let device = command[SettingOption.device].map(DeviceQuery.init)
        if !test, json || command.wasGiven(Self.count) {
            throw command.usageError("--count and --json go with --test")
        }
        if test, probing {
            throw command.usageError("Give either --probe or --test: --test tries everything --probe does")
        }
        if let socket = command[Self.socket] {
            guard !probing, !test, device == nil, intensity == 1 else {
                throw command.usageError("--socket plays a pattern through the daemon's own rumble device; --probe, --test, --device and --intensity are for direct use")
            }
            return DaemonConnection.run {
                let client = try DaemonConnection.connect(socket)
                _ = try client.request(.rumble(pattern: pattern), expecting: RumbleMessage.self)
                try output.write("forcescaled played \(pattern.name) (\(pattern.totalMilliseconds) ms)\n")
                try output.flush()
            }
        }
        if test {
            var status = ExitStatus.success
            let failure = reportingFailures {
                status = try RumbleTestCommand.run(on: try open(device), rounds: rounds, json: json, output: output)
            }
            return failure == ExitStatus.success ? status : failure
        }
        return reportingFailures {
            let device = try open(device)
            if probing {
                try probe(device, output: output)
                return
            }
            let effect = try RumbleEffect(device: device)
            try effect.play(pattern.scaled(intensity: intensity))
            effect.erase()
            try output.write("played \(pattern.name) on \(device.path) (\(untrusted: device.description.name), \(pattern.totalMilliseconds) ms)\n")
            try output.flush()
        }
    }

    /// The named device, or the first one that can rumble.
    static func open(_ query: DeviceQuery?) throws -> EvdevDevice {
        try EvdevDevice(path: DeviceDiscovery.chooseRumbler(query, from: DeviceDiscovery.scan()), wantsWrite: true)
    }

    static func probe(_ device: EvdevDevice, output: OutputChannel) throws {
        let capabilities = ForceFeedbackCapabilities(of: device)
        try output.write("\(device.path): \(untrusted: device.description.name)\n")
        try output.write("  effects at once  \(capabilities.effectsCapacity)\n")
        try output.write("  effect types     \(capabilities.effectTypes.isEmpty ? "none" : capabilities.effectTypes.map(\.name).joined(separator: ", "))\n")
        try output.write("  gain             \(capabilities.supportsGain ? "yes" : "no")\n")
        try output.write("  autocenter       \(capabilities.supportsAutocenter ? "yes" : "no")\n")
        try output.write("  write access     \(device.isWritable ? "yes" : "no (effects cannot be uploaded)")\n")
        guard !capabilities.effectTypes.isEmpty else {
            throw CommandFailure(message: "\(device.path): the device has no force feedback; try a gamepad ('forcescale devices' shows rumble support)", status: ExitStatus.unavailable)
        }
        for type in capabilities.effectTypes {
            let result: String
            do throws(ForceFeedbackError) {
                try ForceFeedbackProbe.tryEffect(type, on: device)
                result = "ok"
            } catch {
                result = "refused: \(error.errno.map(\.description) ?? "") (\(error.explanation))"
            }
            try output.write("  try \(type.name.padding(10)) \(result)\n")
        }
        try output.flush()
    }
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
}
