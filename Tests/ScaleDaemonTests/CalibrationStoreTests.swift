import Glibc
import ScaleCore
@testable import ScaleDaemon
@testable import ScalePOSIX
import ScaleTestSupport
import Testing

@Suite struct CalibrationStoreTests {
    let pen = DeviceDescription(name: "Wacom Intuos4 6x9 Pen", identity: DeviceIdentity(bus: 3, vendor: 0x56a, product: 0xb9, version: 0x101))

    func sample() throws -> Calibration {
        try Calibration(points: [CalibrationPoint(raw: 1200.5, grams: 100), CalibrationPoint(raw: 2400.1, grams: 210.3)], tareGrams: 0.1)
    }

    @Test func aSavedCalibrationLoadsBackExactly() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path + "/state")
        #expect(try store.load(for: pen) == .nothingSaved)
        try store.save(try sample(), for: pen)
        #expect(try store.load(for: pen) == .loaded(try sample()))
        // A second save replaces the first.
        try store.save(Calibration.none, for: pen)
        #expect(try store.load(for: pen) == .loaded(.none))
        #expect(TemporaryDirectory.names(in: store.directory) == ["0003-056a-00b9-wacom-intuos4-6x9-pen.json"])
        #expect(fileStatus(store.path(for: pen)).map { $0.st_mode & 0o777 } == 0o600)
        #expect(fileStatus(store.directory).map { $0.st_mode & 0o777 } == 0o700)
    }

    @Test func theFileIsOneReadableLine() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        try store.save(try sample(), for: pen)
        #expect(readFile(store.path(for: pen)) == """
            {"format":"forcescale-calibration","version":1,"device":"Wacom Intuos4 6x9 Pen","id":"0003:056a:00b9","tare_grams":0.1,"points":[{"raw":1200.5,"grams":100.0},{"raw":2400.1,"grams":210.3}]}

            """)
    }

    @Test func pointsKeepTheirSpreadAndCount() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        let calibration = try Calibration(
            points: [CalibrationPoint(raw: 41.93, grams: 20, spread: 0.52, count: 51), CalibrationPoint(raw: 194.61, grams: 200, spread: 0.61, count: 51)],
            tareGrams: 0)
        try store.save(calibration, for: pen)
        #expect(readFile(store.path(for: pen))?.contains(#"{"raw":41.93,"grams":20.0,"sd":0.52,"n":51}"#) == true)
        #expect(try store.load(for: pen) == .loaded(calibration))
    }

    /// A file as the release before fitted curves wrote it (points without `sd` and `n`)
    /// loads unchanged, and its points get a fitted curve.
    @Test func aFileOfTheEarlierFormatLoadsAndGetsAFittedCurve() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        writeFile(store.path(for: pen), """
            {"format":"forcescale-calibration","version":1,"device":"Wacom Intuos4 6x9 Pen","id":"0003:056a:00b9","tare_grams":1.5,"points":[{"raw":300.0,"grams":20.0},{"raw":820.0,"grams":100.0},{"raw":1480.0,"grams":300.0}]}

            """)
        let loaded = try store.load(for: pen)
        guard case .loaded(let calibration) = loaded else {
            Issue.record("expected it to load, got \(loaded)")
            return
        }
        #expect(calibration.points == [CalibrationPoint(raw: 300, grams: 20), CalibrationPoint(raw: 820, grams: 100), CalibrationPoint(raw: 1480, grams: 300)])
        #expect(calibration.tareGrams == 1.5)
        let model = GramModel(axis: AxisRange(minimum: 0, maximum: 2047), calibration: calibration, likely: .logarithmic)
        let fit = try #require(model.fit)
        #expect(fit.model.family != .piecewiseLinear && fit.uncertainty != nil)
        for point in fit.points { #expect(abs(point.residual) < 25, "\(point)") }
        #expect(abs(model.grams(raw: 820, force: 0) + 1.5 - 100) < 25)
    }

    @Test func aBadSpreadIsCorrupt() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        writeFile(store.path(for: pen), #"{"format":"forcescale-calibration","version":1,"tare_grams":0,"points":[{"raw":300.0,"grams":20.0,"sd":-1}]}"#)
        guard case .corrupt(_, let reason) = try store.load(for: pen) else {
            Issue.record("a negative spread was accepted")
            return
        }
        #expect(reason == #"point 1 has an "sd" that is not a number of 0 or more"#)
    }

    @Test func identitiesAreHexIdsAndASanitisedName() {
        #expect(pen.stateIdentity == "0003-056a-00b9-wacom-intuos4-6x9-pen")
        func identity(_ name: String) -> String {
            DeviceDescription(name: name, identity: DeviceIdentity(bus: 0x11, vendor: 2, product: 7, version: 0)).stateIdentity
        }
        #expect(identity("  SynPS/2 Synaptics TouchPad ") == "0011-0002-0007-synps-2-synaptics-touchpad")
        #expect(identity("../../etc/passwd") == "0011-0002-0007-etc-passwd")
        #expect(identity("Ünïcode ☃ Pad") == "0011-0002-0007-n-code-pad")
        #expect(identity("") == "0011-0002-0007-unnamed")
        #expect(identity(String(repeating: "ab", count: 100)).count == 15 + 64)
    }

    @Test func aCorruptFileIsMovedAsideAndReportedOnce() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        let path = store.path(for: pen)
        writeFile(path, "{\"format\":\"forcescale-calibration\",\"version\":1,\"tare_gr")
        let first = try store.load(for: pen)
        guard case .corrupt(let movedTo, let reason) = first else {
            Issue.record("expected corrupt, got \(first)")
            return
        }
        #expect(movedTo == path + ".corrupt-1")
        #expect(reason.hasPrefix("not JSON"))
        #expect(readFile(movedTo)?.hasPrefix("{\"format\"") == true)
        #expect(try store.load(for: pen) == .nothingSaved)

        // Another bad file later does not overwrite the first one kept aside.
        writeFile(path, "")
        #expect(try store.load(for: pen) == .corrupt(movedTo: path + ".corrupt-2", reason: "the file is empty"))
    }

    @Test func wellFormedButWrongFilesAreCorruptWithTheReason() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        let path = store.path(for: pen)
        let cases: [(String, String)] = [
            (#"{"format":"forcescale-calibration","version":2,"tare_grams":0,"points":[]}"#, "format version 2.0 is not supported"),
            (#"{"version":1}"#, "not a forcescale calibration"),
            (#"{"format":"forcescale-calibration","version":1,"tare_grams":0,"points":[{"raw":10,"grams":5},{"raw":20,"grams":4}]}"#, "calibration points must rise"),
            (#"{"format":"forcescale-calibration","version":1,"tare_grams":"0","points":[]}"#, "no \"tare_grams\" number"),
            // Numbers no pad gives (issue 41: a state file kept 1e+308 across restarts).
            (#"{"format":"forcescale-calibration","version":1,"tare_grams":1e308,"points":[]}"#, "the tare (1e+308 g) is beyond the 100000 g"),
            (#"{"format":"forcescale-calibration","version":1,"tare_grams":0,"points":[{"raw":100,"grams":1e308}]}"#, "a calibration weight of 1e+308 g is more than forcescale accepts"),
        ]
        for (text, expected) in cases {
            writeFile(path, text)
            guard case .corrupt(_, let reason) = try store.load(for: pen) else {
                Issue.record("\(text) was not reported corrupt")
                continue
            }
            #expect(reason.hasPrefix(expected), "\(reason)")
        }
    }

    @Test func aFailedSaveLeavesNoTemporaryFile() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path)
        // A non-empty directory where the file should go: the rename must fail, after the
        // temporary was written and synced. (Permission bits would not stop root.)
        let path = store.path(for: pen)
        mkdir(path, 0o700)
        writeFile(path + "/keep", "")
        #expect {
            try store.save(try sample(), for: pen)
        } throws: { error in
            let error = error as? SystemError
            return error?.errno == .isDirectory && error?.path == path
        }
        #expect(TemporaryDirectory.names(in: directory.path) == [pen.stateIdentity + ".json"])
        // Reading it is an error, not corruption: there is nothing to move aside.
        #expect(throws: SystemError.self) { try store.load(for: pen) }
    }

    @Test func aDirectoryThatCannotBeMadeIsExplained() throws {
        let directory = TemporaryDirectory()
        // Missing parents are made, as on a user's first run without ~/.local/state.
        _ = try CalibrationStore(directory: directory.path + "/missing/state")
        var status = stat()
        #expect(stat(directory.path + "/missing/state", &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
        // The README: the state directory and any folder missing above it get mode 0700.
        #expect(fileStatus(directory.path + "/missing").map { $0.st_mode & 0o777 } == 0o700)
        #expect(fileStatus(directory.path + "/missing/state").map { $0.st_mode & 0o777 } == 0o700)
        writeFile(directory.path + "/file", "")
        #expect {
            try CalibrationStore(directory: directory.path + "/file/state")
        } throws: { error in
            (error as? SystemError)?.errno == Errno(rawValue: ENOTDIR) && "\(error)".contains("part of the path is a file")
        }
        #expect {
            try CalibrationStore(directory: directory.path + "/file")
        } throws: { error in
            "\(error)".contains("exists and is not a directory")
        }
        #expect(throws: SystemError.self) { try CalibrationStore(directory: "/proc/forcescale-state") }
    }

    @Test func saveFailsClearlyWhenItsDirectoryBecameAFile() throws {
        let directory = TemporaryDirectory()
        let store = try CalibrationStore(directory: directory.path + "/state")
        rmdir(store.directory)
        writeFile(store.directory, "")
        #expect {
            try store.save(try sample(), for: pen)
        } throws: { error in
            (error as? SystemError)?.path == store.directory && "\(error)".contains("not a directory")
        }
    }
}
