import ArgumentParsing
import Glibc
import ScaleCore
import ScaleMQTT
import ScaleOptions
import ScalePOSIX

/// forcescale-mqtt's command line: the configuration file, its settings (each an option
/// of the same name), and what only the command line does.
enum ForcescaleMQTT: ParsableCommand {
    static let release = Release.version

    static let config = OptionKey<String?>(
        "config", valueName: "file",
        help: "The configuration file; a missing default one is no error. (default: \(MQTTSetting.defaultConfigurationPath))", parser: .text)
    /// Each setting's `--name <value>`, read as its text: the configuration file's parser
    /// reads it, as it reads the file's lines.
    static let settings: [(setting: Setting, option: OptionKey<String?>)] = MQTTSetting.all.map { ($0, $0.textOption) }
    static let removeDiscovery = OptionKey(
        flag: "remove-discovery", help: "Empty this host's Home Assistant discovery configs on the broker (removing the entities), then exit.")
    static let verbose = OptionKey(flag: "verbose", short: "v", help: "Also log each discovery config sent again or removed (log-level debug).")

    static let configuration = CommandConfiguration(
        name: "forcescale-mqtt",
        abstract: "Publishes forcescaled's weights and peaks to an MQTT broker, with Home Assistant discovery.",
        discussion: """
            A client of forcescaled: it watches the daemon's readings and publishes, under \
            <prefix>/<host>/<device>, the settled weight (retained), whether something is on \
            the scale (retained), each PEAK (an event), optionally the live reading, and \
            availability online/offline with a last will, so that a crash or a cut network \
            shows as offline. Payloads are the protocol's JSON lines (docs/protocol.md). Home \
            Assistant finds the weight sensor, the 'loaded' binary sensor and the peak event \
            by MQTT discovery; the configs are sent again when Home Assistant says it is \
            online. It reconnects to the broker and to the daemon by itself, with back-off, \
            and says so once per outage.

            Settings come from the configuration file (\(MQTTSetting.defaultConfigurationPath), \
            or --config), whose keys are named like the options, in forcescale.conf's syntax; \
            an option given here overrides the file. The password is read from a file \
            (--password-file), never taken on the command line. SIGINT and SIGTERM publish \
            offline and disconnect cleanly.

            Exit statuses: 0 stopped by a signal or --remove-discovery done; 64 a usage error; \
            65 an empty password file; 66 the password file or CA file is missing; 74 they \
            cannot be read; 77 the broker refused the user name or password, or a file may not \
            be read; 78 a broken configuration file.
            """,
        options: [config] + settings.map(\.option) + [removeDiscovery, verbose],
        version: release)
}

func hostName() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "localhost" }
    let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    // The short name: topics are per host, and the domain adds nothing but length.
    return name.split(separator: ".").first.map(String.init) ?? "localhost"
}

/// A problem with a file named by a setting, with its exit status.
struct FileProblem: Error, CustomStringConvertible {
    var description: String
    var status: Int32
}

/// The password: the file's first line, without its newline.
func readPassword(_ path: String) throws(FileProblem) -> String {
    var bytes: [UInt8] = []
    do {
        let input = try FileInput(path: path)
        try input.forEachChunk(size: 4096) { chunk in
            bytes.append(contentsOf: chunk)
            guard bytes.count <= 65536 else { throw FileProblem(description: "\(path): larger than 64 KiB: not a password file", status: ExitStatus.dataError) }
        }
    } catch let problem as FileProblem {
        throw problem
    } catch let error as SystemError {
        switch error.errno {
        case .noSuchFile: throw FileProblem(description: "\(path): no such file (give --password-file a file whose first line is the password)", status: ExitStatus.noInput)
        case .permissionDenied: throw FileProblem(description: "\(path): permission denied (the file must be readable by forcescale-mqtt's user)", status: ExitStatus.noPermission)
        default: throw FileProblem(description: "\(path): \(error.errno)", status: ExitStatus.ioError)
        }
    } catch {
        throw FileProblem(description: "\(path): \(error)", status: ExitStatus.ioError)
    }
    let text = String(decoding: bytes, as: UTF8.self)
    let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    let password = line.hasSuffix("\r") ? String(line.dropLast()) : line
    guard !password.isEmpty else { throw FileProblem(description: "\(path): the first line is empty; it must be the password", status: ExitStatus.dataError) }
    return password
}

/// A file that must be readable before libmosquitto is given it, checked here so that the
/// error names it (libmosquitto says only "invalid arguments").
func checkReadable(_ path: String, what: String) throws(FileProblem) {
    guard access(path, R_OK) == 0 else {
        let error = errno
        if error == ENOENT { throw FileProblem(description: "\(path): no such file (the \(what))", status: ExitStatus.noInput) }
        if error == EACCES { throw FileProblem(description: "\(path): permission denied (the \(what) must be readable by forcescale-mqtt's user)", status: ExitStatus.noPermission) }
        throw FileProblem(description: "\(path): \(String(cString: strerror(error))) (the \(what))", status: ExitStatus.noInput)
    }
}

extension ForcescaleMQTT {
    /// Publishes until a signal stops it, or removes the discovery configs.
    static func run(_ command: ParsedCommand) throws -> Int32 {
        let verbose = command[Self.verbose]
        func log(_ priority: Int, _ message: String) {
            guard priority <= (verbose ? 7 : 6) else { return }
            printError(MQTTLog.record(priority, message))
        }

        // The file first, then the command line over it.
        var configuration = MQTTConfiguration()
        let configurationPath = command[Self.config] ?? MQTTSetting.defaultConfigurationPath
        do throws(MQTTConfigurationError) {
            try configuration.load(path: configurationPath, mustExist: command.wasGiven(Self.config))
        } catch {
            for line in error.lines { log(3, line) }
            return ExitStatus.configuration
        }
        for (setting, option) in Self.settings where command.wasGiven(option) {
            guard var value = command[option] else { continue }
            // Relative paths on the command line mean what the user meant where they typed them.
            if case .absolutePath = setting.kind, !value.hasPrefix("/"), !value.isEmpty {
                value = Environment.currentDirectory() + "/" + value
            }
            do throws(MQTTSettingError) {
                try configuration.set(setting, from: value)
            } catch {
                throw command.usageError("--\(setting.name): \(error.description)")
            }
        }

        var password: String?
        do throws(FileProblem) {
            if let file = configuration.passwordFile { password = try readPassword(file) }
            if let caFile = configuration.caFile { try checkReadable(caFile, what: "CA file") }
        } catch {
            log(3, error.description)
            return error.status
        }
        if password != nil, configuration.username == nil {
            throw command.usageError("--password-file needs --username (MQTT sends a password only with a user name)")
        }

        let options = MQTTBridge.Options(configuration: configuration, host: hostName(), password: password, release: release)
        Signals.ignoreBrokenPipe()
        let loop = try EventLoop()

        if command[Self.removeDiscovery] {
            let removal = try DiscoveryRemoval(options: options, loop: loop, log: log)
            removal.start()
            _ = try loop.runUntilTerminated()
            removal.stop()
            if let failure = removal.failure {
                log(3, failure.description)
                return ExitStatus.noPermission
            }
            guard removal.isDone else { return 1 }
            log(5, "removed \(removal.removed.count) discovery config\(removal.removed.count == 1 ? "" : "s") of this host from \(configuration.broker)")
            return 0
        }

        let bridge = try MQTTBridge(options: options, loop: loop, log: log)
        try bridge.start()
        _ = try loop.runUntilTerminated()
        if let failure = bridge.failure {
            log(3, failure.description)
            bridge.stop()
            return ExitStatus.noPermission
        }
        bridge.stop()
        return 0
    }
}

runMain(ForcescaleMQTT.self)
