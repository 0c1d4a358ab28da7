import Glibc
import ScalePOSIX
import ScaleTestSupport
import Testing

/// The funnel (`Errno.retrying`, `Errno.checking`) and the descriptor type on top of it.
@Suite struct FileDescriptorTests {
    /// A call that is interrupted twice and then succeeds, as `read` can be by signals.
    @Test func retryingCallsAgainAfterAnInterruptionAndReturnsTheResult() throws {
        var calls = 0
        let result = try Errno.retrying { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 42
        }
        #expect(result == 42)
        #expect(calls == 3)
    }

    @Test func retryingThrowsOtherFailuresAsTypedErrors() {
        var calls = 0
        #expect(throws: Errno.wouldBlock) {
            try Errno.retrying { () -> Int32 in
                calls += 1
                errno = EAGAIN
                return -1
            }
        }
        #expect(calls == 1)
    }

    /// close(2) must not be repeated: checking reports EINTR instead of calling again.
    @Test func checkingNeverCallsTwice() {
        var calls = 0
        #expect(throws: Errno.interrupted) {
            try Errno.checking { () -> Int32 in
                calls += 1
                errno = EINTR
                return -1
            }
        }
        #expect(calls == 1)
    }

    @Test func bytesGoThroughAPipeAndAClosedDescriptorSaysSo() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = FileDescriptor(rawValue: ends[0])
        let writer = FileDescriptor(rawValue: ends[1])
        let text = Array("forcescale\n".utf8)
        try text.withUnsafeBytes { bytes in try writer.writeAll(bytes) }
        try writer.close()
        var received = [UInt8](repeating: 0, count: 64)
        let count = try received.withUnsafeMutableBytes { buffer in try reader.read(into: buffer) }
        #expect(Array(received.prefix(count)) == text)
        // The writer is closed: the end of the stream, then EBADF for a second close.
        #expect(try received.withUnsafeMutableBytes { buffer in try reader.read(into: buffer) } == 0)
        try reader.close()
        #expect(throws: Errno(rawValue: EBADF)) { try reader.close() }
    }

    @Test func openingAMissingFileThrowsNoSuchFile() {
        let directory = TemporaryDirectory()
        #expect(throws: Errno.noSuchFile) {
            try FileDescriptor.open(directory.path + "/missing", O_RDONLY | O_CLOEXEC)
        }
    }

    @Test func aNonBlockingReadWithNothingThereIsWouldBlock() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        #expect(fcntl(ends[0], F_SETFL, O_NONBLOCK) == 0)
        let reader = FileDescriptor(rawValue: ends[0])
        defer { try? reader.close(); close(ends[1]) }
        var buffer = [UInt8](repeating: 0, count: 8)
        #expect(throws: Errno.wouldBlock) {
            try buffer.withUnsafeMutableBytes { bytes in _ = try reader.read(into: bytes) }
        }
    }
}
