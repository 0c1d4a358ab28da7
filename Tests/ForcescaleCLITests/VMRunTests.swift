import Foundation
import Testing

/// scripts/vm-run before it boots anything: virtme-ng 1.42 passes the directories it shares
/// on to virtme-run in one string split at blanks, so a directory with a blank in its path
/// cannot be shared, and vm-run says so at once (status 2) instead of a usage error of
/// virtme-run's. (The repository's own path may have blanks: the guest starts in the status
/// directory and changes to the repository itself; kernel scenario o run from a clone in
/// "/tmp/fs clone" shows it.)
@Suite struct VMRunTests {
    func vmRun(_ arguments: [String], environment: [String: String] = [:]) throws -> ProcessResult {
        try run("/bin/sh", [CLI.packageRoot.appendingPathComponent("scripts/vm-run").path] + arguments,
                environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"].merging(environment) { $1 })
    }

    @Test func aSharedDirectoryWithABlankIsRefusedBeforeBooting() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blank = directory.appendingPathComponent("a b")
        try FileManager.default.createDirectory(at: blank, withIntermediateDirectories: true)
        for arguments in [["--rwdir", blank.path], ["--rwdir=" + blank.path]] {
            let result = try vmRun(arguments + ["--", "true"])
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr == "vm-run: \(blank.path): virtme-ng cannot share a directory whose path has a blank; use one without (TMPDIR for vm-run's own)\n")
        }
    }

    @Test func aTemporaryDirectoryWithABlankIsRefusedBeforeBooting() throws {
        let directory = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blank = directory.appendingPathComponent("a b")
        try FileManager.default.createDirectory(at: blank, withIntermediateDirectories: true)
        let result = try vmRun(["--", "true"], environment: ["TMPDIR": blank.path])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("vm-run: \(blank.path)/forcescale-vm."), "\(result.stderr)")
        #expect(result.stderr.hasSuffix(": virtme-ng cannot share a directory whose path has a blank; use one without (TMPDIR for vm-run's own)\n"))
        // Its status directory goes with it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: blank.path) == [])
    }
}
