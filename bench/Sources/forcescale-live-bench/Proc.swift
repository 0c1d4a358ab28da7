import CEvdev
import Foundation
import Glibc
import KernelTestSupport

/// What /proc says about a process, read without disturbing it (reading /proc never wakes
/// the process itself).
struct ProcessSample {
    /// utime and stime of the whole thread group, in clock ticks (/proc/PID/stat fields 14, 15).
    var userTicks: Int
    var systemTicks: Int
    /// voluntary_ctxt_switches and nonvoluntary_ctxt_switches summed over every thread
    /// (/proc/PID/status counts only the thread it describes).
    var voluntary: Int
    var involuntary: Int
    var threads: Int
    /// Bytes returned by read(2) and friends (/proc/PID/io rchar).
    var readBytes: Int
    /// Time on a CPU in ns, summed over every thread (/proc/PID/task/TID/schedstat's first
    /// field: the scheduler's own account at each switch, where utime and stime are sampled
    /// at ticks, which charge a whole tick to whoever runs when it comes); -1 without it.
    var runNanoseconds: Int

    var ticks: Int { userTicks + systemTicks }
    var switches: Int { voluntary + involuntary }

    init?(_ pid: pid_t) {
        guard let stat = Proc.text("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state(3) ppid(4) … utime(14) stime(15).
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        userTicks = user
        systemTicks = system
        voluntary = 0
        involuntary = 0
        threads = 0
        runNanoseconds = 0
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let status = Proc.text("/proc/\(pid)/task/\(task)/status") else { continue }
            threads += 1
            voluntary += Proc.field(status, "voluntary_ctxt_switches:") ?? 0
            involuntary += Proc.field(status, "nonvoluntary_ctxt_switches:") ?? 0
            let run = Proc.text("/proc/\(pid)/task/\(task)/schedstat")?.split(separator: " ").first.flatMap { Int($0) }
            if let run, runNanoseconds >= 0 { runNanoseconds += run } else { runNanoseconds = -1 }
        }
        readBytes = Proc.text("/proc/\(pid)/io").flatMap { Proc.field($0, "rchar:") } ?? -1
    }
}

enum Proc {
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func text(_ path: String) -> String? {
        // /proc files report a size of 0: read until EOF.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            if count <= 0 { break }
            bytes += buffer[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The integer after `key` on its line, as in "voluntary_ctxt_switches:\t12".
    static func field(_ text: String, _ key: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            return Int(line.dropFirst(key.count).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// The system call the process is blocked in (/proc/PID/syscall's first field), or nil
    /// when it is running or the file cannot be read.
    static func syscall(_ pid: pid_t) -> Int? {
        guard let text = text("/proc/\(pid)/syscall") else { return nil }
        return text.split(separator: " ").first.flatMap { Int($0) }
    }

    /// Whether the process has `path` open.
    static func hasOpen(_ pid: pid_t, _ path: String) -> Bool {
        ProcessInfoFile.descriptors(pid).contains { $0.hasSuffix("->" + path) }
    }

    /// Waits until the process sits blocked in one of `syscalls` with its CPU time unchanged
    /// for `quiet` seconds: it has finished starting and waits for input.
    @discardableResult
    static func waitUntilIdle(_ pid: pid_t, in syscalls: Set<Int>, quiet: Double = 0.5, timeout: Double) -> Bool {
        let deadline = Clock.now() + timeout
        var since: Double?
        var lastTicks = -1
        while Clock.now() < deadline {
            let ticks = ProcessSample(pid)?.ticks ?? -1
            if let call = syscall(pid), syscalls.contains(call), ticks == lastTicks {
                if since == nil { since = Clock.now() }
                if Clock.now() - since! >= quiet { return true }
            } else {
                since = nil
            }
            lastTicks = ticks
            Clock.sleep(0.05)
        }
        return false
    }

    // x86_64 system call numbers.
    static let epollCalls: Set<Int> = [232, 281, 441]  // epoll_wait, epoll_pwait, epoll_pwait2
    static let selectCalls: Set<Int> = [7, 23, 270]  // poll, select, pselect6
    static let readCalls: Set<Int> = [0]  // read
}

/// What the bench runs beside the programs the kernel scenarios know.
extension Programs {
    /// The daemon beside the forcescale measured, or FORCESCALE_DAEMON_BINARY.
    var forcescaled: String {
        ProcessInfo.processInfo.environment["FORCESCALE_DAEMON_BINARY"]
            ?? (forcescale as NSString).deletingLastPathComponent + "/forcescaled"
    }

    /// The C floor reader that bench/live compiles beside this executable
    /// (bench/live-support/floor-read.c), or FORCESCALE_FLOOR_READ.
    var floorReader: String {
        if let path = ProcessInfo.processInfo.environment["FORCESCALE_FLOOR_READ"] { return path }
        var buffer = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let me = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        return (me as NSString).deletingLastPathComponent + "/forcescale-floor-read"
    }

    /// The build from before a change, measured in the same boot: FORCESCALE_BASELINE_BINARY
    /// and FORCESCALE_BASELINE_DAEMON_BINARY, both or neither.
    var baseline: (forcescale: String, forcescaled: String)? {
        let environment = ProcessInfo.processInfo.environment
        guard let read = environment["FORCESCALE_BASELINE_BINARY"], let daemon = environment["FORCESCALE_BASELINE_DAEMON_BINARY"] else { return nil }
        return (read, daemon)
    }

    /// Debian's python3, which finds Debian's python3-evdev (a python3 earlier on PATH, such
    /// as virtme-ng's venv, would not).
    var python: String? { fileExists("/usr/bin/python3") ? "/usr/bin/python3" : nil }
    var hasPythonEvdev: Bool { fileExists("/usr/lib/python3/dist-packages/evdev/__init__.py") }
    var strace: String? { findProgram("strace") }
}

/// Nearest-rank percentiles of a sample.
struct Distribution {
    let sorted: [Double]
    init(_ values: [Double]) { sorted = values.sorted() }

    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[Swift.min(Swift.max(rank, 1), sorted.count) - 1]
    }

    var max: Double { sorted.last ?? .nan }
    var min: Double { sorted.first ?? .nan }
    var mean: Double { sorted.isEmpty ? .nan : sorted.reduce(0, +) / Double(sorted.count) }
}

func format(_ value: Double, _ decimals: Int = 2) -> String { String(format: "%.\(decimals)f", value) }

/// Writes raw events to a uinput descriptor in one write(2): what a driver's interrupt does.
@discardableResult
func writeEvents(_ descriptor: Int32, _ events: UnsafeBufferPointer<input_event>) -> Bool {
    let total = events.count * MemoryLayout<input_event>.stride
    var offset = 0
    let base = UnsafeRawPointer(events.baseAddress!)
    while offset < total {
        let written = Glibc.write(descriptor, base + offset, total - offset)
        if written < 0 {
            if errno == EINTR || errno == EAGAIN { continue }
            return false
        }
        offset += written
    }
    return true
}

func inputEvent(_ type: Int32, _ code: Int32, _ value: Int32) -> input_event {
    var event = input_event()
    event.type = UInt16(type)
    event.code = UInt16(code)
    event.value = value
    return event
}
