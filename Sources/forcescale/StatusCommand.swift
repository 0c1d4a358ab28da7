import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

enum StatusCommand: ParsableCommand {
    static let json = OptionKey(flag: "json", help: "Print the daemon's STATUS line.")

    static let configuration = CommandConfiguration(
        name: "status",
        abstract: "Show what the daemon is doing.",
        discussion: """
            Asks forcescaled for its STATUS: release, uptime, connected clients, each \
            device it serves (or the one --device names) with its gram model, its \
            calibration, its rumble device and the events the kernel dropped for it, \
            the PEAK rumbles played and failed with their latency (median, 99th \
            percentile, longest; from the frame that reached the threshold to the play \
            accepted), the readings dropped for clients that read too slowly, and the force log (its \
            file, what was written, and a write failure in progress).
            """,
        options: [json, DaemonConnection.device, DaemonConnection.socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        DaemonConnection.run {
            let client = try DaemonConnection.connect(command[DaemonConnection.socket])
            let reply = try client.request(.status(device: command[DaemonConnection.device]), expecting: StatusMessage.self)
            let output = OutputChannel.standardOutput
            try output.write(command[Self.json] ? reply.text + "\n" : describe(reply.message, path: client.path))
            try output.flush()
        }
    }

    /// STATUS in words, one aspect per line. Its words from outside (device names, paths,
    /// model and rumble names, the daemon's release and errors) are written as
    /// ``UntrustedText`` escapes them.
    static func describe(_ status: StatusMessage, path: String) -> String {
        var lines = ["forcescaled \(untrusted: status.release) on \(untrusted: path)"]
        func add(_ label: String, _ value: String) { lines.append("  " + label.padding(12) + value) }
        add("up", uptime(status.uptime))
        add("clients", String(status.clients))
        // A model this client does not know is shown by its name all the same.
        func model(_ name: GramModelName?) -> String { name.map { ", \(untrusted: $0.rawValue) model" } ?? "" }
        if let served = status.devices, served.count > 1 {
            for entry in served {
                add("device", "\(untrusted: entry.device) (\(untrusted: entry.name))" + model(entry.model))
                add("", "calibration: " + calibrationText(entry.calibration))
                if let fullScale = entry.fullScale { add("", "full scale: " + fullScaleText(fullScale)) }
                add("", "rumble: " + (entry.rumble.map(UntrustedText.escaped) ?? "none"))
                if entry.droppedEvents > 0 {
                    add("", "events dropped by the kernel (SYN_DROPPED) " + DaemonFormat.count(entry.droppedEvents, "time"))
                }
            }
        } else {
            if let device = status.device {
                let name = status.devices?.first { $0.device == device }.map { " (\(untrusted: $0.name))" } ?? ""
                add("device", UntrustedText.escaped(device) + name + model(status.model))
            } else {
                add("device", "none open: " + DaemonConnection.noDeviceAdvice)
                add("", DaemonConnection.demoRoute)
            }
            if let calibration = status.calibration { add("calibration", calibrationText(calibration)) }
            if let fullScale = status.devices?.first(where: { $0.device == status.device })?.fullScale {
                add("full scale", fullScaleText(fullScale))
            }
            add("rumble", status.rumble.map(UntrustedText.escaped) ?? "none")
        }
        add("rumbles", status.rumbles.map(RumbleText.summary) ?? "none played or failed yet")
        add("dropped", DaemonFormat.count(status.dropped, "reading") + " not read in time by slow clients")
        if let log = status.log {
            var text = UntrustedText.escaped(log.path)
            text += ", \(log.written) readings and PEAKs written"
            if log.pending > 0 { text += ", \(log.pending) waiting" }
            if log.dropped > 0 { text += ", \(log.dropped) lost (the disk could not keep up)" }
            add("log", text)
            if let error = log.error { add("", "failing: \(untrusted: error)") }
        } else {
            add("log", "off (forcescaled --log switches it on)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `385.0 g (the top of the range: …)`: what the device weighs at most.
    static func fullScaleText(_ grams: Double) -> String {
        MassUnit.grams.format(grams: grams) + " (the top of the range: a reading there is saturated, the object weighs at least that)"
    }

    /// `3 points, power curve, ± 1.7 g, tare 31.5 g`.
    static func calibrationText(_ calibration: StatusMessage.CalibrationSummary) -> String {
        var text = (calibration.points == 0 ? "no points" : DaemonFormat.count(calibration.points, "point"))
        if let model = calibration.model { text += ", \(untrusted: model) curve" }
        if let uncertainty = calibration.uncertainty { text += ", ± \(MassUnit.grams.format(grams: uncertainty))" }
        return text + ", " + (calibration.tare == 0 ? "no tare" : "tare \(MassUnit.grams.format(grams: calibration.tare))")
    }

    /// `42.5 s`, `5 min 12 s`, `3 h 05 min`, `2 d 4 h`.
    static func uptime(_ seconds: Double) -> String {
        if seconds < 60 { return fixed(seconds, decimals: 1) + " s" }
        let whole = Int(seconds)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
        if whole < 3600 { return "\(whole / 60) min \(two(whole % 60)) s" }
        if whole < 86400 { return "\(whole / 3600) h \(two(whole % 3600 / 60)) min" }
        return "\(whole / 86400) d \(whole % 86400 / 3600) h"
    }
}
