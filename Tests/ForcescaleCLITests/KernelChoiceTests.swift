import Foundation
import Testing

/// scripts/vm-kernel, which picks the kernel the scenarios' VM boots (`make test KERNEL=…`):
/// a kernel fetched into its cache is found there, the newest of the series asked for and of
/// the plain flavour; a series it cannot find or fetch is an error that says what to run.
/// (Series 9.x, which no machine has in /boot, so that only the cache can answer.)
@Suite struct KernelChoiceTests {
    func vmKernel(_ arguments: [String], cache: URL, environment: [String: String] = [:]) throws -> CLI.Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [CLI.packageRoot.appendingPathComponent("scripts/vm-kernel").path] + arguments
        process.environment = ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "FORCESCALE_KERNEL_CACHE": cache.path, "HOME": cache.path]
            .merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Both outputs are a few lines: neither pipe can fill before the other is read.
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLI.Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// An unpacked kernel package as vm-kernel leaves it: VERSION/boot/vmlinuz-VERSION and
    /// VERSION/lib/modules/VERSION.
    func unpack(_ version: String, in cache: URL, modules: Bool = true) throws {
        let root = cache.appendingPathComponent(version)
        try FileManager.default.createDirectory(at: root.appendingPathComponent("boot"), withIntermediateDirectories: true)
        try Data("not a kernel".utf8).write(to: root.appendingPathComponent("boot/vmlinuz-" + version))
        if modules {
            try FileManager.default.createDirectory(at: root.appendingPathComponent("lib/modules/" + version), withIntermediateDirectories: true)
        }
    }

    @Test func theNewestPlainKernelOfTheSeriesInTheCacheIsTaken() throws {
        let cache = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        try unpack("9.12.3+deb12-amd64", in: cache)
        try unpack("9.12.10+deb12-amd64", in: cache)
        try unpack("9.12.20+deb12-rt-amd64", in: cache)
        try unpack("9.12.30+deb12-cloud-amd64", in: cache)
        try unpack("9.1.0-7-amd64", in: cache)
        let twelve = try vmKernel(["9.12"], cache: cache)
        #expect(twelve.status == 0, "\(twelve.stderr)")
        #expect(twelve.stdout == cache.path + "/9.12.10+deb12-amd64/boot/vmlinuz-9.12.10+deb12-amd64\n")
        // 9.1 is not the start of 9.12.
        let one = try vmKernel(["9.1"], cache: cache)
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout == cache.path + "/9.1.0-7-amd64/boot/vmlinuz-9.1.0-7-amd64\n")
    }

    @Test func aSeriesThatCannotBeFoundOrFetchedSaysWhatToRun() throws {
        let cache = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        // An image without its modules cannot boot the scenarios (uinput is a module).
        try unpack("9.7.1+deb12-amd64", in: cache, modules: false)
        let missing = try vmKernel(["9.7"], cache: cache)
        #expect(missing.status == 1)
        #expect(missing.stdout.isEmpty)
        #expect(missing.stderr.contains("no kernel 9.7 here and apt knows no package for it"), "\(missing.stderr)")
        #expect(missing.stderr.contains("apt-cache policy 'linux-image-9.7*'"))
        for bad in ["latest", "6", "6.12;true"] {
            let result = try vmKernel([bad], cache: cache)
            #expect(result.status == 1)
            #expect(result.stderr.contains("must be a kernel series such as 6.1, 6.12 or 7.3, or newest, not '\(bad)'"), "\(result.stderr)")
        }
    }

    /// `newest` asks the newest-kernel suite which kernel it offers; when its lists cannot be
    /// read (a mirror that does not answer here), the newest kernel fetched before is used and
    /// said to be, and with none fetched the failure says what to check and what else to run.
    @Test func newestFallsBackToTheNewestFetchedKernelWhenTheSuiteCannotBeRead() throws {
        let cache = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: cache) }
        let unreachable = ["FORCESCALE_KERNEL_MIRROR": "http://127.0.0.1:9/debian"]
        let none = try vmKernel(["newest"], cache: cache, environment: unreachable)
        #expect(none.status == 1)
        #expect(none.stdout.isEmpty)
        #expect(none.stderr.contains("could not find the newest kernel: trixie-backports's package lists (http://127.0.0.1:9/debian) could not be read"), "\(none.stderr)")
        #expect(none.stderr.contains("make test KERNEL=6.12"))
        try unpack("9.12.10+deb12-amd64", in: cache)
        try unpack("10.2.1+deb14-amd64", in: cache)
        try unpack("10.3.0+deb14-rt-amd64", in: cache)
        let cached = try vmKernel(["newest"], cache: cache, environment: unreachable)
        #expect(cached.status == 0, "\(cached.stderr)")
        #expect(cached.stdout == cache.path + "/10.2.1+deb14-amd64/boot/vmlinuz-10.2.1+deb14-amd64\n")
        #expect(cached.stderr.contains("using the newest kernel fetched before, 10.2.1+deb14-amd64"), "\(cached.stderr)")
    }
}
