import ScaleCore
@testable import ScaleEvdev
import Testing
@testable import forcescale

/// `forcescale devices` lists the kernel's devices (/dev/input/event*), which a test cannot
/// make without uinput; its text is checked here with a device as the scan finds it,
/// named as issue 60's hostile device names itself, with a udev link made of that name.
@Suite struct DevicesTextTests {
    @Test func aDevicesNameAndLinksAreShownEscapedEachOnItsLine() {
        let name = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
        let description = DeviceDescription(name: name, identity: DeviceIdentity(bus: 3, vendor: 0x056a, product: 0x00b9, version: 1))
        let device = DiscoveredDevice(
            path: "/dev/input/event7", links: ["/dev/input/by-id/usb-Pad\u{1B}[31m-event-mouse"],
            details: .success(.init(
                description: description,
                forceFeedback: ForceFeedbackCapabilities(effectsCapacity: 0, effectTypes: [], supportsGain: false, supportsAutocenter: false),
                isWritable: false)))
        let text = DevicesCommand.text(device, isBest: false)
        #expect(!text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }, "\(text.debugDescription)")
        let lines = text.split(separator: "\n")
        #expect(lines.first?.hasPrefix(#"/dev/input/event7  Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED  ("#) == true, "\(text)")
        #expect(lines.contains(#"  link        /dev/input/by-id/usb-Pad\e[31m-event-mouse"#), "\(text)")
        #expect(!lines.contains { $0.hasPrefix("<0>") })
    }
}
