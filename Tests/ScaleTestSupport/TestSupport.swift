import Glibc
import ScalePOSIX
import TestWaiting

// What the tests of ScalePOSIX, ScaleLog, ScaleDaemon and ScaleClient share. A library
// target rather than a file in each test target, so there is one copy; `public` for that
// reason, and no `Testing` here (a plain target cannot rely on it).

/// A fresh directory under /tmp, removed with everything in it when released.
public final class TemporaryDirectory {
    public let path: String

    public init() {
        var template = Array("/tmp/forcescale-tests-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed: \(Errno.current)")
        path = String(cString: made!)
    }

    deinit { Self.remove(path) }

    /// The names in a directory, without `.` and `..`.
    public static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public static func remove(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            chmod(path, 0o700)
            for name in names(in: path) { remove(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}

/// Writes a whole file, for setting up tests.
public func writeFile(_ path: String, _ text: String) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    precondition(descriptor >= 0, "\(path): \(Errno.current)")
    _ = text.utf8CString.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count - 1) }
    close(descriptor)
}

public func readFile(_ path: String) -> String? {
    (try? DurableFile.read(path, limit: 1 << 20))?.map { String(decoding: $0, as: UTF8.self) }
}

public func fileStatus(_ path: String) -> stat? {
    var status = stat()
    return lstat(path, &status) == 0 ? status : nil
}

public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Runs the loop in small steps until `condition` holds, and returns as soon as it does.
/// - Throws: `WaitTimedOut` naming `what` after `seconds`; the loop's errors.
public func pump(
    _ loop: EventLoop, _ what: String, within seconds: Double = patience, saw: () -> String = { "it never held" },
    until condition: () -> Bool
) throws {
    try waitFor(what, within: seconds, saw: saw, between: { _ = try loop.runOnce(timeoutMilliseconds: 5) }, condition)
}

/// The bytes waiting in a socket's receive queue (`FIONREAD`): 0 once its reader has taken
/// everything that was sent to it.
public func unreadBytes(_ descriptor: FileDescriptor) -> Int32 {
    var count: Int32 = 0
    return ioctl(descriptor.rawValue, UInt(FIONREAD), &count) == 0 ? count : -1
}

/// Runs the loop until a marker timer armed `microseconds` from now has fired, so that a
/// test can say "nothing else woke the loop" about a span that has certainly passed: any
/// timer of the loop due before the marker is ready by the time the marker is, and epoll
/// reports them together.
/// - Returns: How many handlers besides the marker's the loop ran meanwhile.
public func runLoopPastMarker(_ loop: EventLoop, microseconds: Int64) throws -> Int {
    let marker = try DeadlineTimer()
    var fired = false
    try loop.watch(marker.descriptor) {
        marker.acknowledge()
        fired = true
    }
    defer { loop.unwatch(marker.descriptor) }
    marker.arm(atMicroseconds: MonotonicClock.now() + microseconds)
    var handled = 0
    try waitFor("a marker timer \(microseconds / 1000) ms ahead to fire", between: { handled += try loop.runOnce(timeoutMilliseconds: 100) }) { fired }
    return handled - 1
}

/// The client side of a test connection: a plain socket that sends what it is told and
/// collects what it gets, without blocking.
public final class TestClient {
    public enum Status: Equatable {
        case open
        case endOfFile
        case failed(Errno)
    }

    public private(set) var descriptor: Int32
    public private(set) var received: [UInt8] = []
    public private(set) var status = Status.open

    public init(path: String) throws(SocketError) {
        descriptor = try UnixSocketAddress.makeStreamSocket(for: path)
        let address = try UnixSocketAddress(path: path)
        guard address.withSocketAddress({ connect(descriptor, $0, $1) }) == 0 else {
            let error = SocketError.current("connect to", path: path)
            // Closed here, and marked so: a class whose initializer throws once it is whole
            // is deinitialized, and a second close could take another test's descriptor.
            close()
            throw error
        }
    }

    deinit { close() }

    /// Closes the socket, once: closing a number twice could close another test's descriptor
    /// that was given the same number in between (tests run in parallel).
    public func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Sends everything, waiting (briefly, in a poll) when the socket is full, or as much
    /// as the server reads before it closes the connection.
    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT))
            }
            if count > 0 { sent += count; continue }
            if errno == EPIPE || errno == ECONNRESET { return }     // the server closed it
            precondition(errno == EAGAIN || errno == EINTR, "test client send failed: \(Errno.current)")
            var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            _ = poll(&entry, 1, 10)
        }
    }

    /// Reads whatever has arrived.
    public func readAvailable() {
        guard status == .open else { return }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 { received += buffer[..<count]; continue }
            if count == 0 { status = .endOfFile; return }
            if errno == EINTR { continue }
            if errno != EAGAIN { status = .failed(.current) }
            return
        }
    }

    /// The complete lines received so far.
    public var lines: [String] {
        var result = String(decoding: received, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        result.removeLast()    // the unfinished rest (empty after a final newline)
        return result
    }

    public func shutdownWriting() { shutdown(descriptor, Int32(SHUT_WR)) }
}
