import ArgumentParsing
import ScaleSystem

let version = "0.1.0"

let root = Command(
    name: "forcescale",
    abstract: "Weigh light objects and log force with a pressure touchpad or pen tablet.",
    subcommands: [
        DemoCommand.declaration, ReplayCommand.declaration, ReadCommand.declaration,
        DevicesCommand.declaration, RumbleCommand.declaration,
    ],
    defaultSubcommand: "demo",
    version: version)

Signals.ignoreBrokenPipe()

runMain(root: root) { command in
    switch command.path.dropFirst().first {
    case "replay": return try ReplayCommand.run(command)
    case "read": return try ReadCommand.run(command)
    case "devices": return try DevicesCommand.run(command)
    case "rumble": return try RumbleCommand.run(command)
    default: return try DemoCommand.run(command)
    }
}
