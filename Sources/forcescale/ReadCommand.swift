import ArgumentParsing
import ScaleCore
import ScaleEvdev
import ScaleOptions
import ScalePOSIX

enum ReadCommand: ParsableCommand {
    static let grab = OptionKey(flag: "grab", help: "Take the device exclusively (the desktop loses it meanwhile).")

    static let configuration = CommandConfiguration(
        name: "read",
        abstract: "Read a live pressure device directly, without the daemon.",
        discussion: """
            Opens the best pressure device (pressure pads and pen tablets first) or the one \
            named by --device, without grabbing it, and shows its readings as 'replay' does. \
            Follows the device through unplug and replug, and rumbles on each PEAK when the \
            device (or --rumble-device) has force feedback. Ctrl-C stops it.
            """,
        options: [SettingOption.device, grab, SettingOption.rumbleDevice, SettingOption.rumbleIntensity, Setting.Flag.noRumble.option]
            + PipelineOptions.declarations)

    static func run(_ command: ParsedCommand) throws -> Int32 {
        var options = try PipelineOptions(command)
        options.realtime = true
        let rumble: RumbleChoice = command[Setting.Flag.noRumble.option] ? .off
            : command[SettingOption.rumbleDevice].map { .device(DeviceQuery($0)) } ?? .pressureDevice
        let intensity = command[SettingOption.rumbleIntensity] ?? 1
        guard Setting.rumbleIntensity.accepts(intensity) else { throw command.usageError("The rumble intensity must be between 0 and 1") }
        let liveOptions = LiveScale.Options(
            devices: .best(command[SettingOption.device].map(DeviceQuery.init)), settings: options.settings,
            grab: command[Self.grab], rumble: rumble, rumbleIntensity: intensity)
        // Lines are written out once per wake-up of the loop (onDelivered below), not one
        // write(2) each: the same moment, and one system call when several came together.
        let presenter = options.makePresenter(liveGauge: true, flushEachLine: false)
        return reportingFailures {
            let loop = try EventLoop()
            let scale = try LiveScale(
                options: liveOptions, loop: loop,
                onOutput: { output, _ in try presenter.show(output) },
                onNotice: { notice in
                    if case .opened(_, let device, let source, let model) = notice {
                        try? presenter.begin(device: device, source: source, model: model, origin: EventTime(microseconds: MonotonicClock.now()))
                    }
                    printDiagnostic("forcescale: \(describe(notice))")
                },
                onDelivered: { try OutputChannel.standardOutput.flush() })
            try scale.start()
            try loop.runUntilTerminated()
            scale.stop()
            if let failure = scale.failure { throw failure }
            try presenter.end()
        }
    }

    static func describe(_ notice: LiveNotice) -> String {
        switch notice {
        case .opened(let path, let device, _, _): return "reading \(path) (\(device.name))"
        case .rumbleReady(let path, _, let feedback): return "\(feedback.name) on PEAK through \(path)"
        case .unusable(let path, let reason): return "\(path): \(reason)"
        case .rumbleUnavailable(let reason): return "rumble unavailable: \(reason); readings go on without it"
        case .resynchronized(let path): return "\(path): events were dropped (SYN_DROPPED); state rebuilt from the device"
        case .removed(let path): return "\(path): device removed"
        case .readFailed(let path, let errno): return "\(path): read failed: \(errno); stopped reading it"
        case .waiting(let what): return "waiting for \(what) to come back (Ctrl-C stops)"
        }
    }
}
