import ArgumentParsing
import ScaleCore

/// `forcescale`: its subcommands, each a type that runs itself; `demo` when none is named.
enum Forcescale: CommandGroup {
    static let version = Release.version

    static let configuration = GroupConfiguration(
        name: "forcescale",
        abstract: "Weigh light objects and log force with a pressure touchpad or pen tablet.",
        subcommands: [
            .command(DemoCommand.self), .command(ReplayCommand.self), .command(ReadCommand.self),
            .command(DevicesCommand.self), .command(RumbleCommand.self), .command(RecordCommand.self),
            .command(WatchCommand.self), .command(WeighCommand.self), .command(TareCommand.self),
            .command(CalibrateCommand.self), .command(CharacterizeCommand.self), .command(StatusCommand.self),
            .group(LogCommand.self),
        ],
        defaultSubcommand: DemoCommand.self,
        version: version)
}
