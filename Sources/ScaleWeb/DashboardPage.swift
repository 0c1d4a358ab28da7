import ScaleCore
import ScaleProtocol

/// The page `/` serves: the scale in a browser. One document with its CSS and script at
/// `/page.css` and `/page.js` of the same server (edited as files of their own,
/// `Page/page.html`, `page.css` and `page.js`, which the EmbedPage plugin builds in as
/// `EmbeddedPage`), so that it works offline and from a machine with no route to any CDN,
/// under a Content-Security-Policy that allows no inline script (`SecurityHeaders`); it
/// needs nothing but this server's `/events`, `/api/status` and `/api/sessions…` (and
/// `/api/tare`, `/api/grab` when the server allows control).
///
/// One card per device the daemon serves, made when the device's first READING comes or
/// when STATUS's `devices` names it (protocol 1.5), in the order of their names. What each
/// shows, and the rules it shares with the CLI's gauge (ScaleDisplay.Gauge):
/// - the weight exactly as the stream carries it: READING's `grams` (already rounded to
///   0.1 g by the daemon) converted with MassUnit's factors and written with MassUnit's
///   decimals, rounded half away from zero like `fixed(_:decimals:)`; in grams that is the
///   stream's number itself, never re-rounded or smoothed;
/// - force in percent rounded down (so 100% never shows before saturation) and `100%+` when
///   the reading is saturated;
/// - a dial whose disc grows with force (area proportional to force, as the original
///   iPhone scale's circle grew), `role=meter` with `aria-valuenow` = that percentage;
/// - a title naming the device as it names itself (STATUS's `name`), with the protocol's
///   name for it (`event5`, `pen.evemu`) in small type beneath;
/// - PEAK when the daemon sends one, stability in words and a shape (never colour alone),
///   the device and gram model, and a plot of the last 30 s of grams with its axes: grams
///   with ticks at 1, 2 or 5 times a power of ten, seconds ago at every 10 s;
/// - "reconnecting" whenever the stream or the daemon behind it is gone; EventSource
///   reconnects by itself (the server's `retry:`), and a stream the browser gave up on is
///   opened again with a back-off.
///
/// Below the cards, the History of the force log (`/api/sessions`): a table of sessions,
/// newest first, a page at a time; a session opens to its plot, stable weights, PEAKs and
/// downloads; without a log, the server's words on how to switch logging on.
///
/// The units the page offers, their factors and their decimals are ScaleCore's `MassUnit`,
/// put into the page as JSON (`units`, below) when it is first served, so that neither
/// page.js nor the browser tests restate them.
///
/// The page's element ids and each card's class names (a card is `.scale` with
/// `data-device`) are part of the interface: the browser tests (Tests/Browser) find them.
enum DashboardPage {
    /// page.html with the units' JSON put in where it names them (`/* units */`, on a line
    /// of its own), once, when first served.
    static let html: String = inline(EmbeddedPage.html, marker: "/* units */\n", units + "\n")

    /// What `/` answers a browser without a key (401): how to get in, and no data.
    static let unauthorized: String = """
        <!DOCTYPE html>
        <html lang="en">
        <head><meta charset="utf-8"><title>forcescale: a key is needed</title></head>
        <body>
        <h1>forcescale: a key is needed</h1>
        <p>This dashboard shows the scale only to those who may read forcescaled's socket.
        Open it with <code>forcescale-web-open</code> (the Forcescale entry of the desktop's menu),
        as a member of the group <code>forcescale</code>, or with the address <code>make run</code> printed.</p>
        <p>Not in the group? <code>sudo adduser $USER forcescale</code>, then log in again.</p>
        </body>
        </html>

        """

    /// `MassUnit` as the page reads it (`<script type="application/json" id="units">`): every
    /// unit in the order the CLI lists them, its symbol, its name, how many grams one of it
    /// is, and the decimals the CLI's gauge writes it with:
    /// `{"units":[{"symbol":"g","name":"grams","grams_per_unit":1.0,"decimals":1},…]}`.
    /// The factors are written in Swift's shortest form that reads back as the same `Double`,
    /// so the browser divides by exactly the numbers the CLI divides by.
    static let units: String = {
        var table = JSONLineWriter()
        table.add("units", objects: MassUnit.allCases.map { unit in
            var entry = JSONLineWriter()
            entry.add("symbol", string: unit.rawValue)
            entry.add("name", string: unit.name)
            entry.add("grams_per_unit", literal: unit.gramsPerUnit.description)
            entry.add("decimals", integer: unit.displayDecimals)
            return entry
        })
        return table.object
    }()

    static func inline(_ text: String, marker: String, _ content: String) -> String {
        guard let range = text.firstRange(of: marker) else {
            preconditionFailure("Sources/ScaleWeb/Page/page.html has no line \(marker)")
        }
        var whole = text
        whole.replaceSubrange(range, with: content)
        return whole
    }
}
