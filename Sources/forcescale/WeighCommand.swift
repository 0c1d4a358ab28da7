import ArgumentParsing
import ScaleClient
import ScaleCore
import ScalePOSIX
import ScaleProtocol

enum WeighCommand: ParsableCommand {
    static let timeout = DaemonConnection.timeout(default: 30, help: "How long to wait for a stable reading (for each step with --tare-first).")
    static let tareFirst = OptionKey(flag: "tare-first", help: "Take the steady contact as zero, then weigh what is added to it.")
    static let unit = OptionKey<MassUnit>("unit", valueName: "unit", help: "Unit of the weight; JSON always carries grams.", parser: .choice, default: .grams)
    static let json = OptionKey(flag: "json", help: "Print the stable READING line instead.")
    static let grab = OptionKey(
        flag: "grab", help: "Take the pad for the weighing, so that the desktop sees nothing of it (given back when weigh ends, 120 s at most).")

    static let configuration = CommandConfiguration(
        name: "weigh",
        abstract: "Wait for a steady weight on the pad and print it.",
        discussion: """
            Asks forcescaled for readings until one is stable (the weight has held still \
            for the stability window) with something on the pad, prints it and exits: \
            '179.7 g', or its READING line with --json. With a calibration whose fit gives \
            an uncertainty (two points or more), it follows the weight: '179.7 g ± 0.9 g'; \
            past the heaviest calibration weight the uncertainty grows with the square of how \
            far past, and the weight says so: '412.0 g ± 4.7 g (beyond the heaviest \
            calibration weight, 180 g)'. Stable means steady for the sensor: the window's raw \
            pressure spreads no more than two units, twice the axis fuzz or its own noise \
            allow, or its grams no more than the daemon's stable-grams, and its trend over the \
            last 3 s is within the noise (docs/weighing.md, "When a weight is stable"). Exits \
            with status 1 when nothing settles within the timeout; a weight still moving then is \
            said with its drift ('drifting -6.0 g/s') and what that most likely means. A saturated weight (the pad at the top of its range) \
            is a lower bound: 'at least 385.0 g (saturated)', and status 3. With --tare-first it weighs what you add to a \
            resting contact, within one touch: the steady contact (a finger, a coin, a metal \
            lid: a capacitive pad senses only what touches it through something conductive) \
            is taken as zero, without changing the daemon's tare; then the object is added \
            beside it, and when it is steady again the weight added is printed with a ± from \
            the spread of both windows: '12.4 g ± 0.6 g added' ('45.4 g ± 0.4 g removed' when \
            something was taken away). Lifting the contact before \
            the end stops it with status 1, nothing weighed. An object that comes as a second \
            contact on a pad that weighs its first contact only is named, with the ways to \
            count it. With --grab the daemon takes the pad for the weighing (EVIOCGRAB), so that \
            the desktop sees nothing of it meanwhile: no pointer moves, no click, no scroll. It is \
            given back as soon as the weight is printed, and whenever weigh ends otherwise \
            (a failure, the timeout, Ctrl-C, a kill: the daemon gives it back when the connection \
            goes), and at the latest after the daemon's bound of 120 s. One grab at a time; only \
            members of the daemon's group may grab, as for tare. A daemon with no device open is \
            an error (status 69); one that serves several devices needs --device to say \
            which to weigh on (without it weigh lists them and exits with status 1).
            """,
        options: [timeout, tareFirst, unit, json, grab, DaemonConnection.device, DaemonConnection.socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let timeout = try DaemonConnection.timeout(command, Self.timeout)
        let unit = command[Self.unit]
        let json = command[Self.json]
        let tareFirst = command[Self.tareFirst]
        let socket = DaemonConnection.socketPath(command[DaemonConnection.socket])
        return DaemonConnection.run {
            let client = try DaemonConnection.connect(socket)
            let status = try client.request(.status(device: command[DaemonConnection.device]), expecting: StatusMessage.self).message
            guard let device = status.device else {
                if let served = status.devices, served.count > 1 {
                    throw CommandFailure(
                        message: "forcescaled serves \(served.count) devices (\(served.map(\.device).joined(separator: ", "))): "
                            + "name the one to weigh on with --device",
                        status: ExitStatus.failure)
                }
                throw CommandFailure(
                    message: "forcescaled on \(socket) has no pressure device open: "
                        + DaemonConnection.noDeviceAdvice + ". " + DaemonConnection.demoRoute,
                    status: ExitStatus.unavailable)
            }
            // As long as the weighing may wait, and a few seconds for its requests: a weigh that
            // times out gives the pad back itself, before its bound would.
            let grab = command[Self.grab]
                ? try PadGrab(client: client, device: device, seconds: timeout * (tareFirst ? 2 : 1) + 5) : nil
            // Given back before the result is printed, and on every way out; a weigh that is
            // killed is given back by the daemon when the connection goes.
            defer { grab?.release() }
            if tareFirst {
                try weighAdded(client: client, device: device, status: status, timeout: timeout, unit: unit, json: json, grab: grab)
                return
            }
            let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
            // Any model counts, known to this client or not: the grams are the daemon's.
            var found: (reading: ReadingMessage, text: String)?
            // The newest reading, and the newest that said the weight was moving: a weight
            // that never stops is said as the drift it is.
            var latest: ReadingMessage?
            var drifting: ReadingMessage?
            let take: (ReceivedLine) -> Void = { line in
                guard found == nil, case .reading(let reading) = line.message else { return }
                latest = reading
                if reading.drift != nil { drifting = reading }
                if reading.isSettledWeight { found = (reading, line.text) }
            }
            _ = try client.request(.watch(enable: true, device: device), expecting: WatchMessage.self, onStream: take)
            // A weight that has been resting still may send no new frames at all: the
            // newest reading already says what it weighs.
            let poll = try client.request(.poll(device: device), expecting: PollMessage.self, onStream: take)
            if found == nil, let reading = poll.message.reading, reading.isSettledWeight {
                // Its READING line, written by the type the daemon writes it with: the bytes
                // it sent, less any fields a later daemon added.
                found = (reading, String(reading.line.dropLast()))
            }
            while found == nil {
                guard let line = try client.nextLine(deadline: deadline) else {
                    throw CommandFailure.noStableReading(within: timeout, moving: CommandFailure.stillMoving(drifting, latest: latest), unit: unit)
                }
                noteGrabEnded(line)
                take(line)
            }
            grab?.release()
            let output = OutputChannel.standardOutput
            let reading = found!.reading
            guard !reading.saturated else {
                // A lower bound, not a weight: said so, with a status of its own (the JSON
                // line keeps the number and the flag).
                try output.write((json ? found!.text : ReadingMessage.lowerBoundText(unit.format(grams: reading.shownGrams))) + "\n")
                try output.flush()
                throw CommandFailure.saturated
            }
            var text = json ? found!.text : unit.format(grams: reading.shownGrams)
            // A calibrated weight gets the calibration's uncertainty beside it, from the
            // STATUS asked first, grown past the heaviest calibration weight; and says when
            // it is past it (the JSON line stays the READING as sent).
            if !json, reading.model == GramModelName(.calibrated), let calibration = status.calibration,
               let uncertainty = calibration.uncertainty {
                let quoted = reading.beyondCalibration.map {
                    CalibrationFit.uncertainty(uncertainty, atGrams: reading.shownGrams + calibration.tare, heaviest: $0)
                } ?? uncertainty
                text += " ± " + unit.format(grams: quoted)
            }
            if !json, let beyond = reading.beyondCalibrationText { text += " (\(beyond))" }
            try output.write(text + "\n")
            try output.flush()
        }
    }

    /// `weigh --tare-first`: the steady contact is the zero, then what is added to it within
    /// the same touch (``AddedWeight``). Prompts go to standard error on a terminal, so that
    /// standard output holds only the result.
    private static func weighAdded(client: DaemonClient, device: String, status: StatusMessage, timeout: Double, unit: MassUnit, json: Bool, grab: PadGrab?) throws {
        let calibrated = status.model == GramModelName(.calibrated)
        var measurement = AddedWeight(calibrationUncertainty: calibrated ? status.calibration?.uncertainty : nil)
        let prompts = OutputChannel.standardError
        let talk = prompts.isTerminal
        func say(_ text: String) throws {
            guard talk else { return }
            try prompts.write(text + "\n")
            try prompts.flush()
        }
        // A pad that weighs its first contact only cannot count an object that comes as a
        // second contact (a pressure pad on a kernel before 6.18, which does not mark it).
        let weighsFirstContactOnly = status.devices?.first { $0.device == device }?.contacts == ContactMode.primary.rawValue
        var secondContactSeen = false
        var latest: ReadingMessage?
        var drifting: ReadingMessage?
        func watchContacts(_ reading: ReadingMessage) {
            latest = reading
            if reading.drift != nil { drifting = reading }
            guard weighsFirstContactOnly, !secondContactSeen, reading.contacts > 1, case .waitingForObject = measurement.step else { return }
            secondContactSeen = true
            printDiagnostic("warning: " + Self.secondContactAdvice(device: device))
        }
        _ = try client.request(.watch(enable: true, device: device), expecting: WatchMessage.self) { line in
            if case .reading(let reading) = line.message {
                Self.feed(reading, to: &measurement)
                watchContacts(reading)
            }
        }
        try say("Put a contact on the pad (a finger, a coin, a metal lid) and keep it still…")
        var announced = false
        var deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
        while true {
            switch measurement.step {
            case .waitingForContact:
                break
            case .waitingForObject(let zero):
                if zero.saturated {
                    throw CommandFailure(
                        message: "the contact alone saturates the pad (\(ReadingMessage.lowerBoundText(unit.format(grams: zero.mean)))): "
                            + "nothing added could be weighed; rest a lighter contact (a fingertip, a coin) and start again",
                        status: CommandFailure.saturatedStatus)
                }
                if !announced {
                    announced = true
                    try say("Zero taken at \(unit.format(grams: zero.mean)). Now add the object beside the contact, without lifting it…")
                    drifting = nil
                    deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
                }
            case .lifted:
                throw CommandFailure(
                    message: "the contact was lifted before the object settled: nothing was weighed; keep it resting on the pad and start again",
                    status: ExitStatus.failure)
            case .weighed(let result):
                grab?.release()
                let output = OutputChannel.standardOutput
                if json {
                    var line = JSONLineWriter()
                    line.add("class", string: "ADDED")
                    line.add("grams", number: result.added, decimals: ProtocolDecimals.grams)
                    line.add("uncertainty", number: result.uncertainty, decimals: ProtocolDecimals.grams)
                    line.add("zero", number: result.zero.mean, decimals: ProtocolDecimals.grams)
                    line.add("total", number: result.total.mean, decimals: ProtocolDecimals.grams)
                    line.add("model", string: status.model?.rawValue)
                    if result.saturated { line.add("saturated", bool: true) }
                    try output.write(line.line)
                } else if result.saturated {
                    try output.write(ReadingMessage.lowerBoundText(unit.format(grams: result.added)) + " added\n")
                } else if result.added < 0 {
                    // Something was taken away from the contact: said as what it is.
                    try output.write("\(unit.format(grams: -result.added)) ± \(unit.format(grams: result.uncertainty)) removed\n")
                } else {
                    try output.write("\(unit.format(grams: result.added)) ± \(unit.format(grams: result.uncertainty)) added\n")
                }
                try output.flush()
                if result.saturated { throw CommandFailure.saturated }
                return
            }
            guard let line = try client.nextLine(deadline: deadline) else {
                if secondContactSeen {
                    throw CommandFailure(
                        message: "nothing was added to the first contact within \(DaemonClient.seconds(timeout)) s: " + Self.secondContactAdvice(device: device),
                        status: ExitStatus.failure)
                }
                if let moving = CommandFailure.stillMoving(drifting, latest: latest) {
                    throw CommandFailure.noStableReading(
                        within: timeout, moving: moving, unit: unit, what: announced ? "the weight with the object added" : "the contact's weight")
                }
                let what = announced ? "the object added did not settle" : "no contact rested steadily on the pad"
                throw CommandFailure(message: "\(what) within \(DaemonClient.seconds(timeout)) s: keep it still, or give --timeout more time", status: ExitStatus.failure)
            }
            noteGrabEnded(line)
            if case .reading(let reading) = line.message {
                Self.feed(reading, to: &measurement)
                watchContacts(reading)
            }
        }
    }

    /// A grab that ended before the weighing did (its bound passed, the device went away) is
    /// said once, as a warning: the weighing goes on with the desktop seeing the pad.
    private static func noteGrabEnded(_ line: ReceivedLine) {
        guard case .grab(let message) = line.message, !message.grabbed, let ended = message.ended else { return }
        let why = ended == GrabMessage.Ending.expired.rawValue ? "the daemon's bound for a grab passed" : "the device went away (\(ended))"
        printDiagnostic("warning: \(message.device ?? "the pad") was given back before the weighing ended (\(why)): the desktop sees it again")
    }


    /// Why an object that came as a second contact is not weighed, and the two ways out.
    static func secondContactAdvice(device: String) -> String {
        "the pad reports the object as a second contact, and forcescaled weighs only the first contact of \(device): "
            + "the object is not counted. Serve the pad with its contacts summed (forcescaled --contacts sum, "
            + "or contacts = sum in its configuration file), or run a kernel of 6.18 or later, which marks a "
            + "pressure pad as one (INPUT_PROP_PRESSUREPAD; Debian's 7.3 from trixie-backports): forcescale then "
            + "sums its contacts by itself (docs/weighing.md, \"Pressure pads on Debian 13's kernel\")"
    }

    private static func feed(_ reading: ReadingMessage, to measurement: inout AddedWeight) {
        measurement.add(
            time: reading.time.microseconds, grams: reading.grams, contacts: reading.contacts, stable: reading.stable, saturated: reading.saturated,
            drifting: reading.drift != nil)
    }
}

/// `weigh --grab`: the pad taken for the weighing (GRAB), given back once.
final class PadGrab {
    private let client: DaemonClient
    private let device: String
    private var held = true

    /// Takes the pad for as long as the weighing may wait; the daemon caps it at its own
    /// bound. Said on standard error on a terminal.
    /// - Throws: `DaemonClientError.refused` when the daemon refuses (permission, another
    ///   grab, a device another program holds).
    init(client: DaemonClient, device: String, seconds: Double) throws {
        self.client = client
        self.device = device
        let reply = try client.request(.grab(enable: true, seconds: seconds, device: device), expecting: GrabMessage.self).message
        let prompts = OutputChannel.standardError
        guard prompts.isTerminal else { return }
        let bound = reply.seconds.map { " for at most \(DaemonClient.seconds($0)) s" } ?? ""
        try prompts.write("\(untrusted: device) is taken\(bound): the desktop sees nothing of the pad until the weighing ends.\n")
        try prompts.flush()
    }

    /// Gives the pad back (GRAB with enable false), once; a failure to say so is no failure
    /// of the weighing: the daemon gives it back when the connection goes.
    func release() {
        guard held else { return }
        held = false
        _ = try? client.request(.grab(enable: false, device: device), expecting: GrabMessage.self)
    }
}
