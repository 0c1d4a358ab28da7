import Foundation
import Glibc

/// How a child ended.
public enum Termination: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signaled(Int32)

    public var description: String {
        switch self {
        case .exited(let code): return "exit status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}

/// A child process with its standard output and error captured line by line on threads of
/// their own (so a chatty child never blocks on a full pipe), reaped on a thread of its own,
/// and killed at the end of the run whatever happens. Spawned with `posix_spawn` with a clean
/// signal mask and default dispositions: a signal ignored by whoever started the tests (a
/// shell's `&` ignores SIGINT) must not be ignored by the program under test.
public final class Child: @unchecked Sendable, CustomStringConvertible {
    public enum Stream: Sendable { case output, error }

    public let label: String
    public let pid: pid_t
    public let arguments: [String]
    public let started = Clock.now()

    private let lock = NSLock()
    private var lines: [Stream: [String]] = [.output: [], .error: []]
    private var partial: [Stream: [UInt8]] = [.output: [], .error: []]
    private var open: Set<Stream> = [.output, .error]
    /// Streams whose reading thread holds bytes it has not yet added as lines.
    private var busy: Set<Stream> = []
    /// The read ends of the pipes, while they are open.
    private var descriptors: [Stream: Int32] = [:]
    private var termination: Termination?
    /// Substrings counted over standard output as lines arrive (cheap to ask 1000 times).
    private var counted: [String: Int]

    private static let registryLock = NSLock()
    nonisolated(unsafe) private static var registry: [Child] = []

    /// - Parameters:
    ///   - label: How the child is named in the report.
    ///   - arguments: The program (an absolute path) and its arguments.
    ///   - input: A file for standard input (default /dev/null).
    ///   - counting: Substrings of standard-output lines to count as they arrive.
    ///   - outputFile: A file for standard output instead of the captured pipe (a benchmark
    ///     sends it to /dev/null, so that reading it costs nothing); `output` stays empty.
    public init(
        _ label: String, _ arguments: [String], input: String = "/dev/null", counting: [String] = [], outputFile: String? = nil
    ) throws {
        self.label = label
        self.arguments = arguments
        counted = Dictionary(uniqueKeysWithValues: counting.map { ($0, 0) })

        var output: [Int32] = [-1, -1]
        var error: [Int32] = [-1, -1]
        // Close-on-exec, so that other children do not hold these pipes open (only the main
        // thread spawns, so nothing can fork between pipe and fcntl).
        guard pipe(&output) == 0, pipe(&error) == 0 else {
            throw SpawnError(message: "pipe: \(String(cString: strerror(errno)))")
        }
        for descriptor in output + error { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        if let outputFile {
            posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        }
        posix_spawn_file_actions_adddup2(&actions, error[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM, SIGTSTP, SIGTTIN, SIGTTOU] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // The tests talk to /dev/input, whatever the caller's environment says.
        let environment = ProcessInfo.processInfo.environment.filter { $0.key != "FORCESCALE_INPUT_DIR" }
            .map { "\($0.key)=\($0.value)" }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let status = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        Glibc.close(output[1])
        Glibc.close(error[1])
        guard status == 0 else {
            Glibc.close(output[0])
            Glibc.close(error[0])
            throw SpawnError(message: "\(arguments[0]): \(String(cString: strerror(status)))")
        }
        pid = child

        Self.registryLock.lock()
        Self.registry.append(self)
        Self.registryLock.unlock()

        if outputFile == nil {
            startReading(output[0], .output)
        } else {
            Glibc.close(output[0])
            lock.lock()
            open.remove(.output)
            lock.unlock()
        }
        startReading(error[0], .error)
        let pid = child
        Thread.detachNewThread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                if errno != EINTR { status = 0; break }
            }
            let ended: Termination = status & 0x7f == 0 ? .exited((status >> 8) & 0xff) : .signaled(status & 0x7f)
            lock.lock()
            termination = ended
            lock.unlock()
            Changes.announce()
        }
    }

    public var description: String { "\(label) (pid \(pid))" }

    private func startReading(_ descriptor: Int32, _ stream: Stream) {
        lock.lock()
        descriptors[stream] = descriptor
        lock.unlock()
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                // Poll first and mark the stream busy before reading, so that
                // `hasTakenAll` never sees an empty pipe while bytes already read here are
                // not yet lines.
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                if poll(&poller, 1, -1) < 0 {
                    if errno == EINTR { continue }
                    break
                }
                lock.lock()
                busy.insert(stream)
                lock.unlock()
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN {
                    lock.lock()
                    busy.remove(stream)
                    lock.unlock()
                    continue
                }
                if count <= 0 { break }
                take(buffer[0..<count], stream)
                Changes.announce()
            }
            lock.lock()
            if let rest = partial[stream], !rest.isEmpty {
                add(String(decoding: rest, as: UTF8.self), stream)
                partial[stream] = []
            }
            open.remove(stream)
            busy.remove(stream)
            descriptors[stream] = nil
            lock.unlock()
            // Closed only once nobody can ask `hasTakenAll` about it any more.
            Glibc.close(descriptor)
            Changes.announce()
        }
    }

    /// Whether every byte the child has written to `stream` so far is in `output`/`errors`:
    /// the pipe is empty and no bytes read from it are still being split into lines. Asked
    /// after an event that the child wrote after some line, it says that line is here.
    public func hasTakenAll(_ stream: Stream = .output) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard open.contains(stream), let descriptor = descriptors[stream] else { return true }
        if busy.contains(stream) { return false }
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, 0) == 0 || poller.revents & Int16(POLLIN) == 0
    }

    /// Whether the child has handled all the input queued for it so far and printed what it
    /// gave: its main thread sleeps in epoll_wait, and every line it wrote is here.
    ///
    /// Why that is an ordered event and not a guess: writing an event to a device (or a
    /// line to a socket) that the child's epoll watches makes a sleeping child runnable at
    /// once, in the writer's system call; the kernel only reports a syscall in
    /// /proc/PID/syscall for a task that is not runnable; and the child's loop goes back
    /// into epoll_wait only after it has read everything ready and written its output. So,
    /// asked after the last input was written, this becomes true only once the child has
    /// taken all of it. (It holds for the single-threaded loop of `forcescale read`,
    /// `record` and `forcescaled`; were the loop on another thread, it would never become
    /// true, failing loudly rather than passing.)
    public var hasHandledQueuedInput: Bool {
        ProcessInfoFile.sleepsInEventLoop(pid) && hasTakenAll(.output) && hasTakenAll(.error)
    }

    private func take(_ bytes: ArraySlice<UInt8>, _ stream: Stream) {
        lock.lock()
        defer { lock.unlock() }
        var pending = partial[stream]!
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                add(String(decoding: pending, as: UTF8.self), stream)
                pending.removeAll(keepingCapacity: true)
            } else {
                pending.append(byte)
            }
        }
        partial[stream] = pending
        busy.remove(stream)
    }

    /// Called with the lock held.
    private func add(_ line: String, _ stream: Stream) {
        lines[stream]!.append(line)
        if stream == .output {
            for key in counted.keys where line.contains(key) { counted[key]! += 1 }
        }
    }

    // MARK: - Reading what it said

    public var output: [String] { lock.lock(); defer { lock.unlock() }; return lines[.output]! }
    public var errors: [String] { lock.lock(); defer { lock.unlock() }; return lines[.error]! }
    public var outputCount: Int { lock.lock(); defer { lock.unlock() }; return lines[.output]!.count }
    public var errorText: String { errors.joined(separator: "\n") }
    /// What standard error holds after its last newline: a prompt waiting for an answer.
    public var unfinishedErrorLine: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: partial[.error]!, as: UTF8.self)
    }
    public var outputText: String { output.joined(separator: "\n") }

    /// How many standard-output lines contained `key` (one of `counting`).
    public func count(_ key: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return counted[key] ?? lines[.output]!.filter { $0.contains(key) }.count
    }

    /// How many standard-error lines contain `text`.
    public func errorCount(_ text: String) -> Int {
        lock.lock()
        defer { lock.unlock() }
        return lines[.error]!.filter { $0.contains(text) }.count
    }

    public func errorsContain(_ text: String) -> Bool { errorCount(text) > 0 }

    public var ended: Termination? { lock.lock(); defer { lock.unlock() }; return termination }
    /// It has exited and both its pipes are closed: everything it ever wrote is here.
    public var hasFinished: Bool { lock.lock(); defer { lock.unlock() }; return termination != nil && open.isEmpty }
    public var isRunning: Bool { ended == nil }

    // MARK: - Controlling it

    public func signal(_ number: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if termination == nil { kill(pid, number) }
    }

    /// Waits for the exit and for both pipes to close.
    /// - Returns: How it ended, or `nil` on timeout.
    @discardableResult
    public func wait(_ timeout: Double) -> Termination? {
        waitUntil(timeout) {
            lock.lock()
            defer { lock.unlock() }
            return termination != nil && open.isEmpty
        }
        return ended
    }

    /// Waits for standard error to contain `text` `times` times; fails early if the child exits.
    @discardableResult
    public func waitForError(_ text: String, times: Int = 1, timeout: Double) -> Bool {
        waitUntil(timeout) { errorCount(text) >= times || (ended != nil && !isOpen(.error)) }
        return errorCount(text) >= times
    }

    private func isOpen(_ stream: Stream) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return open.contains(stream)
    }

    /// Sends `signal`, waits, and kills it if it does not go.
    @discardableResult
    public func stop(_ signal: Int32 = SIGTERM, timeout: Double = Limits.exit) -> Termination? {
        self.signal(signal)
        if let ended = wait(timeout) { return ended }
        self.signal(SIGKILL)
        _ = wait(10)
        return nil
    }

    /// Kills every child still running (the end of the run, or a watchdog).
    public static func killAll() {
        registryLock.lock()
        let children = registry
        registryLock.unlock()
        for child in children where child.isRunning {
            child.signal(SIGCONT)
            child.signal(SIGKILL)
        }
        for child in children { _ = child.wait(5) }
    }

    /// A few lines of what it printed, for a failure's detail.
    public func tail(_ count: Int = 8) -> String {
        let error = errors.suffix(count).map { "stderr: " + $0 }
        let output = output.suffix(count).map { "stdout: " + $0 }
        return (error + output).joined(separator: "\n")
    }
}

public struct SpawnError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Runs a command to its end (or kills it after `timeout`).
public func runToEnd(_ label: String, _ arguments: [String], timeout: Double, input: String = "/dev/null") -> (Termination?, Child?) {
    do {
        let child = try Child(label, arguments, input: input)
        let ended = child.wait(timeout)
        if ended == nil {
            child.signal(SIGKILL)
            _ = child.wait(10)
        }
        return (ended, child)
    } catch {
        note("could not start \(label): \(error)")
        return (nil, nil)
    }
}
