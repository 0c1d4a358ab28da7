import ArgumentParsing
import ScaleClient
import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

/// `forcescale calibrate --guided`: a whole calibration taken with a person, weight by weight.
///
/// Each point is only measured by the daemon (CALIBRATE with `"add":false`), so nothing
/// changes until the end: the points are reviewed (out of order, off the curve the others
/// agree on), the daemon shows the fit they give (CALIBRATION with `"preview":true`), and
/// only a "y" to the last question saves them (CALIBRATION with `"curve"`). Stopping at any
/// prompt, closing standard input or Ctrl-C leaves the calibration as it was.
struct GuidedCalibration {
    let client: DaemonClient
    /// The device calibrated, as `--device` named it; `nil` for the only one served.
    let device: String?
    let output: OutputChannel
    /// Seconds to wait for a weight to settle, and for the pad to be cleared.
    let timeout: Double
    /// Whether to redraw the live line in place (a terminal) or print state changes.
    let live: Bool

    /// A session on one connection.
    /// - Parameters:
    ///   - client: The connection to forcescaled.
    ///   - device: The device to calibrate; `nil` for the only one served.
    ///   - output: Where to talk to the person.
    ///   - timeout: Seconds to wait for each weight to settle.
    init(client: DaemonClient, device: String?, output: OutputChannel, timeout: Double) {
        self.client = client
        self.device = device
        self.output = output
        self.timeout = timeout
        live = output.isTerminal
    }

    /// Runs the session.
    /// - Parameter weights: The known weights to ask for in turn; `nil` asks the person to
    ///   type each object's weight.
    /// - Returns: 0 when a calibration was saved, 1 when the person stopped or declined.
    /// - Throws: `DaemonClientError` (the daemon refused, went away, or nothing settled in
    ///   time: `CommandFailure.noStableReading`), or an output error.
    mutating func run(weights: [Double]?) throws -> Int32 {
        let current = try client.request(.calibration(reset: false, device: device), expecting: CalibrationMessage.self).message
        try say("Guided calibration of \(current.device.map(UntrustedText.escaped) ?? "the device"). Its calibration now: "
            + (current.points == 0 ? "no points" : DaemonFormat.count(current.points, "point"))
            + "; it stays as it is until you save at the end (Ctrl-C or q stops without saving).")
        try say("Use weights you know, from light to heavy if you can (a coin, a letter, an apple…), each alone on the same spot.")
        _ = try client.request(.watch(enable: true, device: current.device ?? device), expecting: WatchMessage.self)
        try waitForEmptyPad(firstTime: true)

        var points: [CalibrationPoint] = []
        var index = 0
        // A weight lifted before it settled is asked for again.
        var again: Double?
        while true {
            let grams: Double
            if let weights {
                guard index < weights.count else { break }
                grams = weights[index]
                let put = again == nil ? "Put" : "Put again"
                guard let answer = try ask("[\(index + 1)/\(weights.count)] \(put) the \(DaemonFormat.plain(grams)) g weight on the pad, then press Enter (q to stop): "),
                      answer != "q" else {
                    return try stop()
                }
            } else if let retried = again {
                guard let answer = try ask("[\(index + 1)] Put the \(DaemonFormat.plain(retried)) g weight on the pad again, then press Enter (q to stop): "),
                      answer != "q" else {
                    return try stop()
                }
                grams = retried
            } else {
                guard let answer = try ask("[\(index + 1)] Weight of the next object in grams, then put it on the pad and press Enter (Enter alone when done, q to stop): ") else {
                    return try stop()
                }
                if answer == "q" { return try stop() }
                if answer.isEmpty {
                    guard !points.isEmpty else {
                        try say("At least one weight is needed.")
                        continue
                    }
                    break
                }
                guard let typed = Double(answer), typed > 0, typed.isFinite else {
                    try say("'\(answer)' is not a weight in grams greater than 0; type it again.")
                    continue
                }
                grams = typed
            }
            again = nil
            let point: CalibrationPoint
            do {
                point = try measure(grams: grams)
            } catch DaemonClientError.refused(let message, _) where message.hasPrefix(CalibrateMessage.liftedBeforeSettling) {
                try say("  The weight was lifted before it settled: nothing was taken. Try this weight again.")
                again = grams
                continue
            }
            points.append(point)
            index += 1
            try waitForEmptyPad(firstTime: false)
        }
        _ = try client.request(.watch(enable: false, device: nil), expecting: WatchMessage.self)

        // Review: first what no rising curve can pass through, then what the fit finds.
        while let finding = CalibrationReview.outOfOrder(points) {
            try say(finding.message)
            guard points.count > 1, try confirm("Leave the \(DaemonFormat.plain(finding.point.grams)) g point out? [y/N] ") else {
                return try stop(reason: "the points do not rise with the weight")
            }
            points.remove(at: finding.index)
        }
        var preview = try client.request(.replaceCurve(points: points, preview: true, device: device), expecting: CalibrationMessage.self).message
        try say(CalibrateCommand.describe(preview).dropFirst().joined(separator: "\n"))
        while let index = preview.pointFits.firstIndex(where: { $0.expected != nil }), points.count > 1 {
            if try !confirm("Leave the \(DaemonFormat.plain(points[index].grams)) g point out? [y/N] ") { break }
            points.remove(at: index)
            preview = try client.request(.replaceCurve(points: points, preview: true, device: device), expecting: CalibrationMessage.self).message
            try say(CalibrateCommand.describe(preview).dropFirst().joined(separator: "\n"))
        }
        guard try confirm("Save this calibration for \(device.map(UntrustedText.escaped) ?? "the daemon's device") (it replaces the curve; the tare stays)? [y/N] ") else {
            return try stop()
        }
        let saved = try client.request(.replaceCurve(points: points, preview: false, device: device), expecting: CalibrationMessage.self).message
        let uncertainty = saved.uncertainty.map { ", ± \(MassUnit.grams.format(grams: $0))" } ?? ""
        try say("Saved: \(DaemonFormat.count(saved.points, "point")), \(saved.model.map(UntrustedText.escaped) ?? "no") curve\(uncertainty).")
        return ExitStatus.success
    }

    /// Has the daemon measure the weight now on the pad, showing the live reading, a
    /// progress bar while it settles and why it waits.
    private func measure(grams: Double) throws -> CalibrationPoint {
        var monitor = SettlingMonitor()
        var lastShown: String?
        var latest: ReadingMessage?
        var drifting: ReadingMessage?
        let show: (ReceivedLine) throws -> Void = { line in
            guard case .reading(let reading) = line.message else { return }
            latest = reading
            if reading.drift != nil { drifting = reading }
            let state = monitor.add(time: reading.time.microseconds, raw: reading.raw, grams: reading.grams, contacts: reading.contacts, drift: reading.drift)
            let status = Self.describe(state)
            if live {
                try output.write("\r\u{1B}[K  now \(MassUnit.grams.format(grams: reading.grams))  \(status)")
                try output.flush()
            } else if status.prefix(8) != lastShown?.prefix(8) {
                // Without a terminal a line per change of state, not per reading.
                try say("  now \(MassUnit.grams.format(grams: reading.grams))  \(status)")
            }
            lastShown = status
        }
        let reply: CalibrateMessage
        do {
            reply = try client.request(.measure(grams: grams, device: device), expecting: CalibrateMessage.self, timeout: timeout, onStream: show).message
        } catch DaemonClientError.timedOut {
            if live { try output.write("\n") }
            throw CommandFailure.noStableReading(within: timeout, moving: CommandFailure.stillMoving(drifting, latest: latest))
        }
        if live { try output.write("\r\u{1B}[K") }
        let spread = reply.spread.map { ", sd \(fixed($0, decimals: 2))" } ?? ""
        let count = reply.count.map { " over \(DaemonFormat.count($0, "reading"))" } ?? ""
        try say("  took \(DaemonFormat.plain(grams)) g: raw \(DaemonFormat.plain(reply.raw))\(spread)\(count)")
        return reply.point
    }

    /// Waits until nothing is on the pad, so that the next point is a new touch and not
    /// the last weight measured again.
    private func waitForEmptyPad(firstTime: Bool) throws {
        let newest = try client.request(.poll(device: device), expecting: PollMessage.self).message.reading
        guard let newest, newest.contacts > 0 else { return }
        try say(firstTime ? "Take everything off the pad…" : "Lift it off the pad…")
        let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
        while true {
            guard let line = try client.nextLine(deadline: deadline) else {
                throw CommandFailure(message: "the pad was not cleared within \(DaemonClient.seconds(timeout)) s: lift the weight off", status: ExitStatus.failure)
            }
            if case .reading(let reading) = line.message, reading.contacts == 0 { return }
        }
    }

    /// "still moving by 3.1 g", "drifting -4.5 g/s, not taken while it moves", "settling
    /// [#####·····] 50 %"…
    static func describe(_ state: SettlingMonitor.State) -> String {
        switch state {
        case .empty:
            return "waiting: nothing on the pad yet"
        case .moving(let spread):
            return "waiting: still moving by \(fixed(spread, decimals: 1)) g"
        case .drifting(let gramsPerSecond):
            return "waiting: drifting \(MassUnit.grams.format(gramsPerSecond: gramsPerSecond)), not taken while it moves"
        case .settling(let progress):
            let filled = Int((progress * 10).rounded(.down))
            return "settling [" + String(repeating: "#", count: filled) + String(repeating: "·", count: 10 - filled) + "] \(Int((progress * 100).rounded())) %"
        case .steady:
            return "steady, taking it"
        }
    }

    private func stop(reason: String? = nil) throws -> Int32 {
        try say("Stopped" + (reason.map { ": \($0)" } ?? "") + ". Nothing was saved; the calibration is as it was.")
        return ExitStatus.failure
    }

    private func say(_ text: String) throws {
        try output.write(text + "\n")
        try output.flush()
    }

    private func ask(_ question: String) throws -> String? {
        try askLine(question, on: output)
    }

    /// A yes-or-no question whose default is no.
    private func confirm(_ question: String) throws -> Bool {
        guard let answer = try ask(question)?.lowercased() else { return false }
        return answer == "y" || answer == "yes"
    }
}
