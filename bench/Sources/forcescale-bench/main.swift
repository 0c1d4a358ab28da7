// forcescale-bench: timings that `bench/replay` runs side by side with a baseline.
//
//   forcescale-bench pipeline FILE [REPETITIONS]
//       The pipeline alone: FILE is parsed into memory first (not timed), then
//       `ScalePipeline.process` runs over the array REPETITIONS times (default 5), and so
//       does a trivial loop over the same array, as the floor of merely visiting each event.
//   forcescale-bench parse FILE [REPETITIONS]
//       Parsing alone: `RecordingFiles.read` with a consumer that only counts, to split the
//       replay figure into its parse and pipeline parts.
//   forcescale-bench libyaml FILE [REPETITIONS]
//       libyaml's parser alone over FILE (every YAML event parsed, then dropped): the floor
//       of any reader of libinput's format that has libyaml parse it.
//   forcescale-bench to-libinput FILE OUT
//       Writes FILE's device and events to OUT in libinput's recording format (what `forcescale
//       record --format libinput` writes), so that the same events can be timed in both formats.
//   forcescale-bench drift-limits [SEEDS]
//       The slowest drift the stability rule sees at each noise level: synthetic contacts
//       (BenchSupport's SyntheticContact) on a 0–255 pad at 100 Hz creep down for 20 s at
//       rates from 0.05 raw units a second up; the limit is the slowest rate at which no more
//       than 5 % of the readings after the first 2 s of the creep are stable, over SEEDS
//       noise draws (default 10); the last row adds a wobble of a raw unit at 1.3 Hz (a
//       hand) to a unit of noise. bench/stability prints it under its table.
//   forcescale-bench contact FILE SEED LEAD DURATION REST [RATE@AT:SECONDS]...
//       Writes an evemu recording of a synthetic contact on a 0–255 pad at 100 Hz with a raw
//       unit of noise: LEAD seconds of nothing, then a press resting at raw REST for DURATION
//       seconds, moving RATE raw units a second from AT seconds after the press for SECONDS
//       (moves add up; a fast short one is a step). The end-to-end tests serve it with
//       forcescaled --replay: a weight that falls, an object added or taken away.
//
// Speed targets are checked here, in a benchmark, rather than in timed tests; the machine is
// noisy, so every figure is the median of several repetitions and is quoted next to its
// baseline from the same run.

import BenchSupport
import CYAML
import Glibc
import ScaleCore
import ScaleRecording

/// `CLOCK_MONOTONIC` in nanoseconds. The benchmark may read a clock; ScaleCore never does.
/// Runs `body` `repetitions` times and returns the median wall time in seconds, and what
/// the last run returned (printed by the caller, so the optimiser cannot drop the work).
func medianSeconds<R>(_ repetitions: Int, _ body: () throws -> R) rethrows -> (seconds: Double, result: R) {
    var times: [Double] = []
    var result: R?
    for _ in 0..<repetitions {
        let start = nanoseconds()
        result = try body()
        times.append(Double(nanoseconds() - start) / 1e9)
    }
    times.sort()
    return (times[times.count / 2], result!)
}

/// Prints one result line: `LABEL  seconds  events/s`, and a `key=value` line for the script.
func report(_ label: String, key: String, events: Int, seconds: Double) {
    let rate = Double(events) / seconds
    print("\(label)  median \(format(seconds, 4)) s  \(format(rate / 1e6, 2)) M events/s")
    print("result \(key)_seconds=\(format(seconds, 6)) \(key)_eps=\(format(rate, 0))")
}

// MARK: - Modes

/// Loads every event of `path` into memory, with the device it describes.
func load(_ path: String) throws -> (DeviceDescription, [InputEvent]) {
    var device: DeviceDescription?
    var events: [InputEvent] = []
    try RecordingFiles(file: path).read(onDevice: { device = $0 }, onEvent: { events.append($0) })
    guard let device else { fail("\(path): no device description") }
    return (device, events)
}

/// The pipeline over an in-memory array, next to a loop that only sums the values.
func benchPipeline(_ path: String, repetitions: Int) throws {
    let (device, events) = try load(path)
    print("events \(events.count) (loaded into memory, not timed)")

    // What replay does per event: process, then hand the outputs on and clear the buffer.
    // Each repetition starts a fresh pipeline; its init takes microseconds, so it stays in.
    let pipelineRun = try medianSeconds(repetitions) { () throws -> Int in
        var pipeline = try ScalePipeline(device: device)
        var outputs: [ScaleOutput] = []
        outputs.reserveCapacity(16)
        var produced = 0
        for event in events {
            pipeline.process(event, into: &outputs)
            if !outputs.isEmpty {
                produced += outputs.count
                outputs.removeAll(keepingCapacity: true)
            }
        }
        pipeline.finish(into: &outputs)
        return produced + outputs.count
    }
    // The floor: touch every event once. The sum is printed, so the loop must run.
    let baselineRun = medianSeconds(repetitions) { () -> Int64 in
        var sum: Int64 = 0
        for event in events { sum &+= Int64(event.value) &+ event.time.microseconds }
        return sum
    }
    report("pipeline (ScalePipeline.process)", key: "pipeline", events: events.count, seconds: pipelineRun.seconds)
    report("baseline (sum of values)        ", key: "baseline", events: events.count, seconds: baselineRun.seconds)
    print("outputs \(pipelineRun.result)  checksum \(baselineRun.result)")
    print("ratio pipeline/baseline \(format(pipelineRun.seconds / baselineRun.seconds, 1))x")
}

/// Parsing from disk with a consumer that only counts.
func benchParse(_ path: String, repetitions: Int) throws {
    let run = try medianSeconds(repetitions) { () throws -> Int in
        var count = 0
        try RecordingFiles(file: path).read(onDevice: { _ in }, onEvent: { _ in count += 1 })
        return count
    }
    print("events \(run.result)")
    report("parse (RecordingFiles.read)", key: "parse", events: run.result, seconds: run.seconds)
}

/// libyaml's event parser over `path`, with nothing done with the events but counting them.
func benchLibyaml(_ path: String, repetitions: Int) throws {
    let run = medianSeconds(repetitions) { () -> Int in
        guard let file = fopen(path, "rb") else { fail("\(path): \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { fail("libyaml: cannot initialise a parser") }
        defer { yaml_parser_delete(&parser) }
        yaml_parser_set_input_file(&parser, file)
        var event = yaml_event_t()
        var count = 0
        while true {
            guard yaml_parser_parse(&parser, &event) == 1 else { fail("\(path): libyaml cannot parse it") }
            let type = event.type
            yaml_event_delete(&event)
            count += 1
            if type == YAML_STREAM_END_EVENT { return count }
        }
    }
    print("yaml_events \(run.result)")
    print("result libyaml_seconds=\(format(run.seconds, 6))")
}

/// FILE as a libinput recording, streamed (the 5 M-event file is not held in memory).
func convertToLibinput(_ path: String, output: String) throws {
    guard let file = fopen(output, "w") else { fail("\(output): \(String(cString: strerror(errno)))") }
    var startsFrame = true
    var frames = 0
    try RecordingFiles(file: path).read(
        onDevice: { fputs(LibinputRecordWriter.header(for: $0), file) },
        onEvent: { event in
            fputs(LibinputRecordWriter.line(for: event, startsFrame: startsFrame), file)
            startsFrame = event.type == .synchronization && event.code == .synReport
            if startsFrame { frames += 1 }
        })
    guard fclose(file) == 0 else { fail("\(output): \(String(cString: strerror(errno)))") }
    guard startsFrame else { fail("\(path): the last frame has no SYN_REPORT; the libinput format needs one") }
    print("frames \(frames)")
}

// MARK: - The stability rule's limits

/// Prints, for each noise level, the slowest creep the rule keeps from being stable.
func driftLimits(seeds: UInt64) throws {
    print("noise (raw units)  slowest drift seen (raw units/s)  (g/s, 0–255 nominal)  stable at half that rate")
    for (noise, wobble) in [(0.0, 0.0), (0.5, 0), (1, 0), (2, 0), (3, 0), (5, 0), (1, 1)] {
        func share(_ rate: Double) throws -> Double {
            var stable = 0
            var all = 0
            for seed in 1...seeds {
                let contact = SyntheticContact(
                    rest: 128, moveAt: 1, rate: -rate, moveFor: 20, noise: noise, wobble: wobble, wobbleHertz: 1.3, duration: 21)
                for (seconds, reading) in try contact.readings(seed: seed) where seconds >= 3 && seconds < 21 {
                    all += 1
                    if reading.stable { stable += 1 }
                }
            }
            return Double(stable) / Double(all)
        }
        var rate = 0.05
        while try share(rate) > 0.05, rate < 20 { rate += 0.05 }
        let half = try share(rate / 2)
        let label = format(noise, 1) + (wobble > 0 ? " + wobble \(format(wobble, 0)) at 1.3 Hz" : "")
        print("\(label)  \(format(rate, 2))  \(format(rate * GramModel.nominalFullScale / 255, 2))  \(format(half * 100, 0)) %")
        print("result noise=\(format(noise, 1)) wobble=\(format(wobble, 1)) slowest_drift_raw_per_s=\(format(rate, 2))")
    }
}

// MARK: - Main

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "contact" {
    let values = Array(arguments.dropFirst())
    guard values.count >= 5, let seed = UInt64(values[1]), let lead = Double(values[2]), let duration = Double(values[3]),
          let rest = Double(values[4]), lead >= 0, duration > 0
    else { fail("usage: forcescale-bench contact FILE SEED LEAD DURATION REST [RATE@AT:SECONDS]...") }
    let moves = values.dropFirst(5).map { text -> SyntheticContact.Move in
        let parts = text.split(whereSeparator: { $0 == "@" || $0 == ":" }).map { Double($0) }
        guard parts.count == 3, let rate = parts[0], let at = parts[1], let seconds = parts[2], seconds > 0 else {
            fail("a move is RATE@AT:SECONDS (raw units a second, from AT seconds for SECONDS), not '\(text)'")
        }
        return SyntheticContact.Move(at: at, rate: rate, seconds: seconds)
    }
    let contact = SyntheticContact(rest: rest, moves: moves, duration: duration)
    guard let file = fopen(values[0], "w") else { fail("cannot create \(values[0]): \(String(cString: strerror(errno)))") }
    fputs(EvemuWriter.text(of: contact.recording(seed: seed, lead: lead)), file)
    guard fclose(file) == 0 else { fail("\(values[0]): \(String(cString: strerror(errno)))") }
    exit(0)
}
if arguments.first == "drift-limits" {
    let seeds = arguments.count > 1 ? UInt64(arguments[arguments.startIndex + 1]) ?? 0 : 10
    guard seeds > 0 else { fail("SEEDS must be a positive whole number") }
    do { try driftLimits(seeds: seeds) } catch { fail("\(error)") }
    exit(0)
}
guard arguments.count == 2 || arguments.count == 3, let mode = arguments.first else {
    fail("usage: forcescale-bench pipeline|parse|libyaml FILE [REPETITIONS] | to-libinput FILE OUT | drift-limits [SEEDS] | contact FILE SEED LEAD DURATION REST [RATE@AT:SECONDS]...")
}
let path = arguments[arguments.startIndex + 1]
if mode == "to-libinput" {
    guard arguments.count == 3 else { fail("usage: forcescale-bench to-libinput FILE OUT") }
    do { try convertToLibinput(path, output: arguments.last!) } catch { fail("\(error)") }
    exit(0)
}
let repetitions = arguments.count == 3 ? Int(arguments.last!) ?? 0 : 5
guard repetitions > 0 else { fail("REPETITIONS must be a positive whole number") }
do {
    switch mode {
    case "pipeline": try benchPipeline(path, repetitions: repetitions)
    case "parse": try benchParse(path, repetitions: repetitions)
    case "libyaml": try benchLibyaml(path, repetitions: repetitions)
    default: fail("unknown mode '\(mode)'; use pipeline, parse, libyaml or to-libinput")
    }
} catch {
    fail("\(error)")
}
