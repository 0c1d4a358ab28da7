import CEvdev
import Foundation
import Glibc
import KernelTestSupport

/// (1) CPU per event of `forcescale read --json > /dev/null` next to `evtest > /dev/null` on
/// one paced uinput stream, and (2) their wake-ups while no event comes.
enum StreamBench {
    struct Result {
        var cpuRatio: Double
        var forcescaleMicrosPerEvent: Double
        var evtestMicrosPerEvent: Double
        var achievedRate: Double
        var dropsSeen: Bool
        var forcescaleIdleSwitches: Int
        var evtestIdleSwitches: Int
    }

    static func run(_ settings: Settings, _ programs: Programs, evtest: String) -> Result? {
        let table = Tables.singleTouchPad("forcescale live bench pad", pressure: 0...255, product: 0x0030)
        let pad: VirtualDevice
        do { pad = try VirtualDevice(table) } catch {
            say("cannot create the pad: \(error)")
            return nil
        }
        defer { pad.destroy() }
        say("pad '\(table.name)' at \(pad.node): ABS_X, ABS_Y, ABS_PRESSURE 0-255, BTN_TOUCH, BTN_TOOL_FINGER, BTN_LEFT")

        // --- Both readers, output to /dev/null ---------------------------------------------
        let readArguments = ["read", "--json", "--no-rumble", "--interval-ms", "10", "--device", pad.node]
        let forcescale: Child
        let watcher: Child
        do {
            forcescale = try Child("forcescale", [programs.forcescale] + readArguments, outputFile: "/dev/null")
            watcher = try Child("evtest", [evtest, pad.node], outputFile: settings.evtestOutput)
        } catch {
            say("cannot start the readers: \(error)")
            return nil
        }
        defer {
            forcescale.stop(SIGKILL, timeout: 5)
            watcher.stop(SIGKILL, timeout: 5)
        }
        say("started: forcescale \(readArguments.joined(separator: " ")) > /dev/null   (pid \(forcescale.pid))")
        say("started: evtest \(pad.node) > \(settings.evtestOutput)   (pid \(watcher.pid))")
        guard forcescale.waitForError("forcescale: reading ", timeout: Limits.readerStart) else {
            say("forcescale did not start reading: \(forcescale.ended.map(\.description) ?? "no notice")\n\(forcescale.tail())")
            return nil
        }
        let ready = waitUntil(Limits.readerStart) { Proc.hasOpen(watcher.pid, pad.node) || !watcher.isRunning }
        guard ready, watcher.isRunning else {
            say("evtest did not open \(pad.node): \(watcher.ended.map(\.description) ?? "timeout")\n\(watcher.tail())")
            return nil
        }

        // The touch goes down before the measurement and stays down throughout.
        let touchDown = [
            inputEvent(EV_ABS, ABS_X, 500), inputEvent(EV_ABS, ABS_Y, 500), inputEvent(EV_ABS, ABS_PRESSURE, 5),
            inputEvent(EV_KEY, BTN_TOUCH, 1), inputEvent(EV_KEY, BTN_TOOL_FINGER, 1), inputEvent(EV_SYN, SYN_REPORT, 0),
        ]
        touchDown.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
        let idleF = Proc.waitUntilIdle(forcescale.pid, in: Proc.epollCalls, timeout: Limits.readerStart)
        let idleE = Proc.waitUntilIdle(watcher.pid, in: Proc.selectCalls, timeout: Limits.readerStart)
        guard idleF, idleE else {
            say("the readers did not settle (blocked in epoll_wait / select with no CPU for 0.5 s): forcescale \(idleF), evtest \(idleE)")
            return nil
        }

        // --- The stream ---------------------------------------------------------------------
        // A frame is ABS_PRESSURE + SYN_REPORT. Pressures step by 7 modulo 221 from 10: always
        // different from the previous frame's (the input core drops a repeated value), and
        // never above 230 (no PEAK). The rounds continue one sequence.
        let frames = settings.frames
        let eventsPerFrame = 2
        let expectedEvents = frames * eventsPerFrame
        let period = 1_000_000_000 / settings.rateHz  // ns
        let priority = settings.writerPriority > 0 ? "SCHED_FIFO priority \(settings.writerPriority)" : "SCHED_OTHER"
        let ticks = Proc.ticksPerSecond

        out("")
        out("(1) CPU per event: \(settings.rounds) round(s) of \(frames) frames = \(expectedEvents) events (ABS_PRESSURE + SYN_REPORT) at \(settings.rateHz) Hz")
        out("  one write(2) per frame at absolute CLOCK_MONOTONIC deadlines (clock_nanosleep); the writer runs \(priority)")
        // The pace the emulated timer allows on its own: the same sleeps, nothing written.
        let calibration = Distribution(withWriterPriority(settings.writerPriority) { pacedLoop(count: 500, period: period) { _ in } })
        out("  the timer alone (500 sleeps, nothing written, readers idle): wake-ups late by p50 \(format(calibration.percentile(50) / 1000, 3)) ms, p99 \(format(calibration.percentile(99) / 1000, 3)) ms, max \(format(calibration.max / 1000, 1)) ms")

        struct Totals { var forcescale = 0; var evtest = 0; var events = 0 }
        var totals = Totals()
        var ratios: [Double] = []
        var rates: [Double] = []
        var dropsSeen = false
        for round in 0..<settings.rounds {
            var buffer = [input_event]()
            buffer.reserveCapacity(expectedEvents)
            for index in (round * frames)..<((round + 1) * frames) {
                buffer.append(inputEvent(EV_ABS, ABS_PRESSURE, Int32(10 + index * 7 % 221)))
                buffer.append(inputEvent(EV_SYN, SYN_REPORT, 0))
            }
            let resyncsBefore = forcescale.errorCount("SYN_DROPPED")
            let beforeF = ProcessSample(forcescale.pid)!
            let beforeE = ProcessSample(watcher.pid)!
            let beforeW = ProcessSample(getpid())!
            say("round \(round + 1): streaming \(frames) frames...")

            var writeFailures = 0
            let firstWrite = Clock.now()
            let lateness = withWriterPriority(settings.writerPriority) {
                buffer.withUnsafeBufferPointer { events in
                    pacedLoop(count: frames, period: period) { index in
                        let frame = UnsafeBufferPointer(rebasing: events[(index * eventsPerFrame)..<((index + 1) * eventsPerFrame)])
                        if !writeEvents(pad.descriptor, frame) { writeFailures += 1 }
                    }
                }
            }
            let streamSeconds = Clock.now() - firstWrite
            let achieved = Double(frames) / streamSeconds
            rates.append(achieved)
            let afterW = ProcessSample(getpid())!

            // Let both finish what the stream gave them (forcescale's throttle timer fires once
            // more, 10 ms after the last event), then read their CPU time, still running.
            let expectedBytes = beforeE.readBytes + expectedEvents * MemoryLayout<input_event>.stride
            waitUntil(60) { (ProcessSample(watcher.pid)?.readBytes ?? 0) >= expectedBytes || !watcher.isRunning }
            Proc.waitUntilIdle(forcescale.pid, in: Proc.epollCalls, timeout: 60)
            Proc.waitUntilIdle(watcher.pid, in: Proc.selectCalls, timeout: 60)
            let afterF = ProcessSample(forcescale.pid)!
            let afterE = ProcessSample(watcher.pid)!

            let late = Distribution(lateness)
            let lateFrames = lateness.filter { $0 > Double(period) / 1000 }.count
            out("  round \(round + 1): \(frames) frames in \(format(streamSeconds, 3)) s = \(format(achieved, 1)) frames/s (\(format(100 * achieved / Double(settings.rateHz), 1))% of the target)\(writeFailures > 0 ? "; \(writeFailures) writes FAILED" : "")")
            out("    writer's wake-ups late by p50 \(format(late.percentile(50) / 1000, 3)) ms, p99 \(format(late.percentile(99) / 1000, 3)) ms, max \(format(late.max / 1000, 1)) ms; \(lateFrames) frames (\(format(100 * Double(lateFrames) / Double(frames), 1))%) more than one period late")
            let resyncs = forcescale.errorCount("SYN_DROPPED") - resyncsBefore
            let evtestRead = (afterE.readBytes - beforeE.readBytes) / MemoryLayout<input_event>.stride
            let evtestLost = evtestRead != expectedEvents
            if resyncs > 0 || evtestLost { dropsSeen = true }
            out("    drops: forcescale's SYN_DROPPED notices on stderr: \(resyncs); evtest read \(evtestRead) of \(expectedEvents) events (/proc/PID/io rchar / 24)\(evtestLost ? ": it LOST events" : "")")

            func row(_ name: String, _ before: ProcessSample, _ after: ProcessSample) -> Int {
                let user = Double(after.userTicks - before.userTicks) / ticks
                let system = Double(after.systemTicks - before.systemTicks) / ticks
                let total = user + system
                let micros = total * 1e6 / Double(expectedEvents)
                let wakeups = after.voluntary - before.voluntary
                out("    " + name.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + String(format: "%7.2f s  %7.2f s  %7.2f s %10.1f %10.1f %9d %9.2f", user, system, total, micros, micros * Double(eventsPerFrame), wakeups, Double(frames) / Double(max(wakeups, 1))))
                return after.ticks - before.ticks
            }
            out("                             user     system      total   µs/event   µs/frame  wake-ups  frames/wake-up")
            let ticksF = row("forcescale read", beforeF, afterF)
            let ticksE = row("evtest", beforeE, afterE)
            _ = row("writer (this bench)", beforeW, afterW)
            let ratio = Double(ticksF) / Double(max(ticksE, 1))
            ratios.append(ratio)
            out("    forcescale / evtest: \(format(ratio, 2))x")
            totals.forcescale += ticksF
            totals.evtest += ticksE
            totals.events += expectedEvents
        }
        let perF = Double(totals.forcescale) / ticks * 1e6 / Double(totals.events)
        let perE = Double(totals.evtest) / ticks * 1e6 / Double(totals.events)
        let ratio = perF / perE
        out("  (CPU: utime + stime from /proc/PID/stat at \(Int(ticks)) ticks/s, from just before each round to when both are idle again;")
        out("   wake-ups: voluntary context switches in the round, over every thread; the writer's include its FF and output threads)")
        out("  all rounds, \(totals.events) events: forcescale \(format(perF, 1)) µs/event, evtest \(format(perE, 1)) µs/event; rounds \(ratios.map { format($0, 2) + "x" }.joined(separator: ", "))")
        out("  forcescale / evtest CPU per event: \(format(ratio, 2))x   goal <= 1.0x: \(ratio <= 1.0 ? "met" : "NOT met")")
        if settings.evtestOutput != "/dev/null" {
            let lines = Proc.text(settings.evtestOutput)?.split(separator: "\n") ?? []
            out("  evtest's output in \(settings.evtestOutput): \(lines.count) lines, \(lines.filter { $0.contains("SYN_DROPPED") }.count) SYN_DROPPED")
        }
        if forcescale.errors.count > 1 { out("  forcescale's stderr:\n" + forcescale.errorText) }
        let achieved = rates.min() ?? 0

        // --- (2) Idle ----------------------------------------------------------------------
        out("")
        out("(2) Idle wake-ups: \(format(settings.idleSeconds, 0)) s with the touch down and no events, after \(format(settings.settleSeconds, 0)) s to settle")
        Clock.sleep(settings.settleSeconds)
        let idleStartF = ProcessSample(forcescale.pid)!
        let idleStartE = ProcessSample(watcher.pid)!
        Clock.sleep(settings.idleSeconds)
        let idleEndF = ProcessSample(forcescale.pid)!
        let idleEndE = ProcessSample(watcher.pid)!
        func idleRow(_ name: String, _ start: ProcessSample, _ end: ProcessSample) -> Int {
            let switches = end.switches - start.switches
            out("  \(name): \(switches) context switches (\(end.voluntary - start.voluntary) voluntary, \(end.involuntary - start.involuntary) involuntary), CPU \(end.ticks - start.ticks) ticks, \(end.threads) thread(s)")
            return switches
        }
        let idleF2 = idleRow("forcescale read", idleStartF, idleEndF)
        let idleE2 = idleRow("evtest         ", idleStartE, idleEndE)
        out("  forcescale wake-ups while idle: \(idleF2)   goal 0: \(idleF2 == 0 ? "met" : "NOT met")")

        // The touch comes up; both stop.
        let release = [
            inputEvent(EV_ABS, ABS_PRESSURE, 0), inputEvent(EV_KEY, BTN_TOUCH, 0), inputEvent(EV_KEY, BTN_TOOL_FINGER, 0),
            inputEvent(EV_SYN, SYN_REPORT, 0),
        ]
        release.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
        let endF = forcescale.stop(SIGTERM, timeout: 30)
        let endE = watcher.stop(SIGTERM, timeout: 30)
        say("stopped: forcescale \(endF.map(\.description) ?? "did not stop on SIGTERM"), evtest \(endE.map(\.description) ?? "did not stop on SIGTERM")")
        if endF != .exited(0) { say("forcescale stderr:\n\(forcescale.errorText)") }

        return Result(
            cpuRatio: ratio, forcescaleMicrosPerEvent: perF, evtestMicrosPerEvent: perE, achievedRate: achieved,
            dropsSeen: dropsSeen, forcescaleIdleSwitches: idleF2, evtestIdleSwitches: idleE2)
    }
}

/// Runs `body(index)` `count` times, each at an absolute CLOCK_MONOTONIC deadline `period` ns
/// after the previous one (clock_nanosleep TIMER_ABSTIME: a late wake-up does not shift the
/// deadlines after it, so the average rate holds). - Returns: how late each wake-up was, in µs.
func pacedLoop(count: Int, period: Int, _ body: (Int) -> Void) -> [Double] {
    var lateness = [Double](repeating: 0, count: count)
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    let startNs = Int(start.tv_sec) * 1_000_000_000 + Int(start.tv_nsec) + period
    for index in 0..<count {
        let deadline = startNs + index * period
        var target = timespec(tv_sec: deadline / 1_000_000_000, tv_nsec: deadline % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        lateness[index] = Double(Int(now.tv_sec) * 1_000_000_000 + Int(now.tv_nsec) - deadline) / 1000
        body(index)
    }
    return lateness
}

/// Runs `body` with the calling thread at SCHED_FIFO `priority` (0: unchanged), then back
/// to SCHED_OTHER. A device's events come from an interrupt handler, which no process delays;
/// a real-time writer comes closer to that than one queued behind the readers it feeds.
func withWriterPriority<T>(_ priority: Int, _ body: () -> T) -> T {
    guard priority > 0 else { return body() }
    var parameter = sched_param(sched_priority: Int32(priority))
    let status = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameter)
    if status != 0 { say("SCHED_FIFO \(priority) refused (\(String(cString: strerror(status)))): the writer stays SCHED_OTHER") }
    defer {
        var normal = sched_param(sched_priority: 0)
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal)
    }
    return body()
}
