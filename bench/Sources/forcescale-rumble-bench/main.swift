// forcescale-rumble-bench: the latency of a PEAK's rumble on the real kernel, forcescaled next
// to a bare C reader of the same pad (the floor), in one run. Run it through bench/rumble
// (which builds release, compiles the floor and boots the VM when /dev/uinput is not usable):
//
//   scripts/kernel-tests .build/release/forcescale-rumble-bench [--presses N] [--blocks N] [--gap-ms MS]
//
// Two uinput pads, one after the other: one with FF_RUMBLE (16 effects) and, from kernel 6.18,
// a pressure pad with FF_HAPTIC (16 effects; both readers play a CLICK at 100 % on it). Each
// is read by one reader at a time, in --blocks (10) blocks each: `forcescaled --device NODE` (rumble on, its default; its PEAK lines read by one
// `forcescale watch --json`) and floor-rumble (bench/rumble-support/floor-rumble.c). The
// blocks alternate, and which reader goes first alternates too, so both see the same stretch
// of the host's load; two readers at once would instead measure which one the kernel wakes
// first. --presses (1000) presses to raw 255 per reader, each released once its play reached
// the pad, --gap-ms (20) apart. Per press:
//   - reported: from the event time of the frame that reached the threshold to the return of
//     the play's write(2), as each reader measures it (forcescaled: PEAK's rumble_latency;
//     the floor: every latency, printed on SIGTERM);
//   - at the pad: from the moment this process began writing the press frame to the time
//     uinput stamped on the EV_FF play (taken inside the reader's write), the same clock and
//     the same judge for both.
// Prints a report and `RESULT key=value` lines; exits 0 when it measured, 1 when it could not.

import Foundation
import Glibc
import KernelTestSupport

let usageLine = "usage: forcescale-rumble-bench [--presses N] [--blocks N] [--gap-ms MS]\n"
var presses = 1000
var blocks = 10
var gap = 0.020
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
        writeStandardError(usageLine)
        exit(64)
    }
    switch option {
    case "--presses": presses = value
    case "--blocks": blocks = value
    case "--gap-ms": gap = Double(value) / 1000
    default:
        writeStandardError(usageLine)
        exit(64)
    }
}
let pressGap = gap
let pressTotal = presses
let blockCount = blocks
guard presses % blocks == 0 else {
    writeStandardError("forcescale-rumble-bench: --presses must be a multiple of --blocks\n" + usageLine)
    exit(64)
}

let started = Clock.now()
func say(_ text: String) { writeStandardOutput(String(format: "[%6.1fs] ", Clock.now() - started) + text + "\n") }
func fail(_ text: String) -> Never {
    say(text)
    Child.killAll()
    exit(1)
}

/// Nearest-rank percentile of sorted values.
func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted.isEmpty ? .nan : sorted[min(sorted.count, max(1, Int((fraction * Double(sorted.count)).rounded(.up)))) - 1]
}

let environment = ProcessInfo.processInfo.environment
let here = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
let programs = Programs.locate()
let forcescaled = environment["FORCESCALE_DAEMON_BINARY"] ?? (programs.forcescale as NSString).deletingLastPathComponent + "/forcescaled"
let floorProgram = environment["FORCESCALE_FLOOR_RUMBLE"] ?? here + "/forcescale-floor-rumble"
let folder = NSTemporaryDirectory() + "forcescale-rumble-bench-\(getpid())"
try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: folder) }

/// The pad being measured.
nonisolated(unsafe) var pad: VirtualDevice!
let socket = folder + "/forcescaled.sock"
func daemonArguments() -> [String] { ["--device", pad.node, "--socket", socket, "--state-dir", folder + "/state"] }

/// One reader's figures, in milliseconds.
struct Figures {
    var reported: [Double] = []
    var atPad: [Double] = []
}

/// Presses the pad `count` times, each released once a play arrived.
/// - Returns: Each press's play as the pad saw it, in milliseconds after the frame's write.
func press(_ count: Int, reader: Child) -> [Double] {
    let playsBefore = pad.forceFeedback.plays
    var written: [Double] = []
    for press in 1...count {
        let before = Clock.now()
        pad.press(255, x: Int32(100 + press % 800), down: true)
        written.append(before)
        guard waitUntil(Limits.reaction, { pad.forceFeedback.plays >= playsBefore + press }) else {
            fail("press \(press): no play after \(Int(Limits.reaction)) s\n\(reader.tail())")
        }
        pad.release()
        Clock.sleep(pressGap)
    }
    let stamps = pad.forceFeedback.playStampTimes.dropFirst(playsBefore)
    return zip(stamps, written).map { ($0 - $1) * 1000 }
}

/// A block of the floor: started, pressed, stopped; its latencies from its output.
func floorBlock(_ count: Int) -> Figures {
    let uploads = pad.forceFeedback.uploads.count
    let floor: Child
    do { floor = try Child("floor-rumble", [floorProgram, pad.node]) } catch { fail("cannot start \(floorProgram): \(error)") }
    guard floor.waitForError("floor-rumble: effect", timeout: Limits.readerStart),
          waitUntil(Limits.reaction, { pad.forceFeedback.uploads.count > uploads }) else {
        fail("floor-rumble did not upload its effect:\n\(floor.tail())")
    }
    // A press first, not counted: both readers start their blocks warm.
    _ = press(1, reader: floor)
    let atPad = press(count, reader: floor)
    floor.signal(SIGTERM)
    guard floor.wait(Limits.exit) == .exited(0), waitUntil(Limits.exit, { floor.hasFinished }) else { fail("floor-rumble did not end cleanly:\n\(floor.tail())") }
    let reported = floor.output.compactMap(Double.init).dropFirst().map { $0 / 1000 }
    guard reported.count == count else { fail("floor-rumble reported \(reported.count) plays for \(count) presses") }
    return Figures(reported: reported, atPad: atPad)
}

/// A block of forcescaled: started with one watcher, pressed, stopped; its latencies from
/// the PEAK lines the watcher got.
func daemonBlock(_ count: Int) -> Figures {
    let daemon: Child
    do { daemon = try Child("forcescaled", [forcescaled] + daemonArguments()) } catch { fail("cannot start \(forcescaled): \(error)") }
    guard daemon.waitForError(" on PEAK through", timeout: Limits.readerStart), waitUntil(Limits.readerStart, { fileExists(socket) }) else {
        fail("forcescaled did not get ready to rumble:\n\(daemon.tail())")
    }
    let watcher: Child
    do { watcher = try Child("forcescale watch", [programs.forcescale, "watch", "--json", "--socket", socket], counting: ["\"class\":\"PEAK\""]) } catch {
        fail("cannot start forcescale watch: \(error)")
    }
    // Presses first, not counted, until one's PEAK line shows that the watcher is watching
    // (it prints nothing before the first line comes).
    let peak = "\"class\":\"PEAK\""
    var warmUps = 0
    repeat {
        guard warmUps < 20, watcher.isRunning else { fail("forcescale watch got no PEAK line:\n\(watcher.tail())\n\(daemon.tail())") }
        _ = press(1, reader: daemon)
        warmUps += 1
    } while !waitUntil(5, { watcher.count(peak) >= 1 })
    let counted = watcher.count(peak)
    let atPad = press(count, reader: daemon)
    guard waitUntil(Limits.reaction, { watcher.count(peak) >= counted + count }) else { fail("the watcher got \(watcher.count(peak) - counted) PEAK lines of \(count)") }
    watcher.stop(SIGTERM, timeout: Limits.exit)
    daemon.stop(SIGTERM, timeout: Limits.exit)
    let reported = watcher.output.filter { $0.contains(peak) }.dropFirst(counted).compactMap { line -> Double? in
        guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else { return nil }
        return (object["rumble_latency"] as? NSNumber).map { $0.doubleValue * 1000 }
    }
    guard reported.count == count else { fail("forcescaled reported \(reported.count) rumble latencies for \(count) presses") }
    return Figures(reported: reported, atPad: atPad)
}

/// Both readers on one pad, in alternating blocks.
func measure(_ table: DeviceTable, _ description: String) -> (floor: Figures, daemon: Figures) {
    do { pad = try VirtualDevice(table) } catch { fail("cannot create the FF pad: \(error)") }
    defer { pad.destroy() }
    say("FF pad '\(table.name)' at \(pad.node): \(description)")
    say("forcescaled \(daemonArguments().joined(separator: " ")), and \(floorProgram) \(pad.node): \(blockCount) blocks of \(pressTotal / blockCount) presses each, alternating")
    var floorFigures = Figures()
    var daemonFigures = Figures()
    for block in 0..<blockCount {
        for runsFloor in block % 2 == 0 ? [true, false] : [false, true] {
            let figures = runsFloor ? floorBlock(pressTotal / blockCount) : daemonBlock(pressTotal / blockCount)
            if runsFloor {
                floorFigures.reported += figures.reported
                floorFigures.atPad += figures.atPad
            } else {
                daemonFigures.reported += figures.reported
                daemonFigures.atPad += figures.atPad
            }
        }
        say("block \(block + 1) of \(blockCount) done")
    }
    return (floorFigures, daemonFigures)
}

func row(_ name: String, _ values: [Double]) -> String {
    let sorted = values.sorted()
    return name.padding(toLength: 40, withPad: " ", startingAt: 0)
        + String(format: "%8.3f %8.3f %8.3f", percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last ?? .nan)
}

/// FF_HAPTIC reaches a uinput device from kernel 6.18 (before, ff-core refuses the type).
let haptics = RunningKernel.isAtLeast(6, 18)
var measured = [("FF_RUMBLE", "rumble", measure(Tables.rumblePad, "ABS_PRESSURE 0-255, FF_RUMBLE and FF_GAIN, 16 effects"))]
if haptics {
    measured.append(("FF_HAPTIC (CLICK)", "haptic", measure(Tables.hapticPad, "a pressure pad, ABS_PRESSURE 0-255 at 40 units/g, FF_HAPTIC, 16 effects")))
} else {
    say("no FF_HAPTIC row: kernel \(RunningKernel.release) is older than 6.18 (FORCESCALE_KERNEL=newest bench/rumble measures it)")
}
print("")
print("Rumble latency over \(presses) PEAKs each, ms".padding(toLength: 40, withPad: " ", startingAt: 0) + "     p50      p99      max")
for (title, _, figures) in measured {
    print("\(title) pad, reported: frame time -> play accepted")
    print(row("  floor-rumble (C)", figures.floor.reported))
    print(row("  forcescaled (PEAK rumble_latency)", figures.daemon.reported))
    print("\(title) pad, at the pad: frame written -> play stamped")
    print(row("  floor-rumble (C)", figures.floor.atPad))
    print(row("  forcescaled", figures.daemon.atPad))
}
print("")
for (_, key, figures) in measured {
    let suffix = key == "rumble" ? "" : "_" + key
    let floorP99 = percentile(figures.floor.reported.sorted(), 0.99)
    let daemonP99 = percentile(figures.daemon.reported.sorted(), 0.99)
    print("RESULT floor_p99_ms\(suffix)=\(String(format: "%.3f", floorP99))")
    print("RESULT forcescaled_p99_ms\(suffix)=\(String(format: "%.3f", daemonP99))")
    print("RESULT ratio_reported\(suffix)=\(String(format: "%.2f", daemonP99 / floorP99))")
    print("RESULT ratio_at_pad\(suffix)=\(String(format: "%.2f", percentile(figures.daemon.atPad.sorted(), 0.99) / percentile(figures.floor.atPad.sorted(), 0.99)))")
}
exit(0)
