import ArgumentParsing
import ScaleCore
import ScaleDisplay
import ScalePOSIX

/// `forcescale log plot`: one session as an SVG chart.
enum LogPlotCommand: ParsableCommand {
    static let session = OptionKey<Int>("session", valueName: "id", help: "The session to draw (see 'forcescale log sessions').", parser: .integer)
    static let output = OptionKey<String>("output", short: "o", valueName: "file", help: "The SVG file to write ('-' for standard output).", parser: .text)

    static let configuration = CommandConfiguration(
        name: "plot",
        abstract: "Draw a logged session as an SVG chart.",
        discussion: """
            Draws the session's weight in grams against the seconds since it started, with \
            labelled axes, each PEAK marked with its grams (a triangle), the heaviest reading \
            (a circle) and the stable weight (a dashed line), a title naming the device, the \
            session and its start, and a legend. Any web browser shows the file; \
            'rsvg-convert -o plot.png plot.svg' makes a PNG of it. Long sessions are thinned \
            to the lowest and highest reading per pixel column, so no peak is lost.
            """,
        options: [session, output, LogCommand.database])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        let id = Int64(command[Self.session])
        let outputPath = command[Self.output]
        return LogCommand.run {
            let database = try LogCommand.open(command)
            defer { database.close() }
            // Decimated as the readings are read, so that memory stays the same for any length.
            guard let plot = try database.plot(session: id, start: {
                ForcePlot(session: $0, startedText: LocalTime.text($0.started, offset: true), peaks: $1, readingTimes: $2)
            }, add: { $0.add($1) }) else {
                throw CommandFailure.noSession(id, in: database.path)
            }
            let svg = plot.render()
            let output = try LogOutput(path: outputPath)
            do {
                try output.write(svg)
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
        }
    }
}
