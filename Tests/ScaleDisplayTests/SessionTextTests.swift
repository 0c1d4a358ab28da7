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

    @Test func eachSessionSaysWhatBecameOfItsRumbles() {
        func session(_ id: Int64) -> LoggedSession {
            LoggedSession(id: id, device: Self.device, started: WallTime(microseconds: id * 1_000_000), ended: WallTime(microseconds: id * 1_000_000 + 900_000),
                          peakGrams: 385, stableGrams: nil, readingCount: 40, model: .nominal)
        }
        func peak(_ session: Int64, _ rumble: RumbleOutcome?) -> LoggedPeak {
            LoggedPeak(session: session, time: WallTime(microseconds: session * 1_000_000 + 400_000), raw: 255, grams: 385, rumble: rumble)
        }
        let peaks: [Int64: [LoggedPeak]] = [
            1: [peak(1, .played(latencyMicroseconds: 412))],
            2: [peak(2, .played(latencyMicroseconds: 300)), peak(2, .played(latencyMicroseconds: 1_520)), peak(2, .failed(errno: 5))],
            3: [peak(3, .failed(errno: 5))],
            4: [peak(4, nil)],
        ]
        let table = SessionText.table((1...5).map(session), peaks: peaks) { "t\($0.microseconds / 1_000_000)" }
        #expect(table == """
            ID  DEVICE  START  DURATION  PEAK G  STABLE G  READINGS  RUMBLES
             1  Pad     t1        0.9 s   385.0         -        40  played in 0.41 ms
             2  Pad     t2        0.9 s   385.0         -        40  2 played (max 1.52 ms), 1 failed
             3  Pad     t3        0.9 s   385.0         -        40  failed: input/output error (errno 5)
             4  Pad     t4        0.9 s   385.0         -        40  -
             5  Pad     t5        0.9 s   385.0         -        40  -

            """)
        #expect(SessionText.jsonLine(session(2), peaks: peaks[2]!) == #"{"session":2,"device":"Pad","device_key":"k","started":2.000000,"ended":2.900000,"duration":0.900000,"peak_grams":385.0,"readings":40,"model":"nominal","peaks":[{"time":2.400000,"raw":255,"grams":385.0,"rumble":"played","rumble_latency":0.000300},{"time":2.400000,"raw":255,"grams":385.0,"rumble":"played","rumble_latency":0.001520},{"time":2.400000,"raw":255,"grams":385.0,"rumble":"failed","rumble_errno":5}]}"# + "\n")
        // A log without rumbles keeps its columns.
        #expect(!SessionText.table([session(4)], peaks: [4: peaks[4]!]) { _ in "t" }.contains("RUMBLES"))
    }

    @Test func peaksExportWithTheirRumbles() {
        let peaks = [
            LoggedPeak(session: 7, time: WallTime(microseconds: 1_764_500_000_000_001), raw: 255, grams: 385, rumble: .played(latencyMicroseconds: 412)),
            LoggedPeak(session: 7, time: WallTime(microseconds: 1_764_500_001_000_000), raw: 254, grams: 384.5, rumble: .failed(errno: 19)),
            LoggedPeak(session: 8, time: WallTime(microseconds: 1_764_500_002_000_000), raw: 255, grams: 385, rumble: nil),
        ]
        let names: [Int64: String] = [7: "Pad, \"left\"", 8: "Pen"]
        var csv = PeakExporter(format: .csv, deviceNames: names).header
        var jsonl = ""
        for peak in peaks {
            PeakExporter(format: .csv, deviceNames: names).append(peak, to: &csv)
            PeakExporter(format: .jsonl, deviceNames: names).append(peak, to: &jsonl)
        }
        #expect(csv == "session,device,time,raw,grams,rumble,rumble_latency,rumble_errno\r\n"
            + "7,\"Pad, \"\"left\"\"\",1764500000.000001,255,385.0,played,0.000412,\r\n"
            + "7,\"Pad, \"\"left\"\"\",1764500001.000000,254,384.5,failed,,19\r\n"
            + "8,Pen,1764500002.000000,255,385.0,,,\r\n")
        #expect(jsonl == #"{"session":7,"device":"Pad, \"left\"","time":1764500000.000001,"raw":255,"grams":385.0,"rumble":"played","rumble_latency":0.000412}"# + "\n"
            + #"{"session":7,"device":"Pad, \"left\"","time":1764500001.000000,"raw":254,"grams":384.5,"rumble":"failed","rumble_errno":19}"# + "\n"
            + #"{"session":8,"device":"Pen","time":1764500002.000000,"raw":255,"grams":385.0}"# + "\n")
    }
}
