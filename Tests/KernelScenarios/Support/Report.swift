import Foundation
import Glibc

/// TAP-like output: one `ok N - …` or `not ok N - …` line per check, `# …` lines for notes
/// and for what a failed check saw, then the plan and a plain `N passed, N failed` line.
public final class Report: @unchecked Sendable {
    public static let shared = Report()

    private let lock = NSLock()
    private var number = 0
    private(set) var passed = 0
    private(set) var failed = 0
    private(set) var skipped = 0
    private var failures: [String] = []
    private var round: String?
    public let started = Clock.now()

    /// With the scenarios repeated (FORCESCALE_KT_REPEAT), the round that is running: check
    /// names get " [round 2/5]", so that a failure says which round it was in.
    public func setRound(_ index: Int, of count: Int) {
        lock.lock()
        round = count > 1 ? "round \(index)/\(count)" : nil
        lock.unlock()
    }

    /// Records one check.
    /// - Parameters:
    ///   - condition: Whether it held.
    ///   - name: What was checked, e.g. "b: 1000 plays".
    ///   - detail: What was seen against what was expected; printed for a failure (and
    ///     for a pass too when `always` is set).
    @discardableResult
    public func check(_ condition: Bool, _ name: String, _ detail: @autoclosure () -> String = "", always: Bool = false) -> Bool {
        lock.lock()
        number += 1
        let name = round.map { "\(name) [\($0)]" } ?? name
        if condition { passed += 1 } else { failed += 1; failures.append(name) }
        var text = "\(condition ? "ok" : "not ok") \(number) - \(name)"
        let details = (!condition || always) ? detail() : ""
        if !details.isEmpty {
            text += "\n" + details.split(separator: "\n", omittingEmptySubsequences: false).map { "#   " + $0 }.joined(separator: "\n")
        }
        emit(text)
        lock.unlock()
        return condition
    }

    /// A check that could not run here, with why.
    public func skip(_ name: String, reason: String) {
        lock.lock()
        number += 1
        skipped += 1
        let name = round.map { "\(name) [\($0)]" } ?? name
        emit("ok \(number) - \(name) # SKIP \(reason)")
        lock.unlock()
    }

    /// A note, with the time since the start (the VM is slow: times help read a log).
    public func note(_ text: String) {
        lock.lock()
        let elapsed = String(format: "%.1f", Clock.now() - started)
        emit(text.split(separator: "\n", omittingEmptySubsequences: false).map { "# [\(elapsed)s] " + $0 }.joined(separator: "\n"))
        lock.unlock()
    }

    /// The plan and the summary; returns the exit status.
    public func finish() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        emit("1..\(number)")
        let elapsed = String(format: "%.1f", Clock.now() - started)
        if !failures.isEmpty {
            emit("# failed: " + failures.joined(separator: "; "))
        }
        emit("# kernel scenarios took \(elapsed)s")
        emit("\(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
        return failed == 0 ? 0 : 1
    }

    private func emit(_ text: String) { writeStandardOutput(text + "\n") }
}

/// Shorthands for the scenarios.
@discardableResult
public func check(_ condition: Bool, _ name: String, _ detail: @autoclosure () -> String = "", always: Bool = false) -> Bool {
    Report.shared.check(condition, name, detail(), always: always)
}

public func note(_ text: String) { Report.shared.note(text) }

/// Unbuffered, so that a log cut short by a timeout still has every line.
public func writeStandardOutput(_ text: String) { writeAll(STDOUT_FILENO, text) }
public func writeStandardError(_ text: String) { writeAll(STDERR_FILENO, text) }

private func writeAll(_ descriptor: Int32, _ text: String) {
    var bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
        if written < 0 { if errno == EINTR { continue }; return }
        offset += written
    }
}
