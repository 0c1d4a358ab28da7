import Glibc
import ScaleCore
import ScaleDaemon
import ScaleDisplay
import ScaleMQTT
import ScaleProtocol
import ScaleWeb
import ScaleRecording

/// A parser of outside input, fed arbitrary bytes. It must return (a value or a typed
/// error) for every input: a trap, a hang or a broken invariant is a finding.
struct FuzzTarget: Sendable {
    var name: String
    var summary: String
    var run: @Sendable (UnsafeBufferPointer<UInt8>) -> Void

    static let all: [FuzzTarget] = [evemu, libinput, request, reply, configuration, http, logTime, mqtt]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// An evemu recording, read as `forcescale replay` reads one: in chunks, as a whole file.
    static let evemu = FuzzTarget(name: "evemu", summary: "evemu recordings (EvemuReader)") { bytes in
        var reader = EvemuReader(fileName: "fuzz.evemu")
        do {
            // Two chunks, so that a line split across chunks is exercised too.
            let middle = bytes.count / 2
            try reader.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[..<middle]))) { _ in }
            try reader.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[middle...]))) { _ in }
            try reader.finish { _ in }
        } catch let error as EvemuParseError {
            expect(!error.problem.isEmpty && error.line > 0, "an evemu error without a line or a message: \(error)")
        } catch {
            expect(false, "an evemu error of another type: \(error)")
        }
    }

    /// A `libinput record` file (YAML through libyaml), read from memory.
    static let libinput = FuzzTarget(name: "libinput", summary: "libinput record YAML (LibinputRecordReader)") { bytes in
        var copy = Array(bytes)
        copy.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0, let file = fmemopen(base, buffer.count, "r") else { return }
            defer { fclose(file) }
            do {
                try LibinputRecordReader(path: "fuzz.yml").read(from: file, onDevice: { _ in }, onEvent: { _ in })
            } catch let error as LibinputRecordError {
                expect(error.line > 0 && !error.problem.isEmpty, "a libinput error without a line or a message: \(error)")
            } catch is RecordingError {
            } catch {
                expect(false, "a libinput error of another type: \(error)")
            }
        }
    }

    /// A client's request line; what is accepted must read back as itself from its own line.
    static let request = FuzzTarget(name: "request", summary: "protocol request lines (ClientRequest)") { bytes in
        guard case .success(let request) = ClientRequest.parse(line: bytes) else { return }
        let again = ClientRequest.parse(line: request.line)
        expect(again == .success(request), "request \(request) does not read back from its own line \(request.line)")
    }

    /// A line from the daemon, as a client decodes it.
    static let reply = FuzzTarget(name: "reply", summary: "protocol daemon lines (DaemonLine)") { bytes in
        _ = try? DaemonLine.decode(line: bytes)
    }

    /// /etc/forcescale/forcescale.conf.
    static let configuration = FuzzTarget(name: "config", summary: "forcescale.conf (ConfigurationFile)") { bytes in
        _ = try? ConfigurationFile.parse(String(decoding: bytes, as: UTF8.self), path: "fuzz.conf")
    }

    /// What forcescale-web reads of a request itself (libmicrohttpd parses the rest): the
    /// method and path of the request line, `Last-Event-ID` and `Accept`.
    static let http = FuzzTarget(name: "http", summary: "HTTP request line, Last-Event-ID and Accept (forcescale-web)") { bytes in
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        let requestLine = lines.first.map { $0.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false) } ?? []
        _ = RouteDecision.route(method: requestLine.first.map(String.init) ?? "", path: requestLine.dropFirst().first.map(String.init) ?? "")
        _ = ServerSentEvents.lastEventID(lines.dropFirst().first.map(String.init))
        _ = MetricsFormat.negotiate(accept: lines.dropFirst(2).first.map(String.init))
    }

    /// `forcescale log --since/--until`'s time specifications.
    static let logTime = FuzzTarget(name: "logtime", summary: "the force log's time specifications (TimeSpecification)") { bytes in
        _ = TimeSpecification(String(decoding: bytes, as: UTF8.self))
    }

    /// forcescale-mqtt's configuration file.
    static let mqtt = FuzzTarget(name: "mqtt", summary: "forcescale-mqtt.conf (MQTTConfiguration)") { bytes in
        var configuration = MQTTConfiguration()
        try? configuration.parse(String(decoding: bytes, as: UTF8.self), path: "fuzz-mqtt.conf")
    }
}

/// A broken invariant: reported and fatal, so that libFuzzer keeps the input.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard !condition else { return }
    FuzzOutput.error("forcescale-fuzz: " + message())
    abort()
}
