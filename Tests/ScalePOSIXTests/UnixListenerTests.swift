import Glibc
@testable import ScalePOSIX
import ScaleTestSupport
import TestWaiting
import Testing

@Suite struct UnixListenerTests {
    @Test func theSocketFileHasMode0660() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        let listener = try UnixListener(path: path)
        let status = try #require(fileStatus(path))
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o7777 == 0o660)
        #expect(listener.group == nil)
        listener.close()
        #expect(fileStatus(path) == nil)
    }

    @Test func theSocketGoesToAGroupThatExists() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        let users = try #require(UserDatabase.groupID(named: "users"))
        let listener = try UnixListener(path: path, mode: 0o600, groupName: "users")
        #expect(listener.group == users)
        #expect(fileStatus(path)?.st_gid == users)
        #expect(fileStatus(path).map { $0.st_mode & 0o777 } == 0o600)

        let other = try UnixListener(path: directory.path + "/t.sock", groupName: "no-such-group-for-forcescale")
        #expect(other.group == nil)
        #expect(fileStatus(directory.path + "/t.sock")?.st_gid == getegid())
    }

    @Test func aSecondListenerOnALivePathFailsClearly() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        let first = try UnixListener(path: path)
        #expect(throws: SocketError.alreadyListening(path: path)) { try UnixListener(path: path) }
        let message = SocketError.alreadyListening(path: path).description
        #expect(message.contains(path) && message.contains("already listening"))
        // The failed attempt must not have removed the live socket.
        #expect(try TestClient(path: path).descriptor >= 0)
        first.close()
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        // A daemon that died: bound and listened, then closed without removing its file.
        let dead = try UnixSocketAddress.makeStreamSocket(for: path)
        let address = try UnixSocketAddress(path: path)
        #expect(address.withSocketAddress { bind(dead, $0, $1) } == 0)
        #expect(listen(dead, 1) == 0)
        close(dead)
        #expect(fileStatus(path) != nil)

        let listener = try UnixListener(path: path)
        let loop = try EventLoop()
        let server = try SocketServer(listener: listener, loop: loop)
        var accepted = 0
        server.onConnect = { _ in accepted += 1 }
        let client = try TestClient(path: path)
        try pump(loop, "the server to accept the client on the replaced socket", saw: { "\(accepted) connections" }) { accepted == 1 }
        _ = client
        server.close()
    }

    @Test func somethingElseAtThePathIsLeftAlone() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        writeFile(path, "not a socket")
        #expect(throws: SocketError.notASocket(path: path)) { try UnixListener(path: path) }
        #expect(readFile(path) == "not a socket")
    }

    @Test func aMissingDirectoryAndALongPathAreExplained() throws {
        let missing = "/tmp/forcescale-no-such-directory/s.sock"
        #expect {
            try UnixListener(path: missing)
        } throws: { error in
            "\(error)".contains(missing) && "\(error)".contains("no such file")
        }
        let long = "/tmp/" + String(repeating: "a", count: 120)
        #expect(throws: SocketError.pathTooLong(path: long, limit: 107)) { try UnixListener(path: long) }
    }

    @Test func closeLeavesAFileThatReplacedOurs() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/s.sock"
        let listener = try UnixListener(path: path)
        unlink(path)
        writeFile(path, "someone else's")
        listener.close()
        #expect(readFile(path) == "someone else's")
    }

    @Test func anInheritedListeningSocketIsAdoptedAndItsFileKept() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/activated.sock"
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)    // blocking, as inherited
        let address = try UnixSocketAddress(path: path)
        #expect(address.withSocketAddress { bind(descriptor, $0, $1) } == 0)
        #expect(listen(descriptor, 8) == 0)

        let listener = try UnixListener(adopting: FileDescriptor(rawValue: descriptor))
        #expect(listener.path == path)
        #expect(fcntl(descriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        #expect(try listener.accept() == nil)     // non-blocking: nothing waiting
        let client = try TestClient(path: path)
        let accepted = try #require(try listener.accept())
        try accepted.close()
        _ = client
        listener.close()
        #expect(fileStatus(path) != nil)         // systemd's file, not ours to remove
    }

    @Test func adoptingSomethingElseIsRefused() throws {
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(null) }
        #expect(throws: SocketError.self) { try UnixListener(adopting: FileDescriptor(rawValue: null)) }
        let unbound = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(unbound) }
        #expect(throws: SocketError.notAListeningSocket(descriptor: FileDescriptor(rawValue: unbound), reason: "not listening")) {
            try UnixListener(adopting: FileDescriptor(rawValue: unbound))
        }
    }
}
