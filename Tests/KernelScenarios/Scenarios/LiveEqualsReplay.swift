import Foundation
import KernelTestSupport
import Glibc

/// a. Live equals replay: each shared recording is played by evemu-play into a device made
/// by evemu-device, read live by `forcescale read`, and compared with `forcescale replay` of
/// the same events.
///
/// What "equal" means here. The pipeline never reads a clock and `--interval-ms 0` lets
/// every frame out, so live and replay must give the same sequence of READING lines, compared
/// on (raw, grams, contacts); time and `stable` are left out, since live timestamps are the
/// kernel's, not the recording's. Two kernel effects would make them differ for reasons that
/// are not forcescale's, so the setup removes them rather than the comparison excusing them:
/// - fuzz: the recorded values already went through the real device's fuzz filter; a uinput
///   device with the same fuzz would filter (and average) them a second time. The live
///   device is made from a copy of the description with every fuzz set to 0.
/// - initial state: evemu-device makes the device with every axis at its minimum or 0 and no
///   key down, and the reader starts with an empty state too (it takes no state from the
///   device at open), as replay does. A recording that starts mid-touch starts from the same
///   empty state on both sides. The kernel also drops events that repeat the current value,
///   and frames left empty; a recorded frame can only be empty for the fresh device if it
///   repeats the initial zeros, which changes nothing for the pipeline either.
/// Any other difference, including in the first frame, fails the check and is shown. PEAK
/// counts are compared too. (FORCESCALE_KT_KEEP_FUZZ=1 keeps the recorded fuzz, to see the
/// double filtering: bcm5974's ABS_PRESSURE has fuzz 5.) SYN_DROPPED in the reader's stderr (it fell behind under
/// emulation) is reported as the likely cause of a mismatch.
enum LiveEqualsReplay {
    struct Recording {
        var name: String
        /// The description (a `.desc`, or the whole recording for a single file).
        var description: String
        /// The events of a split pair; nil for a single file.
        var events: String?
    }

    static func run(_ programs: Programs) {
        guard let evemuDevice = programs.evemuDevice, let evemuPlay = programs.evemuPlay else {
            Report.shared.skip("a: live equals replay", reason: "evemu-device/evemu-play are not installed")
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let root = environment["FORCESCALE_RECORDINGS"] ?? "/work/shared/recordings"
        let cap = Double(environment["FORCESCALE_KT_MAX_SECONDS"] ?? "") ?? 35
        let recordings = discover(root)
        guard !recordings.isEmpty else {
            Report.shared.skip("a: live equals replay", reason: "no recordings with events under \(root)")
            return
        }
        let scratch = makeScratchFolder()
        for (index, recording) in recordings.enumerated() {
            compare(recording, index: index, programs: programs, evemuDevice: evemuDevice, evemuPlay: evemuPlay, cap: cap, scratch: scratch)
        }
    }

    // MARK: - Finding the recordings

    /// Single files (description and events) and split pairs (NAME.desc + NAME.*.events);
    /// description-only files are skipped.
    static func discover(_ root: String, scenario: String = "a") -> [Recording] {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue { files.append(path) }
        }
        var result: [Recording] = []
        var descriptionsUsed: Set<String> = []
        for path in files.sorted() where !path.hasSuffix(".desc") {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            let lines = text.split(separator: "\n")
            guard lines.contains(where: { $0.hasPrefix("E:") }) else { continue }
            let name = (path as NSString).lastPathComponent
            if lines.contains(where: { $0.hasPrefix("N:") }) {
                result.append(Recording(name: name, description: path, events: nil))
            } else if let description = companion(of: path) {
                descriptionsUsed.insert(description)
                result.append(Recording(name: name, description: description, events: path))
            } else {
                note("\(scenario): skipping \(name): events without a description")
            }
        }
        for path in files.sorted() where path.hasSuffix(".desc") && !descriptionsUsed.contains(path) {
            note("\(scenario): skipping \((path as NSString).lastPathComponent): a description without events")
        }
        return result
    }

    /// NAME.desc for NAME.events or NAME.anything.events.
    static func companion(of events: String) -> String? {
        var stem = (events as NSString).deletingPathExtension
        while true {
            if FileManager.default.fileExists(atPath: stem + ".desc") { return stem + ".desc" }
            let shorter = (stem as NSString).deletingPathExtension
            if shorter == stem || shorter.isEmpty { return nil }
            stem = shorter
        }
    }

    static func makeScratchFolder() -> String {
        var template = Array((NSTemporaryDirectory() + "/forcescale-kt.XXXXXX").utf8CString)
        let folder = template.withUnsafeMutableBufferPointer { buffer -> String? in
            guard let result = mkdtemp(buffer.baseAddress!) else { return nil }
            return String(cString: result)
        }
        return folder ?? NSTemporaryDirectory()
    }

    // MARK: - One recording

    /// The files a live run of a recording is made from, and replay's view of the same events.
    struct Prepared {
        /// The description with every fuzz at 0 (see the type's comment), for evemu-device.
        var liveDescription: String
        /// The events alone, for evemu-play.
        var eventsOnly: String
        /// What `forcescale replay` reads: the recording as shipped, or the same cut of it.
        var replayFiles: [String]
        /// The seconds between the first and the last event played.
        var playSeconds: Double
        var truncated: Bool
    }

    /// Writes the scratch files for `recording` at `base`.*, cut to its first `cap` seconds
    /// (ended on a frame boundary). Nil, with a failed check, when a file cannot be read or written.
    static func prepare(_ recording: Recording, base: String, cap: Double, label: String) -> Prepared? {
        guard let descriptionText = try? String(contentsOfFile: recording.description, encoding: .utf8),
              let eventsText = try? String(contentsOfFile: recording.events ?? recording.description, encoding: .utf8) else {
            check(false, "\(label): read the recording", "cannot read \(recording.description)")
            return nil
        }
        let headerLines = descriptionText.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("E:") }
        var eventLines = eventsText.split(separator: "\n").filter { $0.hasPrefix("E:") }
        func time(_ line: Substring) -> Double { Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0 }
        let duration = eventLines.isEmpty ? 0 : time(eventLines.last!) - time(eventLines.first!)
        var truncated = false
        if duration > cap {
            let start = time(eventLines.first!)
            var kept = Array(eventLines.prefix { time($0) - start <= cap })
            while let last = kept.last, !isReport(last) { kept.removeLast() }
            eventLines = kept
            truncated = true
            note(String(format: "%@: using the first %.0f s of %.1f s (%d of the recording's events)", label, cap, duration, kept.count))
        }
        let liveDescription = base + ".live.desc"
        let keepFuzz = ProcessInfo.processInfo.environment["FORCESCALE_KT_KEEP_FUZZ"] == "1"
        let unfuzzed = headerLines.map { line -> Substring in
            guard line.hasPrefix("A:"), !keepFuzz else { return line }
            var fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.count >= 5 { fields[4] = "0" }
            return Substring(fields.joined(separator: " "))
        }
        let eventsOnly = base + ".events"
        var replayFiles = recording.events.map { [recording.description, $0] } ?? [recording.description]
        do {
            try (unfuzzed.joined(separator: "\n") + "\n").write(toFile: liveDescription, atomically: true, encoding: .utf8)
            try (eventLines.joined(separator: "\n") + "\n").write(toFile: eventsOnly, atomically: true, encoding: .utf8)
            if truncated {
                if recording.events != nil {
                    replayFiles = [recording.description, eventsOnly]
                } else {
                    let whole = base + ".cut.events"
                    try (headerLines.joined(separator: "\n") + "\n" + eventLines.joined(separator: "\n") + "\n").write(toFile: whole, atomically: true, encoding: .utf8)
                    replayFiles = [whole]
                }
            }
        } catch {
            check(false, "\(label): write scratch files", "\(error)")
            return nil
        }
        let playSeconds = eventLines.isEmpty ? 0 : time(eventLines.last!) - time(eventLines.first!)
        return Prepared(liveDescription: liveDescription, eventsOnly: eventsOnly, replayFiles: replayFiles, playSeconds: playSeconds, truncated: truncated)
    }

    /// evemu-device on `description`, and the node it made; nil, with a failed check, when it makes none.
    static func startEvemuDevice(_ evemuDevice: String, _ description: String, label: String) -> (maker: Child, node: String)? {
        let maker: Child
        do {
            maker = try Child("evemu-device", [evemuDevice, description])
        } catch {
            check(false, "\(label): start evemu-device", "\(error)")
            return nil
        }
        var node: String?
        let named = waitFor("evemu-device to print its node and the node to exist", within: Limits.readerStart) {
            node = (maker.output + maker.errors).lazy.compactMap { line in line.range(of: "/dev/input/event").map { String(line[$0.lowerBound...]) } }.first
            return node.map(fileExists) ?? !maker.isRunning
        }
        guard let node, fileExists(node) else {
            check(false, "\(label): evemu-device makes a device",
                  "\(named.account); saw \(maker.ended.map { "it ended with \($0)" } ?? "no node")\n\(maker.tail())")
            maker.stop(SIGTERM, timeout: 10)
            return nil
        }
        return (maker, node)
    }

    static func compare(_ recording: Recording, index: Int, programs: Programs, evemuDevice: String, evemuPlay: String, cap: Double, scratch: String) {
        let label = "a: \(recording.name)"
        guard let prepared = prepare(recording, base: scratch + "/\(index)", cap: cap, label: label) else { return }
        let truncated = prepared.truncated
        let replayFiles = prepared.replayFiles
        // Replay first: it is quick, and says whether the recording can weigh at all.
        let (replayEnded, replay) = runToEnd("replay \(recording.name)", [programs.forcescale, "replay", "--json", "--interval-ms", "0"] + replayFiles, timeout: 120)
        if replayEnded == .exited(65), let message = replay?.errorText, message.contains("no pressure axis") || message.contains("degenerate") {
            Report.shared.skip("\(label): live equals replay", reason: "the device cannot weigh: \(message)")
            return
        }
        guard replayEnded == .exited(0), let replay else {
            check(false, "\(label): replay exits 0", "saw \(ending(replayEnded, waited: 120))\n\(replay?.tail() ?? "")")
            return
        }
        let expected = replay.outputs

        // The live side.
        guard let (maker, node) = startEvemuDevice(evemuDevice, prepared.liveDescription, label: label) else { return }
        defer { maker.stop(SIGTERM, timeout: 10) }
        guard let reader = startReader(programs, "read \(node)", ["--json", "--interval-ms", "0", "--no-rumble", "--device", node], scenario: "a") else { return }
        defer { reader.stop(SIGKILL) }

        let playLimit = prepared.playSeconds * 3 + 60
        let (playEnded, player) = runToEnd("evemu-play", [evemuPlay, node], timeout: playLimit, input: prepared.eventsOnly)
        guard playEnded == .exited(0) else {
            check(false, "\(label): evemu-play exits 0", "saw \(ending(playEnded, waited: playLimit))\n\(player?.tail() ?? "")")
            return
        }
        // evemu-play has exited, so every event is queued for the reader: once it sleeps in
        // its loop again with its output here, it has handled them all (see
        // Child.hasHandledQueuedInput), and only then is it stopped. Its lines after that
        // (the held reading at SIGINT, if any) are part of the comparison, as replay's end is.
        let caughtUp = waitFor("the reader to handle every event evemu-play wrote (asleep in epoll_wait, its output here)",
                               within: Limits.reaction * 2) { reader.hasHandledQueuedInput }
        let status = reader.stop(SIGINT)
        let live = reader.outputs

        func key(_ line: OutputLine) -> String { "\(line.raw) \(line.grams) \(line.contacts ?? -1)" }
        let liveReadings = live.filter(\.isReading)
        let expectedReadings = expected.filter(\.isReading)
        let liveKeys = liveReadings.map(key)
        let expectedKeys = expectedReadings.map(key)
        let mismatch = zip(liveKeys, expectedKeys).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? (liveKeys.count == expectedKeys.count ? nil : min(liveKeys.count, expectedKeys.count))
        let dropped = reader.errorsContain("SYN_DROPPED")
        var detail = ""
        if let mismatch {
            detail = "live \(liveReadings.count) readings, replay \(expectedReadings.count); first difference at #\(mismatch)\n"
                + "live:   \(summarize(liveReadings, around: mismatch))\nreplay: \(summarize(expectedReadings, around: mismatch))"
            if dropped { detail += "\nthe reader reported SYN_DROPPED: it fell behind evemu-play" }
        }
        expect("\(label): live readings equal replay's (\(expectedReadings.count) readings\(truncated ? ", first \(Int(cap)) s" : ""))",
               after: caughtUp, mismatch == nil, saw: detail)
        let livePeaks = live.filter(\.isPeak).map(\.raw)
        let expectedPeaks = expected.filter(\.isPeak).map(\.raw)
        expect("\(label): live PEAKs equal replay's (\(expectedPeaks.count))", after: caughtUp, livePeaks == expectedPeaks,
               saw: "live \(livePeaks), replay \(expectedPeaks)")
        check(status == .exited(0), "\(label): the reader exits 0 on SIGINT", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }

    static func isReport(_ line: Substring) -> Bool {
        let fields = line.split(separator: " ")
        return fields.count >= 5 && Int(fields[2], radix: 16) == 0 && Int(fields[3], radix: 16) == 0
    }
}
