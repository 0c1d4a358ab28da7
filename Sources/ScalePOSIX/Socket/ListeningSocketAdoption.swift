import Glibc

/// What adopting a listening socket (descriptor 3 from systemd or systemd-socket-activate)
/// checks and changes, for every address family: that it is a stream socket of the expected
/// family and listening, then non-blocking and close-on-exec. UnixListener and InetListener
/// differ only in the families they take and in what their message says.
enum ListeningSocketAdoption {
    /// Checks the socket and makes it non-blocking and close-on-exec.
    /// - Parameters:
    ///   - descriptor: The socket; on failure the caller still owns it.
    ///   - families: The address families the caller serves (`AF_UNIX`; `AF_INET`, `AF_INET6`).
    ///   - wrongFamily: The reason given when it is of another family.
    /// - Throws: `SocketError.notAListeningSocket` naming what is wrong.
    static func prepare(_ descriptor: FileDescriptor, families: [Int32], wrongFamily: String) throws(SocketError) {
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(descriptor.rawValue, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        guard let type = option(SO_TYPE) else {
            throw .notAListeningSocket(descriptor: descriptor, reason: Errno.current.description)
        }
        guard type == Int32(SOCK_STREAM.rawValue) else {
            throw .notAListeningSocket(descriptor: descriptor, reason: "not a stream socket")
        }
        guard let domain = option(SO_DOMAIN), families.contains(domain) else {
            throw .notAListeningSocket(descriptor: descriptor, reason: wrongFamily)
        }
        guard option(SO_ACCEPTCONN) == 1 else {
            throw .notAListeningSocket(descriptor: descriptor, reason: "not listening")
        }
        let flags = fcntl(descriptor.rawValue, F_GETFL)
        guard flags >= 0, fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK) == 0,
              fcntl(descriptor.rawValue, F_SETFD, FD_CLOEXEC) == 0 else {
            throw .notAListeningSocket(descriptor: descriptor, reason: Errno.current.description)
        }
    }
}
