// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "forcescale",
    products: [
        .executable(name: "forcescale", targets: ["forcescale"]),
        .executable(name: "forcescaled", targets: ["forcescaled"]),
        .executable(name: "forcescale-web", targets: ["forcescale-web"]),
        .executable(name: "forcescale-mqtt", targets: ["forcescale-mqtt"]),
    ],
    targets: [
        // libevdev and the kernel's evdev/uinput ioctls, with shims for the macros.
        .systemLibrary(name: "CEvdev", pkgConfig: "libevdev", providers: [.apt(["libevdev-dev"])]),
        // epoll, timerfd, signalfd and inotify, which the Glibc module leaves out.
        .systemLibrary(name: "CLinux"),
        // SQLite 3 for the force log (sessions, readings, peaks).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // Loads a shared library when a program first calls it (libmicrohttpd, libmosquitto):
        // the multi-call release build keeps them out of the daemon's and the CLI's processes.
        .target(name: "CDeferredLibrary"),
        // GNU libmicrohttpd's handle types, for forcescale-web's HTTP server; called through
        // CMicroHTTPDShim (its header stays out of Swift's sight; see shim.h). Not linked:
        // CMicroHTTPDShim loads the library (CDeferredLibrary).
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        // What Swift cannot call in libmicrohttpd (the variadic MHD_start_daemon,
        // MHD_get_daemon_info, MHD_get_connection_info; the va_list logger; callbacks that
        // return enum MHD_Result), as plain C functions checked against <microhttpd.h>.
        // Also the library's functions, loaded on first use (library.c).
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD", "CDeferredLibrary"]),
        // libmosquitto, the reference MQTT client, for forcescale-mqtt only: its header, and
        // its functions loaded on first use (library.c; libmosquitto-dev for the header).
        .target(name: "CMosquitto", dependencies: ["CDeferredLibrary"]),
        // libyaml, for the YAML of `libinput record` files (ScaleEvdev reads them).
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // Pure: no clock, no file descriptor. Events in; readings, peaks and deadlines out.
        .target(name: "ScaleCore"),
        // The wire (docs/protocol.md): the typed messages both ways, each writing its own
        // line and read back from one, JSON reading and writing, and the protocol's names.
        // Pure as ScaleCore is; ScaleCore for the readings, peaks and calibrations it carries.
        .target(name: "ScaleProtocol", dependencies: ["ScaleCore"]),
        // The operating system without any library beyond the C library: the syscall funnel
        // (Errno, FileDescriptor), the epoll loop with its timers, signals and inotify,
        // clocks, files, and Unix sockets on both sides. CLinux for the epoll, timerfd,
        // signalfd and inotify declarations and accept4/ucred; ScaleCore only for WallTime,
        // which LocalTime reads and formats. No libevdev, SQLite or libsystemd here, so that a
        // client of the daemon links none of them.
        .target(name: "ScalePOSIX", dependencies: ["ScaleCore", "CLinux"]),
        // The recording formats, read and written: evemu's text and `libinput record`'s YAML
        // (CYAML), and RecordingFiles, which opens either and picks a device of several.
        // ScalePOSIX for files and errors. No libevdev: what only parses files (the fuzz
        // targets' parsers, bench/replay) needs none.
        .target(name: "ScaleRecording", dependencies: ["ScaleCore", "ScalePOSIX", "CYAML"]),
        // Input devices: evdev through libevdev, force feedback, discovery and hotplug, the
        // live scale and recording a device, and recordings played as a source. CEvdev for
        // libevdev and the ioctl shims; ScaleRecording for the files a device is recorded to
        // and played from; ScalePOSIX for the loop, files and errors.
        .target(name: "ScaleEvdev", dependencies: ["ScaleCore", "ScalePOSIX", "ScaleRecording", "CEvdev"]),
        // The force log: SQLite (CSQLite), its schema, the writer thread and the reader the
        // log commands use. ScalePOSIX for errors, clocks and files.
        .target(name: "ScaleLog", dependencies: ["ScaleCore", "ScalePOSIX", "CSQLite"]),
        // The typed client of forcescaled (gpsd's libgps): connect, watch, status, devices,
        // tare, calibrate, rumble, reconnect with back-off. Only ScaleProtocol (the messages)
        // and ScalePOSIX (the socket): a program that talks to the daemon links no libevdev,
        // SQLite or libsystemd. Tests/ScaleClientTests checks that closure.
        .target(name: "ScaleClient", dependencies: ["ScaleCore", "ScaleProtocol", "ScalePOSIX"]),
        // forcescale-web's server: HTTP through libmicrohttpd on ScalePOSIX's epoll loop, the
        // daemon through ScaleClient, and the pure parts (SSE framing, the event ring,
        // metrics, routing). The force log's history through ScaleLog (read-only), written
        // out by ScaleDisplay's exporters and plot, as `forcescale log` writes it. No
        // libevdev or libsystemd: Tests/ScaleClientTests's ModuleGraphTests checks that closure.
        // The page's HTML, CSS and JavaScript are files of their own (Sources/ScaleWeb/Page),
        // built in by the EmbedPage plugin: nothing is read from disk at run time.
        .target(
            name: "ScaleWeb",
            dependencies: ["ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleClient", "ScaleLog", "ScaleDisplay", "CMicroHTTPD", "CMicroHTTPDShim"],
            exclude: ["Page"],
            plugins: ["EmbedPage"]),
        // Turns the page's files into a Swift source at build time, for EmbedPage.
        .executableTarget(name: "forcescale-embed-page"),
        .plugin(name: "EmbedPage", capability: .buildTool(), dependencies: ["forcescale-embed-page"]),
        // swift-argument-parser's conventions, written by hand (no outside packages here);
        // ScalePOSIX for writing standard error through the funnel; ScaleCore for the one
        // "did you mean" rule every parser shares and for UntrustedText, which a usage
        // error's quoted arguments are written through.
        .target(name: "ArgumentParsing", dependencies: ["ScaleCore", "ScalePOSIX"]),
        // The pipeline's options, declared once for forcescale and forcescaled.
        .target(name: "ScaleOptions", dependencies: ["ArgumentParsing", "ScaleCore"]),
        // How readings look to a person: the gauge line (drawn from the protocol's READING
        // and PEAK), the bar, units; the log's exports as JSON lines.
        .target(name: "ScaleDisplay", dependencies: ["ScaleCore", "ScaleProtocol"]),
        // The service: the loop that owns the source, the clients and the calibration, the
        // calibration store, and what only a service needs: sd_notify, the watchdog and
        // socket activation (their protocols spoken in Swift, without libsystemd, which would
        // cost the daemon about 1 MiB of memory). ScaleEvdev for its sources (ScaleRecording
        // for the recordings among them), ScaleLog for the force log, ScaleOptions for the
        // settings table its configuration is read by.
        .target(name: "ScaleDaemon", dependencies: ["ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleRecording", "ScaleEvdev", "ScaleLog", "ScaleOptions"]),
        // forcescale-mqtt's work: a client of forcescaled (ScaleClient) that publishes to MQTT
        // through libmosquitto (CMosquitto) on the ScalePOSIX loop, with Home Assistant
        // discovery. ScaleOptions for the settings' declarations and the configuration
        // file's syntax (pure Swift), ArgumentParsing for the edit distance that suggests a
        // mistyped key. No libevdev, SQLite or libsystemd: ModuleGraphTests.
        .target(name: "ScaleMQTT", dependencies: ["ArgumentParsing", "ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleClient", "ScaleOptions", "CMosquitto"]),
        // The CLI: local commands read devices (ScaleEvdev) and the force log (ScaleLog); the
        // daemon's commands talk through ScaleClient. Not ScaleDaemon: the CLI knows nothing
        // of the service manager.
        .executableTarget(
            name: "forcescale",
            dependencies: [
                "ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleRecording", "ScaleEvdev", "ScaleLog", "ScaleClient", "ScaleDisplay",
                "ArgumentParsing", "ScaleOptions",
            ]),
        // The daemon: options and configuration in, ScaleDaemon runs the rest; ScaleEvdev and
        // ScaleRecording for a recording given as the source, ScalePOSIX for signals and paths.
        .executableTarget(
            name: "forcescaled",
            dependencies: ["ArgumentParsing", "ScaleCore", "ScalePOSIX", "ScaleRecording", "ScaleEvdev", "ScaleDaemon", "ScaleOptions"]),
        // The web server: options in, ScaleWeb runs the rest.
        .executableTarget(name: "forcescale-web", dependencies: ["ArgumentParsing", "ScaleClient", "ScaleCore", "ScalePOSIX", "ScaleWeb"]),
        // forcescale-mqtt: options and configuration in, ScaleMQTT runs the rest.
        .executableTarget(
            name: "forcescale-mqtt",
            dependencies: ["ArgumentParsing", "ScaleCore", "ScaleOptions", "ScalePOSIX", "ScaleMQTT"]),
        // bench/replay: parsing and the pipeline over a recording (ScaleRecording's
        // RecordingFiles: no libevdev), and libyaml's parser alone as the floor of the YAML
        // path. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-bench",
            dependencies: ["ScaleCore", "ScaleRecording", "BenchSupport", "CYAML"],
            path: "bench/Sources/forcescale-bench"),
        // bench/log: the force log's inserts (batched against one transaction per reading),
        // bytes per reading, and reading 1 M readings back. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-log-bench",
            dependencies: ["ScaleCore", "ScaleLog", "BenchSupport"],
            path: "bench/Sources/forcescale-log-bench"),
        // bench/calibration: the accuracy study of calibrated curves on synthetic devices
        // (piecewise linear against fitted) and the fit's speed. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-calibration-bench",
            dependencies: ["ScaleCore", "ScaleRecording", "BenchSupport"],
            path: "bench/Sources/forcescale-calibration-bench"),
        // bench/characterize: pen characterization on synthetic pens with a known activation
        // force, response and hysteresis. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-characterize-bench",
            dependencies: ["ScaleCore", "BenchSupport"],
            path: "bench/Sources/forcescale-characterize-bench"),
        // The host benchmarks' clock, failure exit, number formatting and seeded noise.
        .target(name: "BenchSupport", dependencies: ["ScaleCore"], path: "bench/Sources/BenchSupport"),
        // Scenarios on the real kernel (uinput devices, evemu, evtest): run in the VM with
        // scripts/kernel-tests .build/debug/forcescale-kernel-tests.
        .executableTarget(
            name: "forcescale-kernel-tests",
            dependencies: ["CEvdev", "KernelTestSupport"],
            path: "Tests/KernelScenarios",
            exclude: ["Support"]),
        // What the kernel scenarios and bench/live share: uinput devices from tables (with an
        // FF service thread), child processes with captured output, /proc readings, waits.
        // ScaleCore for its HID report-descriptor parser, which lays out the uhid devices'
        // reports from the kernel selftests' descriptors.
        .target(
            name: "KernelTestSupport",
            dependencies: ["CEvdev", "ScaleCore"],
            path: "Tests/KernelScenarios/Support"),
        // bench/live, in the VM: CPU per event and idle wake-ups of `forcescale read` next to
        // evtest on one uinput stream, and PEAK-to-play latency. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-live-bench",
            dependencies: ["CEvdev", "KernelTestSupport"],
            path: "bench/Sources/forcescale-live-bench"),
        // bench/rumble, in the VM: a PEAK's rumble latency in forcescaled beside a bare C
        // reader of the same pad. Results: BENCHMARKS.md.
        .executableTarget(
            name: "forcescale-rumble-bench",
            dependencies: ["CEvdev", "KernelTestSupport"],
            path: "bench/Sources/forcescale-rumble-bench"),
        // Fuzz targets for every parser of outside input (Tests/Fuzz/forcescale-fuzz). A plain
        // build is a seeded mutation fuzzer `make test` runs briefly; built with libFuzzer
        // (`make fuzz`, bench/fuzz) it is coverage-guided. CFuzzDriver declares libFuzzer's
        // driver weakly, so that both builds link.
        .target(name: "CFuzzDriver", path: "Tests/Fuzz/CFuzzDriver"),
        .executableTarget(
            name: "forcescale-fuzz",
            dependencies: ["CFuzzDriver", "ScaleCore", "ScaleProtocol", "ScaleRecording", "ScaleDaemon", "ScaleDisplay", "ScaleWeb", "ScaleMQTT"],
            path: "Tests/Fuzz/forcescale-fuzz"),
        // What the host test suites share for waiting: a deadline-bound poll whose failure
        // says what it waited for, how long, and what it saw.
        .target(name: "TestWaiting", path: "Tests/TestWaiting"),
        // One test target per module, each depending on the module it tests and what its
        // tests build values from.
        // ScaleProtocol for the check that a reading past the calibration says so in its line.
        // ScaleRecording: pipeline tests read and write recordings of the runs they check.
        .testTarget(name: "ScaleCoreTests", dependencies: ["ScaleCore", "ScaleProtocol", "ScaleRecording", "BenchSupport"]),
        // The recording formats read and written, several devices in a record, the layouts
        // of recording files; no libevdev.
        .testTarget(name: "ScaleRecordingTests", dependencies: ["ScaleRecording", "ScaleCore", "ScalePOSIX", "ScaleTestSupport"]),
        .testTarget(name: "ScaleProtocolTests", dependencies: ["ScaleProtocol", "ScaleCore"]),
        .testTarget(name: "ArgumentParsingTests", dependencies: ["ArgumentParsing"]),
        // forcescale's command tree as its types declare it: each subcommand runs its own type;
        // and what `devices` prints of a device as the scan finds it (ScaleEvdev's types).
        .testTarget(name: "ForcescaleCommandTests", dependencies: ["forcescale", "ArgumentParsing", "ScaleCore", "ScaleEvdev"]),
        .testTarget(name: "ScaleDisplayTests", dependencies: ["ScaleDisplay", "ScaleCore", "ScaleProtocol"]),
        // The pure parts of forcescale-web; the server end to end is in ForcescaleCLITests.
        .testTarget(name: "ScaleWebTests", dependencies: ["ScaleWeb", "ScaleCore", "ScaleProtocol"]),
        // What the tests of the OS-facing modules share: temporary directories, file helpers,
        // stepping a loop, a raw socket client. A library (not a test target) so that several
        // test targets can use it; ScalePOSIX for the types it drives, TestWaiting for pump.
        .target(name: "ScaleTestSupport", dependencies: ["ScalePOSIX", "TestWaiting"], path: "Tests/ScaleTestSupport"),
        .testTarget(name: "ScalePOSIXTests", dependencies: ["ScalePOSIX", "ScaleTestSupport", "TestWaiting"]),
        // Also ModuleGraphTests, which reads this manifest through 'swift package dump-package'.
        .testTarget(name: "ScaleClientTests", dependencies: ["ScaleClient", "ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleTestSupport"]),
        // The topics, payloads, discovery configs and settings of forcescale-mqtt; the runs
        // against a real broker are in ForcescaleCLITests (MQTTTests), with the other suites
        // that run the built programs.
        .testTarget(name: "ScaleMQTTTests", dependencies: ["ScaleMQTT", "ScaleClient", "ScaleCore", "ScaleProtocol", "ScaleOptions", "CDeferredLibrary"]),
        // CEvdev: the state journal is checked against libevdev itself.
        .testTarget(name: "ScaleEvdevTests", dependencies: ["ScaleEvdev", "ScaleRecording", "CEvdev", "ScaleCore", "ScalePOSIX", "ScaleTestSupport"]),
        // CSQLite: the schema tests open the database file directly.
        .testTarget(name: "ScaleLogTests", dependencies: ["ScaleLog", "ScaleCore", "ScalePOSIX", "CSQLite", "ScaleTestSupport", "TestWaiting"]),
        .testTarget(
            name: "ScaleDaemonTests",
            dependencies: ["ScaleDaemon", "ScaleCore", "ScaleProtocol", "ScalePOSIX", "ScaleLog", "ScaleOptions", "ArgumentParsing", "ScaleTestSupport", "TestWaiting"]),
        // The end-to-end suites: the built forcescale and forcescaled run as child processes
        // (FORCESCALE_BIN_DIR), golden replays, man pages and the service files. ScaleLog to
        // write a force log for the log commands to read, ScaleOptions for the settings table
        // the man pages are checked against, ScaleProtocol for reading the programs' lines.
        // It covers the daemon, forcescale-web and forcescale-mqtt too, not only the CLI.
        .testTarget(name: "ForcescaleCLITests", dependencies: ["ScaleCore", "ScaleProtocol", "ScaleRecording", "ScaleLog", "ScaleOptions", "TestWaiting"]),
    ]
)
