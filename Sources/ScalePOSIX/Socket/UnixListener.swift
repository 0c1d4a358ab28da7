import CLinux
import Glibc

/// A listening Unix stream socket: bound to a path it made (and removes again), or adopted
/// from whoever started the process (systemd socket activation). Non-blocking and
/// close-on-exec, so accepting never stalls the event loop and clients' descriptors never
/// leak into children.
public final class UnixListener {
    public let descriptor: FileDescriptor
    /// Where the socket lives, for messages; `nil` for an adopted socket without a path.
    public let path: String?
    /// The group the socket file was given, or `nil` when none was asked for or it does not
    /// exist (then the file keeps the daemon's group).
    public let group: gid_t?
    /// The socket file's device and inode as bound, so that `close` removes only our file,
    /// never one that replaced it. `nil` for an adopted socket, whose file is not ours.
    private let boundFile: (device: dev_t, inode: ino_t)?
    private var isClosed = false

    /// Binds a new socket at `path` and listens on it.
    ///
    /// A socket file left behind by a daemon that died is replaced, but only after a
    /// connection attempt shows that nothing listens on it any more; a live one is left
    /// alone. The file gets `mode` before `listen`, so no client can connect in between
    /// with the looser permissions `bind` gave it.
    /// - Parameters:
    ///   - path: Where the socket file goes; its directory must exist.
    ///   - mode: Its permissions: by default the owner and the group may connect.
    ///   - groupName: A group to give the file when that group exists (`getgrnam`).
    ///   - backlog: Connections the kernel queues before they are accepted.
    /// - Throws: `SocketError`: `.alreadyListening` when another process listens there,
    ///   `.notASocket` when the path is some other file, `.pathTooLong`, or `.system` naming
    ///   the path and the step that failed.
    public init(path: String, mode: mode_t = 0o660, groupName: String? = nil, backlog: Int32 = 128) throws(SocketError) {
        let address = try UnixSocketAddress(path: path)
        let descriptor = try UnixSocketAddress.makeStreamSocket(for: path)
        do throws(SocketError) {
            try Self.bind(descriptor, to: address)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        // From here on the file is ours: remove it again if any later step fails.
        let group = groupName.flatMap(UserDatabase.groupID(named:))
        var status = stat()
        do throws(SocketError) {
            guard chmod(path, mode) == 0 else { throw .current("set the permissions of", path: path) }
            if let group, chown(path, uid_t.max, group) != 0 {
                throw .current("give the socket to group \(groupName ?? "")", path: path,
                               hint: "run as root, or as a member of that group")
            }
            guard lstat(path, &status) == 0 else { throw .current("inspect", path: path) }
            guard listen(descriptor, backlog) == 0 else { throw .current("listen on", path: path) }
        } catch {
            unlink(path)
            Glibc.close(descriptor)
            throw error
        }
        self.descriptor = FileDescriptor(rawValue: descriptor)
        self.path = path
        self.group = group
        boundFile = (status.st_dev, status.st_ino)
    }

    /// Takes over a socket that is already bound and listening, such as descriptor 3 from
    /// systemd (`LISTEN_FDS`). It is made non-blocking and close-on-exec; its file belongs
    /// to whoever made it and is never removed.
    /// - Parameters:
    ///   - descriptor: The listening socket; on failure the caller still owns it.
    ///   - path: Its path for messages; asked of the socket when not given.
    /// - Throws: `SocketError.notAListeningSocket` when it is not a listening stream socket.
    public init(adopting descriptor: FileDescriptor, path: String? = nil) throws(SocketError) {
        try ListeningSocketAdoption.prepare(descriptor, families: [AF_UNIX], wrongFamily: "not a Unix socket")
        self.descriptor = descriptor
        self.path = path ?? Self.boundPath(of: descriptor.rawValue)
        group = nil
        boundFile = nil
    }

    deinit { close() }

    /// Accepts one pending connection.
    /// - Returns: The client's descriptor, non-blocking and close-on-exec, or `nil` when no
    ///   connection is waiting (also when one gave up before it was accepted).
    /// - Throws: `SocketError.system`, e.g. `EMFILE` when the process has no descriptor left.
    public func accept() throws(SocketError) -> FileDescriptor? {
        do throws(Errno) {
            return FileDescriptor(rawValue: try Errno.retrying {
                forcescale_accept4(descriptor.rawValue, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            })
        } catch {
            switch error.rawValue {
            case EAGAIN, ECONNABORTED: return nil
            default: throw .system(operation: "accept a connection on", SystemError(path: label, errno: error))
            }
        }
    }

    /// Stops listening and removes the socket file if this listener made it and it is still
    /// the same file. Calling it again does nothing.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        try? descriptor.close()
        guard let path, let boundFile else { return }
        var status = stat()
        if lstat(path, &status) == 0, status.st_dev == boundFile.device, status.st_ino == boundFile.inode {
            unlink(path)
        }
    }

    /// The path, or a description of the descriptor when there is none.
    var label: String { path ?? "listening descriptor \(descriptor)" }

    /// Binds, replacing a stale socket file once if the path is taken.
    private static func bind(_ descriptor: Int32, to address: UnixSocketAddress) throws(SocketError) {
        for attempt in 0..<2 {
            if address.withSocketAddress({ Glibc.bind(descriptor, $0, $1) }) == 0 { return }
            guard errno == EADDRINUSE, attempt == 0 else {
                throw .current("bind", path: address.path, hint: "check that the directory exists and is writable")
            }
            try removeStaleSocket(at: address)
        }
    }

    /// Removes the file at the address if it is a socket nobody listens on.
    private static func removeStaleSocket(at address: UnixSocketAddress) throws(SocketError) {
        var status = stat()
        guard lstat(address.path, &status) == 0 else {
            if errno == ENOENT { return }        // gone already: just bind again
            throw .current("inspect", path: address.path)
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else { throw .notASocket(path: address.path) }
        guard try !UnixSocketAddress.isListening(at: address) else { throw .alreadyListening(path: address.path) }
        guard unlink(address.path) == 0 || errno == ENOENT else {
            throw .current("remove the stale socket", path: address.path)
        }
    }

    /// The path an adopted socket is bound to, if it has one.
    private static func boundPath(of descriptor: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let status = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let path = withUnsafeBytes(of: address.sun_path) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
        return path.isEmpty ? nil : path
    }
}
