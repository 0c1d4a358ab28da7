import Foundation
import Glibc

/// A directory that another user (`nobody`, in the tests that drop privileges) can enter,
/// holding copies of what that user runs and reads, and the scratch files made for it.
///
/// The checkout, and its .build with it, may be inside a directory other users cannot
/// enter: a home directory of mode 0700 (Debian 12's default) or one made by `mktemp -d`.
/// From such a clone a program started as nobody fails before it runs ("/usr/bin/env:
/// '…/debug/forcescale': Permission denied", status 126), and nobody cannot read the
/// repository's files either. (setpriv gets past the first: it keeps root's capabilities
/// until the exec, so the exec finds the program; but what runs then cannot read anything
/// there: `make -C` fails, and so would a recording or a configuration kept in the clone.)
/// So a test that drops privileges gives that user copies: in a
/// fresh directory under /tmp (mkdtemp makes it 0700; it is opened to 0755, and /tmp is
/// 1777), not under $TMPDIR, which may be private too. Everything in it is removed when the
/// test releases it.
///
/// The copied programs still find the Swift runtime: the toolchain's linker gives them a
/// RUNPATH that names its library directory by absolute path (/opt/swift/usr/lib/swift/linux,
/// which anyone may read) before $ORIGIN; `ldd` on a copy, run as nobody, finds every library.
final class SharedWithOtherUsers {
    let directory: URL

    init() throws {
        var template = Array("/tmp/forcescale-shared-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else {
            throw DaemonTestError(description: "mkdtemp under /tmp: \(String(cString: strerror(errno)))")
        }
        directory = URL(fileURLWithPath: String(cString: made))
        try Self.openUp(directory.path, executable: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// `relative` inside the directory.
    func path(_ relative: String) -> String { directory.appendingPathComponent(relative).path }

    /// A directory inside (and the ones leading to it), each 0755 whatever the umask.
    @discardableResult
    func makeDirectory(_ relative: String) throws -> URL {
        var url = directory
        for component in relative.split(separator: "/") {
            url.appendPathComponent(String(component))
            if !FileManager.default.fileExists(atPath: url.path) {
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
            }
            try Self.openUp(url.path, executable: true)
        }
        return url
    }

    /// A program of this build (`forcescale`, `forcescaled`), copied into `bin/` once.
    /// - Returns: The copy's path.
    @discardableResult
    func program(_ name: String) throws -> String {
        let copy = path("bin/" + name)
        if FileManager.default.fileExists(atPath: copy) { return copy }
        return try self.copy(CLI.binDirectory.appendingPathComponent(name), to: "bin/" + name)
    }

    /// Copies a file or a whole folder to `relative`: folders and executables 0755, other
    /// files 0644.
    /// - Returns: The copy's path.
    @discardableResult
    func copy(_ source: URL, to relative: String) throws -> String {
        let parent = (relative as NSString).deletingLastPathComponent
        if !parent.isEmpty { try makeDirectory(parent) }
        let destination = path(relative)
        try FileManager.default.copyItem(atPath: source.path, toPath: destination)
        var isDirectory: ObjCBool = false
        _ = FileManager.default.fileExists(atPath: destination, isDirectory: &isDirectory)
        try Self.openUp(destination, executable: isDirectory.boolValue || Self.isExecutable(source.path))
        if isDirectory.boolValue, let walker = FileManager.default.enumerator(atPath: destination) {
            while let inner = walker.nextObject() as? String {
                let copied = destination + "/" + inner
                _ = FileManager.default.fileExists(atPath: copied, isDirectory: &isDirectory)
                try Self.openUp(copied, executable: isDirectory.boolValue || Self.isExecutable(source.path + "/" + inner))
            }
        }
        return destination
    }

    /// The files of the repository that `make install` and `make uninstall` read, copied
    /// into `repository/`. - Returns: That folder, to give to `make -C`.
    func repositoryForMakeInstall() throws -> URL {
        for name in ["Makefile", "desktop", "etc", "man", "python", "systemd", "sysusers.d", "udev"] {
            try copy(CLI.packageRoot.appendingPathComponent(name), to: "repository/" + name)
        }
        return directory.appendingPathComponent("repository")
    }

    private static func isExecutable(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & 0o111 != 0
    }

    private static func openUp(_ path: String, executable: Bool) throws {
        guard chmod(path, executable ? 0o755 : 0o644) == 0 else {
            throw DaemonTestError(description: "chmod \(path): \(String(cString: strerror(errno)))")
        }
    }
}
