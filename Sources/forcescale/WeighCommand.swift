import ArgumentParsing
import ScaleClient
import ScaleCore
import ScalePOSIX

enum WeighCommand {
    static let declaration = Command(
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
            allow, or its grams no more than the daemon's stable-grams. Exits with status 1 when nothing \
            settles within the timeout.
            """,
        options: [
            DaemonConnection.timeoutOption(default: 30, help: "How long to wait for a stable reading."),
            Option(long: "unit", valueName: "unit", help: "Unit of the weight; JSON always carries grams.", defaultValue: "g", allowedValues: MassUnit.allCases.map(\.rawValue)),
            Option(long: "json", help: "Print the stable READING line instead."),
            DaemonConnection.socketOption,
        ])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let timeout = try DaemonConnection.timeout(command)
        let unit = MassUnit(rawValue: command.string("unit") ?? "g") ?? .grams
        let json = command.flag("json")
        return DaemonConnection.run {
            let deadline = MonotonicClock.now() + Int64(timeout * 1_000_000)
            let client = try DaemonConnection.connect(command)
            // Any model counts, known to this client or not: the grams are the daemon's.
            var found: (reading: ReadingMessage, text: String)?
            let take: (ReceivedLine) -> Void = { line in
                guard found == nil, case .reading(let reading) = line.message, reading.isSettledWeight else { return }
                found = (reading, line.text)
            }
            _ = try client.request(.watch(enable: true, device: nil), expecting: WatchMessage.self, onStream: take)
            // A weight that has been resting still may send no new frames at all: the
            // newest reading already says what it weighs.
            let poll = try client.request(.poll, expecting: PollMessage.self, onStream: take)
            if found == nil, let reading = poll.message.reading, reading.isSettledWeight {
                // Its READING line, written by the type the daemon writes it with: the bytes
                // it sent, less any fields a later daemon added.
                found = (reading, String(reading.line.dropLast()))
            }
            while found == nil {
                guard let line = try client.nextLine(deadline: deadline) else {
                    throw CommandFailure.noStableReading(within: timeout)
                }
                take(line)
            }
            let output = OutputChannel.standardOutput
            var text = json ? found!.text : unit.format(grams: found!.reading.grams)
            // A calibrated weight gets the calibration's uncertainty beside it, from STATUS,
            // grown past the heaviest calibration weight; and says when it is past it (the
            // JSON line stays the READING as sent).
            let reading = found!.reading
            if !json, reading.model == GramModelName(.calibrated),
               let calibration = try client.request(.status, expecting: StatusMessage.self).message.calibration,
               let uncertainty = calibration.uncertainty {
                let quoted = reading.beyondCalibration.map {
                    CalibrationFit.uncertainty(uncertainty, atGrams: reading.grams + calibration.tare, heaviest: $0)
                } ?? uncertainty
                text += " ± " + unit.format(grams: quoted)
            }
            if !json, let beyond = reading.beyondCalibrationText { text += " (\(beyond))" }
            try output.write(text + "\n")
            try output.flush()
        }
    }
}
