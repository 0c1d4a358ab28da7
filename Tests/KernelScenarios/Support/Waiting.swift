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
    /// Counts announcements, so that a waiter can evaluate its predicate without holding
    /// the condition's lock and still never miss an announcement made meanwhile.
    nonisolated(unsafe) private static var generation: UInt64 = 0

    public static func announce() {
        condition.lock()
        generation &+= 1
        condition.broadcast()
        condition.unlock()
    }

    static var current: UInt64 {
        condition.lock()
        defer { condition.unlock() }
        return generation
    }

    /// Sleeps until an announcement after `seen`, or `seconds` pass.
    static func wait(after seen: UInt64, atMost seconds: Double) {
        condition.lock()
        defer { condition.unlock() }
        if generation == seen {
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }
}

/// Waits until `predicate` holds or `timeout` seconds pass; never longer. Returns as soon as
/// it holds, so a generous timeout costs nothing on a quiet machine.
///
/// The predicate runs without any lock held, so it may itself wait (run a command to its
/// end, say).
/// - Returns: Whether the predicate held.
@discardableResult
public func waitUntil(_ timeout: Double, _ predicate: () -> Bool) -> Bool {
    let deadline = Clock.now() + timeout
    while true {
        // Read before evaluating: an announcement during the evaluation ends the sleep below.
        let seen = Changes.current
        if predicate() { return true }
        let remaining = deadline - Clock.now()
        if remaining <= 0 { return false }
        // Re-check at least every 50 ms: some conditions (a file appearing, a process's
        // state in /proc) are not announced.
        Changes.wait(after: seen, atMost: min(remaining, 0.05))
    }
}

/// Tries `attempt` until it succeeds or `timeout` seconds pass, pausing `pause` seconds
/// between attempts. For conditions that can only be asked by running a command (a
/// client's `status`, `systemctl is-system-running`): the pause paces those commands,
/// which would otherwise crowd out the emulated CPU; it stands in for no event.
/// - Returns: Whether an attempt succeeded.
@discardableResult
public func retry(_ timeout: Double, pause: Double, _ attempt: () -> Bool) -> Bool {
    let deadline = Clock.now() + timeout
    while true {
        if attempt() { return true }
        if Clock.now() + pause >= deadline { return false }
        Clock.sleep(pause)
    }
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

    /// The system call the process's main thread is blocked in, e.g. 232 (epoll_wait); nil
    /// while it runs. (Not proof of sleep on its own: a task being woken through another
    /// CPU's wake list is still shown in its syscall; see `sleepsInEventLoop`.)
    public static func blockedSyscall(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8),
              let first = text.split(separator: " ").first else { return nil }
        return Int(first.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Voluntary plus involuntary context switches of the main thread: it changes whenever
    /// the thread has run and given up the CPU.
    public static func contextSwitches(_ pid: pid_t) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        var total = 0
        var found = 0
        for line in text.split(separator: "\n") {
            for key in ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"] where line.hasPrefix(key) {
                guard let value = Int(line.dropFirst(key.count).trimmingCharacters(in: .whitespaces)) else { return nil }
                total += value
                found += 1
            }
        }
        return found == 2 ? total : nil
    }

    /// Whether the process's main thread sleeps in epoll_wait (x86-64: epoll_wait 232,
    /// epoll_pwait 281, epoll_pwait2 441) with nothing waking it: its event loop found
    /// nothing ready.
    ///
    /// The syscall alone is not enough: a wake-up (the write that queued an event for it)
    /// marks a sleeping task TASK_WAKING at once, but when it goes through another CPU's wake
    /// list the task stays shown in its syscall until that CPU runs it (seen: 3 trials in
    /// 30 looked idle before the reader had read a frame). So: in epoll_wait, then state S
    /// (a waking task shows R), then in the same syscall again, with no context switch
    /// between the first look and the last (a task that ran and went back to sleep has
    /// switched).
    public static func sleepsInEventLoop(_ pid: pid_t) -> Bool {
        guard let switches = contextSwitches(pid),
              let call = blockedSyscall(pid), [232, 281, 441].contains(call),
              stat(pid)?.state == "S",
              blockedSyscall(pid) == call,
              contextSwitches(pid) == switches else { return false }
        return true
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
