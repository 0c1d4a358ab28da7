import Glibc
@testable import ScalePOSIX
import Testing

@Suite struct InheritedSocketsTests {
    @Test func theVariablesCountOnlyForTheirOwnProcess() throws {
        #expect(try InheritedSockets.count(listenPID: nil, listenFDs: nil, pid: 10) == 0)
        #expect(try InheritedSockets.count(listenPID: "10", listenFDs: nil, pid: 10) == 0)
        #expect(try InheritedSockets.count(listenPID: "10", listenFDs: "2", pid: 10) == 2)
        // A parent's variables, not removed, are not this process's sockets.
        #expect(try InheritedSockets.count(listenPID: "11", listenFDs: "2", pid: 10) == 0)
        #expect(throws: InheritedSocketsError.malformed(variable: "LISTEN_PID", value: "x")) {
            try InheritedSockets.count(listenPID: "x", listenFDs: "1", pid: 10)
        }
        #expect(throws: InheritedSocketsError.malformed(variable: "LISTEN_FDS", value: "-1")) {
            try InheritedSockets.count(listenPID: "10", listenFDs: "-1", pid: 10)
        }
    }

    @Test func aTCPListenerBindsReportsItsPortAndIsAdoptedAsSuch() throws {
        let listener = try InetListener(host: "127.0.0.1", port: 0)
        #expect(listener.address.hasPrefix("127.0.0.1:"))
        #expect(listener.address != "127.0.0.1:0")
        let port = UInt16(listener.address.split(separator: ":").last!)!
        // Taken: a second bind names the address and says what to do.
        #expect {
            _ = try InetListener(host: "127.0.0.1", port: port)
        } throws: { error in
            "\(error)".contains("127.0.0.1:\(port)") && "\(error)".contains("--listen")
        }
        let copy = FileDescriptor(rawValue: dup(listener.descriptor.rawValue))
        let adopted = try InetListener(adopting: copy)
        #expect(adopted.address == listener.address)
        // A Unix socket is no TCP listener.
        let unix = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(unix) }
        #expect(throws: SocketError.self) { _ = try InetListener(adopting: FileDescriptor(rawValue: unix)) }
    }
}
