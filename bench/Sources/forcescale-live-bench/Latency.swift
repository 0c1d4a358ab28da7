import CEvdev
import Foundation
import Glibc
import KernelTestSupport

/// (3) PEAK-to-play latency as the device sees it: from the write of a press frame to the
/// moment the uinput side reads the EV_FF play that `forcescale read` sends back.
enum LatencyBench {
    struct Result {
        var p50: Double  // ms
        var p99: Double
        var max: Double
        var missed: Int
    }

    static func run(_ settings: Settings, _ programs: Programs) -> Result? {
        let pad: VirtualDevice
        do { pad = try VirtualDevice(Tables.rumblePad) } catch {
            say("cannot create the FF pad: \(error)")
            return nil
        }
        defer { pad.destroy() }
        say("FF pad '\(Tables.rumblePad.name)' at \(pad.node): the same axes and keys, plus EV_FF (FF_RUMBLE, FF_GAIN, 16 effects)")

        let arguments = ["read", "--json", "--device", pad.node]
        let reader: Child
        do {
            reader = try Child("forcescale", [programs.forcescale] + arguments, outputFile: "/dev/null")
        } catch {
            say("cannot start forcescale: \(error)")
            return nil
        }
        defer { reader.stop(SIGKILL, timeout: 5) }
        say("started: forcescale \(arguments.joined(separator: " ")) > /dev/null   (pid \(reader.pid))")
        guard reader.waitForError("forcescale: rumble on PEAK through", timeout: Limits.readerStart),
              waitUntil(Limits.reaction, { pad.forceFeedback.uploads.count == 1 }),
              Proc.waitUntilIdle(reader.pid, in: Proc.epollCalls, timeout: Limits.readerStart)
        else {
            say("forcescale did not get ready to rumble (\(pad.forceFeedback.uploads.count) uploads):\n\(reader.tail())")
            return nil
        }

        func press(_ index: Int) -> [input_event] {
            [
                inputEvent(EV_ABS, ABS_X, Int32(100 + index % 800)), inputEvent(EV_ABS, ABS_Y, 500),
                inputEvent(EV_ABS, ABS_PRESSURE, 255), inputEvent(EV_KEY, BTN_TOUCH, 1),
                inputEvent(EV_KEY, BTN_TOOL_FINGER, 1), inputEvent(EV_SYN, SYN_REPORT, 0),
            ]
        }
        let release = [
            inputEvent(EV_ABS, ABS_PRESSURE, 0), inputEvent(EV_KEY, BTN_TOUCH, 0), inputEvent(EV_KEY, BTN_TOOL_FINGER, 0),
            inputEvent(EV_SYN, SYN_REPORT, 0),
        ]

        say("\(settings.presses) presses to raw 255, each released once its play arrived, \(Int(settings.pressGap * 1000)) ms apart...")
        var sent: [Double] = []  // when each press frame's write began
        var missed = 0
        let started = Clock.now()
        for index in 0..<settings.presses {
            let frame = press(index)
            let before = Clock.now()
            frame.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
            sent.append(before)
            if !waitUntil(Limits.reaction, { pad.forceFeedback.plays > index }) {
                missed += 1
                say("press \(index + 1): no play within \(Int(Limits.reaction)) s (\(pad.forceFeedback.plays) plays so far)")
                if missed >= 3 || !reader.isRunning { break }
            }
            release.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
            Clock.sleep(settings.pressGap)
        }
        let took = Clock.now() - started
        let log = pad.forceFeedback
        let count = min(sent.count, log.playReadTimes.count)
        guard missed == 0, count == settings.presses else {
            say("only \(log.playReadTimes.count) plays for \(sent.count) presses; no latency figures")
            return nil
        }
        let seen = (0..<count).map { (log.playReadTimes[$0] - sent[$0]) * 1000 }
        let stamped = (0..<count).map { (log.playStampTimes[$0] - sent[$0]) * 1000 }
        let latency = Distribution(seen)
        let kernel = Distribution(stamped)
        let status = reader.stop(SIGTERM, timeout: 30)

        out("")
        out("(3) PEAK-to-play latency: \(count) presses to raw 255 on the FF pad (forcescale read --json, rumble on), \(format(took, 1)) s")
        out("  from the press frame's write(2) to the uinput side's read of the EV_FF play (CLOCK_MONOTONIC, one process):")
        out("    p50 \(format(latency.percentile(50), 2)) ms   p90 \(format(latency.percentile(90), 2)) ms   p99 \(format(latency.percentile(99), 2)) ms   max \(format(latency.max, 2)) ms   min \(format(latency.min, 2)) ms   (first press \(format(seen[0], 2)) ms)")
        out("  to the kernel's stamp on the play event (forcescale's write reaching uinput):")
        out("    p50 \(format(kernel.percentile(50), 2)) ms   p90 \(format(kernel.percentile(90), 2)) ms   p99 \(format(kernel.percentile(99), 2)) ms   max \(format(kernel.max, 2)) ms")
        out("  plays \(log.plays), uploads \(log.uploads.count), FF requests unanswered \(log.problems.count); forcescale \(status.map(\.description) ?? "did not stop on SIGTERM")")
        return Result(p50: latency.percentile(50), p99: latency.percentile(99), max: latency.max, missed: missed)
    }
}
