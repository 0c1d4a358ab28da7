import Testing
@testable import ScaleProtocol
@testable import ScaleCore

/// STATUS with the force log on, byte for byte as docs/protocol.md shows it.
@Suite struct StatusLogTests {
    @Test func theLogObjectFollowsDroppedAndOmitsAnErrorThatIsNotThere() {
        let working = StatusMessage(
            release: "0.1.0", uptimeSeconds: 5.202, clients: 1, device: "demo.events", model: .nominal, calibration: Calibration.none,
            log: StatusMessage.LogSummary(path: "/var/lib/forcescale/log.sqlite", written: 265, pending: 71, dropped: 0))
        #expect(working.line == """
            {"class":"STATUS","release":"0.1.0","uptime":5.202,"clients":1,"device":"demo.events","model":"nominal","calibration":{"points":0,"tare":0.0},"dropped":0,"log":{"path":"/var/lib/forcescale/log.sqlite","written":265,"pending":71,"dropped":0}}

            """)
        let failing = StatusMessage(
            release: "0.1.0", uptimeSeconds: 1, clients: 2,
            log: StatusMessage.LogSummary(path: "/mnt/log.sqlite", written: 0, pending: 3, dropped: 7, error: "/mnt/log.sqlite: the disk is full"))
        #expect(failing.line == #"{"class":"STATUS","release":"0.1.0","uptime":1.0,"clients":2,"dropped":0,"log":{"path":"/mnt/log.sqlite","written":0,"pending":3,"dropped":7,"error":"/mnt/log.sqlite: the disk is full"}}"# + "\n")
        // Logging off: no log field at all.
        #expect(!StatusMessage(release: "0.1.0", uptimeSeconds: 1, clients: 1).line.contains("log"))
    }
}
