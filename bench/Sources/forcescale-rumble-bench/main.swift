// forcescale-rumble-bench: the latency of a PEAK's rumble on the real kernel, forcescaled next
// to a bare C reader of the same pad (the floor), in one run. Run it through bench/rumble
// (which builds release, compiles the floor and boots the VM when /dev/uinput is not usable):
//
//   scripts/kernel-tests .build/release/forcescale-rumble-bench [--presses N] [--gap-ms MS]
//
// One uinput pad with FF_RUMBLE (16 effects) is read at once by `forcescaled --device NODE`
// (rumble on, its default) and by floor-rumble (bench/rumble-support/floor-rumble.c), each with
// an effect of its own. --presses (1000) presses to raw 255, each released once both plays
// have reached the pad, --gap-ms (20) apart. Per press and reader:
//   - reported: from the event time of the frame that reached the threshold to the return of
//     the play's write(2), as each reader measures it (forcescaled: STATUS's rumbles, p50 and
//     p99 kept in 1 % buckets; the floor: every latency, printed on SIGTERM);
//   - at the pad: from the moment this process began writing the press frame to the time
//     uinput stamped on the reader's EV_FF play (taken inside that reader's write), the same
//     clock and the same judge for both.
// Prints a report and `RESULT key=value` lines; exits 0 when it measured, 1 when it could not.

import Foundation
import Glibc
import KernelTestSupport

var presses = 1000
var gap = 0.020
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    guard let value = arguments.popFirst().flatMap(Int.init), value > 0 else {
        writeStandardError("usage: forcescale-rumble-bench [--presses N] [--gap-ms MS]\n")
        exit(64)
    }
    switch option {
    case "--presses": presses = value
    case "--gap-ms": gap = Double(value) / 1000
    default:
        writeStandardError("usage: forcescale-rumble-bench [--presses N] [--gap-ms MS]\n")
        exit(64)
    }
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

let pad: VirtualDevice
do { pad = try VirtualDevice(Tables.rumblePad) } catch { fail("cannot create the FF pad: \(error)") }
say("FF pad '\(Tables.rumblePad.name)' at \(pad.node): ABS_PRESSURE 0-255, FF_RUMBLE and FF_GAIN, 16 effects")

// The floor first, then the daemon: the pad's first upload is the floor's effect.
let floor: Child
do { floor = try Child("floor-rumble", [floorProgram, pad.node]) } catch { fail("cannot start \(floorProgram): \(error)") }
guard floor.waitForError("floor-rumble: effect", timeout: Limits.readerStart), pad.forceFeedback.uploads.count == 1 else {
    fail("floor-rumble did not upload its effect:\n\(floor.tail())")
}
let socket = folder + "/forcescaled.sock"
let daemonArguments = ["--device", pad.node, "--socket", socket, "--state-dir", folder + "/state"]
let daemon: Child
do { daemon = try Child("forcescaled", [forcescaled] + daemonArguments) } catch { fail("cannot start \(forcescaled): \(error)") }
guard daemon.waitForError("rumble on PEAK through", timeout: Limits.readerStart),
      waitUntil(Limits.reaction, { pad.forceFeedback.uploads.count == 2 }) else {
    fail("forcescaled did not get ready to rumble:\n\(daemon.tail())")
}
let floorEffect = Int(pad.forceFeedback.uploads[0].effectID)
let daemonEffect = Int(pad.forceFeedback.uploads[1].effectID)
say("floor-rumble plays effect \(floorEffect); forcescaled \(daemonArguments.joined(separator: " ")) plays effect \(daemonEffect)")

say("\(presses) presses to raw 255, each released once both plays reached the pad, \(Int(gap * 1000)) ms apart...")
var written: [Double] = []
for press in 1...presses {
    let before = Clock.now()
    pad.press(255, x: Int32(100 + press % 800), down: true)
    written.append(before)
    guard waitUntil(Limits.reaction, { pad.forceFeedback.plays >= 2 * press }) else {
        fail("press \(press): \(pad.forceFeedback.plays) plays after \(Int(Limits.reaction)) s, expected \(2 * press)\n\(daemon.tail())\n\(floor.tail())")
    }
    pad.release()
    Clock.sleep(gap)
}

// The pad's view: each press's play by each effect, in order.
func arrivals(of effect: Int, in log: ForceFeedbackLog, written: [Double]) -> [Double] {
    let stamps = zip(log.playEffects, log.playStampTimes).filter { $0.0 == effect }.map(\.1)
    return zip(stamps, written).map { ($0 - $1) * 1000 }.sorted()
}
let floorArrivals = arrivals(of: floorEffect, in: pad.forceFeedback, written: written)
let daemonArrivals = arrivals(of: daemonEffect, in: pad.forceFeedback, written: written)

// What each reader reports.
let (statusEnded, status) = runToEnd("forcescale status", [programs.forcescale, "status", "--json", "--socket", socket], timeout: Limits.command)
guard statusEnded == .exited(0), let statusLine = status?.output.first,
      let object = (try? JSONSerialization.jsonObject(with: Data(statusLine.utf8))) as? [String: Any],
      let rumbles = object["rumbles"] as? [String: Any] else {
    fail("no rumbles in forcescaled's STATUS: \(status?.outputText ?? "") \(status?.errorText ?? "")")
}
func milliseconds(_ key: String, of rumbles: [String: Any]) -> Double { ((rumbles[key] as? NSNumber)?.doubleValue ?? .nan) * 1000 }
let daemonReported = (p50: milliseconds("p50", of: rumbles), p99: milliseconds("p99", of: rumbles), max: milliseconds("max", of: rumbles))
daemon.stop(SIGTERM, timeout: Limits.exit)
floor.signal(SIGTERM)
guard floor.wait(Limits.exit) == .exited(0), waitUntil(Limits.exit, { floor.hasFinished }) else { fail("floor-rumble did not end cleanly:\n\(floor.tail())") }
let floorReported = floor.output.compactMap(Double.init).map { $0 / 1000 }.sorted()
guard floorReported.count == presses, floorArrivals.count == presses, daemonArrivals.count == presses,
      (rumbles["played"] as? Int) == presses else {
    fail("counts differ: floor reported \(floorReported.count), forcescaled played \(rumbles["played"] ?? "?"), plays at the pad \(floorArrivals.count) and \(daemonArrivals.count), presses \(presses)")
}

func row(_ name: String, _ p50: Double, _ p99: Double, _ max: Double) -> String {
    name.padding(toLength: 34, withPad: " ", startingAt: 0) + String(format: "%8.3f %8.3f %8.3f", p50, p99, max)
}
let floorRow = (percentile(floorReported, 0.5), percentile(floorReported, 0.99), floorReported.last!)
print("")
print("Rumble latency over \(presses) PEAKs, ms".padding(toLength: 34, withPad: " ", startingAt: 0) + "     p50      p99      max")
print("reported: frame time -> play accepted")
print(row("  floor-rumble (C)", floorRow.0, floorRow.1, floorRow.2))
print(row("  forcescaled (STATUS)", daemonReported.p50, daemonReported.p99, daemonReported.max))
print("at the pad: frame written -> play stamped")
print(row("  floor-rumble (C)", percentile(floorArrivals, 0.5), percentile(floorArrivals, 0.99), floorArrivals.last!))
print(row("  forcescaled", percentile(daemonArrivals, 0.5), percentile(daemonArrivals, 0.99), daemonArrivals.last!))
print("")
print("RESULT floor_p99_ms=\(String(format: "%.3f", floorRow.1))")
print("RESULT forcescaled_p99_ms=\(String(format: "%.3f", daemonReported.p99))")
print("RESULT ratio_reported=\(String(format: "%.2f", daemonReported.p99 / floorRow.1))")
print("RESULT ratio_at_pad=\(String(format: "%.2f", percentile(daemonArrivals, 0.99) / percentile(floorArrivals, 0.99)))")
pad.destroy()
exit(0)
