import Glibc
@testable import ScalePOSIX
import ScaleTestSupport
import Testing

/// Outputs that replace a file only once complete (`forcescale log export --output`).
@Suite struct ReplacementFileTests {
    static func read(_ path: String) -> String? {
        guard let file = fopen(path, "r") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count == 0 { break }
            bytes += buffer.prefix(count)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func write(_ text: String, to path: String) {
        let file = fopen(path, "w")!
        fputs(text, file)
        fclose(file)
    }

    static func kind(_ path: String) -> mode_t {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
    }

    @Test func theOldFileStaysUntilTheCommit() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/export.csv"
        Self.write("old\n", to: path)
        let file = try ReplacementFile(path: path)
        try file.write("new,")
        try file.write(String(repeating: "x", count: 600_000) + "\n")
        #expect(Self.read(path) == "old\n", "a half-written export is never visible under the name")
        #expect(TemporaryDirectory.names(in: directory.path).count == 2, "the temporary beside it")
        try file.commit()
        #expect(Self.read(path) == "new," + String(repeating: "x", count: 600_000) + "\n")
        #expect(TemporaryDirectory.names(in: directory.path) == ["export.csv"], "no temporary left")
    }

    @Test func abandoningLeavesTheOldFileAndNoTemporary() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/export.csv"
        Self.write("old\n", to: path)
        let file = try ReplacementFile(path: path)
        try file.write("new\n")
        file.abandon()
        #expect(Self.read(path) == "old\n")
        #expect(TemporaryDirectory.names(in: directory.path) == ["export.csv"])
        // Released without a commit: the same.
        do {
            let forgotten = try ReplacementFile(path: directory.path + "/other.csv")
            try forgotten.write("x")
        }
        #expect(TemporaryDirectory.names(in: directory.path) == ["export.csv"])
    }

    @Test func aSymbolicLinkHasItsTargetReplaced() throws {
        let directory = TemporaryDirectory()
        Self.write("old\n", to: directory.path + "/real.csv")
        #expect(symlink("real.csv", directory.path + "/link.csv") == 0)
        let file = try ReplacementFile(path: directory.path + "/link.csv")
        try file.write("new\n")
        try file.commit()
        #expect(Self.kind(directory.path + "/link.csv") == S_IFLNK, "the link is still a link")
        #expect(Self.read(directory.path + "/real.csv") == "new\n")
    }

    /// A FIFO stands for every path that is not a regular file (`/dev/stdout`, `/dev/null`):
    /// renaming over it would put a plain file where it was, so it is written in place.
    @Test func aFIFOIsWrittenInPlaceNotReplaced() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/pipe"
        #expect(mkfifo(path, 0o600) == 0)
        // A reader first, so that opening for writing does not wait for one.
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
        defer { close(reader) }
        let file = try ReplacementFile(path: path)
        try file.write("through the pipe\n")
        try file.commit()
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = Glibc.read(reader, &buffer, buffer.count)
        #expect(count > 0 && String(decoding: buffer.prefix(count), as: UTF8.self) == "through the pipe\n")
        #expect(Self.kind(path) == S_IFIFO, "still a FIFO")
        #expect(TemporaryDirectory.names(in: directory.path) == ["pipe"])
    }

    @Test func aMissingDirectoryIsAnErrorNamingThePath() {
        #expect(throws: SystemError(path: "/nonexistent/dir/out.csv", errno: .noSuchFile, hint: "check that the directory exists and is writable")) {
            _ = try ReplacementFile(path: "/nonexistent/dir/out.csv")
        }
    }
}

/// The temporaries a killed save leaves, removed at the next start; nothing else is.
@Suite struct DurableFileTemporariesTests {
    @Test func onlyTheTemporariesOfSavesAreRemoved() throws {
        let directory = TemporaryDirectory()
        let keep = ["device.json", ".hidden", ".device.json.tmp-", ".device.json.tmp-ABC", "device.json.tmp-abc", ".device.json.corrupt-1"]
        let remove = [".device.json.tmp-2y2o0g6xyb7vk", ".other-name.json.tmp-17zrq"]
        for name in keep + remove { ReplacementFileTests.write("x", to: directory.path + "/" + name) }
        // A directory with a temporary's name is not a file this module wrote.
        #expect(mkdir(directory.path + "/.a.tmp-1", 0o700) == 0)
        // Nor is a symbolic link with one.
        #expect(symlink(directory.path + "/device.json", directory.path + "/.b.tmp-2") == 0)

        #expect(DurableFile.removeTemporaries(in: directory.path) == 2)
        for name in keep { #expect(ReplacementFileTests.kind(directory.path + "/" + name) == S_IFREG, "\(name)") }
        for name in remove { #expect(ReplacementFileTests.kind(directory.path + "/" + name) == 0, "\(name)") }
        #expect(ReplacementFileTests.kind(directory.path + "/.a.tmp-1") == S_IFDIR)
        #expect(ReplacementFileTests.kind(directory.path + "/.b.tmp-2") == S_IFLNK)
        #expect(DurableFile.removeTemporaries(in: directory.path + "/missing") == 0)
    }
}
