import Foundation
import Glibc

/// Monotonic seconds.
public enum Clock {
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    public static func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}

/// Everything the scenarios wait for (a child's output, an FF request, a child's exit)
/// is announced here, so waiting is a condition wait rather than a polling loop that would
/// steal the emulated CPU from the process under test.
public enum Changes {
    public static let condition = NSCondition()

    public static func announce() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}

/// Waits until `predicate` holds or `timeout` seconds pass; never longer.
/// - Returns: Whether the predicate held.
@discardableResult
public func waitUntil(_ timeout: Double, _ predicate: () -> Bool) -> Bool {
    let deadline = Clock.now() + timeout
    Changes.condition.lock()
    defer { Changes.condition.unlock() }
    while true {
        if predicate() { return true }
        let remaining = deadline - Clock.now()
        if remaining <= 0 { return false }
        // Re-check at least every 50 ms: some conditions (a file appearing, CPU time) are
        // not announced.
        _ = Changes.condition.wait(until: Date(timeIntervalSinceNow: min(remaining, 0.05)))
    }
}

/// Waits until `value()` has not changed for `quiet` seconds (or `timeout` passes).
/// - Returns: Whether it settled.
@discardableResult
public func waitForQuiet<T: Equatable>(_ quiet: Double, timeout: Double, _ value: () -> T) -> Bool {
    let deadline = Clock.now() + timeout
    var last = value()
    var since = Clock.now()
    while Clock.now() < deadline {
        Clock.sleep(0.1)
        let current = value()
        if current != last {
            last = current
            since = Clock.now()
        } else if Clock.now() - since >= quiet {
            return true
        }
    }
    return false
}

/// /proc facts about a process.
public enum ProcessInfoFile {
    /// utime + stime in clock ticks, and the state letter.
    public static func stat(_ pid: pid_t) -> (ticks: Int, state: String)? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // Fields after the command: state(3) ppid(4) … utime(14) stime(15).
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return (user + system, String(fields[0]))
    }

    public static var ticksPerSecond: Int { Int(sysconf(Int32(_SC_CLK_TCK))) }

    /// The open file descriptors and what each points to.
    public static func descriptors(_ pid: pid_t) -> [String] {
        let directory = "/proc/\(pid)/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.sorted { (Int($0) ?? 0) < (Int($1) ?? 0) }.map { name in
            var buffer = [CChar](repeating: 0, count: 512)
            let length = readlink(directory + "/" + name, &buffer, buffer.count - 1)
            let target = length > 0 ? String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
            return "\(name)->\(target)"
        }
    }
}

public func fileExists(_ path: String) -> Bool { access(path, F_OK) == 0 }

/// Finds a program on PATH (and in the usual system folders).
public func findProgram(_ name: String) -> String? {
    let path = (ProcessInfo.processInfo.environment["PATH"] ?? "") + ":/usr/bin:/bin:/usr/sbin:/sbin"
    for folder in path.split(separator: ":") where !folder.isEmpty {
        let candidate = "\(folder)/\(name)"
        if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
}
