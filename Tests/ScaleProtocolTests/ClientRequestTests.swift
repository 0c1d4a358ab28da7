import Testing
@testable import ScaleProtocol
@testable import ScaleCore

private func request(_ line: String) -> Result<ClientRequest, RequestError> {
    ClientRequest.parse(line: line)
}

private func error(_ message: String, _ requestClass: String? = nil) -> Result<ClientRequest, RequestError> {
    .failure(RequestError(message: message, requestClass: requestClass))
}

@Suite struct ClientRequestTests {
    // MARK: Each class

    @Test func watch() {
        #expect(request(#"{"class":"WATCH","enable":true,"device":"event5"}"#) == .success(.watch(enable: true, device: "event5")))
        #expect(request(#"{"class":"WATCH","enable":false}"#) == .success(.watch(enable: false, device: nil)))
        // As in gpsd, WATCH alone turns watching on.
        #expect(request(#"{"class":"WATCH"}"#) == .success(.watch(enable: true, device: nil)))
    }

    @Test func grab() {
        #expect(request(#"{"class":"GRAB"}"#) == .success(.grab(enable: true, seconds: nil, device: nil)))
        #expect(request(#"{"class":"GRAB","enable":true,"seconds":60,"device":"event5"}"#) == .success(.grab(enable: true, seconds: 60, device: "event5")))
        #expect(request(#"{"class":"GRAB","enable":false}"#) == .success(.grab(enable: false)))
        #expect(request(#"{"class":"GRAB","seconds":0}"#) == error("'seconds' must be a number greater than 0", "GRAB"))
        #expect(request(#"{"class":"GRAB","seconds":"60"}"#) == error("'seconds' must be a number greater than 0", "GRAB"))
        #expect(ClientRequest.grab(enable: true, seconds: 62.5, device: "event5").line == #"{"class":"GRAB","enable":true,"seconds":62.5,"device":"event5"}"# + "\n")
        #expect(ClientRequest.grab(enable: false).line == #"{"class":"GRAB","enable":false}"# + "\n")
        let reply = #"{"class":"GRAB","device":"event5","grabbed":true,"seconds":60.0}"#
        #expect(GrabMessage(device: "event5", grabbed: true, seconds: 60).line == reply + "\n")
        #expect((try? GrabMessage.decode(line: reply)) == GrabMessage(device: "event5", grabbed: true, seconds: 60))
        let ended = #"{"class":"GRAB","device":"event5","grabbed":false,"ended":"expired"}"#
        #expect((try? GrabMessage.decode(line: ended))?.line == ended + "\n")
    }

    @Test func aLineThatIsNotUTF8IsRefusedAtTheByteWhereItStopsBeingSo() {
        // In a string, as gpsd-style clients that send raw device names would.
        let inString = Array(#"{"class":"WATCH","device":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8)
        #expect(ClientRequest.parse(line: inString) == error("malformed JSON at byte 27: invalid UTF-8"))
        // Outside a string, where the JSON parser alone would only expect a value.
        #expect(ClientRequest.parse(line: [0x7B, 0xC0, 0x80, 0x7D]) == error("malformed JSON at byte 1: invalid UTF-8"))
        // After multi-byte characters: bytes are counted, not characters.
        let afterAccents = Array(#"{"class":"WATCH","device":"é€"#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8)
        #expect(ClientRequest.parse(line: afterAccents) == error("malformed JSON at byte 32: invalid UTF-8"))
        // A sequence cut short at the end of the line.
        #expect(ClientRequest.parse(line: Array(#"{"class":"POLL"}"#.utf8) + [0xE2, 0x82]) == error("malformed JSON at byte 16: invalid UTF-8"))
        // Valid UTF-8 of every length still passes.
        #expect(ClientRequest.parse(line: Array(#"{"class":"WATCH","device":"é€𝄞"}"#.utf8)) == .success(.watch(enable: true, device: "é€𝄞")))
    }

    @Test func requestsWithoutFields() {
        #expect(request(#"{"class":"POLL"}"#) == .success(.poll()))
        #expect(request(#"{"class":"DEVICES"}"#) == .success(.devices))
        #expect(request(#"{"class":"STATUS"}"#) == .success(.status()))
        #expect(request(#"{"class":"TARE"}"#) == .success(.tare()))
    }

    @Test func calibrate() {
        #expect(request(#"{"class":"CALIBRATE","grams":100.0}"#) == .success(.calibrate(grams: 100)))
        #expect(request(#"{"class":"CALIBRATE","grams":100}"#) == .success(.calibrate(grams: 100)))
        #expect(request(#"{"class":"CALIBRATE","grams":2.5e-1}"#) == .success(.calibrate(grams: 0.25)))
    }

    @Test func calibration() {
        #expect(request(#"{"class":"CALIBRATION","reset":true}"#) == .success(.calibration(reset: true)))
        #expect(request(#"{"class":"CALIBRATION","reset":false}"#) == .success(.calibration(reset: false)))
        #expect(request(#"{"class":"CALIBRATION"}"#) == .success(.calibration(reset: false)))
    }

    @Test func rumble() {
        #expect(request(#"{"class":"RUMBLE","pattern":"success"}"#) == .success(.rumble(pattern: .success)))
        #expect(request(#"{"class":"RUMBLE","pattern":"impact-light"}"#) == .success(.rumble(pattern: .impactLight)))
        // Without a pattern: impact-medium, as for `forcescale rumble`.
        #expect(request(#"{"class":"RUMBLE"}"#) == .success(.rumble(pattern: .impactMedium)))
    }

    @Test func classNamesMatchTheRequests() {
        let all: [ClientRequest] = [.watch(enable: true, device: nil), .poll(), .devices, .status(), .tare(), .calibrate(grams: 1), .calibration(reset: false), .rumble(pattern: .peak), .grab(enable: true)]
        #expect(all.map(\.className) == ClientRequest.classNames)
    }

    // MARK: Lines

    @Test func aTrailingNewlineAndWhitespaceAreAccepted() {
        #expect(request("{\"class\":\"POLL\"}\n") == .success(.poll()))
        #expect(request("{\"class\":\"POLL\"}\r\n") == .success(.poll()))
        #expect(request("  { \"class\" : \"POLL\" }  ") == .success(.poll()))
    }

    @Test func entryPointsAgree() {
        let line = #"{"class":"CALIBRATE","grams":50}"#
        let expected: Result<ClientRequest, RequestError> = .success(.calibrate(grams: 50))
        #expect(ClientRequest.parse(line: line) == expected)
        #expect(ClientRequest.parse(line: ("xx" + line).dropFirst(2)) == expected)
        #expect(ClientRequest.parse(line: Array(line.utf8)) == expected)
        #expect(ClientRequest.parse(json: .object(["class": .string("CALIBRATE"), "grams": .number(50)])) == expected)
    }

    @Test func extraKeysAreIgnored() {
        #expect(request(#"{"class":"POLL","future":[1,{"x":null}],"enable":"not checked"}"#) == .success(.poll()))
        #expect(request(#"{"id":7,"class":"TARE","grams":12}"#) == .success(.tare()))
        #expect(request(#"{"class":"WATCH","enable":true,"json":true,"scaled":false}"#) == .success(.watch(enable: true, device: nil)))
    }

    @Test func nullOptionalFieldsCountAsAbsent() {
        #expect(request(#"{"class":"WATCH","enable":null,"device":null}"#) == .success(.watch(enable: true, device: nil)))
        #expect(request(#"{"class":"RUMBLE","pattern":null}"#) == .success(.rumble(pattern: .impactMedium)))
    }

    @Test func duplicateKeysKeepTheLast() {
        #expect(request(#"{"class":"FOO","class":"POLL"}"#) == .success(.poll()))
        #expect(request(#"{"class":"CALIBRATE","grams":-1,"grams":5}"#) == .success(.calibrate(grams: 5)))
    }

    // MARK: Errors

    @Test func notARequest() {
        let message = #"the request must be a JSON object with a "class""#
        for line in [#"[]"#, #""POLL""#, "null", "{}", #"{"class":5}"#, #"{"class":null}"#, #"{"Class":"POLL"}"#, #"[{"class":"POLL"}]"#] {
            #expect(request(line) == error(message), "\(line)")
        }
        #expect(RequestError.notARequest.message == message)
    }

    @Test func unknownClass() {
        #expect(request(#"{"class":"FOO"}"#) == error("unknown class 'FOO'"))
        // Classes are case-sensitive, and the daemon's own classes are not requests.
        #expect(request(#"{"class":"poll"}"#) == error("unknown class 'poll'"))
        #expect(request(#"{"class":"VERSION"}"#) == error("unknown class 'VERSION'"))
        #expect(request(#"{"class":""}"#) == error("unknown class ''"))
        // A huge class name is cut in the message.
        let long = String(repeating: "X", count: 1000)
        #expect(request(#"{"class":""# + long + #""}"#) == error("unknown class '" + String(repeating: "X", count: 40) + "…'"))
    }

    @Test func malformedJSON() {
        #expect(request(#"{"class" "POLL"}"#) == error("malformed JSON at byte 9: expected ':'"))
        #expect(request(#"{"class":"POLL",}"#) == error("malformed JSON at byte 16: trailing comma before '}'"))
        #expect(request("") == error("malformed JSON at byte 0: unexpected end of input, expected a value"))
        #expect(request("\n") == error("malformed JSON at byte 0: unexpected end of input, expected a value"))
        #expect(request("?WATCH={\"enable\":true}") == error("malformed JSON at byte 0: expected a value"))
    }

    @Test func wrongTypesNameTheField() {
        #expect(request(#"{"class":"WATCH","enable":"yes"}"#) == error("'enable' must be true or false", "WATCH"))
        #expect(request(#"{"class":"WATCH","enable":1}"#) == error("'enable' must be true or false", "WATCH"))
        #expect(request(#"{"class":"WATCH","device":5}"#) == error("'device' must be a string", "WATCH"))
        #expect(request(#"{"class":"CALIBRATION","reset":"true"}"#) == error("'reset' must be true or false", "CALIBRATION"))
        #expect(request(#"{"class":"RUMBLE","pattern":3}"#) == error("'pattern' must be a string", "RUMBLE"))
    }

    @Test func gramsMustBeAPositiveNumber() {
        let message = "'grams' must be a number greater than 0"
        for grams in ["0", "-0", "-5", #""100""#, "true", "[100]", "{}"] {
            #expect(request(#"{"class":"CALIBRATE","grams":"# + grams + "}") == error(message, "CALIBRATE"), "\(grams)")
        }
        #expect(request(#"{"class":"CALIBRATE"}"#) == error("missing 'grams': the known weight, a number greater than 0", "CALIBRATE"))
        #expect(request(#"{"class":"CALIBRATE","grams":null}"#) == error("missing 'grams': the known weight, a number greater than 0", "CALIBRATE"))
        // NaN and infinities never get this far: they are not JSON.
        #expect(request(#"{"class":"CALIBRATE","grams":1e999}"#) == error("malformed JSON at byte 29: number out of range"))
        #expect(request(#"{"class":"CALIBRATE","grams":NaN}"#) == error("malformed JSON at byte 29: NaN and Infinity are not JSON numbers"))
    }

    /// Numbers that are JSON but no weight or pressure (issue 41: 1e308 g was accepted, and
    /// every client lost its grams) are refused here, at the protocol's edge.
    @Test func weightsAndPressuresMustBeInRange() {
        #expect(request(#"{"class":"CALIBRATE","grams":1e308}"#) == error("'grams' must be at most 100000 (grams): no pad or pen carries more", "CALIBRATE"))
        #expect(request(#"{"class":"CALIBRATE","grams":100000}"#) == .success(.calibrate(grams: 100000, device: nil)))
        for (point, message) in [
            (#"{"raw":100,"grams":1e308}"#, "'curve[0].grams' must be at most 100000 (grams): no pad or pen carries more"),
            (#"{"raw":100,"grams":1e306}"#, "'curve[0].grams' must be at most 100000 (grams): no pad or pen carries more"),
            (#"{"raw":100,"grams":-1}"#, "'curve[0].grams' must be a number greater than 0"),
            (#"{"raw":1e300,"grams":5}"#, "'curve[0].raw' must be a pressure a device can report (at most 2147483647 either way)"),
            (#"{"raw":100,"grams":5,"sd":1e300}"#, "'curve[0].sd' must be a number of 0 or more, at most 2147483647"),
        ] {
            #expect(request(#"{"class":"CALIBRATION","curve":["# + point + "]}") == error(message, "CALIBRATION"), "\(point)")
        }
    }

    @Test func unknownPatternListsTheKnownOnes() {
        let known = "impact-light, impact-medium, impact-heavy, impact-soft, impact-rigid, selection, success, warning, error"
        #expect(request(#"{"class":"RUMBLE","pattern":"boom"}"#) == error("unknown pattern 'boom' (known: \(known))", "RUMBLE"))
        #expect(request(#"{"class":"RUMBLE","pattern":"Success"}"#) == error("unknown pattern 'Success' (known: \(known))", "RUMBLE"))
    }

    @Test func lineLengthLimit() {
        #expect(ClientRequest.maximumLineBytes == 65536)
        #expect(RequestError.lineTooLong.message == "line longer than 65536 bytes")
        #expect(RequestError.lineTooLong.requestClass == nil)
        #expect(RequestError.lineTooLong.closesConnection)
        #expect(!RequestError.notARequest.closesConnection)
        // Padded to exactly the limit: accepted, with or without its newline.
        let prefix = #"{"class":"POLL","pad":""#
        let suffix = #""}"#
        let exact = prefix + String(repeating: "x", count: 65536 - prefix.utf8.count - suffix.utf8.count) + suffix
        #expect(exact.utf8.count == 65536)
        #expect(request(exact) == .success(.poll()))
        #expect(request(exact + "\n") == .success(.poll()))
        // One byte more is refused before parsing.
        #expect(request(exact + " ") == .failure(.lineTooLong))
        #expect(request(exact + " \n") == .failure(.lineTooLong))
        // A "\r" before the newline counts, as in the socket layer.
        #expect(request(exact + "\r\n") == .failure(.lineTooLong))
        #expect(request(String(repeating: "[", count: 100_000)) == .failure(.lineTooLong))
    }

    @Test func errorDescriptionIsTheMessage() {
        #expect(RequestError(message: "unknown class 'FOO'").description == "unknown class 'FOO'")
    }
}

@Suite struct ReplyLineTests {
    let reading = Reading(time: EventTime(seconds: 1382570965, microseconds: 747302), raw: 51, force: 0.2, grams: 77.0, saturated: false, contacts: 1, stable: false, model: .nominal)

    @Test func version() {
        #expect(VersionMessage(release: "0.1.0").line == #"{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":8}"# + "\n")
    }

    @Test func error() {
        #expect(RequestError(message: "unknown class 'FOO'").line == #"{"class":"ERROR","message":"unknown class 'FOO'"}"# + "\n")
        #expect(RequestError(message: "'grams' must be a number greater than 0", requestClass: "CALIBRATE").line
            == #"{"class":"ERROR","message":"'grams' must be a number greater than 0","request":"CALIBRATE"}"# + "\n")
        #expect(RequestError(message: "no rumble device", request: .rumble(pattern: .success)).line
            == #"{"class":"ERROR","message":"no rumble device","request":"RUMBLE"}"# + "\n")
        #expect(RequestError.notARequest.line == #"{"class":"ERROR","message":"the request must be a JSON object with a \"class\""}"# + "\n")
        #expect(RequestError.lineTooLong.line == #"{"class":"ERROR","message":"line longer than 65536 bytes"}"# + "\n")
    }

    @Test func watch() {
        #expect(WatchMessage(enable: true, device: "event5").line == #"{"class":"WATCH","enable":true,"device":"event5"}"# + "\n")
        #expect(WatchMessage(enable: false).line == #"{"class":"WATCH","enable":false}"# + "\n")
    }

    @Test func poll() {
        #expect(PollMessage(time: EventTime(seconds: 1382570966, microseconds: 5), reading: ReadingMessage(reading, device: "event5")).line ==
            #"{"class":"POLL","time":1382570966.000005,"reading":{"class":"READING","device":"event5","time":1382570965.747302,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}}"# + "\n")
        #expect(PollMessage(reading: nil).line == #"{"class":"POLL"}"# + "\n")
        // The nested reading is the READING line without its newline.
        #expect(PollMessage(reading: ReadingMessage(reading)).line.contains(ReadingMessage(reading).line.dropLast() + "}\n"))
    }

    @Test func devices() {
        let trackpad = DeviceDescription(
            name: "Apple Inc. Magic Trackpad",
            identity: DeviceIdentity(bus: 0x5, vendor: 0x4c, product: 0x265, version: 0x111),
            supportedCodes: [.key: BitSet([Int(EventCode.btnToolFinger.rawValue)])],
            axes: [
                .absPressure: AxisRange(minimum: 0, maximum: 255),
                .absMTSlot: AxisRange(minimum: 0, maximum: 15),
                .absMTPressure: AxisRange(minimum: 0, maximum: 253, fuzz: 5, resolution: 2),
            ])
        let entries = [
            DevicesMessage.Device(path: "/dev/input/event5", description: trackpad, active: true, canRumble: false),
            DevicesMessage.Device(path: "/dev/input/event9", error: "Permission denied"),
        ]
        #expect(DevicesMessage(devices: entries).line ==
            #"{"class":"DEVICES","devices":[{"path":"/dev/input/event5","name":"Apple Inc. Magic Trackpad","id":"0005:004c:0265","kind":"touchpad","active":true,"pressure":[{"axis":"ABS_MT_PRESSURE","min":0,"max":253,"fuzz":5,"resolution":2},{"axis":"ABS_PRESSURE","min":0,"max":255,"fuzz":0,"resolution":0}],"canWeigh":true,"canRumble":false},{"path":"/dev/input/event9","active":false,"error":"Permission denied"}]}"# + "\n")
        #expect(DevicesMessage(devices: []).line == #"{"class":"DEVICES","devices":[]}"# + "\n")
    }

    @Test func status() throws {
        let calibration = try Calibration(points: [CalibrationPoint(raw: 80, grams: 50), CalibrationPoint(raw: 160, grams: 100)], tareGrams: 2.34)
        let full = StatusMessage(
            release: "0.1.0", uptimeSeconds: 3600.12345, clients: 2, device: "event5", model: .calibrated,
            calibration: calibration, rumble: "/dev/input/event7", dropped: 3)
        #expect(full.line ==
            #"{"class":"STATUS","release":"0.1.0","uptime":3600.123,"clients":2,"device":"event5","model":"calibrated","calibration":{"points":2,"tare":2.3},"rumble":"/dev/input/event7","dropped":3}"# + "\n")
        let idle = StatusMessage(release: "0.1.0", uptimeSeconds: 0.5, clients: 1)
        #expect(idle.line == #"{"class":"STATUS","release":"0.1.0","uptime":0.5,"clients":1,"dropped":0}"# + "\n")
    }

    @Test func tare() {
        #expect(TareMessage(device: "event5", grams: 12.34).line == #"{"class":"TARE","device":"event5","grams":12.3}"# + "\n")
        #expect(TareMessage(grams: 0).line == #"{"class":"TARE","grams":0.0}"# + "\n")
    }

    @Test func calibrate() {
        #expect(CalibrateMessage(point: CalibrationPoint(raw: 812.456, grams: 100), points: 1, device: "event5").line ==
            #"{"class":"CALIBRATE","device":"event5","grams":100.0,"raw":812.46,"points":1}"# + "\n")
    }

    @Test func calibration() throws {
        let curve = try Calibration(points: [CalibrationPoint(raw: 160.5, grams: 100), CalibrationPoint(raw: 80.25, grams: 50)], tareGrams: -1.25)
        #expect(CalibrationMessage(curve, device: "event5").line ==
            #"{"class":"CALIBRATION","device":"event5","points":2,"curve":[{"raw":80.25,"grams":50.0},{"raw":160.5,"grams":100.0}],"tare":-1.3}"# + "\n")
        // After a reset: the same shape, empty.
        #expect(CalibrationMessage(.none).line == #"{"class":"CALIBRATION","points":0,"curve":[],"tare":0.0}"# + "\n")
    }

    @Test func rumble() {
        #expect(RumbleMessage(pattern: .success).line == #"{"class":"RUMBLE","pattern":"success"}"# + "\n")
    }

    @Test func everyReplyIsOneLineOfJSONWithItsClass() throws {
        let lines = [
            ("VERSION", VersionMessage(release: "0.1.0").line),
            ("ERROR", RequestError(message: "a \"quoted\"\nline\u{01}", requestClass: "TARE").line),
            ("WATCH", WatchMessage(enable: true, device: "é\\").line),
            ("POLL", PollMessage(time: EventTime(microseconds: 1), reading: ReadingMessage(reading)).line),
            ("DEVICES", DevicesMessage(devices: [DevicesMessage.Device(path: "/dev/input/event1", name: "Pad \"Pro\"", active: false)]).line),
            ("STATUS", StatusMessage(release: "0.1.0", uptimeSeconds: 1, clients: 1, calibration: Calibration.none).line),
            ("TARE", TareMessage(grams: 1).line),
            ("CALIBRATE", CalibrateMessage(point: CalibrationPoint(raw: 1, grams: 1), points: 1).line),
            ("CALIBRATION", CalibrationMessage(.none).line),
            ("RUMBLE", RumbleMessage(pattern: .error).line),
        ]
        for (name, line) in lines {
            #expect(line.last == "\n")
            #expect(line.dropLast().contains("\n") == false, "\(line)")
            #expect(!line.contains("null"))
            let value = try JSONValue.parse(line)
            #expect(value["class"] == .string(name))
        }
        let error = try JSONValue.parse(lines[1].1)
        #expect(error["message"] == .string("a \"quoted\"\nline\u{01}"))
    }
}

@Suite struct CalibrationRequestTests {
    @Test func calibrateWithoutAddingIsAMeasurement() {
        #expect(ClientRequest.parse(line: #"{"class":"CALIBRATE","grams":20,"add":false}"#) == .success(.measure(grams: 20)))
        #expect(ClientRequest.parse(line: #"{"class":"CALIBRATE","grams":20,"add":true}"#) == .success(.calibrate(grams: 20)))
        #expect(ClientRequest.measure(grams: 20).line == #"{"class":"CALIBRATE","grams":20.0,"add":false}"# + "\n")
        #expect(ClientRequest.parse(line: #"{"class":"CALIBRATE","grams":20,"add":0}"#)
            == .failure(RequestError(message: "'add' must be true or false", requestClass: "CALIBRATE")))
    }

    @Test func aCurveReplacesThePointsOrPreviewsThem() {
        let line = #"{"class":"CALIBRATION","curve":[{"raw":41.93,"grams":20.0,"sd":0.52,"n":51},{"raw":194.61,"grams":200.0}],"preview":true}"#
        let points = [CalibrationPoint(raw: 41.93, grams: 20, spread: 0.52, count: 51), CalibrationPoint(raw: 194.61, grams: 200)]
        #expect(ClientRequest.parse(line: line) == .success(.replaceCurve(points: points, preview: true)))
        #expect(ClientRequest.replaceCurve(points: points, preview: true).line == line + "\n")
        #expect(ClientRequest.parse(line: #"{"class":"CALIBRATION","curve":[],"reset":true}"#) == .success(.replaceCurve(points: [], preview: false)))
        func error(_ text: String) -> RequestError? {
            if case .failure(let error) = ClientRequest.parse(line: text) { return error }
            return nil
        }
        #expect(error(#"{"class":"CALIBRATION","curve":{}}"#)?.message == "'curve' must be a list of points")
        #expect(error(#"{"class":"CALIBRATION","curve":[{"raw":1}]}"#)?.message == "'curve[0]' needs 'raw' and 'grams' numbers")
        #expect(error(#"{"class":"CALIBRATION","curve":[{"raw":1,"grams":2,"n":0}]}"#)?.message == "'curve[0].n' must be a whole number greater than 0")
    }
}
