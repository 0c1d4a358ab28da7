import ArgumentParsing
import ScaleCore
import ScaleEvdev
import ScaleOptions
import ScalePOSIX
import ScaleProtocol

enum RumbleCommand {
    static let declaration = Command(
        name: "rumble",
        abstract: "Play a haptic pattern on a force-feedback device, or probe what it can do.",
        discussion: """
            Patterns follow iOS's feedback generators on FF_RUMBLE: impact-light, \
            impact-medium, impact-heavy, impact-soft, impact-rigid, selection, success, \
            warning and error. Without --device the first device that can rumble is used. \
            --probe lists the device's force-feedback capabilities and tries each effect \
            type, as fftest does. With --socket, asks forcescaled to play the pattern on \
            the device it rumbles (needs root or the daemon's group).
            """,
        arguments: [Argument(name: "pattern", help: "The pattern to play.", isOptional: true)],
        options: Setting.device.options + [
            Option(long: "intensity", valueName: "fraction", help: "Strength from 0 to 1.", defaultValue: "1.0"),
            Option(long: "list", help: "List the patterns and exit."),
            Option(long: "probe", help: "Report the device's force feedback and try each effect type."),
            Option(long: "socket", valueName: "path", help: "Play through the forcescaled listening on this socket."),
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let output = OutputChannel.standardOutput
        if command.flag("list") {
            return reportingFailures {
                for pattern in HapticPattern.all {
                    try output.write(pattern.name.padding(15) + " \(pattern.totalMilliseconds) ms".padding(9) + "  \(pattern.summary)\n")
                }
                try output.flush()
            }
        }
        let intensity = try command.double("intensity") ?? 1
        guard intensity >= 0, intensity <= 1 else { throw command.usageError("The intensity must be between 0 and 1") }
        let name = command.argument("pattern") ?? "impact-medium"
        guard let pattern = HapticPattern.named(name) else {
            throw command.usageError("Unknown pattern '\(name)'; 'forcescale rumble --list' shows them")
        }
        if command.string("socket") != nil {
            guard !command.flag("probe"), command.string(.device) == nil, intensity == 1 else {
                throw command.usageError("--socket plays a pattern through the daemon's own rumble device; --probe, --device and --intensity are for direct use")
            }
            return DaemonConnection.run {
                let client = try DaemonConnection.connect(command)
                _ = try client.request(.rumble(pattern: pattern), expecting: RumbleMessage.self)
                try output.write("forcescaled played \(pattern.name) (\(pattern.totalMilliseconds) ms)\n")
                try output.flush()
            }
        }
        return reportingFailures {
            let device = try open(command.string(.device).map(DeviceQuery.init))
            if command.flag("probe") {
                try probe(device, output: output)
                return
            }
            let effect = try RumbleEffect(device: device)
            try effect.play(pattern.scaled(intensity: intensity))
            effect.erase()
            try output.write("played \(pattern.name) on \(device.path) (\(device.description.name), \(pattern.totalMilliseconds) ms)\n")
            try output.flush()
        }
    }

    /// The named device, or the first one that can rumble.
    static func open(_ query: DeviceQuery?) throws -> EvdevDevice {
        try EvdevDevice(path: DeviceDiscovery.chooseRumbler(query, from: DeviceDiscovery.scan()), wantsWrite: true)
    }

    static func probe(_ device: EvdevDevice, output: OutputChannel) throws {
        let capabilities = ForceFeedbackCapabilities(of: device)
        try output.write("\(device.path): \(device.description.name)\n")
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
