import Foundation
import Testing

/// Runs the built `forcescale` binary as a user would, and finds the shared recordings.
enum CLI {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `FORCESCALE_BIN_DIR` (set by `make test`) or the debug build directory.
    static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["FORCESCALE_BIN_DIR"] { return URL(fileURLWithPath: dir) }
        return packageRoot.appendingPathComponent(".build/debug")
    }

    /// The shared evemu recordings; CI has them, so their absence is a failure, not a skip.
    /// `FORCESCALE_RECORDINGS`, else `../shared/recordings` beside the checkout, else the
    /// workplace's `/work/shared/recordings`.
    static var recordings: URL {
        if let dir = ProcessInfo.processInfo.environment["FORCESCALE_RECORDINGS"] { return URL(fileURLWithPath: dir) }
        let beside = packageRoot.appendingPathComponent("../shared/recordings").standardizedFileURL
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: "/work/shared/recordings")
    }

    static let goldenDirectory = packageRoot.appendingPathComponent("Tests/Golden")

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a product of the package with arguments, in a clean environment.
    static func run(_ arguments: [String], product: String = "forcescale", environment: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = binDirectory.appendingPathComponent(product)
        process.arguments = arguments
        process.environment = cleanEnvironment(environment)
        // Standard error goes to a file, so that neither pipe can fill up and stall the child
        // while the other is read.
        let errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("forcescale-stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let out = Pipe()
        process.standardOutput = out
        // Closed here, once the child has its copy: left to the handle's deallocation, the
        // close came at a moment no one chose and, the tests running in parallel, could
        // close a descriptor another test had since been given the same number for (a test
        // then failed reading its own file with EBADF).
        let errorHandle = try FileHandle(forWritingTo: errorFile)
        process.standardError = errorHandle
        defer { try? errorHandle.close() }
        try process.run()
        try errorHandle.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = try Data(contentsOf: errorFile)
        return Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The environment programs under test get: PATH and LANG, then `extra`. Under `make
    /// coverage` (FORCESCALE_COVERAGE_PROFILES names a directory anyone may write to) also
    /// `LLVM_PROFILE_FILE` there, so that instrumented programs, whichever user they run as,
    /// write their profiles where scripts/coverage gathers them.
    static func cleanEnvironment(_ extra: [String: String]) -> [String: String] {
        var base = ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
        if let directory = ProcessInfo.processInfo.environment["FORCESCALE_COVERAGE_PROFILES"] {
            base["LLVM_PROFILE_FILE"] = directory + "/%p-%m.profraw"
        }
        return base.merging(extra) { $1 }
    }

    /// A scratch directory removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("forcescale-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
