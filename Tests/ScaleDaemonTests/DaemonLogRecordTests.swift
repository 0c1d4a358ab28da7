import Testing
@testable import ScaleDaemon

/// The daemon's log as journald reads it: a line a record, its `<N>` priority first. A
/// message that quotes a device's name or a file keeps to its one record however the name
/// was made.
@Suite struct DaemonLogRecordTests {
    @Test func aMessageWithTheIssuesHostileNameIsOneRecordWithItsPriorityFirst() {
        let name = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
        let record = DaemonLog.record(.warning, "the calibration of '\(name)' was unreadable")
        #expect(record == #"<4>the calibration of 'Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED' was unreadable"# + "\n")
        #expect(record.dropLast().unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F })
    }

    @Test func plainMessagesAreWrittenAsTheyAre() {
        #expect(DaemonLog.record(.info, "serving the recording /tmp/pen.evemu as pen.evemu") == "<6>serving the recording /tmp/pen.evemu as pen.evemu\n")
    }
}
