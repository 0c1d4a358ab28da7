import CEvdev
import Foundation
import Glibc
import KernelTestSupport

/// (1) CPU per event of `forcescale read --json > /dev/null` and of `forcescaled` with one
/// watching client, next to the kernel's read floor (a blocking read(2) loop in C), `evtest`
/// and a python-evdev reader, all on one paced uinput stream; (2) the system calls each makes
/// per frame (strace -c); (3) their wake-ups while no event comes.
enum StreamBench {
    /// The readers of each group, each group next to its own floor on a pad of its own:
    /// all of them at once would need more CPU than the emulated guest's 2 vCPUs have at
    /// 1 kHz, and readers that fall behind read several frames per wake-up, which makes
    /// their CPU per event look better than it is.
    /// With a baseline (FORCESCALE_BASELINE_BINARY and FORCESCALE_BASELINE_DAEMON_BINARY: the
    /// build from before a change), its `read` and daemon join the groups of the new ones,
    /// keyed "forcescale-before" and "forcescaled-before" (its watcher "watcher-before"): on
    /// the same pad in the same rounds, a build and its baseline see the same frames, the
    /// same floor and the same moment of the host's load.
    static func groups(_ programs: Programs, _ settings: Settings) -> [[String]] {
        // "epoll-floor" is the floor reader with an event loop's system calls (epoll_wait and
        // read per wake-up, bench/live-support/floor-read.c --epoll): beside forcescale read it
        // tells the cost of that shape apart from forcescale's own work.
        let before = programs.baseline != nil
        // "touch-N", "calls-N", "callpages-N": the epoll floor doing one thing more per
        // wake-up, beside forcescale read; "send-N", the epoll floor serving a client of its
        // own, beside forcescaled and its watcher.
        let variants = settings.floorVariants.filter { $0.kind != .sendLines }.map(\.key)
        let serving = settings.floorVariants.filter { $0.kind == .sendLines }.map(\.key)
        let groups = [["evtest", "python"], ["epoll-floor"] + variants + ["forcescale"] + (before ? ["forcescale-before"] : []),
                      serving + ["forcescaled"] + (before ? ["forcescaled-before"] : [])]
        return settings.allAtOnce ? [groups.flatMap { $0 }] : groups
    }

    struct Result {
        /// CPU per event of each reader, by its `key` (evtest, python, forcescale, forcescaled, watcher).
        var microsPerEvent: [String: Double] = [:]
        /// CPU per event of the floor in the same group as the reader of that key.
        var floorMicrosPerEvent: [String: Double] = [:]
        /// Both from the scheduler's run time (schedstat).
        var runMicrosPerEvent: [String: Double] = [:]
        var floorRunMicrosPerEvent: [String: Double] = [:]
        var achievedRate = Double.infinity
        var dropsSeen = false
        var idleSwitches: [String: Int] = [:]
        /// System calls per frame and per wake-up of each traced reader, by key (the floor
        /// as "floor"); empty without strace.
        var syscallsPerFrame: [String: Double] = [:]
        var syscallsPerWakeUp: [String: Double] = [:]
        /// Each compared reader's CPU over its floor's, round by round.
        var roundRatios: [String: [Double]] = [:]

        /// The reader's CPU per event over its group's floor's.
        func ratio(_ key: String) -> Double? {
            guard let value = microsPerEvent[key], let floor = floorMicrosPerEvent[key], floor > 0 else { return nil }
            return value / floor
        }

        /// The same by run time.
        func runRatio(_ key: String) -> Double? {
            guard let value = runMicrosPerEvent[key], let floor = floorRunMicrosPerEvent[key], floor > 0 else { return nil }
            return value / floor
        }
    }

    static func run(_ settings: Settings, _ programs: Programs, evtest: String) -> Result? {
        // Every group is set up first, each on its own pad, and the rounds then go group by
        // group: round 1 of each group, round 2 of each (in the reverse order), and so on. The
        // host's load drifts over minutes; a group measured minutes after another would be
        // compared with a different machine. Interleaved, each group's rounds are spread over
        // the same stretch of time, and the order alternates so that none is always first
        // after a pause. A group that is not streaming sits blocked on its own pad.
        let memberLists = groups(programs, settings)
        var groups: [StreamGroup] = []
        defer { for group in groups { group.close() } }
        for (index, members) in memberLists.enumerated() {
            out("")
            out("=== Group \(index + 1) of \(memberLists.count): the floor and \(members.joined(separator: ", ")) ===")
            guard let group = StreamGroup(number: index + 1, settings: settings, programs: programs, members: members) else { return nil }
            groups.append(group)
            guard group.start(evtest: evtest) else { return nil }
        }
        out("")
        out("(1) CPU per event: \(settings.rounds) round(s) per group, groups interleaved round by round (order reversed every other round)")
        for round in 0..<settings.rounds {
            for group in round % 2 == 0 ? groups : groups.reversed() {
                group.measureRound(round)
            }
        }
        var result = Result()
        for group in groups {
            out("")
            out("=== Group \(group.number): all rounds, strace, idle ===")
            let figures = group.finish()
            let floor = figures.microsPerEvent["floor"] ?? .nan
            for (key, micros) in figures.microsPerEvent where key != "floor" {
                result.microsPerEvent[key] = micros
                result.floorMicrosPerEvent[key] = floor
                result.runMicrosPerEvent[key] = figures.runMicrosPerEvent[key]
                result.floorRunMicrosPerEvent[key] = figures.runMicrosPerEvent["floor"]
                result.roundRatios[key] = figures.roundRatios[key]
            }
            for (key, value) in figures.syscallsPerFrame where key != "floor" || result.syscallsPerFrame["floor"] == nil {
                result.syscallsPerFrame[key] = value
                result.syscallsPerWakeUp[key] = figures.syscallsPerWakeUp[key]
            }
            for (key, value) in figures.idleSwitches where key != "floor" { result.idleSwitches[key] = value }
            result.achievedRate = min(result.achievedRate, figures.achievedRate)
            result.dropsSeen = result.dropsSeen || figures.dropsSeen
        }
        out("")
        out("Summary: CPU per event against the floor of the same group (utime + stime over all rounds; the rounds' own ratios, lowest to highest, and their median)")
        for key in ["evtest", "python", "epoll-floor"] + settings.floorVariants.map(\.key) + ["forcescale", "forcescale-before", "forcescaled", "forcescaled-before", "watcher", "watcher-before"] {
            guard let micros = result.microsPerEvent[key] else { continue }
            let name = key == "watcher" ? "(watcher of forcescaled)" : key == "watcher-before" ? "(watcher of the baseline)" : key
            let rounds = (result.roundRatios[key] ?? []).sorted()
            out("  " + name.padding(toLength: 26, withPad: " ", startingAt: 0)
                + String(format: "%7.1f µs/event, floor %6.1f: %5.2fx;  by run time %5.2fx", micros, result.floorMicrosPerEvent[key] ?? .nan, result.ratio(key) ?? .nan, result.runRatio(key) ?? .nan)
                + (rounds.isEmpty ? "" : ";  rounds " + rounds.map { format($0, 2) }.joined(separator: " ") + ", median " + format(median(rounds), 2))
                + (result.syscallsPerFrame[key].map { String(format: "   %.2f system calls per frame, %.2f per wake-up (strace)", $0, result.syscallsPerWakeUp[key] ?? .nan) } ?? ""))
        }
        return result
    }

    /// The middle value of sorted `values` (the mean of the two middle ones for an even count).
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let middle = values.count / 2
        return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
    }

    /// One process reading the pad (or, for the watcher, the daemon's socket).
    struct Reader {
        var key: String
        var name: String
        var child: Child
        /// The system calls it sits in while it waits for input (x86_64 numbers).
        var idleCalls: Set<Int>
        /// Whether it reads every event itself with read(2), so that /proc/PID/io's rchar
        /// tells whether it lost any (the raw readers: floor, evtest, python-evdev).
        var readsRaw: Bool
        /// Whether it counts in the comparison (the watcher is reported, not compared).
        var compared = true
    }

    /// One group's figures, by reader key (the floor's as "floor").
    struct GroupResult {
        var microsPerEvent: [String: Double]
        /// The same from the scheduler's run time (schedstat) rather than sampled ticks.
        var runMicrosPerEvent: [String: Double]
        /// Each compared reader's ticks over the floor's, round by round.
        var roundRatios: [String: [Double]]
        var achievedRate: Double
        var dropsSeen: Bool
        var idleSwitches: [String: Int]
        var syscallsPerFrame: [String: Double]
        var syscallsPerWakeUp: [String: Double]
    }
}

/// One group of readers on a pad of its own, next to their own floor reader: set up with
/// `start`, measured a round at a time with `measureRound` (the rounds of different groups
/// interleave), then `finish` (totals, strace, idle) and `close`.
final class StreamGroup {
    let number: Int
    let members: [String]
    private let settings: Settings
    private let programs: Programs
    private let table: DeviceTable
    private let pad: VirtualDevice
    private let folder: String
    private var readers: [StreamBench.Reader] = []
    /// The `forcescale read` processes (the build's and the baseline's), for their stderr.
    private var readCommands: [Child] = []

    // A frame is ABS_PRESSURE + SYN_REPORT. Pressures step by 7 modulo 221 from 10: always
    // different from the previous frame's (the input core drops a repeated value), and
    // never above 230 (no PEAK). The rounds continue one sequence.
    private let eventsPerFrame = 2
    private var nextFrame = 0
    private var period: Int { 1_000_000_000 / settings.rateHz }  // ns

    private var totalTicks: [String: Int] = [:]
    private var totalRun: [String: Int] = [:]
    private var roundRatios: [String: [Double]] = [:]
    private var totalEvents = 0
    private var rates: [Double] = []
    private var dropsSeen = false

    /// Makes the group's pad; nil (having said why) when uinput refuses.
    init?(number: Int, settings: Settings, programs: Programs, members: [String]) {
        self.number = number
        self.members = members
        self.settings = settings
        self.programs = programs
        // Each group's pad has its own product number, so that the nodes are told apart in the log.
        table = Tables.singleTouchPad("forcescale live bench pad \(number)", pressure: 0...255, product: UInt16(0x0030 + number))
        do { pad = try VirtualDevice(table) } catch {
            say("cannot create the pad: \(error)")
            return nil
        }
        folder = "/tmp/forcescale-live-bench-\(getpid())-\(number)"
        say("pad '\(table.name)' at \(pad.node): ABS_X, ABS_Y, ABS_PRESSURE 0-255, BTN_TOUCH, BTN_TOOL_FINGER, BTN_LEFT")
    }

    /// Stops every reader and removes the pad (idempotent).
    func close() {
        for reader in readers { reader.child.stop(SIGKILL, timeout: 5) }
        readers.removeAll()
        pad.destroy()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Starts the floor and the group's readers, outputs to /dev/null, puts the touch down
    /// and waits until all are idle. - Returns: false (having said why) when one cannot start.
    func start(evtest: String) -> Bool {
        mkdir(folder, 0o755)
        let readArguments = ["read", "--json", "--no-rumble", "--interval-ms", "10", "--device", pad.node]
        let python = "import evdev, sys\nfor event in evdev.InputDevice(sys.argv[1]).read_loop():\n    pass\n"
        func start(_ key: String, _ name: String, _ arguments: [String], idle: Set<Int>, raw: Bool, output: String? = "/dev/null", counting: [String] = []) -> Child? {
            do {
                let child = try Child(key, arguments, counting: counting, outputFile: output)
                readers.append(StreamBench.Reader(key: key, name: name, child: child, idleCalls: idle, readsRaw: raw))
                say("started: \(name)   (pid \(child.pid))")
                return child
            } catch {
                say("cannot start \(name): \(error)")
                return nil
            }
        }
        guard let floor = start("floor", "floor-read \(pad.node) (C, blocking read)", [programs.floorReader, pad.node], idle: Proc.readCalls, raw: true)
        else { return false }
        if members.contains("epoll-floor") {
            guard start("epoll-floor", "floor-read --epoll \(pad.node) (C, epoll_wait + read)", [programs.floorReader, "--epoll", pad.node], idle: Proc.epollCalls, raw: true) != nil
            else { return false }
        }
        for variant in settings.floorVariants where members.contains(variant.key) {
            guard start(variant.key, "floor-read --epoll \(variant.option) \(variant.count) \(pad.node)",
                        [programs.floorReader, "--epoll", variant.option, "\(variant.count)", pad.node],
                        idle: Proc.epollCalls, raw: true) != nil
            else { return false }
        }
        if members.contains("evtest") {
            guard start("evtest", "evtest \(pad.node) > \(settings.evtestOutput)", [evtest, pad.node], idle: Proc.selectCalls, raw: true, output: settings.evtestOutput) != nil
            else { return false }
        }
        if members.contains("python") {
            if let interpreter = programs.python, programs.hasPythonEvdev {
                guard start("python", "python3 + evdev read_loop", [interpreter, "-c", python, pad.node], idle: Proc.selectCalls, raw: true) != nil
                else { return false }
            } else {
                say("python3-evdev is not installed: no python-evdev row (apt-get install python3-evdev)")
            }
        }
        for key in ["forcescale", "forcescale-before"] where members.contains(key) {
            let binary = key == "forcescale" ? programs.forcescale : programs.baseline!.forcescale
            guard let child = start(key, "\(binary) \(readArguments.joined(separator: " "))", [binary] + readArguments, idle: Proc.epollCalls, raw: false)
            else { return false }
            readCommands.append(child)
        }
        // Each daemon on a socket of its own, with its watcher keyed after it.
        var daemons: [(daemon: Child, socket: String, watcherKey: String)] = []
        for key in ["forcescaled", "forcescaled-before"] where members.contains(key) {
            let binary = key == "forcescaled" ? programs.forcescaled : programs.baseline!.forcescaled
            let socket = folder + "/\(key).sock"
            let arguments = ["--device", pad.node, "--socket", socket, "--state-dir", folder + "/\(key)-state", "--interval-ms", "10", "--no-rumble", "-q"]
            guard let child = start(key, "\(binary) \(arguments.joined(separator: " "))", [binary] + arguments, idle: Proc.epollCalls, raw: false)
            else { return false }
            daemons.append((child, socket, key == "forcescaled" ? "watcher" : "watcher-before"))
        }

        guard floor.waitForError("floor-read: reading", timeout: Limits.readerStart),
              readCommands.allSatisfy({ $0.waitForError("forcescale: reading ", timeout: Limits.readerStart) })
        else {
            say("floor-read or forcescale did not start reading:\n\(floor.tail())\n" + readCommands.map { $0.tail() }.joined(separator: "\n"))
            return false
        }
        let opened = waitUntil(Limits.readerStart) { [readers, pad] in
            readers.allSatisfy { Proc.hasOpen($0.child.pid, pad.node) || !$0.child.isRunning }
        }
        guard opened, readers.allSatisfy(\.child.isRunning) else {
            say("not every reader opened \(pad.node):\n" + readers.map { "\($0.key): \($0.child.ended.map(\.description) ?? "running")\n\($0.child.tail())" }.joined(separator: "\n"))
            return false
        }
        // Each daemon's one watcher: `forcescale watch --json`, its lines counted as they come.
        var watchers: [(daemon: Child, watcher: Child)] = []
        for (daemon, socket, watcherKey) in daemons {
            guard waitUntil(Limits.readerStart, { fileExists(socket) || !daemon.isRunning }), daemon.isRunning else {
                say("forcescaled did not bind \(socket): \(daemon.ended.map(\.description) ?? "running")\n\(daemon.tail())")
                return false
            }
            guard let watcher = start(watcherKey, "forcescale watch --json --socket \(socket)", [programs.forcescale, "watch", "--json", "--socket", socket],
                                      idle: Proc.epollCalls.union(Proc.selectCalls).union(Proc.readCalls), raw: false, output: nil, counting: ["\"class\":\"READING\""])
            else { return false }
            readers[readers.count - 1].compared = false
            watchers.append((daemon, watcher))
        }

        // The touch goes down before the measurement and stays down throughout.
        let touchDown = [
            inputEvent(EV_ABS, ABS_X, 500), inputEvent(EV_ABS, ABS_Y, 500), inputEvent(EV_ABS, ABS_PRESSURE, 5),
            inputEvent(EV_KEY, BTN_TOUCH, 1), inputEvent(EV_KEY, BTN_TOOL_FINGER, 1), inputEvent(EV_SYN, SYN_REPORT, 0),
        ]
        // A watcher is connected when a READING reaches it: the touch-down's, or, if it
        // connected after that, a pressure change's (a repeated value would be filtered out).
        touchDown.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
        var nudge: Int32 = 5
        for (daemon, watcher) in watchers {
            let connected = waitUntil(Limits.readerStart) { [pad] in
                if waitUntil(2, { watcher.count("\"class\":\"READING\"") > 0 }) { return true }
                nudge = nudge == 5 ? 6 : 5
                [inputEvent(EV_ABS, ABS_PRESSURE, nudge), inputEvent(EV_SYN, SYN_REPORT, 0)].withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
                return false
            }
            guard connected else {
                say("the watcher saw no READING from forcescaled:\n\(watcher.tail())\n\(daemon.tail())")
                return false
            }
        }
        for reader in readers {
            guard Proc.waitUntilIdle(reader.child.pid, in: reader.idleCalls, timeout: Limits.readerStart) else {
                say("\(reader.key) did not settle (blocked waiting for input with no CPU for 0.5 s)")
                return false
            }
        }
        let priority = settings.writerPriority > 0 ? "SCHED_FIFO priority \(settings.writerPriority)" : "SCHED_OTHER"
        out("  rounds of \(settings.frames) frames = \(settings.frames * eventsPerFrame) events (ABS_PRESSURE + SYN_REPORT) at \(settings.rateHz) Hz")
        out("  one write(2) per frame at absolute CLOCK_MONOTONIC deadlines (clock_nanosleep); the writer runs \(priority)")
        out("  all readers at once on the one pad: " + readers.map(\.key).joined(separator: ", ") + (daemons.isEmpty ? "" : " (each watcher is its daemon's client)"))
        // The pace the emulated timer allows on its own: the same sleeps, nothing written.
        let calibration = Distribution(withWriterPriority(settings.writerPriority) { pacedLoop(count: 500, period: period) { _ in } })
        out("  the timer alone (500 sleeps, nothing written, readers idle): wake-ups late by p50 \(format(calibration.percentile(50) / 1000, 3)) ms, p99 \(format(calibration.percentile(99) / 1000, 3)) ms, max \(format(calibration.max / 1000, 1)) ms")
        return true
    }

    /// Writes `count` frames at the rate. - Returns: the seconds it took, how late each
    /// write's wake-up was (µs) and how many writes failed.
    private func stream(_ count: Int, period: Int) -> (seconds: Double, lateness: [Double], failures: Int) {
        var buffer = [input_event]()
        buffer.reserveCapacity(count * eventsPerFrame)
        for index in nextFrame..<(nextFrame + count) {
            buffer.append(inputEvent(EV_ABS, ABS_PRESSURE, Int32(10 + index * 7 % 221)))
            buffer.append(inputEvent(EV_SYN, SYN_REPORT, 0))
        }
        nextFrame += count
        var failures = 0
        let first = Clock.now()
        let eventsPerFrame = eventsPerFrame
        let lateness = withWriterPriority(settings.writerPriority) {
            buffer.withUnsafeBufferPointer { events in
                pacedLoop(count: count, period: period) { index in
                    let frame = UnsafeBufferPointer(rebasing: events[(index * eventsPerFrame)..<((index + 1) * eventsPerFrame)])
                    if !writeEvents(pad.descriptor, frame) { failures += 1 }
                }
            }
        }
        return (Clock.now() - first, lateness, failures)
    }

    /// Waits until every reader has taken what `events` more events gave it (raw readers:
    /// by the bytes they read) and sits idle again (the throttle timers fire once more,
    /// 10 ms after the last event). - Returns: the events each raw reader read.
    private func settle(after before: [String: ProcessSample], events: Int) -> [String: Int] {
        var read: [String: Int] = [:]
        for reader in readers where reader.readsRaw {
            let expectedBytes = before[reader.key]!.readBytes + events * MemoryLayout<input_event>.stride
            waitUntil(60) { (ProcessSample(reader.child.pid)?.readBytes ?? 0) >= expectedBytes || !reader.child.isRunning }
        }
        for reader in readers {
            Proc.waitUntilIdle(reader.child.pid, in: reader.idleCalls, timeout: 60)
            if reader.readsRaw, let after = ProcessSample(reader.child.pid) {
                read[reader.key] = (after.readBytes - before[reader.key]!.readBytes) / MemoryLayout<input_event>.stride
            }
        }
        return read
    }

    /// One round: the frames streamed, every reader's CPU from just before it until all are
    /// idle again, against the floor's.
    func measureRound(_ round: Int) {
        let frames = settings.frames
        let expectedEvents = frames * eventsPerFrame
        let ticks = Proc.ticksPerSecond
        let resyncsBefore = readCommands.reduce(0) { $0 + $1.errorCount("SYN_DROPPED") }
        var before: [String: ProcessSample] = [:]
        for reader in readers { before[reader.key] = ProcessSample(reader.child.pid)! }
        let beforeW = ProcessSample(getpid())!
        say("group \(number), round \(round + 1): streaming \(frames) frames...")
        let (streamSeconds, lateness, writeFailures) = stream(frames, period: period)
        let achieved = Double(frames) / streamSeconds
        rates.append(achieved)
        let afterW = ProcessSample(getpid())!
        let read = settle(after: before, events: expectedEvents)
        var after: [String: ProcessSample] = [:]
        for reader in readers { after[reader.key] = ProcessSample(reader.child.pid)! }

        let late = Distribution(lateness)
        let lateFrames = lateness.filter { $0 > Double(period) / 1000 }.count
        out("  group \(number), round \(round + 1): \(frames) frames in \(format(streamSeconds, 3)) s = \(format(achieved, 1)) frames/s (\(format(100 * achieved / Double(settings.rateHz), 1))% of the target)\(writeFailures > 0 ? "; \(writeFailures) writes FAILED" : "")"
            + "; host-side load average " + (Proc.text("/proc/loadavg")?.split(separator: " ").first.map(String.init) ?? "?"))
        out("    writer's wake-ups late by p50 \(format(late.percentile(50) / 1000, 3)) ms, p99 \(format(late.percentile(99) / 1000, 3)) ms, max \(format(late.max / 1000, 1)) ms; \(lateFrames) frames (\(format(100 * Double(lateFrames) / Double(frames), 1))%) more than one period late")
        let resyncs = readCommands.reduce(0) { $0 + $1.errorCount("SYN_DROPPED") } - resyncsBefore
        let lost = read.filter { $0.value != expectedEvents }
        if resyncs > 0 || !lost.isEmpty { dropsSeen = true }
        out("    drops: forcescale's SYN_DROPPED notices on stderr: \(resyncs); events read (/proc/PID/io rchar / 24) of \(expectedEvents): "
            + read.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + (lost.isEmpty ? "" : ": events LOST"))

        func row(_ name: String, _ before: ProcessSample, _ after: ProcessSample, ratio: String) {
            let user = Double(after.userTicks - before.userTicks) / ticks
            let system = Double(after.systemTicks - before.systemTicks) / ticks
            let total = user + system
            let micros = total * 1e6 / Double(expectedEvents)
            let wakeups = after.voluntary - before.voluntary
            let run = Double(after.runNanoseconds - before.runNanoseconds) / 1e6
            out("    " + name.padding(toLength: 22, withPad: " ", startingAt: 0)
                + String(format: "%7.2f s  %7.2f s  %7.2f s %7d %10.1f %10.1f %9d %9.2f %9.0f  ", user, system, total, after.ticks - before.ticks, micros, micros * Double(eventsPerFrame), wakeups, Double(frames) / Double(max(wakeups, 1)), run) + ratio)
        }
        out("                                user     system      total   ticks   µs/event   µs/frame  wake-ups  frames/wake-up  run ms  x floor (ticks, run)")
        let floorTicks = max(after["floor"]!.ticks - before["floor"]!.ticks, 1)
        let floorRun = max(after["floor"]!.runNanoseconds - before["floor"]!.runNanoseconds, 1)
        for reader in readers {
            let used = after[reader.key]!.ticks - before[reader.key]!.ticks
            let run = after[reader.key]!.runNanoseconds - before[reader.key]!.runNanoseconds
            let ratio = Double(used) / Double(floorTicks)
            if reader.compared && reader.key != "floor" { roundRatios[reader.key, default: []].append(ratio) }
            row(reader.compared ? reader.key : "  (\(reader.key))", before[reader.key]!, after[reader.key]!,
                ratio: reader.compared ? format(ratio, 2) + "x, " + format(Double(run) / Double(floorRun), 2) + "x" : "(not compared)")
            totalTicks[reader.key, default: 0] += used
            totalRun[reader.key, default: 0] += run
        }
        row("writer (this bench)", beforeW, afterW, ratio: "")
        totalEvents += expectedEvents
    }

    /// The group's totals over its rounds, then (1b) strace and (2) idle; the readers are
    /// stopped at the end.
    func finish() -> StreamBench.GroupResult {
        let ticks = Proc.ticksPerSecond
        var perEvent: [String: Double] = [:]
        for (key, used) in totalTicks { perEvent[key] = Double(used) / ticks * 1e6 / Double(max(totalEvents, 1)) }
        var runPerEvent: [String: Double] = [:]
        for (key, run) in totalRun { runPerEvent[key] = Double(run) / 1e3 / Double(max(totalEvents, 1)) }
        out("  (CPU: utime + stime from /proc/PID/stat at \(Int(ticks)) ticks/s, from just before each round to when all are idle again;")
        out("   wake-ups: voluntary context switches in the round, over every thread; the writer's include its FF and output threads)")
        out("  all rounds, \(totalEvents) events, CPU per event and against the floor:")
        for reader in readers {
            let micros = perEvent[reader.key] ?? .nan
            let ratio = micros / (perEvent["floor"] ?? .nan)
            let run = runPerEvent[reader.key] ?? .nan
            out("    " + reader.key.padding(toLength: 12, withPad: " ", startingAt: 0) + String(format: "%7.1f µs/event  %5.2fx floor  (%d ticks);  by run time %7.1f µs/event  %5.2fx floor", micros, ratio, totalTicks[reader.key] ?? 0, run, run / (runPerEvent["floor"] ?? .nan)))
        }
        if settings.evtestOutput != "/dev/null" && members.contains("evtest") {
            let lines = Proc.text(settings.evtestOutput)?.split(separator: "\n") ?? []
            out("  evtest's output in \(settings.evtestOutput): \(lines.count) lines, \(lines.filter { $0.contains("SYN_DROPPED") }.count) SYN_DROPPED")
        }
        for child in readCommands where child.errors.count > 1 { out("  forcescale's stderr:\n" + child.errorText) }
        let achieved = rates.min() ?? 0
        let (syscallsPerFrame, syscallsPerWakeUp) = traceSystemCalls()
        let idleSwitches = measureIdle()

        // The touch comes up; all stop.
        let release = [
            inputEvent(EV_ABS, ABS_PRESSURE, 0), inputEvent(EV_KEY, BTN_TOUCH, 0), inputEvent(EV_KEY, BTN_TOOL_FINGER, 0),
            inputEvent(EV_SYN, SYN_REPORT, 0),
        ]
        release.withUnsafeBufferPointer { _ = writeEvents(pad.descriptor, $0) }
        for reader in readers.reversed() {
            let end = reader.child.stop(SIGTERM, timeout: 30)
            if reader.key.hasPrefix("forcescale") || reader.key == "floor" {
                say("stopped \(reader.key): \(end.map(\.description) ?? "did not stop on SIGTERM")")
                if end != .exited(0) { say("\(reader.key) stderr:\n\(reader.child.errorText)") }
            }
            if reader.key == "floor" { say("floor-read: \(reader.child.errors.last ?? "")") }
        }
        return StreamBench.GroupResult(
            microsPerEvent: perEvent, runMicrosPerEvent: runPerEvent, roundRatios: roundRatios, achievedRate: achieved, dropsSeen: dropsSeen,
            idleSwitches: idleSwitches, syscallsPerFrame: syscallsPerFrame, syscallsPerWakeUp: syscallsPerWakeUp)
    }

    /// (1b) strace -c attached to each reader in turn while frames go by. - Returns: system
    /// calls per frame and per wake-up, by reader key (empty without strace).
    private func traceSystemCalls() -> (perFrame: [String: Double], perWakeUp: [String: Double]) {
        var syscallsPerFrame: [String: Double] = [:]
        var syscallsPerWakeUp: [String: Double] = [:]
        out("")
        guard settings.straceFrames > 0, let strace = programs.strace else {
            out("(1b) System calls per frame: skipped (\(programs.strace == nil ? "strace is not installed: apt-get install strace" : "--strace-frames 0"))")
            return ([:], [:])
        }
        let count = settings.straceFrames
        out("(1b) System calls per frame: strace -c -f attached to one reader at a time (the others keep reading), \(count) frames at \(settings.straceRateHz) Hz each")
        out("  (strace slows the traced process: one that falls behind reads several frames per wake-up and makes fewer calls per frame than at full speed;")
        out("   per wake-up (a return from epoll_wait, pselect6, or for the floor read) the figures do not depend on that)")
        for reader in readers where reader.compared {
            let file = folder + "/\(reader.key).strace"
            let tracer: Child
            do {
                tracer = try Child("strace", [strace, "-c", "-f", "-o", file, "-p", "\(reader.child.pid)"])
            } catch {
                out("  \(reader.key): cannot start strace: \(error)")
                continue
            }
            // Attached when the kernel names a tracer for the reader.
            let attached = waitUntil(Limits.readerStart) {
                (Proc.text("/proc/\(reader.child.pid)/status").flatMap { Proc.field($0, "TracerPid:") } ?? 0) != 0 || !tracer.isRunning
            }
            guard attached, tracer.isRunning, Proc.waitUntilIdle(reader.child.pid, in: reader.idleCalls, timeout: 60) else {
                out("  \(reader.key): strace did not attach: \(tracer.tail())")
                tracer.stop(SIGKILL, timeout: 5)
                continue
            }
            var before: [String: ProcessSample] = [:]
            for reader in readers { before[reader.key] = ProcessSample(reader.child.pid)! }
            _ = stream(count, period: 1_000_000_000 / settings.straceRateHz)
            _ = settle(after: before, events: count * eventsPerFrame)
            // SIGINT: strace detaches and writes its table.
            tracer.stop(SIGINT, timeout: 60)
            guard let table = Proc.text(file), let summary = StraceSummary(table) else {
                out("  \(reader.key): no strace table in \(file)")
                continue
            }
            let perFrame = Double(summary.total) / Double(count)
            let waits = ["epoll_wait", "epoll_pwait", "pselect6", "select", "poll", "ppoll"]
            let wakeUps = max(summary.calls.filter { waits.contains($0.name) }.reduce(0) { $0 + $1.calls }
                + (reader.key == "floor" ? summary.calls.first { $0.name == "read" }?.calls ?? 0 : 0), 1)
            syscallsPerFrame[reader.key] = perFrame
            syscallsPerWakeUp[reader.key] = Double(summary.total) / Double(wakeUps)
            out("  \(reader.key): \(format(perFrame, 2)) system calls per frame, \(format(Double(summary.total) / Double(wakeUps), 2)) per wake-up (\(summary.total) calls, \(summary.errors) failed, \(wakeUps) wake-ups = \(format(Double(count) / Double(wakeUps), 2)) frames per wake-up)")
            for call in summary.calls.sorted(by: { $0.calls > $1.calls }) {
                out("      " + call.name.padding(toLength: 18, withPad: " ", startingAt: 0)
                    + String(format: "%8.3f per frame %8.3f per wake-up %7d calls", Double(call.calls) / Double(count), Double(call.calls) / Double(wakeUps), call.calls)
                    + (call.errors > 0 ? String(format: "  (%d failed)", call.errors) : ""))
            }
        }
        return (syscallsPerFrame, syscallsPerWakeUp)
    }

    /// (2) Context switches of each reader over the idle time with the touch down. - Returns:
    /// them by reader key.
    private func measureIdle() -> [String: Int] {
        out("")
        out("(2) Idle wake-ups: \(format(settings.idleSeconds, 0)) s with the touch down and no events, after \(format(settings.settleSeconds, 0)) s to settle")
        Clock.sleep(settings.settleSeconds)
        var idleStart: [String: ProcessSample] = [:]
        for reader in readers { idleStart[reader.key] = ProcessSample(reader.child.pid)! }
        Clock.sleep(settings.idleSeconds)
        var idleSwitches: [String: Int] = [:]
        for reader in readers {
            let start = idleStart[reader.key]!
            let end = ProcessSample(reader.child.pid)!
            let switches = end.switches - start.switches
            idleSwitches[reader.key] = switches
            out("  \(reader.key.padding(toLength: 12, withPad: " ", startingAt: 0)): \(switches) context switches (\(end.voluntary - start.voluntary) voluntary, \(end.involuntary - start.involuntary) involuntary), CPU \(end.ticks - start.ticks) ticks, \(end.threads) thread(s)")
        }
        return idleSwitches
    }
}

/// The table `strace -c` writes: per system call, its calls and failures, and the total.
struct StraceSummary {
    struct Call {
        var name: String
        var calls: Int
        var errors: Int
    }

    var calls: [Call] = []
    var total = 0
    var errors = 0

    /// Parses rows of `% time  seconds  usecs/call  calls  [errors]  syscall`; nil without a
    /// total row.
    init?(_ text: String) {
        var sawTotal = false
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 5 || fields.count == 6, Double(fields[0]) != nil, let count = Int(fields[3]) else { continue }
            let failed = fields.count == 6 ? Int(fields[4]) ?? 0 : 0
            let name = String(fields.last!)
            if name == "total" {
                total = count
                errors = failed
                sawTotal = true
            } else {
                calls.append(Call(name: name, calls: count, errors: failed))
            }
        }
        guard sawTotal else { return nil }
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
