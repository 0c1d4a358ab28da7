import Glibc
@testable import ScalePOSIX
import ScaleTestSupport
import Testing

/// forcescale-web's key files (docs/web.md, "Access"): random keys from the kernel, written
/// whole with the mode and group that say who may read them, never world-readable.
@Suite struct SecretFileTests {
    @Test func keysAreRandomHexOfTheLengthAsked() throws {
        let keys = try (0..<50).map { _ in try SecretFile.randomHex(bytes: 32) }
        #expect(keys.allSatisfy { $0.count == 64 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
        #expect(Set(keys).count == keys.count)
        // Every digit turns up across them (a constant nibble would show).
        #expect(Set(keys.joined()).count == 16)
    }

    @Test func aKeyFileIsItsOwnersOrItsGroupsAndReplacesTheOldOneWhole() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/read-key"
        try SecretFile.write("first\n", to: path, group: nil)
        #expect(fileStatus(path).map { $0.st_mode & 0o777 } == 0o600)
        // Our own group: 0640 with that group, the contents replaced.
        try SecretFile.write("second\n", to: path, group: getegid())
        #expect(fileStatus(path).map { $0.st_mode & 0o777 == 0o640 && $0.st_gid == getegid() } == true)
        #expect(readFile(path) == "second\n")
        // Back to the owner only: the group's read goes with the rename.
        try SecretFile.write("third\n", to: path, group: nil)
        #expect(fileStatus(path).map { $0.st_mode & 0o777 } == 0o600)
        // No temporary left beside it.
        #expect(TemporaryDirectory.names(in: directory.path) == ["read-key"])
        // A directory that is not there: an error naming the file.
        #expect(throws: SystemError.self) { try SecretFile.write("x", to: directory.path + "/missing/read-key", group: nil) }
        SecretFile.remove(path)
        #expect(TemporaryDirectory.names(in: directory.path).isEmpty)
    }

    @Test func theSocketsGroupAccessIsReadFromTheFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/sock"
        writeFile(path, "")
        #expect(chmod(path, 0o660) == 0)
        #expect(SecretFile.groupAccess(of: path) == SecretFile.GroupAccess(group: getegid(), groupMayWrite: true))
        #expect(chmod(path, 0o640) == 0)
        #expect(SecretFile.groupAccess(of: path)?.groupMayWrite == false)
        #expect(SecretFile.groupAccess(of: directory.path + "/none") == nil)
        #expect(SecretFile.processBelongs(to: getegid()))
    }
}
