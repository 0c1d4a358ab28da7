// forcescale-kernel-tests: scenarios on the real kernel. Virtual devices are made through
// /dev/uinput (from the tables in Support/DeviceTables.swift) or by evemu-device from the
// shared recordings; `forcescale` (the binary built beside this one) runs as a child process.
//
//   swift build && scripts/kernel-tests .build/debug/forcescale-kernel-tests [SCENARIO]...
//
// SCENARIO is a letter of the table below (default: all, in one run: the VM boots once). Needs root and a
// usable /dev/uinput; prints `ok`/`not ok` lines, a plan and `N passed, N failed`, and exits
// 1 on any failure, 2 when it cannot run at all.
//
// Environment: FORCESCALE_RECORDINGS (default /work/shared/recordings),
// FORCESCALE_KT_MAX_SECONDS (the longest stretch of a recording played live, default 35:
// the 32 s Synaptics recording whole, the first 35 s of the 88 s Cintiq 13HD),
// FORCESCALE_KT_ROUNDS (unplug/replug rounds, default 50), FORCESCALE_KT_PRESSES (presses of
// the rumble scenario, default 1000), FORCESCALE_KT_TIMEOUT (the watchdog, default 900 s per
// round; vm-run's own limit is 1200 s, FORCESCALE_VM_TIMEOUT), FORCESCALE_KT_REPEAT (runs the
// chosen scenarios this many times in one boot, default 1: flakiness shows over rounds, and
// the VM boots once; checks are numbered across rounds and named with their round),
// FORCESCALE_BINARY (another forcescale to test).

import Foundation
import KernelTestSupport
import Glibc

let environment = ProcessInfo.processInfo.environment
let programs = Programs.locate()

let scenarios: [(letter: String, title: String, run: (Programs) -> Void)] = [
    ("a", "live equals replay", LiveEqualsReplay.run),
    ("b", "peak -> rumble", PeakRumble.run),
    ("c", "SYN_DROPPED flood", SynDroppedFlood.run),
    ("d", "unplug/replug", UnplugReplug.run),
    ("e", "degenerate devices", DegenerateDevices.run),
    ("f", "no grab", NoGrab.run),
    ("g", "devices and rumble", DevicesAndRumble.run),
    ("h", "the daemon on a device", DaemonOnDevice.run),
    ("i", "the udev rule", UdevRule.run),
    ("j", "the daemon under its systemd unit's sandbox", SandboxedService.run),
    ("k", "record, then replay", RecordReplay.run),
    ("l", "the force log on a device", ForceLogOnDevice.run),
    ("m", "frames queued while the reader sleeps", QueuedFrames.run),
    ("n", "a touch already down when the device is opened", TouchAtOpen.run),
    ("o", "the Debian packages installed, used, removed and purged under systemd", DebianPackages.run),
    ("p", "rumbles timed against the device, and rumble --test", RumbleTiming.run),
    ("q", "two pressure devices served at once, one unplugged", TwoDevices.run),
    ("r", "devices made by the kernel's own HID drivers (uhid)", RealDrivers.run),
    ("s", "haptic clicks on FF_HAPTIC pressure pads, never PRESS or RELEASE", HapticClicks.run),
    ("t", "libinput record and libinput replay, Debian's own tools, against forcescale", LibinputTools.run),
    ("u", "a pen characterized live through forcescaled, weight by weight", PenCharacterizedLive.run),
    ("v", "the wall clock stepped back and forward an hour under a logging daemon", WallClockSteps.run),
    ("w", "real devices from the kernel's HID selftests, read right from their first touch (uhid)", KernelHIDDevices.run),
    ("x", "weigh --grab: evtest sees nothing of the pad while weighing, and again after (answered, and killed)", GrabbedWeighing.run),
]

let wanted = Set(CommandLine.arguments.dropFirst().map { $0.lowercased() })
if let unknown = wanted.first(where: { letter in !scenarios.contains { $0.letter == letter } }) {
    writeStandardError("usage: forcescale-kernel-tests [\(scenarios.map(\.letter).joined(separator: "|"))]...  (unknown scenario '\(unknown)')\n")
    exit(64)
}

let repeats = Int(environment["FORCESCALE_KT_REPEAT"] ?? "") ?? 1
guard repeats >= 1 else {
    writeStandardError("forcescale-kernel-tests: FORCESCALE_KT_REPEAT must be a whole number of at least 1\n")
    exit(64)
}

// Never hang: whatever is stuck, the watchdog ends the run and its children.
let watchdogSeconds = Double(environment["FORCESCALE_KT_TIMEOUT"] ?? "") ?? 900 * Double(repeats)
Thread.detachNewThread {
    Clock.sleep(watchdogSeconds)
    writeStandardOutput("Bail out! the watchdog fired after \(Int(watchdogSeconds)) s (FORCESCALE_KT_TIMEOUT); killing the children\n")
    Child.killAll()
    exit(2)
}

// What the run needs; without it nothing can be tested.
guard getuid() == 0 || access("/dev/uinput", R_OK | W_OK) == 0 else {
    writeStandardOutput("Bail out! needs root or write access to /dev/uinput (run it through scripts/kernel-tests)\n")
    exit(2)
}
guard access("/dev/uinput", R_OK | W_OK) == 0 else {
    writeStandardOutput("Bail out! /dev/uinput is not usable here (\(String(cString: strerror(errno)))); run it through scripts/kernel-tests, which boots a VM when needed\n")
    exit(2)
}
guard access(programs.forcescale, X_OK) == 0 else {
    writeStandardOutput("Bail out! \(programs.forcescale) is not there: run 'swift build' first\n")
    exit(2)
}

note("kernel \(RunningKernel.release), forcescale \(programs.forcescale)")

for round in 1...repeats {
    Report.shared.setRound(round, of: repeats)
    let inRound = repeats > 1 ? " (round \(round) of \(repeats))" : ""
    for scenario in scenarios where wanted.isEmpty || wanted.contains(scenario.letter) {
        note("--- \(scenario.letter): \(scenario.title)\(inRound)")
        let started = Clock.now()
        scenario.run(programs)
        Child.killAll()
        note("--- \(scenario.letter) took \(String(format: "%.1f", Clock.now() - started)) s\(inRound)")
    }
}

Child.killAll()
exit(Report.shared.finish())
