import ScaleCore
import Testing
@testable import ScaleDisplay

@Suite struct SessionTextTests {
    static let device = LoggedDevice(id: 1, key: "k", name: "Pad")

    @Test(arguments: [
        (0.04, "0.0 s"), (0.8, "0.8 s"), (42.46, "42.5 s"), (59.94, "59.9 s"), (60, "1 min 00 s"), (312, "5 min 12 s"),
        (3599, "59 min 59 s"), (3600, "1 h 00 min"), (11_100, "3 h 05 min"), (86_400, "1 d 0 h"), (187_200, "2 d 4 h"), (-1, "0.0 s"),
    ])
    func durationsReadAsPeopleSayThem(_ seconds: Double, _ text: String) {
        #expect(SessionText.duration(seconds) == text)
    }

    @Test func theTableLinesUpAndSaysWhatIsMissing() {
        let sessions = [
            LoggedSession(id: 9, device: Self.device, started: WallTime(microseconds: 0), ended: WallTime(microseconds: 2_500_000),
                          peakGrams: 1234.56, stableGrams: 12, readingCount: 250, model: .nominal),
            LoggedSession(id: 10, device: LoggedDevice(id: 2, key: "w", name: "A much longer name"), started: WallTime(microseconds: 5_000_000),
                          ended: nil, peakGrams: 0, stableGrams: nil, readingCount: 0, model: .calibrated),
        ]
        let table = SessionText.table(sessions) { "t\($0.microseconds / 1_000_000)" }
        #expect(table == """
            ID  DEVICE              START  DURATION  PEAK G  STABLE G  READINGS
             9  Pad                 t0        2.5 s  1234.6      12.0       250
            10  A much longer name  t5         open     0.0         -         0

            """)
    }

    @Test func anOpenSessionHasNoEndInJSON() throws {
        let open = LoggedSession(id: 3, device: Self.device, started: WallTime(microseconds: 1_000_001), ended: nil,
                                 peakGrams: 5, stableGrams: nil, readingCount: 1, model: .physical)
        #expect(SessionText.jsonLine(open) == #"{"session":3,"device":"Pad","device_key":"k","started":1.000001,"peak_grams":5.0,"readings":1,"model":"physical"}"# + "\n")
    }
}
