import ScaleCore
import Testing
@testable import ScaleClient

/// The seam between lines and values, checked against ScaleCore's own encoders and parser
/// (the daemon's side), so that the two cannot drift apart unnoticed.
@Suite struct ClientMessagesTests {
    @Test func everyRequestLineReadsBackAsTheSameRequest() throws {
        let requests: [ClientRequest] = [
            .watch(enable: true, device: nil), .watch(enable: true, device: "event5"), .watch(enable: false, device: nil),
            .poll, .devices, .status, .tare, .calibrate(grams: 100), .calibrate(grams: 12.345),
            .calibration(reset: true), .rumble(pattern: .success),
        ]
        for request in requests {
            let line = ClientMessages.line(for: request)
            #expect(!line.contains("\n"))
            #expect(ClientRequest.parse(line: line) == .success(request), "\(line)")
        }
    }

    @Test func aReadingAndAPeakAsTheDaemonWritesThemAreEvents() throws {
        let reading = Reading(
            time: EventTime(microseconds: 1_382_570_965_747_302), raw: 51, force: 0.2, grams: 77, saturated: false,
            contacts: 1, stable: false, model: .nominal)
        let line = ProtocolMessage.reading(reading, device: "event5")
        #expect(ClientMessages.streamEvent(try JSONValue.parse(Array(line.utf8))) == .reading(reading, device: "event5"))
        let peak = ProtocolMessage.peak(Peak(time: EventTime(microseconds: 5_000_001), raw: 2047, force: 1, grams: 385), device: nil)
        #expect(ClientMessages.streamEvent(try JSONValue.parse(Array(peak.utf8)))
            == .peak(time: EventTime(microseconds: 5_000_001), raw: 2047, grams: 385, device: nil))
    }

    @Test func aReadingWithoutARequiredFieldIsNoEvent() throws {
        let line = #"{"class":"READING","time":1.0,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false}"#
        #expect(ClientMessages.streamEvent(try JSONValue.parse(Array(line.utf8))) == nil)
        #expect(ClientMessages.streamEvent(try JSONValue.parse(Array(#"{"class":"WATCH","enable":true}"#.utf8))) == nil)
    }

    @Test func statusWithoutADeviceHasNoCalibration() throws {
        let line = DaemonMessage.status(StatusSnapshot(release: "0.1.0", uptimeSeconds: 1.5, clients: 2))
        let status = try #require(ClientMessages.status(try JSONValue.parse(Array(line.utf8))))
        #expect(status == DaemonStatus(release: "0.1.0", uptimeSeconds: 1.5, clients: 2))
    }
}
