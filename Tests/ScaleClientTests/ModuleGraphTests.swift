import Foundation
import ScaleTestSupport
import Testing

/// What the package promises about its modules, read from `swift package dump-package`
/// (the manifest as SwiftPM understands it, not as the text looks): a client of the daemon
/// links no libevdev, SQLite or libsystemd, the protocol sits on the pure core, every module
/// a target imports is one it declares, and the old catch-all module is gone.
@Suite struct ModuleGraphTests {
    /// The package's directory, from this file's place in it.
    static let packageDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// The manifest's targets as `dump-package` writes them.
    static func manifestTargets() throws -> [[String: Any]] {
        let swift = try #require(
            (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
                .map { $0 + "/swift" }.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no swift on PATH to run 'swift package dump-package'")
        // A scratch path of its own: `swift test` holds the lock on .build while the tests
        // run, and dump-package would wait for it for ever. SwiftPM leaves a lock file named
        // after the scratch path in TMPDIR: both inside one temporary directory, it goes
        // with the directory.
        let temporary = TemporaryDirectory()
        let scratch = temporary.path + "/scratch"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: swift)
        process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 }
        process.arguments = ["package", "--package-path", packageDirectory, "--scratch-path", scratch, "dump-package"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift package dump-package failed")
        // What SwiftPM left for the scratch path is in the temporary directory, not in /tmp.
        let lock = scratch.replacingOccurrences(of: "/", with: "_") + ".lock"
        #expect(TemporaryDirectory.names(in: temporary.path).contains(lock), "\(TemporaryDirectory.names(in: temporary.path))")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/" + lock))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(manifest["targets"] as? [[String: Any]])
    }

    /// Each target's name and the names of the targets it depends on directly.
    static func targets() throws -> [String: [String]] {
        var result: [String: [String]] = [:]
        for target in try manifestTargets() {
            let name = try #require(target["name"] as? String)
            // Each dependency is {"byName": [name, condition]}, {"target": […]} or {"product": […]}.
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                (dependency.values.first as? [Any])?.first as? String
            }
            result[name] = dependencies
        }
        return result
    }

    /// Everything `target` depends on, directly or not.
    static func closure(of target: String, in graph: [String: [String]]) -> Set<String> {
        var seen: Set<String> = []
        var waiting = graph[target] ?? []
        while let next = waiting.popLast() {
            if seen.insert(next).inserted { waiting += graph[next] ?? [] }
        }
        return seen
    }

    @Test func theClientNeedsNoEvdevSQLiteOrSystemd() throws {
        let graph = try Self.targets()
        let closure = Self.closure(of: "ScaleClient", in: graph)
        #expect(closure == ["ScaleCore", "ScaleProtocol", "ScalePOSIX", "CLinux"])
        #expect(closure.isDisjoint(with: ["CEvdev", "CSQLite", "CSystemd"]))
        // The CLI's daemon commands live beside evdev and log commands, but the library a
        // small program would use is what is checked here.
        #expect(Self.closure(of: "ScalePOSIX", in: graph).isDisjoint(with: ["CEvdev", "CSQLite", "CSystemd"]))
    }

    /// The wire is a module of its own on the pure core, and the core knows nothing of it.
    @Test func theProtocolStandsOnThePureCoreAlone() throws {
        let graph = try Self.targets()
        #expect(Self.closure(of: "ScaleProtocol", in: graph) == ["ScaleCore"])
        #expect(graph["ScaleCore"] == [])
        // The client, the daemon and the programs that show or pass on readings read and
        // write lines through it.
        for user in ["ScaleClient", "ScaleDaemon", "ScaleDisplay", "ScaleWeb", "ScaleMQTT", "forcescale"] {
            #expect(graph[user]?.contains("ScaleProtocol") == true, "\(user) does not depend on ScaleProtocol")
        }
    }

    /// A module a target's sources import, when it is one of this package's, is among the
    /// target's declared dependencies: SwiftPM would often build it anyway (another
    /// dependency brings it in), which hides an edge that the graph above would miss.
    @Test func everyImportedModuleOfThePackageIsDeclared() throws {
        let targets = try Self.manifestTargets()
        let graph = try Self.targets()
        let names = Set(graph.keys)
        var undeclared: [String] = []
        for target in targets {
            guard let name = target["name"] as? String, let type = target["type"] as? String, type != "system" else { continue }
            let path = target["path"] as? String ?? (type == "test" ? "Tests/" : "Sources/") + name
            let directory = URL(fileURLWithPath: Self.packageDirectory).appendingPathComponent(path)
            let excluded = (target["exclude"] as? [String] ?? []).map { directory.appendingPathComponent($0).path + "/" }
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let full = directory.appendingPathComponent(file).path
                guard !excluded.contains(where: { full.hasPrefix($0) }) else { continue }
                let text = try String(contentsOfFile: full, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").filter { !$0.hasPrefix("@") }
                    guard words.count >= 2, words[0] == "import" else { continue }
                    let module = String(words[1])
                    if names.contains(module), module != name, !(graph[name] ?? []).contains(module) {
                        undeclared.append("\(path)/\(file) imports \(module)")
                    }
                }
            }
        }
        #expect(undeclared.isEmpty, "declare these in Package.swift: \(undeclared)")
    }

    /// docs/architecture.md's table of modules lists every target under `Sources/` with the
    /// dependencies `Package.swift` declares, no more and no fewer; and every file or
    /// directory the page names is in the repository.
    @Test func theArchitectureDocumentMatchesTheManifest() throws {
        let page = try String(contentsOfFile: Self.packageDirectory + "/docs/architecture.md", encoding: .utf8)
        var documented: [String: Set<String>] = [:]
        var inTable = false
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| module | depends on |") { inTable = true; continue }
            guard inTable else { continue }
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[1].hasPrefix("`") else { continue }
            let module = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            let dependencies = cells[2] == "—" ? [] : cells[2].components(separatedBy: ", ")
            #expect(documented[module] == nil, "\(module) is in the table twice")
            documented[module] = Set(dependencies)
        }
        let declared = try Self.manifestTargets().filter { $0["path"] == nil && $0["type"] as? String != "test" }
        var expected: [String: Set<String>] = [:]
        let graph = try Self.targets()
        for target in declared {
            let name = try #require(target["name"] as? String)
            expected[name] = Set(graph[name] ?? [])
        }
        #expect(Set(documented.keys) == Set(expected.keys), "modules in the table against Package.swift")
        for (module, dependencies) in expected where documented[module] != nil {
            #expect(documented[module] == dependencies, "\(module): the table says \(documented[module]!.sorted()), Package.swift \(dependencies.sorted())")
        }
        // Paths the page cites, and the documents it names, exist.
        let cited = try NSRegularExpression(pattern: #"\b(?:Sources|Tests|docs|bench|scripts|man|systemd|udev|etc|debian|sysusers\.d)/[A-Za-z0-9_.+/-]*[A-Za-z0-9_]|\b[A-Z][A-Za-z]*\.md\b"#)
        let range = NSRange(page.startIndex..., in: page)
        for match in cited.matches(in: page, range: range) {
            let path = String(page[Range(match.range, in: page)!])
            let candidates = path.contains("/") ? [path] : [path, "docs/" + path]
            #expect(candidates.contains { FileManager.default.fileExists(atPath: Self.packageDirectory + "/" + $0) }, "docs/architecture.md cites \(path), which is not in the repository")
        }
    }

    /// forcescale-mqtt's module links libmosquitto and what a client of the daemon links,
    /// and none of the daemon's libraries.
    @Test func theMQTTPublisherNeedsNoEvdevSQLiteOrSystemd() throws {
        let graph = try Self.targets()
        let closure = Self.closure(of: "ScaleMQTT", in: graph)
        #expect(closure.isSuperset(of: ["ScaleClient", "CMosquitto"]))
        #expect(closure.isDisjoint(with: ["CEvdev", "CSQLite", "CSystemd", "ScaleEvdev", "ScaleLog", "ScaleDaemon"]), "\(closure)")
        #expect(Self.closure(of: "forcescale-mqtt", in: graph).isDisjoint(with: ["CEvdev", "CSQLite", "CSystemd"]))
    }

    @Test func eachCLibraryHasTheOneModuleThatWrapsIt() throws {
        let graph = try Self.targets()
        #expect(graph["ScaleSystem"] == nil)
        let users = { (library: String) in Set(graph.filter { $0.value.contains(library) && !$0.key.hasSuffix("Tests") }.keys) }
        #expect(users("CSQLite") == ["ScaleLog"])
        // sd_notify and socket activation are spoken in ScaleDaemon itself: libsystemd and
        // what it pulls in cost the daemon about 1 MiB of memory (BENCHMARKS.md, Daemon).
        #expect(graph["CSystemd"] == nil)
        #expect(graph.values.allSatisfy { !$0.contains("CSystemd") })
        #expect(users("CMosquitto") == ["ScaleMQTT"])
        // libyaml: the recording formats' module, and bench/replay's floor (libyaml alone).
        #expect(users("CYAML") == ["ScaleRecording", "forcescale-bench"])
        // The kernel scenarios, bench/live and bench/rumble make uinput devices themselves.
        #expect(users("CEvdev") == ["ScaleEvdev", "forcescale-kernel-tests", "KernelTestSupport", "forcescale-live-bench", "forcescale-rumble-bench"])
        // libmicrohttpd: linked by its system-library target, called through the shim.
        #expect(users("CMicroHTTPD") == ["CMicroHTTPDShim", "ScaleWeb"])
        #expect(users("CMicroHTTPDShim") == ["ScaleWeb"])
    }

    /// The recording formats, read and written, link libyaml and no libevdev; what only
    /// parses recordings (bench/replay) links no libevdev either.
    @Test func theRecordingFormatsNeedNoEvdev() throws {
        let graph = try Self.targets()
        #expect(Self.closure(of: "ScaleRecording", in: graph).isDisjoint(with: ["CEvdev", "ScaleEvdev", "CSQLite"]))
        #expect(Self.closure(of: "ScaleRecording", in: graph).contains("CYAML"))
        #expect(Self.closure(of: "forcescale-bench", in: graph).isDisjoint(with: ["CEvdev", "ScaleEvdev"]))
        #expect(!(graph["ScaleEvdev"] ?? []).contains("CYAML"))
    }

    /// forcescale-web reads the force log (SQLite, through ScaleLog) for its history, but
    /// is a client of the daemon for everything live: no libevdev, no daemon code.
    @Test func theWebServerIsAClientAndLinksNoEvdevOrSystemd() throws {
        let graph = try Self.targets()
        let closure = Self.closure(of: "forcescale-web", in: graph)
        #expect(closure.isDisjoint(with: ["CEvdev", "CSystemd", "ScaleEvdev", "ScaleDaemon", "ScaleOptions"]))
        #expect(closure.isSuperset(of: ["ScaleWeb", "ScaleClient", "ScaleLog", "ScaleDisplay", "CMicroHTTPD", "CMicroHTTPDShim"]))
    }
}
