import Foundation
import CEvdev
import KernelTestSupport
import Glibc

/// u. `forcescale characterize` on a live uinput pen (0–2047) through forcescaled, as a
/// person does it: four weights asked for in turn on standard error, answered with Enter on
/// standard input. The first is put on a pen that reads nothing (below its activation
/// force); each of the others lands overshooting, rests with a wobble of a unit or two until
/// the command says it took the pressing pressure, is pushed further and let go to rest a
/// little higher (hysteresis) until it says it took the releasing pressure, and is lifted.
/// The result (--json) holds each rest's pressure, the weight that did not register and
/// the hysteresis the pen was given; the command exits 0.
enum PenCharacterizedLive {
    /// (grams, resting raw while pressing, resting raw after the push); nil raws: no touch.
    static let weights: [(grams: Double, pressing: Int32?, releasing: Int32?)] = [
        (3, nil, nil), (20, 120, 131), (85, 600, 621), (170, 1100, 1121),
    ]

    static func run(_ programs: Programs) {
        guard let daemonPath = programs.runnableForcescaled(scenario: "u") else { return }
        guard let pen = makeDevice(Tables.pen2047, scenario: "u") else { return }
        defer { pen.destroy() }
        let folder = makeScenarioFolder("u")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socket = folder + "/sock"
        guard let (daemon, _) = DaemonOnDevice.startDaemon(
            programs, daemonPath: daemonPath, ["--device", pen.node, "--socket", socket, "--state-dir", folder + "/state"], scenario: "u")
        else { return }
        defer { daemon.stop(SIGTERM) }
        // A client of its own, to know when the daemon has a touch before Enter is pressed.
        guard let client = SocketClient(path: socket) else {
            check(false, "u: connect to \(socket)", String(cString: strerror(errno)))
            return
        }
        defer { client.close() }
        client.send(#"{"class":"WATCH","enable":true}"#)

        // The person's keyboard: a FIFO held open here for writing.
        let keyboard = folder + "/enter"
        guard mkfifo(keyboard, 0o600) == 0 else {
            check(false, "u: mkfifo \(keyboard)", String(cString: strerror(errno)))
            return
        }
        let enter = open(keyboard, O_RDWR | O_CLOEXEC)
        defer { close(enter) }
        let list = weights.map { String(Int($0.grams)) }.joined(separator: ",")
        guard let command = try? Child("characterize", [programs.forcescale, "characterize", "--weights", list, "--json", "--socket", socket, "--timeout", "120"], input: keyboard) else {
            check(false, "u: start forcescale characterize")
            return
        }
        defer { command.stop(SIGKILL) }

        var x: Int32 = 20000
        /// One frame of the pen at `raw` (down: the first of a touch).
        func frame(_ raw: Int32, down: Bool = false) {
            x += 1
            var events: [Event] = [.abs(ABS_X, x), .abs(ABS_Y, 14000), .abs(ABS_PRESSURE, raw)]
            if down { events += [.key(BTN_TOUCH, 1), .key(BTN_TOOL_PEN, 1)] }
            _ = pen.frame(events)
        }
        /// Frames wobbling around `raw` (a unit or two) every 10 ms until the command says `text`.
        func rest(at raw: Int32, until text: String, times: Int) -> Waited {
            var step = 0
            return waitFor("the command to say '\(text)' while the pen rests at \(raw)", within: Limits.reaction) {
                step += 1
                frame(raw + [0, 1, -1, 2, 0, -2, 1][step % 7])
                Clock.sleep(0.01)
                return command.errorCount(text) >= times || !command.isRunning
            }
        }

        var measured = 0
        for (index, weight) in weights.enumerated() {
            let prompt = "[\(index + 1)/\(weights.count)] Put the "
            let asked = waitFor("the prompt for weight \(index + 1)", within: Limits.reaction) {
                command.unfinishedErrorLine.contains(prompt) || !command.isRunning
            }
            guard expect("u: the command asks for the \(Int(weight.grams)) g weight", after: asked, command.isRunning, saw: command.tail()) else { return }
            guard let pressing = weight.pressing, let releasing = weight.releasing else {
                _ = write(enter, "\n", 1)
                let said = waitFor("the command to say nothing registers", within: Limits.reaction) {
                    command.errorsContain("nothing registers with 3.00 g") || !command.isRunning
                }
                expect("u: a weight with which the pen reads nothing is below its activation force", after: said,
                       command.errorsContain("nothing registers with 3.00 g"), saw: command.tail())
                continue
            }
            // The landing: up past the rest by a fifth, then down to it; Enter once the
            // daemon has the touch.
            frame(pressing * 6 / 5, down: true)
            let landed = client.waitFor(Limits.reaction) { $0.contains(Marker.reading) && $0.contains("\"raw\":\(pressing * 6 / 5),") && $0.contains("\"contacts\":1") }
            guard check(landed != nil, "u: the daemon reads the \(Int(weight.grams)) g weight's landing", client.tail()) else { return }
            _ = write(enter, "\n", 1)
            measured += 1
            let pressed = rest(at: pressing, until: "pressing: raw", times: measured)
            guard expect("u: the \(Int(weight.grams)) g weight's pressing pressure is taken", after: pressed, command.errorCount("pressing: raw") >= measured, saw: command.tail()) else { return }
            // The push, and the rest it leaves a little higher.
            for raw in stride(from: pressing, through: pressing + 400, by: 40) { frame(raw); Clock.sleep(0.01) }
            for raw in stride(from: pressing + 400, through: releasing, by: -40) { frame(raw); Clock.sleep(0.01) }
            let released = rest(at: releasing, until: "releasing: raw", times: measured)
            guard expect("u: the \(Int(weight.grams)) g weight's releasing pressure is taken", after: released, command.errorCount("releasing: raw") >= measured, saw: command.tail()) else { return }
            _ = pen.frame([.abs(ABS_PRESSURE, 0), .key(BTN_TOUCH, 0), .key(BTN_TOOL_PEN, 0)])
        }
        let ended = command.wait(Limits.command)
        guard check(ended == .exited(0), "u: characterize exits 0 after the last weight", "\(ending(ended, waited: Limits.command))\n\(command.tail())") else { return }
        guard let line = command.output.first(where: { $0.hasPrefix("{\"class\":\"CHARACTERIZATION\"") }),
              let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            check(false, "u: one CHARACTERIZATION object on standard output", command.output.joined(separator: "\n"))
            return
        }
        let points = (object["points"] as? [[String: Any]]) ?? []
        let raws = points.compactMap { $0["raw"] as? Double }
        let releasingRaws = points.compactMap { $0["releasing_raw"] as? Double }
        let expectedRaws = weights.compactMap(\.pressing).map(Double.init)
        let expectedReleasing = weights.compactMap(\.releasing).map(Double.init)
        check(raws.count == 3 && zip(raws, expectedRaws).allSatisfy { ($0 - $1).magnitude <= 2 },
              "u: each weight's pressing pressure is where it rested (within its wobble)", "points \(raws), rests \(expectedRaws)")
        check(releasingRaws.count == 3 && zip(releasingRaws, expectedReleasing).allSatisfy { ($0 - $1).magnitude <= 2 },
              "u: and its releasing pressure", "releasing \(releasingRaws), rests \(expectedReleasing)")
        check((object["unregistered"] as? [Double]) == [3], "u: the 3 g weight did not register", "\(object["unregistered"] ?? "none")")
        let hysteresis = object["hysteresis_percent"] as? Double ?? -1
        check((hysteresis - 21.0 / 2047 * 100).magnitude < 0.15, "u: the hysteresis is the 21 units the pen was given (1.03 %)", "\(hysteresis) %")
        let iaf = object["iaf_grams"] as? Double ?? -1
        check(iaf >= 3 && iaf <= 20, "u: the IAF lies between the weight that did not register and the one that did", "\(iaf) g")
    }
}
