import ArgumentParsing
import ScalePOSIX

Signals.ignoreBrokenPipe()

runMain(root: Command(group: Forcescale.self)) { command in
    switch command.path.dropFirst().first {
    case "replay": return try ReplayCommand.run(command)
    case "read": return try ReadCommand.run(command)
    case "devices": return try DevicesCommand.run(command)
    case "rumble": return try RumbleCommand.run(command)
    case "record": return try RecordCommand.run(command)
    case "watch": return try WatchCommand.run(command)
    case "weigh": return try WeighCommand.run(command)
    case "tare": return try TareCommand.run(command)
    case "calibrate": return try CalibrateCommand.run(command)
    case "characterize": return try CharacterizeCommand.run(command)
    case "status": return try StatusCommand.run(command)
    case "log": return try LogCommand.run(command)
    default: return try DemoCommand.run(command)
    }
}
