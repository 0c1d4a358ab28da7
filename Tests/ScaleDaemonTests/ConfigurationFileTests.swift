import Glibc
import ScaleCore
@testable import ScaleDaemon
import ScalePOSIX
import ScaleTestSupport
import Testing

@Suite struct ConfigurationFileTests {
    func parse(_ text: String) throws(ConfigurationError) -> ConfigurationFile {
        try ConfigurationFile.parse(text, path: "test.conf")
    }

    /// The problems of a file that must not parse, as `test.conf:LINE: message` lines.
    func problems(_ text: String) -> [String] {
        do throws(ConfigurationError) {
            _ = try parse(text)
            return []
        } catch {
            return error.lines
        }
    }

    // MARK: Each key

    @Test func everyKeyIsRead() throws {
        let file = try parse("""
            device = /dev/input/event5
            interval-ms = 20
            threshold = 0.8
            hysteresis = 0.1
            contacts = sum
            unit = oz
            stable-ms = 750
            stable-grams = 1.5
            rumble = off
            rumble-device = Xbox Wireless Controller
            rumble-intensity = 0.25
            socket = /run/scale/scale.sock
            state-dir = /var/lib/scale
            group = scale
            control-group = scale-control
            max-clients = 16
            log-level = debug
            log = on
            log-db = /var/lib/scale/force.sqlite
            log-keep-days = 30
            log-keep-readings = 1000000
            """)
        var expected = ConfigurationLayer()
        expected.devices = ["/dev/input/event5"]
        expected.intervalMilliseconds = 20
        expected.threshold = 0.8
        expected.hysteresis = 0.1
        expected.contacts = .sum
        expected.unit = .ounces
        expected.stableMilliseconds = 750
        expected.stableGrams = 1.5
        expected.rumble = false
        expected.rumbleDevice = "Xbox Wireless Controller"
        expected.rumbleIntensity = 0.25
        expected.socket = "/run/scale/scale.sock"
        expected.stateDirectory = "/var/lib/scale"
        expected.group = "scale"
        expected.controlGroup = "scale-control"
        expected.maximumClients = 16
        expected.logLevel = .debug
        expected.log = true
        expected.logDatabase = "/var/lib/scale/force.sqlite"
        expected.logKeepDays = 30
        expected.logKeepReadings = 1_000_000
        #expect(file.layer == expected)
        #expect(file.lines[.device] == 1 && file.lines[.logLevel] == 17)
        #expect(ConfigurationKey.allCases.allSatisfy { file.layer.sets($0) })

        let configuration = DaemonConfiguration(layers: [file.layer])
        #expect(configuration.settings.throttleInterval == 20_000)
        #expect(configuration.settings.stabilityWindow == 750_000)
        #expect(configuration.settings.peakThreshold == 0.8 && configuration.settings.peakHysteresis == 0.1)
        #expect(configuration.settings.contactMode == .sum && configuration.settings.stabilitySpan == 1.5)
        #expect(configuration.unit == .ounces && configuration.logLevel == .debug && configuration.group == "scale")
        guard case .off = configuration.rumbleChoice else {
            Issue.record("rumble = off must turn rumble off, not \(configuration.rumbleChoice)")
            return
        }
    }

    @Test func eachEnumeratedValueIsAccepted() throws {
        for mode in ContactMode.allCases {
            #expect(try parse("contacts = \(mode.rawValue)").layer.contacts == mode)
        }
        for unit in MassUnit.allCases {
            #expect(try parse("unit = \(unit.rawValue)").layer.unit == unit)
        }
        for level in DaemonLog.Level.allCases {
            #expect(try parse("log-level = \(level.name)").layer.logLevel == level)
        }
        #expect(try parse("rumble = on").layer.rumble == true)
        #expect(try parse("interval-ms = 0").layer.intervalMilliseconds == 0)
        #expect(try parse("threshold = 1").layer.threshold == 1)
        #expect(try parse("stable-grams = 0").layer.stableGrams == 0)
        #expect(try parse("rumble-intensity = 0").layer.rumbleIntensity == 0)
        #expect(try parse("device = 056a:00b9").layer.devices == ["056a:00b9"])
    }

    @Test func rumbleDeviceRumblesThatDevice() throws {
        let configuration = DaemonConfiguration(layers: [try parse("rumble-device = pad").layer])
        guard case .device(let query) = configuration.rumbleChoice else {
            Issue.record("expected a rumble device, got \(configuration.rumbleChoice)")
            return
        }
        #expect(query == DeviceQuery("pad"))
    }

    // MARK: Comments and whitespace

    @Test func commentsBlankLinesAndWhitespaceAreIgnored() throws {
        let file = try parse("""
            # a comment
               # an indented comment

            \tinterval-ms\t=\t20\t
              threshold=0.5   # an inline comment
            hysteresis =0.1\t#another
            """)
        #expect(file.layer.intervalMilliseconds == 20)
        #expect(file.layer.threshold == 0.5)
        #expect(file.layer.hysteresis == 0.1)
        #expect(file.lines[.intervalMilliseconds] == 4 && file.lines[.threshold] == 5 && file.lines[.hysteresis] == 6)
        #expect(try parse("").layer == ConfigurationLayer())
        #expect(try parse("\n\n# only comments\n").layer == ConfigurationLayer())
    }

    @Test func aHashInsideAWordIsPartOfTheValue() throws {
        #expect(try parse("device = Pad#2").layer.devices == ["Pad#2"])
        #expect(try parse("device = Pad #2").layer.devices == ["Pad"])
    }

    @Test func severalDevicesAreSeparatedByCommas() throws {
        #expect(try parse("device = wacom, synaptics").layer.devices == ["wacom", "synaptics"])
        #expect(try parse("device = /dev/input/event5,056a:00b9 , Magic Trackpad").layer.devices
            == ["/dev/input/event5", "056a:00b9", "Magic Trackpad"])
        #expect(problems("device = wacom,, synaptics").first?.hasPrefix("test.conf:1: bad value 'wacom,, synaptics' for 'device'") == true,
                "\(problems("device = wacom,, synaptics"))")
        #expect(DaemonConfiguration(layers: [try parse("device = a, b").layer]).text(for: .device) == "a, b")
        #expect(DaemonConfiguration().text(for: .device) == "every pressure device")
    }

    @Test func quotesKeepHashesAndSpaces() throws {
        #expect(try parse(#"device = "Pad #2"  # the second pad"#).layer.devices == ["Pad #2"])
        #expect(try parse(#"device = "  spaced  ""#).layer.devices == ["  spaced  "])
        #expect(try parse(#"device = "say \"hi\" \\ bye""#).layer.devices == [#"say "hi" \ bye"#])
        #expect(problems(#"device = "open"#) == ["test.conf:1: the quoted value of 'device' has no closing quote"])
        #expect(problems(#"device = "a" b"#) == ["test.conf:1: unexpected 'b' after the closing quote of 'device'"])
        #expect(problems(#"device = "a\n""#) == [#"test.conf:1: unknown escape '\n' in quotes: only \" and \\ are known"#])
    }

    @Test func crlfLineEndingsAndAByteOrderMarkAreFine() throws {
        let file = try parse("\u{FEFF}interval-ms = 20\r\nthreshold = 0.5\r\n")
        #expect(file.layer.intervalMilliseconds == 20 && file.layer.threshold == 0.5)
        #expect(file.lines[.threshold] == 2)
    }

    // MARK: Errors

    @Test func unknownKeysAreNamedWithASuggestion() {
        let found = problems("interval-ms = 10\ntreshold = 0.5\n")
        #expect(found.count == 1)
        #expect(found.first?.hasPrefix("test.conf:2: unknown key 'treshold' (did you mean 'threshold'?); the keys are device, interval-ms, threshold,") == true)
        #expect(found.first?.hasSuffix(", log-level, log, log-db, log-keep-days or log-keep-readings") == true)
        let far = problems("colour = blue")
        #expect(far.first?.hasPrefix("test.conf:1: unknown key 'colour'; the keys are ") == true)
    }

    @Test func badValuesNameTheKeyAndWhatItTakes() {
        let cases: [(String, String)] = [
            ("interval-ms = fast", "bad value 'fast' for 'interval-ms': it takes a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)"),
            ("interval-ms = -1", "bad value '-1' for 'interval-ms': it takes a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)"),
            ("interval-ms = 10.5", "bad value '10.5' for 'interval-ms': it takes a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)"),
            ("interval-ms = 99999999999999999999", "bad value '99999999999999999999' for 'interval-ms': it takes a whole number of milliseconds from 0 to 86400000 (0 lets every frame through)"),
            ("threshold = 2", "bad value '2' for 'threshold': it takes a force fraction greater than 0 and at most 1"),
            ("threshold = 0", "bad value '0' for 'threshold': it takes a force fraction greater than 0 and at most 1"),
            ("threshold = nan", "bad value 'nan' for 'threshold': it takes a force fraction greater than 0 and at most 1"),
            ("hysteresis = -0.1", "bad value '-0.1' for 'hysteresis': it takes a force fraction from 0 to the threshold"),
            ("contacts = all", "bad value 'all' for 'contacts': it takes primary, sum or max"),
            ("unit = stone", "bad value 'stone' for 'unit': it takes g, kg, oz, lb, ct or N"),
            ("stable-ms = 0", "bad value '0' for 'stable-ms': it takes a whole number of milliseconds from 1 to 86400000"),
            ("stable-grams = -1", "bad value '-1' for 'stable-grams': it takes a number of grams, 0 or more"),
            ("stable-grams = inf", "bad value 'inf' for 'stable-grams': it takes a number of grams, 0 or more"),
            ("rumble = yes", "bad value 'yes' for 'rumble': it takes on or off"),
            ("rumble-intensity = 1.5", "bad value '1.5' for 'rumble-intensity': it takes a fraction from 0 to 1"),
            ("socket = run/forcescale.sock", "bad value 'run/forcescale.sock' for 'socket': it takes an absolute path"),
            ("state-dir = state", "bad value 'state' for 'state-dir': it takes an absolute path"),
            ("group = two words", "bad value 'two words' for 'group': it takes a group name"),
            ("log-level = loud", "bad value 'loud' for 'log-level': it takes error, warning, notice, info or debug"),
            ("device =", "'device' has no value; it takes a device path, a part of the device's name, or vendor:product in hex (several separated by commas) (comment the line out for the default)"),
            (#"device = """#, "'device' has no value; it takes a device path, a part of the device's name, or vendor:product in hex (several separated by commas) (comment the line out for the default)"),
        ]
        for (line, message) in cases {
            #expect(problems("# first line\n" + line) == ["test.conf:2: " + message], "\(line)")
        }
    }

    @Test func malformedLinesSayWhatWasExpected() {
        #expect(problems("interval-ms 10") == ["test.conf:1: expected 'key = value', found 'interval-ms 10'"])
        #expect(problems("= 10") == ["test.conf:1: no key before '='"])
        #expect(problems("Threshold = 0.5") == ["test.conf:1: 'Threshold' is not a key: keys are lower-case words joined by '-', such as 'interval-ms'"])
        #expect(problems("[daemon]") == ["test.conf:1: expected 'key = value', found '[daemon]'"])
        let long = String(repeating: "x", count: 100)
        #expect(problems(long) == ["test.conf:1: expected 'key = value', found '\(String(repeating: "x", count: 59))…'"])
        #expect(problems("\u{0}\u{7}garbage\u{FFFD}") == ["test.conf:1: expected 'key = value', found '\u{0}\u{7}garbage\u{FFFD}'"])
    }

    @Test func aKeySetTwiceIsAnError() {
        #expect(problems("threshold = 0.5\n\nthreshold = 0.6") == ["test.conf:3: 'threshold' is set twice (first on line 1); keep one"])
    }

    @Test func everyProblemIsReportedInLineOrder() {
        #expect(problems("bogus = 1\ninterval-ms = 10\nthreshold = 3\nrumble = maybe\n") == [
            "test.conf:1: unknown key 'bogus'; the keys are device, interval-ms, threshold, hysteresis, contacts, unit, stable-ms, stable-grams, rumble, rumble-device, rumble-intensity, socket, state-dir, group, control-group, max-clients, log-level, log, log-db, log-keep-days or log-keep-readings",
            "test.conf:3: bad value '3' for 'threshold': it takes a force fraction greater than 0 and at most 1",
            "test.conf:4: bad value 'maybe' for 'rumble': it takes on or off",
        ])
    }

    @Test func theHysteresisMustNotExceedTheThreshold() {
        #expect(problems("threshold = 0.5\nhysteresis = 0.6") == [
            "test.conf:2: 'hysteresis' 0.6 is more than the threshold on line 1, 0.5; it takes a force fraction from 0 to the threshold",
        ])
        #expect(problems("hysteresis = 0.6\nthreshold = 0.5") == [
            "test.conf:1: 'hysteresis' 0.6 is more than the threshold on line 2, 0.5; it takes a force fraction from 0 to the threshold",
        ])
        #expect(problems("threshold = 0.01") == [
            "test.conf:1: 'threshold' 0.01 is below the default hysteresis, 0.05; set 'hysteresis' too, from 0 to the threshold",
        ])
        #expect(problems("threshold = 0.01\nhysteresis = 0.01").isEmpty)
    }

    // MARK: Layers

    @Test func theCommandLineOverridesTheFileWhichOverridesTheDefaults() throws {
        let file = try parse("interval-ms = 50\nthreshold = 0.7\nunit = kg\nrumble = off")
        var commandLine = ConfigurationLayer()
        commandLine.intervalMilliseconds = 5
        commandLine.rumble = true
        let configuration = DaemonConfiguration(layers: [file.layer, commandLine])
        #expect(configuration.settings.throttleInterval == 5_000)  // the command line
        #expect(configuration.settings.peakThreshold == 0.7)  // the file
        #expect(configuration.unit == .kilograms)
        #expect(configuration.rumble)
        #expect(configuration.settings.stabilityWindow == ScaleSettings().stabilityWindow)  // the default
        #expect(configuration.group == "forcescale" && configuration.logLevel == .info && configuration.socket == nil)
        #expect(DaemonConfiguration(layers: []) == DaemonConfiguration())
    }

    @Test func changesAreListedWithOldAndNewValues() throws {
        let old = DaemonConfiguration(layers: [try parse("interval-ms = 10\nrumble = on").layer])
        let new = DaemonConfiguration(layers: [try parse("interval-ms = 50\nrumble = off\nlog-level = debug").layer])
        let changed = new.changes(from: old)
        #expect(changed == [.intervalMilliseconds, .rumble, .logLevel])
        #expect(new.describeChanges(from: old, keys: changed) == "interval-ms 10 → 50, rumble on → off, log-level info → debug")
        #expect(changed.map(\.reach) == [.source, .source, .immediate])
        #expect(ConfigurationKey.socket.reach == .restart && ConfigurationKey.stateDirectory.reach == .restart && ConfigurationKey.group.reach == .restart)
        #expect(new.changes(from: new).isEmpty)
    }

    // MARK: Files

    @Test func loadingReadsTheFileAndAMissingDefaultIsNoFile() throws {
        let directory = TemporaryDirectory()
        let path = directory.path + "/forcescale.conf"
        writeFile(directory.path + "/forcescale.conf", "interval-ms = 25\n")
        #expect(try ConfigurationFile.load(path: path, mustExist: true)?.layer.intervalMilliseconds == 25)
        #expect(try ConfigurationFile.load(path: directory.path + "/missing.conf", mustExist: false) == nil)
        #expect(throws: ConfigurationError(path: directory.path + "/missing.conf", line: nil,
                                           message: "no such file (give an existing file to --config, or leave --config out)")) {
            try ConfigurationFile.load(path: directory.path + "/missing.conf", mustExist: true)
        }
        #expect(throws: ConfigurationError(path: directory.path, line: nil, message: "is a directory (give the configuration file)")) {
            try ConfigurationFile.load(path: directory.path, mustExist: false)
        }
        writeFile(directory.path + "/bad.conf", "interval-ms = 25\nwhat\n")
        #expect(throws: ConfigurationError(path: directory.path + "/bad.conf", line: 2, message: "expected 'key = value', found 'what'")) {
            try ConfigurationFile.load(path: directory.path + "/bad.conf", mustExist: false)
        }
        writeFile(directory.path + "/big.conf", String(repeating: "# padding\n", count: 110_000))
        #expect(throws: ConfigurationError(path: directory.path + "/big.conf", line: nil, message: "larger than 1 MiB: not a configuration file")) {
            try ConfigurationFile.load(path: directory.path + "/big.conf", mustExist: false)
        }
    }

    /// The shipped etc/forcescale.conf parses, changes nothing, and documents every key.
    @Test func theShippedFileDocumentsEveryKeyAndParsesToTheDefaults() throws {
        let path = String(#filePath.split(separator: "/").dropLast(3).joined(separator: "/"))
        let shipped = "/" + path + "/etc/forcescale.conf"
        let file = try #require(try ConfigurationFile.load(path: shipped, mustExist: true))
        #expect(file.layer == ConfigurationLayer())
        let text = String(decoding: try readAll(shipped), as: UTF8.self)
        for key in ConfigurationKey.allCases {
            let example = text.split(separator: "\n").first { $0.hasPrefix("#\(key.rawValue) = ") }
            #expect(example != nil, "etc/forcescale.conf shows no '#\(key) = …' line")
            // Uncommented, each example is a valid line.
            if let example { #expect(throws: Never.self) { try ConfigurationFile.parse(String(example.dropFirst()), path: shipped) } }
        }
        // The defaults it shows are the defaults.
        let defaults = DaemonConfiguration()
        for key in [ConfigurationKey.intervalMilliseconds, .unit, .stableMilliseconds, .rumble, .group, .logLevel] {
            #expect(text.contains("#\(key) = \(defaults.text(for: key))\n"), "\(key)")
        }
        // The contacts' default depends on the device: said in words, the example a value.
        #expect(text.contains("Default: \(defaults.text(for: .contacts))"))
        for (key, value) in [(ConfigurationKey.threshold, 1.0), (.hysteresis, 0.05), (.stableGrams, 2.0), (.rumbleIntensity, 1.0)] {
            #expect(text.contains("#\(key) = \(value)\n"), "\(key)")
        }
        #expect(defaults.settings == ScaleSettings())
    }

    private func readAll(_ path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        let input = try FileInput(path: path)
        try input.forEachChunk { bytes.append(contentsOf: $0) }
        return bytes
    }
}
