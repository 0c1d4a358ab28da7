import Foundation
import Glibc

/// The programs the scenarios run.
public struct Programs: Sendable {
    /// The forcescale under test: the one built next to this executable.
    public var forcescale: String
    public var evemuDevice: String?
    public var evemuPlay: String?
    public var evtest: String?
    public var stdbuf: String?

    public static func locate() -> Programs {
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let me = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        let folder = (me as NSString).deletingLastPathComponent
        let forcescale = ProcessInfo.processInfo.environment["FORCESCALE_BINARY"] ?? folder + "/forcescale"
        return Programs(
            forcescale: forcescale, evemuDevice: findProgram("evemu-device"), evemuPlay: findProgram("evemu-play"),
            evtest: findProgram("evtest"), stdbuf: findProgram("stdbuf"))
    }

    /// The forcescaled built next to forcescale.
    public var forcescaled: String { (forcescale as NSString).deletingLastPathComponent + "/forcescaled" }

    /// The forcescaled built next to forcescale, when it is there to run; otherwise the
    /// scenario fails saying so, and gets nil.
    public func runnableForcescaled(scenario: String) -> String? {
        guard access(forcescaled, X_OK) == 0 else {
            check(false, "\(scenario): \(forcescaled) is there", "run 'swift build' first")
            return nil
        }
        return forcescaled
    }
}

/// Makes a scratch folder for one scenario's socket, state and log, named after it and this
/// process; the caller removes it.
public func makeScenarioFolder(_ scenario: String) -> String {
    let folder = "/tmp/forcescale-kt-\(scenario)-\(getpid())"
    mkdir(folder, 0o755)
    return folder
}

/// How long the slow parts may take. The emulated VM runs code 20–50× slower than the host,
/// and CI runs it on 2 cores shared with other builds, so the limits are generous: every
/// wait returns as soon as its condition holds, so they only cost time when something is
/// wrong (a limit that is too tight makes a check fail on a slow moment of the machine).
public enum Limits {
    /// From starting `forcescale read` to its "reading" notice (a Swift binary starting under
    /// emulation, and a scan of every node): 3–5 s on an idle VM.
    public static let readerStart = 120.0
    /// A short command (devices, rumble, a failing read) to its exit.
    public static let command = 120.0
    /// A reaction of a running process to something the test did: a reading or PEAK after
    /// an injected frame, a notice after an unplug, an FF request after a notice. 15 s
    /// was once too short under load (scenario g's removal notice).
    public static let reaction = 60.0
    /// A process to exit after SIGTERM/SIGINT (it erases effects, flushes, closes).
    public static let exit = 60.0
}

/// One JSON line of `forcescale read --json` / `replay --json`.
public struct OutputLine: Equatable, Sendable, CustomStringConvertible {
    public var kind: String
    public var raw: Int
    public var grams: Double
    public var force: Double?
    public var contacts: Int?

    public init?(_ line: String) {
        guard line.hasPrefix("{"), let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let kind = object["class"] as? String, kind == "READING" || kind == "PEAK",
              let raw = (object["raw"] as? NSNumber)?.intValue,
              let grams = (object["grams"] as? NSNumber)?.doubleValue
        else { return nil }
        self.kind = kind
        self.raw = raw
        self.grams = grams
        force = (object["force"] as? NSNumber)?.doubleValue
        contacts = (object["contacts"] as? NSNumber)?.intValue
    }

    public var isReading: Bool { kind == "READING" }
    public var isPeak: Bool { kind == "PEAK" }

    public var description: String {
        isReading ? "(raw \(raw), \(grams) g, \(contacts ?? -1) contacts)" : "PEAK(raw \(raw), \(grams) g)"
    }
}

extension Child {
    /// The READING and PEAK lines said so far.
    public var outputs: [OutputLine] { output.compactMap(OutputLine.init) }
    public var readings: [OutputLine] { outputs.filter(\.isReading) }
    public var lastReading: OutputLine? { output.reversed().lazy.compactMap(OutputLine.init).first { $0.isReading } }

    /// Whether a READING with this raw value has been printed (from standard-output line
    /// `from` on, to look only at what came after some moment).
    public func hasReading(raw: Int, contacts: Int? = nil, from: Int = 0) -> Bool {
        let key = "\"raw\":\(raw),"
        return output.dropFirst(from).reversed().contains { line in
            guard line.contains(key), let parsed = OutputLine(line), parsed.isReading else { return false }
            return contacts == nil || parsed.contacts == contacts
        }
    }
}

/// The counted substrings of `forcescale read --json` output.
public enum Marker {
    public static let peak = "\"class\":\"PEAK\""
    public static let reading = "\"class\":\"READING\""
}

/// Starts `forcescale read ARGS` and waits for its "reading" notice.
/// - Returns: The child, or `nil` after reporting why it did not start.
public func startReader(_ programs: Programs, _ label: String, _ arguments: [String], scenario: String) -> Child? {
    let child: Child
    do {
        child = try Child(label, [programs.forcescale, "read"] + arguments, counting: [Marker.peak, Marker.reading])
    } catch {
        check(false, "\(scenario): start \(label)", "\(error)")
        return nil
    }
    let started = Clock.now()
    if child.waitForError("forcescale: reading ", timeout: Limits.readerStart) { return child }
    let ended = child.ended
    check(false, "\(scenario): \(label) says it is reading",
          String(format: "waited %.1f s (limit %.0f s) for 'forcescale: reading' on its stderr; saw ", Clock.now() - started, Limits.readerStart)
              + "\(ended.map { "it ended with \($0)" } ?? "no notice")\n\(child.tail())")
    child.stop(SIGKILL)
    return nil
}

/// Puts a touch down at raw 50, waits for its READING, then stops the reader (SIGSTOP) and
/// waits until it is stopped with every line it wrote taken: from then on the pad's events
/// queue in the kernel and nothing more can come out until SIGCONT.
/// - Returns: `false` when one of those checks failed (it is reported).
public func touchDownAndStop(_ reader: Child, on pad: VirtualDevice, scenario s: String) -> Bool {
    pad.press(50, down: true)
    guard expect("\(s): the touch-down reads raw 50", within: Limits.reaction, waitingFor: "a READING raw 50 with 1 contact",
                 { reader.hasReading(raw: 50, contacts: 1) }, saw: reader.tail()) else { return false }
    reader.signal(SIGSTOP)
    return expect("\(s): the reader is stopped (SIGSTOP)", within: Limits.reaction, waitingFor: "state T in /proc and its output taken",
                  { ProcessInfoFile.stat(reader.pid)?.state == "T" && reader.hasTakenAll(.output) },
                  saw: "state \(ProcessInfoFile.stat(reader.pid)?.state ?? "?")")
}

/// Creates a device, reporting a failure as a check.
public func makeDevice(_ table: DeviceTable, scenario: String) -> VirtualDevice? {
    do {
        return try VirtualDevice(table)
    } catch {
        check(false, "\(scenario): create uinput device '\(table.name)'", "\(error)")
        return nil
    }
}

/// A short human description of a list that may be long.
public func summarize<T>(_ items: [T], around index: Int, radius: Int = 3) -> String {
    guard !items.isEmpty else { return "[]" }
    let low = max(0, index - radius)
    let high = min(items.count, index + radius + 1)
    guard low < high else { return "(\(items.count) items)" }
    return (low..<high).map { "[\($0)] \(items[$0])" }.joined(separator: " ")
}

/// How a process ended, for a failure's detail: its status, or that it had not ended after
/// `limit` seconds of waiting (it was killed then).
public func ending(_ ended: Termination?, waited limit: Double) -> String {
    ended.map(\.description) ?? "no exit within \(Int(limit)) s of waiting (then killed)"
}

/// The running kernel, as `uname` names it.
public enum RunningKernel {
    /// e.g. `7.3.4+deb13-amd64`.
    public static let release: String = {
        var names = utsname()
        uname(&names)
        return withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }()

    /// Whether it is `major.minor` or later (6.18 brought pressure pads' grams and FF_HAPTIC).
    public static func isAtLeast(_ major: Int, _ minor: Int) -> Bool {
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        guard numbers.count == 2 else { return false }
        return (numbers[0], numbers[1]) >= (major, minor)
    }
}
