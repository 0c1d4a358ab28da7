// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "forcescale",
    products: [
        .executable(name: "forcescale", targets: ["forcescale"]),
        .executable(name: "forcescaled", targets: ["forcescaled"]),
    ],
    targets: [
        // libevdev and the kernel's evdev/uinput ioctls, with shims for the macros.
        .systemLibrary(name: "CEvdev", pkgConfig: "libevdev", providers: [.apt(["libevdev-dev"])]),
        // epoll, timerfd, signalfd and inotify, which the Glibc module leaves out.
        .systemLibrary(name: "CLinux"),
        // libsystemd's sd-daemon: readiness and watchdog notifications, socket activation.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // SQLite 3 for the force log (sessions, readings, peaks).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Pure: no clock, no file descriptor. Events in; readings, peaks and deadlines out.
        .target(name: "ScaleCore"),
        // Everything that touches the operating system.
        .target(name: "ScaleSystem", dependencies: ["ScaleCore", "CEvdev", "CLinux", "CSystemd", "CSQLite"]),
        // swift-argument-parser's conventions, written by hand (no outside packages here).
        .target(name: "ArgumentParsing"),
        // The pipeline's options, declared once for forcescale and forcescaled.
        .target(name: "ScaleOptions", dependencies: ["ArgumentParsing", "ScaleCore"]),
        // How readings look to a person: the gauge line, the bar, units.
        .target(name: "ScaleDisplay", dependencies: ["ScaleCore"]),
        // The service: the loop that owns the source, the clients and the calibration.
        .target(name: "ScaleDaemon", dependencies: ["ScaleCore", "ScaleSystem", "ScaleOptions"]),
        .executableTarget(
            name: "forcescale",
            dependencies: ["ScaleCore", "ScaleSystem", "ScaleDisplay", "ArgumentParsing", "ScaleOptions"]),
        .executableTarget(
            name: "forcescaled",
            dependencies: ["ArgumentParsing", "ScaleCore", "ScaleSystem", "ScaleDaemon", "ScaleOptions"]),
        .executableTarget(
            name: "forcescale-bench",
            dependencies: ["ScaleCore", "ScaleSystem", "BenchSupport"],
            path: "bench/Sources/forcescale-bench"),
        // bench/log: the force log's inserts (batched against one transaction per reading),
        // bytes per reading, and reading 1 M readings back. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-log-bench",
            dependencies: ["ScaleCore", "ScaleSystem", "BenchSupport"],
            path: "bench/Sources/forcescale-log-bench"),
        // The host benchmarks' clock, failure exit and number formatting.
        .target(name: "BenchSupport", path: "bench/Sources/BenchSupport"),
        // Scenarios on the real kernel (uinput devices, evemu, evtest): run in the VM with
        // scripts/kernel-tests .build/debug/forcescale-kernel-tests.
        .executableTarget(
            name: "forcescale-kernel-tests",
            dependencies: ["CEvdev", "ScaleCore", "ScaleSystem", "KernelTestSupport"],
            path: "Tests/KernelScenarios",
            exclude: ["Support"]),
        // What the kernel scenarios and bench/live share: uinput devices from tables (with an
        // FF service thread), child processes with captured output, /proc readings, waits.
        .target(
            name: "KernelTestSupport",
            dependencies: ["CEvdev"],
            path: "Tests/KernelScenarios/Support"),
        // bench/live, in the VM: CPU per event and idle wake-ups of `forcescale read` next to
        // evtest on one uinput stream, and PEAK-to-play latency. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-live-bench",
            dependencies: ["CEvdev", "KernelTestSupport"],
            path: "bench/Sources/forcescale-live-bench"),
        // What the host test suites share for waiting: a deadline-bound poll whose failure
        // says what it waited for, how long, and what it saw (issue 15).
        .target(name: "TestWaiting", path: "Tests/TestWaiting"),
        .testTarget(name: "ScaleCoreTests", dependencies: ["ScaleCore"]),
        .testTarget(name: "ScaleSystemTests", dependencies: ["ScaleSystem", "ScaleCore", "TestWaiting"]),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        .testTarget(name: "ScaleDisplayTests", dependencies: ["ScaleDisplay", "ScaleCore"]),
        .testTarget(name: "ScaleDaemonTests", dependencies: ["ScaleDaemon", "ScaleCore", "ScaleSystem", "ScaleOptions"]),
        .testTarget(name: "ForcescaleCLITests", dependencies: ["ScaleCore", "ScaleSystem", "ScaleOptions", "TestWaiting"]),
    ]
)
