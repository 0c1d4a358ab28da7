import Foundation
@testable import ScaleProtocol
import Testing
@testable import ScaleCore

/// The package's root, from this file's place in it.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Decodes a line and checks it comes back byte for byte, and that decoding that again
/// gives the same value.
/// - Returns: The decoded line, or `nil` after recording why not.
@discardableResult
private func roundTrip(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> DaemonLine? {
    let decoded: DaemonLine
    do {
        decoded = try DaemonLine.decode(line: text)
    } catch {
        Issue.record("does not decode (\(error)): \(text)", sourceLocation: sourceLocation)
        return nil
    }
    guard let line = decoded.line else {
        Issue.record("decodes as a class this build does not know: \(text)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(line == text + "\n", "re-encoded differently", sourceLocation: sourceLocation)
    #expect((try? DaemonLine.decode(line: line)) == decoded, sourceLocation: sourceLocation)
    return decoded
}

/// Every line the daemon writes, and every example of one, decodes and is written back
/// the same, byte for byte.
@Suite struct DaemonLineRoundTripTests {
    @Test func everyGoldenLineDecodesAndIsWrittenBackTheSame() throws {
        let directory = packageRoot.appendingPathComponent("Tests/Golden")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".jsonl") }.sorted()
        #expect(files.count >= 8)
        var readings = 0
        var peaks = 0
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") {
                switch roundTrip(String(line)) {
                case .reading?: readings += 1
                case .peak?: peaks += 1
                case let other?: Issue.record("\(file): not a READING or PEAK: \(other)")
                case nil: break
                }
            }
        }
        #expect(readings > 2000 && peaks > 0, "\(readings) readings, \(peaks) peaks")
    }

    @Test func everyExampleInTheProtocolDocumentDecodesAndIsWrittenBackTheSame() throws {
        let examples = try ProtocolDocumentExamples(packageRoot.appendingPathComponent("docs/protocol.md"))
        var classes: Set<String> = []
        for line in examples.daemonLines {
            if let decoded = roundTrip(line) { classes.insert(decoded.className) }
        }
        // Every class the daemon sends has an example, so none of them goes unchecked.
        #expect(classes == ["READING", "PEAK", "VERSION", "ERROR", "WATCH", "POLL", "DEVICES", "STATUS", "TARE", "CALIBRATE", "CALIBRATION", "RUMBLE", "GRAB"])

        // The requests as the document shows them are what ClientRequest writes.
        #expect(Set(examples.requests.map { $0.prefix(while: { $0 != "," && $0 != "}" }) }).count == ClientRequest.classNames.count)
        for line in examples.requests {
            switch ClientRequest.parse(line: line) {
            case .success(let request): #expect(request.line == line + "\n")
            case .failure(let error): Issue.record("\(line): \(error)")
            }
        }
        // What the person typed in the example session is read back the same once written.
        #expect(examples.typedRequests.count >= 8)
        for line in examples.typedRequests {
            guard case .success(let request) = ClientRequest.parse(line: line) else { continue }
            #expect(ClientRequest.parse(line: request.line) == .success(request), "\(line)")
        }
    }

    @Test func messagesBuiltFromTheDaemonsValuesDecodeToThemselves() throws {
        // Values finer than the line: the initialisers round them as the line does, so the
        // message read back equals the one written.
        let reading = ReadingMessage(
            Reading(time: EventTime(microseconds: 5), raw: 1, force: 1.0 / 3.0, grams: 12.3456, saturated: true, contacts: 2, stable: true, model: .calibrated),
            device: "event5")
        let calibration = try Calibration(points: [CalibrationPoint(raw: 80.123, grams: 50.005), CalibrationPoint(raw: 160.5, grams: 100)], tareGrams: -1.25)
        let messages: [any DaemonLineMessage] = [
            VersionMessage(release: "0.1.0"),
            reading,
            PeakMessage(Peak(time: EventTime(microseconds: -3), raw: 255, force: 1, grams: 385.04)),
            WatchMessage(enable: false),
            PollMessage(time: EventTime(seconds: 8125, microseconds: 2317), reading: reading),
            PollMessage(reading: nil),
            DevicesMessage(devices: [
                DevicesMessage.Device(path: "/dev/input/event5", description: DeviceDescription(
                    name: "test mt pad", supportedCodes: [.key: BitSet([Int(EventCode.btnTouch.rawValue)])],
                    axes: [.absMTSlot: AxisRange(minimum: 0, maximum: 4), .absMTPressure: AxisRange(minimum: 0, maximum: 255, resolution: 40)]),
                active: true, canRumble: true),
                DevicesMessage.Device(path: "/dev/input/event9", error: "Permission denied"),
            ]),
            StatusMessage(
                release: "0.1.0", uptimeSeconds: 3600.12345, clients: 2, device: "event5", model: .calibrated,
                calibration: calibration, rumble: "/dev/input/event7", dropped: 3,
                log: StatusMessage.LogSummary(path: "/var/lib/forcescale/log.sqlite", written: 1, pending: 2, dropped: 3, error: "full")),
            TareMessage(device: "event5", grams: 12.34),
            CalibrateMessage(point: CalibrationPoint(raw: 812.456, grams: 100.004), points: 1),
            CalibrationMessage(calibration, device: "event5"),
            CalibrationMessage(.none),
            RumbleMessage(pattern: .warning),
            RequestError(message: "a \"quoted\"\nline\u{01}", requestClass: "TARE"),
        ]
        for message in messages {
            let decoded = try DaemonLine.decode(line: message.line)
            #expect(decoded.message.map { AnyHashable($0) } == AnyHashable(message), "\(message.line)")
            #expect(decoded.className == type(of: message).className)
        }
        #expect(try ReadingMessage.decode(line: reading.line) == reading)
    }

    @Test func aPipelineOutputIsWrittenAsItsMessage() {
        let reading = Reading(time: EventTime(seconds: 1382570965, microseconds: 747302), raw: 51, force: 0.2, grams: 77.0, saturated: false, contacts: 1, stable: false, model: .nominal)
        #expect(ScaleOutput.reading(reading).lineBytes(device: "event5") == Array(ReadingMessage(reading, device: "event5").line.utf8))
        let peak = Peak(time: EventTime(microseconds: 1), raw: 2, force: 1, grams: 3)
        var bytes = Array("before\n".utf8)
        ScaleOutput.peak(peak).appendLine(to: &bytes)
        #expect(bytes == Array(("before\n" + PeakMessage(time: EventTime(microseconds: 1), raw: 2, grams: 3).line).utf8))
    }
}

/// What a client must tolerate from a later daemon, and what it must refuse.
@Suite struct DaemonLineDecodingTests {
    let readingLine = #"{"class":"READING","device":"event5","time":1382570965.747302,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"#

    @Test func aReadingHasItsValues() throws {
        let line = try DaemonLine.decode(line: readingLine + "\r\n")
        #expect(line == .reading(ReadingMessage(
            device: "event5", time: EventTime(seconds: 1382570965, microseconds: 747302), raw: 51, force: 0.2, grams: 77,
            saturated: false, contacts: 1, stable: false, model: .nominal)))
        #expect(line.isStream && line.className == "READING")
    }

    @Test func unknownFieldsAreIgnored() throws {
        let extended = String(readingLine.dropLast()) + #","pressure_kpa":3.5,"contact":{"major":[1,2]},"note":null}"#
        #expect(try DaemonLine.decode(line: extended) == DaemonLine.decode(line: readingLine))
        // Written back, the line is the one this build knows.
        #expect(try DaemonLine.decode(line: extended).line == readingLine + "\n")
        let status = #"{"class":"STATUS","release":"0.2.0","uptime":1.5,"clients":1,"calibration":{"points":0,"tare":0.0,"fit":"log"},"dropped":0,"temperature":31}"#
        let decoded = try StatusMessage.decode(line: status)
        #expect(decoded.calibration == StatusMessage.CalibrationSummary(points: 0, tare: 0))
        #expect(decoded.line == #"{"class":"STATUS","release":"0.2.0","uptime":1.5,"clients":1,"calibration":{"points":0,"tare":0.0},"dropped":0}"# + "\n")
    }

    @Test func anUnknownModelIsKeptByNameAndWrittenBack() throws {
        let line = readingLine.replacingOccurrences(of: #""model":"nominal""#, with: #""model":"future-model""#)
        let reading = try ReadingMessage.decode(line: line)
        #expect(reading.model == "future-model" && reading.model.rawValue == "future-model")
        #expect(reading.model.kind == nil)
        #expect(reading.grams == 77 && reading.isSettledWeight == false)
        #expect(reading.line == line + "\n")
        #expect(GramModelName.nominal.kind == .nominal)

        let status = try StatusMessage.decode(line: #"{"class":"STATUS","release":"0.2.0","uptime":1.0,"clients":1,"device":"event5","model":"future-model","dropped":0}"#)
        #expect(status.model?.rawValue == "future-model" && status.model?.kind == nil)
    }

    @Test func unknownDeviceKindsAxesAndPatternsAreKept() throws {
        let line = #"{"class":"DEVICES","devices":[{"path":"/dev/input/event3","name":"Haptic Pad","kind":"haptic pad","active":false,"pressure":[{"axis":"ABS_MT_FORCE","min":0,"max":9,"fuzz":0,"resolution":7}]}]}"#
        let devices = try DevicesMessage.decode(line: line)
        #expect(devices.devices.first?.kind == "haptic pad" && devices.devices.first?.kind?.kind == nil)
        #expect(devices.devices.first?.pressure?.first?.axis == "ABS_MT_FORCE")
        #expect(devices.line == line + "\n")
        #expect(DeviceKindName(.touchpad).kind == .touchpad)

        let rumble = try RumbleMessage.decode(line: #"{"class":"RUMBLE","pattern":"heartbeat"}"#)
        #expect(rumble.pattern == "heartbeat" && rumble.hapticPattern == nil)
        #expect(RumbleMessage(pattern: .success).hapticPattern == .success)
    }

    @Test func anUnknownClassIsUnknownNotAnError() throws {
        let line = try DaemonLine.decode(line: #"{"class":"SKY","satellites":[1,2,3]}"#)
        guard case .unknown(let name, let json) = line else {
            Issue.record("\(line)")
            return
        }
        #expect(name == "SKY" && json["satellites"] == .array([.number(1), .number(2), .number(3)]))
        #expect(line.className == "SKY" && line.line == nil && line.message == nil && !line.isStream)
        // Classes are case-sensitive.
        #expect(try DaemonLine.decode(line: #"{"class":"reading"}"#).className == "reading")
        // Asked for a class, a line of another (or of one this build does not know) says so.
        #expect(throws: ProtocolDecodeError.unexpectedClass(expected: "STATUS", found: "SKY")) {
            try StatusMessage.decode(line: #"{"class":"SKY"}"#)
        }
        #expect(throws: ProtocolDecodeError.unexpectedClass(expected: "STATUS", found: "TARE")) {
            try StatusMessage.decode(line: #"{"class":"TARE","grams":0.0}"#)
        }
    }

    @Test func malformedLinesNameTheField() {
        func problem(_ line: String) -> ProtocolDecodeError? {
            do {
                _ = try DaemonLine.decode(line: line)
                return nil
            } catch {
                return error
            }
        }
        let reading = readingLine
        #expect(problem(reading.replacingOccurrences(of: #""grams":77.0"#, with: #""grams":"77""#))
            == .wrongType(messageClass: "READING", field: "grams", expected: .number))
        #expect(problem(reading.replacingOccurrences(of: #","model":"nominal""#, with: ""))
            == .missingField(messageClass: "READING", field: "model", expected: .string))
        #expect(problem(reading.replacingOccurrences(of: #""model":"nominal""#, with: #""model":null"#))
            == .missingField(messageClass: "READING", field: "model", expected: .string))
        #expect(problem(reading.replacingOccurrences(of: #""raw":51"#, with: #""raw":51.5"#))
            == .wrongType(messageClass: "READING", field: "raw", expected: .integer32))
        #expect(problem(reading.replacingOccurrences(of: #""raw":51"#, with: #""raw":4294967296"#))
            == .wrongType(messageClass: "READING", field: "raw", expected: .integer32))
        #expect(problem(reading.replacingOccurrences(of: #""stable":false"#, with: #""stable":0"#))
            == .wrongType(messageClass: "READING", field: "stable", expected: .boolean))
        #expect(problem(reading.replacingOccurrences(of: #""time":1382570965.747302"#, with: #""time":1e300"#))
            == .wrongType(messageClass: "READING", field: "time", expected: .time))
        #expect(problem(#"{"class":"STATUS","release":"0.1.0","uptime":1.0,"clients":1,"calibration":{"points":"two","tare":0.0},"dropped":0}"#)
            == .wrongType(messageClass: "STATUS", field: "calibration.points", expected: .integer))
        #expect(problem(#"{"class":"STATUS","release":"0.1.0","uptime":1.0,"clients":1,"dropped":0,"log":{"path":"/x","written":1,"pending":0}}"#)
            == .missingField(messageClass: "STATUS", field: "log.dropped", expected: .integer))
        #expect(problem(#"{"class":"DEVICES","devices":[{"path":"/a","active":true},{"path":"/b"}]}"#)
            == .missingField(messageClass: "DEVICES", field: "devices[1].active", expected: .boolean))
        #expect(problem(#"{"class":"DEVICES","devices":{}}"#) == .wrongType(messageClass: "DEVICES", field: "devices", expected: .array))
        #expect(problem(#"{"class":"CALIBRATION","points":1,"curve":[5],"tare":0.0}"#)
            == .wrongType(messageClass: "CALIBRATION", field: "curve[0]", expected: .object))
        #expect(problem(#"{"class":"POLL","reading":{"class":"READING","time":1.0}}"#)
            == .missingField(messageClass: "POLL", field: "reading.raw", expected: .integer32))
        #expect(problem(#"{"class":"ERROR"}"#) == .missingField(messageClass: "ERROR", field: "message", expected: .string))
        #expect(problem(#"{"class":"VERSION","release":"0.1.0","proto_major":"1","proto_minor":0}"#)
            == .wrongType(messageClass: "VERSION", field: "proto_major", expected: .integer))

        for line in ["[1,2]", "{}", #"{"class":5}"#, #""READING""#] {
            #expect(problem(line) == .notAMessage, "\(line)")
        }
        #expect(problem(#"{"class":"READING""#) == .malformedJSON(JSONParseError(offset: 18, message: "unexpected end of input, expected ',' or '}'")))
    }

    @Test func errorsSayWhatIsWrongWhere() {
        #expect(ProtocolDecodeError.wrongType(messageClass: "READING", field: "grams", expected: .number).description == "READING: 'grams' must be a number")
        #expect(ProtocolDecodeError.missingField(messageClass: "STATUS", field: "calibration.points", expected: .integer).description
            == "STATUS: missing 'calibration.points' (an integer)")
        #expect(ProtocolDecodeError.wrongType(messageClass: "DEVICES", field: "devices[1]", expected: .object).field == "devices[1]")
        #expect(ProtocolDecodeError.notAMessage.description == #"not a JSON object with a string "class""#)
        #expect(ProtocolDecodeError.malformedJSON(JSONParseError(offset: 9, message: "expected ':'")).description == "malformed JSON at byte 9: expected ':'")
        #expect(ProtocolDecodeError.unexpectedClass(expected: "STATUS", found: "TARE").description == "expected a STATUS line, got TARE")
    }
}

/// Requests written by ClientRequest read back as themselves.
@Suite struct ClientRequestLineTests {
    @Test func eachRequestReadsBackAsItself() {
        var requests: [ClientRequest] = [
            .watch(enable: true, device: nil), .watch(enable: false, device: nil), .watch(enable: true, device: "event5"),
            .watch(enable: true, device: "/dev/input/by-id/usb-\"odd\"\\name"),
            .poll(), .devices, .status(), .tare(),
            .calibrate(grams: 100), .calibrate(grams: 0.25), .calibrate(grams: 1e-5), .calibrate(grams: 12345.678), .calibrate(grams: 100000),
            .calibration(reset: true), .calibration(reset: false),
        ]
        requests += HapticPattern.all.map { .rumble(pattern: $0) }
        for request in requests {
            let line = request.line
            #expect(line.last == "\n" && !line.dropLast().contains("\n"))
            #expect(ClientRequest.parse(line: line) == .success(request), "\(line)")
        }
    }

    @Test func linesAreExact() {
        #expect(ClientRequest.watch(enable: true, device: nil).line == #"{"class":"WATCH","enable":true}"# + "\n")
        #expect(ClientRequest.watch(enable: true, device: "event5").line == #"{"class":"WATCH","enable":true,"device":"event5"}"# + "\n")
        #expect(ClientRequest.poll().line == #"{"class":"POLL"}"# + "\n")
        #expect(ClientRequest.calibrate(grams: 100).line == #"{"class":"CALIBRATE","grams":100.0}"# + "\n")
        #expect(ClientRequest.calibration(reset: true).line == #"{"class":"CALIBRATION","reset":true}"# + "\n")
        #expect(ClientRequest.rumble(pattern: .success).line == #"{"class":"RUMBLE","pattern":"success"}"# + "\n")
        // A weight that is not a number is left out, and the daemon refuses the request.
        #expect(ClientRequest.calibrate(grams: .nan).line == #"{"class":"CALIBRATE"}"# + "\n")
    }
}

/// The JSON lines of docs/protocol.md's code blocks, sorted by who sends them.
///
/// A ```json block right under a `### CLASS` heading of a request class shows that request;
/// every other ```json line is the daemon's. In the example session (a ```text block),
/// lines after `> ` are what a person typed (not all of them valid, and not all written as
/// ClientRequest would) and the rest are the daemon's.
private struct ProtocolDocumentExamples {
    var daemonLines: [String] = []
    var requests: [String] = []
    var typedRequests: [String] = []

    init(_ url: URL) throws {
        let text = try String(contentsOf: url, encoding: .utf8)
        var heading = ""
        var linesSinceHeading = 0
        var block: (language: String, isRequest: Bool)?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let current = block {
                if line.hasPrefix("```") {
                    block = nil
                } else if current.language == "json", line.hasPrefix("{") {
                    if current.isRequest { requests.append(line) } else { daemonLines.append(line) }
                } else if current.language == "text", line.hasPrefix("> {") {
                    typedRequests.append(String(line.dropFirst(2)))
                } else if current.language == "text", line.hasPrefix("{") {
                    daemonLines.append(line)
                }
                continue
            }
            if line.hasPrefix("```") {
                let language = String(line.dropFirst(3))
                let className = heading.split(separator: " ").first.map(String.init) ?? ""
                block = (language, language == "json" && linesSinceHeading == 0 && ClientRequest.classNames.contains(className))
                linesSinceHeading += 1
            } else if line.hasPrefix("### ") {
                heading = String(line.dropFirst(4))
                linesSinceHeading = 0
            } else if line.hasPrefix("#") {
                heading = ""
                linesSinceHeading = 0
            } else if !line.isEmpty {
                linesSinceHeading += 1
            }
        }
    }
}
