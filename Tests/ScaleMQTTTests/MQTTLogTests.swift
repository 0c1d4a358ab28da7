import Testing
import ScaleMQTT

/// forcescale-mqtt's log names devices as the daemon reports them: a name with a newline and
/// escape sequences stays one record, its priority first, with no control character.
@Suite struct MQTTLogTests {
    @Test func aDeviceNameCannotForgeARecordOrReachTheTerminalRaw() {
        let name = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
        let record = MQTTLog.record(6, "publishing \(name) (event5) under forcescale/host/event5")
        #expect(record == #"<6>publishing Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED (event5) under forcescale/host/event5"# + "\n")
        #expect(record.dropLast().unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F })
    }
}
