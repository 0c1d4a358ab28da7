import Glibc
import ScaleCore
import ScalePOSIX
import ScaleTestSupport
import Testing
@testable import ScaleEvdev
import ScaleRecording

/// What ScaleEvdev does without a kernel device: reading recordings from disk, finding
/// event nodes and their links in a directory, and the advice for open failures. Real
/// devices are the kernel scenarios' business (Tests/KernelScenarios).
@Suite struct RecordingAndDiscoveryTests {
    static let description = """
        # EVEMU 1.2
        N: Pad
        I: 0011 0002 0007 01b1
        P: 05 00 00 00 00 00 00 00
        B: 00 0b 00 00 00 00 00 00 00
        B: 03 00 00 00 01 00 00 00 00
        A: 18 0 255 0 0 40

        """
    static let events = """
        E: 1.000000 0003 0018 58
        E: 1.000000 0000 0000 0
        E: 1.010000 0003 0018 0
        E: 1.010000 0000 0000 0

        """

    @Test func aSplitPairIsFoundFromItsEventsFileAndStreamedInOrder() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/pad.desc", Self.description)
        writeFile(directory.path + "/pad.press.events", Self.events)
        let files = RecordingFiles(file: directory.path + "/pad.press.events")
        #expect(files.descriptionPath == directory.path + "/pad.desc")
        var devices: [DeviceDescription] = []
        var values: [Int32] = []
        try files.read(onDevice: { devices.append($0) }, onEvent: { values.append($0.value) })
        #expect(devices.map(\.name) == ["Pad"])
        #expect(values == [58, 0, 0, 0])
    }

    @Test func eventsWithoutADescriptionSayWhichFileToGiveFirst() throws {
        let directory = TemporaryDirectory()
        writeFile(directory.path + "/lonely.events", Self.events)
        #expect(throws: RecordingError.self) {
            try RecordingFiles(file: directory.path + "/lonely.events").read(onDevice: { _ in }, onEvent: { _ in })
        }
        let missing = RecordingFiles(file: directory.path + "/missing.events")
        do {
            try missing.read(onDevice: { _ in }, onEvent: { _ in })
            Issue.record("a missing file was read")
        } catch let RecordingError.file(error) {
            #expect(error.errno == .noSuchFile)
        }
    }

    @Test func eventNodesComeInNaturalOrderWithTheirLinks() throws {
        let directory = TemporaryDirectory()
        for name in ["event10", "event2", "mouse0", "event1"] { writeFile(directory.path + "/" + name, "") }
        mkdir(directory.path + "/by-id", 0o755)
        #expect(symlink("../event2", directory.path + "/by-id/usb-Pad-event-mouse") == 0)
        #expect(DeviceDiscovery.eventNodes(in: directory.path) == ["event1", "event2", "event10"].map { directory.path + "/" + $0 })
        #expect(DeviceDiscovery.symlinks(in: directory.path) == [directory.path + "/event2": [directory.path + "/by-id/usb-Pad-event-mouse"]])
    }

    @Test func openFailuresCarryAdvice() {
        #expect(DeviceOpenError(path: "/dev/input/event7", errno: .permissionDenied).description
            .hasPrefix("/dev/input/event7: permission denied (add yourself to group 'input'"))
        #expect(DeviceOpenError(path: "/dev/null", errno: Errno(rawValue: ENOTTY)).advice == "this is not an evdev input device")
    }
}
