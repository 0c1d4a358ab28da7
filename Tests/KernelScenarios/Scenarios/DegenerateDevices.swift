import CEvdev
import Foundation
import KernelTestSupport
import Glibc

/// e. A 0–0 pressure axis cannot weigh: `read` refuses it with a message (no crash), and
/// `devices` lists it as unable to weigh; a 0–1 axis is coarse but works (a press is force 1).
enum DegenerateDevices {
    static func run(_ programs: Programs) {
        guard let flat = makeDevice(Tables.degeneratePad, scenario: "e"),
              let narrow = makeDevice(Tables.narrowPad, scenario: "e") else { return }
        defer {
            flat.destroy()
            narrow.destroy()
        }

        let (ended, refused) = runToEnd("read on the 0-0 pad", [programs.forcescale, "read", "--device", flat.node], timeout: Limits.command)
        let stderr = refused?.errorText ?? ""
        check(ended == .exited(65) || ended == .exited(69), "e: 'read --device \(flat.node)' on the 0–0 pad exits 65 or 69, not a crash",
              "saw \(ending(ended, waited: Limits.command))\n\(refused?.tail() ?? "")")
        check(stderr.contains("degenerate") && (stderr.contains(flat.node) || stderr.contains(flat.table.name)),
              "e: the refusal names the device and says 'degenerate'", "stderr: \(stderr)")

        // A user outside group 'input' (nobody, via setpriv) is told what to do, with 77.
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", programs.forcescale]
        let (deniedEnded, denied) = runToEnd("read as nobody", asNobody + ["read", "--device", narrow.node], timeout: Limits.command)
        let deniedText = denied?.errorText ?? ""
        check(deniedEnded == .exited(77) && deniedText.contains("permission denied") && deniedText.contains("group 'input'"),
              "e: 'read' as a user without access exits 77 and says to join group 'input'",
              "saw \(ending(deniedEnded, waited: Limits.command)), stderr: \(deniedText)")
        let (anyEnded, any) = runToEnd("read as nobody, no --device", asNobody + ["read"], timeout: Limits.command)
        let anyText = any?.errorText ?? ""
        check(anyEnded == .exited(77) && anyText.contains("could not be opened") && anyText.contains("permission denied"),
              "e: 'read' without --device as a user without access exits 77 and says the devices could not be opened",
              "saw \(ending(anyEnded, waited: Limits.command)), stderr: \(anyText)")
        let (listedEnded, listed) = runToEnd("devices as nobody", asNobody + ["devices"], timeout: Limits.command)
        let listing = listed?.outputText ?? ""
        check(listedEnded == .exited(0) && listing.contains("\(narrow.node)  (cannot open)") && listing.contains("group 'input'"),
              "e: 'devices' as a user without access lists the pad as unopenable, with the advice",
              "saw \(ending(listedEnded, waited: Limits.command)), stdout: \(listing.prefix(600))")

        let devices = DeviceList.read(programs, scenario: "e")
        let flatEntry = devices[flat.node]
        check(flatEntry?["canWeigh"] as? Bool == false, "e: 'devices --json' lists the 0–0 pad with canWeigh false",
              "saw \(flatEntry.map { "\($0)" } ?? "no entry for \(flat.node)")")
        let narrowEntry = devices[narrow.node]
        check(narrowEntry?["canWeigh"] as? Bool == true, "e: 'devices --json' lists the 0–1 pad with canWeigh true",
              "saw \(narrowEntry.map { "\($0)" } ?? "no entry for \(narrow.node)")")

        guard let reader = startReader(programs, "read on the 0-1 pad", ["--json", "--interval-ms", "0", "--no-rumble", "--device", narrow.node], scenario: "e") else { return }
        narrow.press(1, down: true)
        func seen() -> String {
            let reading = reader.readings.first { $0.raw == 1 }
            return reading.map { "force \($0.force.map { String($0) } ?? "none") in \($0)" } ?? "no reading with raw 1"
        }
        let pressed = waitFor("a READING raw 1 with 1 contact", within: Limits.reaction) { reader.hasReading(raw: 1, contacts: 1) }
        expect("e: a press on the 0–1 pad reads raw 1, force 1", after: pressed, reader.readings.first { $0.raw == 1 }?.force == 1.0,
               saw: "\(seen())\n\(reader.tail())")
        narrow.release()
        expect("e: the release on the 0–1 pad reads 0 contacts", within: Limits.reaction, waitingFor: "a READING raw 0 with 0 contacts",
               { reader.hasReading(raw: 0, contacts: 0) }, saw: reader.tail())
        // A hang-up (the terminal closed) ends the reader as SIGINT would.
        let status = reader.stop(SIGHUP)
        check(status == .exited(0), "e: the 0–1 reader exits 0 on SIGHUP", "saw \(ending(status, waited: Limits.exit))\n\(reader.tail())")
    }
}

/// `forcescale devices --json`, by path.
enum DeviceList {
    static func read(_ programs: Programs, scenario: String) -> [String: [String: Any]] {
        let (ended, child) = runToEnd("devices --json", [programs.forcescale, "devices", "--json"], timeout: Limits.command)
        check(ended == .exited(0), "\(scenario): 'forcescale devices --json' exits 0",
              "saw \(ending(ended, waited: Limits.command))\n\(child?.tail() ?? "")")
        var result: [String: [String: Any]] = [:]
        for line in child?.output ?? [] {
            guard let data = line.data(using: .utf8),
                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                  object["class"] as? String == "DEVICE", let path = object["path"] as? String else { continue }
            result[path] = object
        }
        return result
    }
}
