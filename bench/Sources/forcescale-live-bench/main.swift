// forcescale-live-bench: `forcescale read` and `forcescaled` on the real kernel, next to the
// kernel's read floor, evtest and python-evdev. Run it through bench/live (which builds release,
// compiles the floor reader and boots the VM when /dev/uinput is not usable here):
//
//   scripts/kernel-tests .build/release/forcescale-live-bench [--frames N] [--rounds N] [--rate HZ]
//       [--idle SECONDS] [--presses N] [--gap-ms MS] [--evtest-output FILE] [--writer-fifo PRIORITY]
//       [--strace-frames N] [--strace-rate HZ] [--touch-pages N,N...] [--call-functions N,N...]
//       [--call-pages N,N...] [--send-lines N,N...] [--all-at-once] [--timeout SECONDS]
//
// (1) CPU per event: on one uinput pad, at once, `floor-read NODE` (bench/live-support/floor-read.c:
//     a blocking read(2) loop, the floor), `evtest NODE`, a python-evdev read_loop,
//     `forcescale read --json --no-rumble --interval-ms 10 --device NODE` and `forcescaled
//     --device NODE --interval-ms 10 --no-rumble` with one `forcescale watch --json` client, every
//     standard output on /dev/null (the watcher's is read by this bench), while this process
//     writes --frames (50,000) frames of ABS_PRESSURE + SYN_REPORT at --rate (1000) Hz; utime +
//     stime of each over the stream, per event, and each against the floor.
// (1b) System calls per frame: strace -c -f attached to each reader in turn for
//     --strace-frames (3000) frames at --strace-rate (1000) Hz (0 frames: skipped).
// The readers run in groups, each group next to its own floor reader on a pad of its own:
// evtest and python-evdev; forcescale read; forcescaled and its watcher (all at once would
// need more CPU than the emulated guest has at 1 kHz). The groups' rounds interleave: round 1
// of every group, then round 2 of every group in the reverse order, and so on, so that a
// group and the one it is compared with see the same stretch of the host's load.
// --all-at-once puts every reader in one group instead, beside one floor: the guest then has
// less CPU than they need together, and the comparison shows what that does to the ratios.
// With FORCESCALE_BASELINE_BINARY and FORCESCALE_BASELINE_DAEMON_BINARY (a build from before a
// change), that forcescale read and forcescaled join the groups of the new ones: the same pad,
// the same rounds and the same floor for both.
// (2) Idle: the same readers, --idle (10) s with no events: context switches from /proc.
// (3) Latency: `forcescale read --json --device NODE` (rumble on) on a pad with FF_RUMBLE;
//     --presses (300) presses to raw 255; press write -> EV_FF play read on the uinput side.
//
// The forcescale measured is the one beside this executable, or FORCESCALE_BINARY. Prints a
// report and `RESULT key=value` lines for bench/live; exits 0 when every part ran (whether
// or not a goal was met), 1 when a part could not be measured, 2 when it cannot run here.

import Foundation
import Glibc
import KernelTestSupport

struct Settings {
    var frames = 50_000
    var rounds = 3
    var rateHz = 1000
    var idleSeconds = 10.0
    var settleSeconds = 1.0
    var presses = 300
    var pressGap = 0.05
    var evtestOutput = "/dev/null"
    var timeout = 900.0
    /// SCHED_FIFO priority of the writer during the stream; 0 leaves it SCHED_OTHER.
    var writerPriority = 50
    /// Frames streamed while strace counts each reader's system calls; 0 skips that part.
    var straceFrames = 3000
    /// The rate of that stream (a slower one lets a traced reader keep up).
    var straceRateHz = 1000
    /// Extra epoll floors beside forcescale read, each doing one thing more per wake-up
    /// (floor-read --epoll --touch-pages N, --call-functions N, --call-pages N); empty: none.
    var floorVariants: [FloorVariant] = []
    /// Every reader in one group, on one pad beside one floor (the shape of a harness that
    /// runs them all at once): to compare with the groups, not to judge the goals by.
    var allAtOnce = false
}

/// An epoll floor that does one thing more per wake-up, `count` times.
struct FloorVariant: Equatable {
    enum Kind: String {
        /// Writes a byte in each of `count` pages of its memory.
        case touchPages = "touch"
        /// Calls `count` distinct functions packed into a page or two of code.
        case callFunctions = "calls"
        /// Calls `count` distinct functions, each on a code page of its own.
        case callPages = "callpages"
        /// Sends a line to a client process of its own after every `count`-th frame.
        case sendLines = "send"
    }

    var kind: Kind
    var count: Int

    /// The reader's name in the tables, e.g. `touch-128`.
    var key: String { "\(kind.rawValue)-\(count)" }

    var option: String {
        switch kind {
        case .touchPages: "--touch-pages"
        case .callFunctions: "--call-functions"
        case .callPages: "--call-pages"
        case .sendLines: "--send-lines"
        }
    }

    var isValid: Bool { kind == .touchPages ? (1...65536).contains(count) : (1...256).contains(count) }
}

let benchStarted = Clock.now()

/// A line on standard output, unbuffered: a run cut short by the VM's timeout keeps every line.
func out(_ text: String) { writeStandardOutput(text + "\n") }

/// A progress line on standard output, with the time since the start.
func say(_ text: String) {
    let prefix = String(format: "[%6.1fs] ", Clock.now() - benchStarted)
    out(text.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }.joined(separator: "\n"))
}

func usage(_ problem: String) -> Never {
    FileHandle.standardError.write(Data("forcescale-live-bench: \(problem)\nusage: forcescale-live-bench [--frames N] [--rounds N] [--rate HZ] [--idle SECONDS] [--presses N] [--gap-ms MS] [--evtest-output FILE] [--writer-fifo PRIORITY] [--strace-frames N] [--strace-rate HZ] [--touch-pages N,N...] [--call-functions N,N...] [--call-pages N,N...] [--send-lines N,N...] [--all-at-once] [--timeout SECONDS]\n".utf8))
    exit(64)
}

func parseSettings() -> Settings {
    var settings = Settings()
    var arguments = CommandLine.arguments.dropFirst()
    while let option = arguments.popFirst() {
        if option == "--all-at-once" {
            settings.allAtOnce = true
            continue
        }
        guard let value = arguments.popFirst() else { usage("\(option) needs a value") }
        switch option {
        case "--frames": settings.frames = Int(value) ?? 0
        case "--rounds": settings.rounds = Int(value) ?? 0
        case "--rate": settings.rateHz = Int(value) ?? 0
        case "--idle": settings.idleSeconds = Double(value) ?? -1
        case "--presses": settings.presses = Int(value) ?? 0
        case "--gap-ms": settings.pressGap = (Double(value) ?? -1) / 1000
        case "--evtest-output": settings.evtestOutput = value
        case "--timeout": settings.timeout = Double(value) ?? 0
        case "--writer-fifo": settings.writerPriority = Int(value) ?? -1
        case "--strace-frames": settings.straceFrames = Int(value) ?? -1
        case "--strace-rate": settings.straceRateHz = Int(value) ?? 0
        case "--touch-pages": settings.floorVariants += value.split(separator: ",").map { FloorVariant(kind: .touchPages, count: Int($0) ?? 0) }
        case "--call-functions": settings.floorVariants += value.split(separator: ",").map { FloorVariant(kind: .callFunctions, count: Int($0) ?? 0) }
        case "--call-pages": settings.floorVariants += value.split(separator: ",").map { FloorVariant(kind: .callPages, count: Int($0) ?? 0) }
        case "--send-lines": settings.floorVariants += value.split(separator: ",").map { FloorVariant(kind: .sendLines, count: Int($0) ?? 0) }
        default: usage("unknown option \(option)")
        }
    }
    guard settings.frames > 1, settings.rounds > 0, settings.rateHz > 0, settings.rateHz <= 100_000, settings.idleSeconds >= 0, settings.presses > 0,
          settings.pressGap >= 0, settings.timeout > 0, settings.straceFrames >= 0, settings.straceRateHz > 0, settings.straceRateHz <= 100_000,
          (0...99).contains(settings.writerPriority), settings.floorVariants.allSatisfy(\.isValid)
    else { usage("every value must be a positive number") }
    return settings
}
let settings = parseSettings()

// Never hang: the watchdog ends the run and its children.
let watchdog = settings.timeout
Thread.detachNewThread {
    Clock.sleep(watchdog)
    out("forcescale-live-bench: the watchdog fired after \(Int(watchdog)) s (--timeout); killing the children")
    Child.killAll()
    exit(2)
}

let programs = Programs.locate()
guard access("/dev/uinput", R_OK | W_OK) == 0 else {
    out("forcescale-live-bench: /dev/uinput is not usable here (\(String(cString: strerror(errno)))); run it through bench/live or scripts/kernel-tests, which boot a VM when needed")
    exit(2)
}
guard access(programs.forcescale, X_OK) == 0 else {
    out("forcescale-live-bench: \(programs.forcescale) is not there: run 'swift build -c release --product forcescale' first")
    exit(2)
}
guard access(programs.forcescaled, X_OK) == 0 else {
    out("forcescale-live-bench: \(programs.forcescaled) is not there: run 'swift build -c release --product forcescaled' first")
    exit(2)
}
guard access(programs.floorReader, X_OK) == 0 else {
    out("forcescale-live-bench: the floor reader \(programs.floorReader) is not there: bench/live compiles it from bench/live-support/floor-read.c")
    exit(2)
}
if let baseline = programs.baseline {
    guard access(baseline.forcescale, X_OK) == 0, access(baseline.forcescaled, X_OK) == 0 else {
        out("forcescale-live-bench: FORCESCALE_BASELINE_BINARY \(baseline.forcescale) or FORCESCALE_BASELINE_DAEMON_BINARY \(baseline.forcescaled) is not an executable")
        exit(2)
    }
    say("baseline: \(baseline.forcescale), \(baseline.forcescaled)")
}
guard let evtest = programs.evtest else {
    out("forcescale-live-bench: evtest is not installed (apt-get install evtest)")
    exit(2)
}

var kernel = utsname()
uname(&kernel)
let release = withUnsafeBytes(of: &kernel.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
let model = Proc.text("/proc/cpuinfo")?.split(separator: "\n").first { $0.hasPrefix("model name") }
    .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "?"
let isVM = access("/sys/bus/virtio", F_OK) == 0 ? ", virtio bus present (a VM)" : ""
say("kernel \(release), \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) CPUs (\(model))\(isVM)")
say("forcescale \(programs.forcescale)")
say("forcescaled \(programs.forcescaled)")
say("floor-read \(programs.floorReader)")
say("evtest \(evtest)")

let stream = StreamBench.run(settings, programs, evtest: evtest)
Child.killAll()
out("")
let latency = LatencyBench.run(settings, programs)
Child.killAll()

// For bench/live, which prints the verdicts.
out("")
if let stream {
    for (key, micros) in stream.microsPerEvent.sorted(by: { $0.key < $1.key }) {
        out("RESULT cpu_\(key)_us_per_event=\(format(micros, 2))")
        out("RESULT cpu_floor_of_\(key)_us_per_event=\(format(stream.floorMicrosPerEvent[key] ?? .nan, 2))")
        if let ratio = stream.ratio(key) { out("RESULT ratio_\(key)=\(format(ratio, 3))") }
        if let ratio = stream.runRatio(key) { out("RESULT run_ratio_\(key)=\(format(ratio, 3))") }
        if let rounds = stream.roundRatios[key], !rounds.isEmpty {
            out("RESULT round_ratios_\(key)=" + rounds.sorted().map { format($0, 2) }.joined(separator: ","))
            out("RESULT median_ratio_\(key)=\(format(StreamBench.median(rounds.sorted()), 3))")
        }
    }
    for (key, calls) in stream.syscallsPerFrame.sorted(by: { $0.key < $1.key }) {
        out("RESULT syscalls_per_frame_\(key)=\(format(calls, 2))")
        out("RESULT syscalls_per_wakeup_\(key)=\(format(stream.syscallsPerWakeUp[key] ?? .nan, 2))")
    }
    out("RESULT stream_rate_hz=\(format(stream.achievedRate, 1))")
    out("RESULT drops=\(stream.dropsSeen ? 1 : 0)")
    for (key, switches) in stream.idleSwitches.sorted(by: { $0.key < $1.key }) { out("RESULT idle_switches_\(key)=\(switches)") }
}
if let latency {
    out("RESULT latency_p50_ms=\(format(latency.p50, 3))")
    out("RESULT latency_p99_ms=\(format(latency.p99, 3))")
    out("RESULT latency_max_ms=\(format(latency.max, 3))")
}
say("done")
exit(stream != nil && latency != nil ? 0 : 1)
