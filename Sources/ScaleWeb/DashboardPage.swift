/// The page served at `/`. A placeholder until the page itself lands (issue 11's browser
/// page is written separately and replaces this file).
enum DashboardPage {
    public static let html: String = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>forcescale</title></head>
        <body><h1>forcescale</h1><p>The live stream is at <a href="/events">/events</a>, the metrics at <a href="/metrics">/metrics</a>.</p></body></html>
        """
}
