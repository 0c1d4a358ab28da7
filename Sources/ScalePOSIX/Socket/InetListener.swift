import CLinux
import Glibc

/// A listening TCP socket (IPv4 or IPv6), non-blocking and close-on-exec: bound to an
/// address given on the command line, or adopted from the service manager.
///
/// Binding fails with a message that names the address and says what to do; a socket from
/// systemd and one of our own are served alike (`accept()`).
public final class InetListener {
    public let descriptor: FileDescriptor
    /// The address as bound (`127.0.0.1:19385`), with the port the kernel chose for port 0.
    public private(set) var address: String
    private var isClosed = false

    /// Binds and listens.
    /// - Parameters:
    ///   - host: A numeric IPv4 (`127.0.0.1`) or IPv6 (`::1`) address.
    ///   - port: The port; 0 lets the kernel choose one (see `address`).
    ///   - backlog: Connections the kernel queues before they are accepted.
    /// - Throws: `SocketError.system` naming the address and the step that failed, with a
    ///   hint for the common causes (address in use, a port below 1024, an address this
    ///   machine does not have).
    public init(host: String, port: UInt16, backlog: Int32 = 128) throws(SocketError) {
        let label = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var storage = sockaddr_storage()
        let length: socklen_t
        let family: Int32
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw .system(operation: "read the address", SystemError(path: label, errno: Errno(rawValue: EINVAL), hint: "give a numeric IPv4 or IPv6 address"))
            }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in6.self) }
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
            family = AF_INET6
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw .system(operation: "read the address", SystemError(path: label, errno: Errno(rawValue: EINVAL), hint: "give a numeric IPv4 or IPv6 address"))
            }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: address, as: sockaddr_in.self) }
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
            family = AF_INET
        }
        let raw = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { throw .current("make a socket for", path: label) }
        var one: Int32 = 1
        // A restart must not wait for the previous run's connections in TIME_WAIT.
        setsockopt(raw, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            // [::1] means IPv6 only; an IPv4 address is given as such.
            setsockopt(raw, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(raw, $0, length) }
        }
        guard bound == 0 else {
            let error = Errno.current
            Glibc.close(raw)
            let hint: String?
            switch error.rawValue {
            case EADDRINUSE: hint = "another program listens there; give another port with --listen"
            case EACCES: hint = "ports below 1024 need root or CAP_NET_BIND_SERVICE; give a higher port"
            case EADDRNOTAVAIL: hint = "this machine has no such address"
            default: hint = nil
            }
            throw .system(operation: "listen on", SystemError(path: label, errno: error, hint: hint))
        }
        guard listen(raw, backlog) == 0 else {
            let error = Errno.current
            Glibc.close(raw)
            throw .system(operation: "listen on", SystemError(path: label, errno: error))
        }
        descriptor = FileDescriptor(rawValue: raw)
        address = Self.localAddress(of: raw) ?? label
    }

    /// Takes over a TCP socket that is already bound and listening (descriptor 3 from a
    /// `.socket` unit); it is made non-blocking and close-on-exec.
    /// - Parameter descriptor: The socket; on failure the caller still owns it.
    /// - Throws: `SocketError.notAListeningSocket` when it is not a listening TCP socket.
    public init(adopting descriptor: FileDescriptor) throws(SocketError) {
        try ListeningSocketAdoption.prepare(descriptor, families: [AF_INET, AF_INET6], wrongFamily: "not a TCP socket (ListenStream= must be a port or an address with a port)")
        self.descriptor = descriptor
        address = Self.localAddress(of: descriptor.rawValue) ?? "descriptor \(descriptor.rawValue)"
    }

    deinit { close() }

    /// A connection taken from the queue, with where it comes from.
    public struct Accepted {
        /// Non-blocking and close-on-exec; the caller owns it.
        public let descriptor: FileDescriptor
        /// The peer's address as the kernel gave it.
        public let peer: sockaddr_storage
        public let peerLength: socklen_t
        /// The peer's IP address as text, without the port (`127.0.0.1`, `::1`).
        public let host: String

        /// The peer's address and port as text (`127.0.0.1:54321`, `[::1]:54321`), for logs.
        public var endpoint: String {
            let port: UInt16
            switch Int32(peer.ss_family) {
            case AF_INET: port = UInt16(bigEndian: withUnsafeBytes(of: peer) { $0.load(as: sockaddr_in.self) }.sin_port)
            case AF_INET6: port = UInt16(bigEndian: withUnsafeBytes(of: peer) { $0.load(as: sockaddr_in6.self) }.sin6_port)
            default: return host
            }
            return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// Takes the next connection without waiting.
    /// - Returns: The connection, or `nil` when none is waiting (also when one gave up
    ///   before it was taken).
    /// - Throws: `Errno` for anything else (`EMFILE`: out of descriptors).
    public func accept() throws(Errno) -> Accepted? {
        while true {
            var peer = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            do throws(Errno) {
                let raw = try Errno.retrying {
                    withUnsafeMutablePointer(to: &peer) {
                        forcescale_accept4_from(descriptor.rawValue, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
                    }
                }
                return Accepted(descriptor: FileDescriptor(rawValue: raw), peer: peer, peerLength: length, host: Self.host(of: peer) ?? "?")
            } catch {
                // One that gave up before it was taken: the next may be waiting.
                if error.rawValue == ECONNABORTED { continue }
                if error.rawValue == EAGAIN { return nil }
                throw error
            }
        }
    }

    /// Closes the socket; calling it again does nothing. A socket from the service manager
    /// is only closed in this process (never `shutdown`), so systemd keeps listening.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        try? descriptor.close()
    }

    /// A NUL-terminated C string in an array, as text.
    private static func string(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// An address's host as text, without the port.
    private static func host(of storage: sockaddr_storage) -> String? {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
        case AF_INET6:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            guard inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil else { return nil }
        default:
            return nil
        }
        return Self.string(text)
    }

    /// The socket's own address as text (`127.0.0.1:19385`, `[::1]:19385`).
    private static func localAddress(of raw: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let got = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(raw, $0, &length) }
        }
        guard got == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            guard inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
            return "\(Self.string(text)):\(UInt16(bigEndian: address.sin_port))"
        case AF_INET6:
            var address = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            guard inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count)) != nil else { return nil }
            return "[\(Self.string(text))]:\(UInt16(bigEndian: address.sin6_port))"
        default:
            return nil
        }
    }
}
