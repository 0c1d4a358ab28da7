import Foundation
import ScaleCore
import ScaleProtocol
import Testing
@testable import ScaleWeb

private func reading(_ grams: Double, device: String? = "event5", raw: Int32 = 51, saturated: Bool = false, stable: Bool = false, contacts: Int = 1) -> ReadingMessage {
    ReadingMessage(
        device: device, time: EventTime(seconds: 10, microseconds: 0), raw: raw, force: 0.2, grams: grams, saturated: saturated,
        contacts: contacts, stable: stable, model: GramModelName(rawValue: "nominal"))
}

private func peak(_ grams: Double, device: String? = "event5", rumble: RumbleOutcome? = nil) -> PeakMessage {
    PeakMessage(device: device, time: EventTime(seconds: 10, microseconds: 0), raw: 255, grams: grams, rumble: rumble)
}

@Suite struct MetricsTests {
    @Test func theTextFormatCarriesTheLatestReadingAndTheTotals() {
        var state = MetricsState(release: "9.9")
        state.daemonUp = true
        state.observe(reading(12.5), receivedSeconds: 1_700_000_000.25)
        state.observe(reading(77.0, raw: 255, saturated: true, stable: true), receivedSeconds: 1_700_000_001.5)
        state.observe(peak(77.0))
        let text = state.render(.prometheusText)
        #expect(text.contains("# TYPE forcescale_weight_grams gauge\nforcescale_weight_grams{device=\"event5\"} 77.0\n"))
        #expect(text.contains("forcescale_force_ratio{device=\"event5\"} 0.2\n"))
        #expect(text.contains("forcescale_raw{device=\"event5\"} 255\n"))
        #expect(text.contains("forcescale_saturated{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_stable{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_contacts{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_last_reading_timestamp_seconds{device=\"event5\"} 1700000001.5\n"))
        #expect(text.contains("# TYPE forcescale_readings_total counter\nforcescale_readings_total{device=\"event5\"} 2\n"))
        #expect(text.contains("# TYPE forcescale_peaks_total counter\nforcescale_peaks_total{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_daemon_up 1\n"))
        #expect(text.contains("forcescale_build_info{version=\"9.9\"} 1\n"))
        #expect(!text.contains("# EOF"))
        #expect(!text.contains("# UNIT"))
    }

    @Test func theHistogramHasOneObservationPerPeakInCumulativeBuckets() {
        var state = MetricsState(release: "1")
        state.observe(peak(3))
        state.observe(peak(385))
        state.observe(peak(9000))
        let text = state.render(.prometheusText)
        func bucket(_ le: String) -> String { "forcescale_peak_grams_bucket{device=\"event5\",le=\"\(le)\"} " }
        #expect(text.contains(bucket("2.0") + "0\n"))
        #expect(text.contains(bucket("5.0") + "1\n"))
        #expect(text.contains(bucket("200.0") + "1\n"))
        #expect(text.contains(bucket("385.0") + "2\n"))
        #expect(text.contains(bucket("5000.0") + "2\n"))
        #expect(text.contains(bucket("+Inf") + "3\n"))
        #expect(text.contains("forcescale_peak_grams_count{device=\"event5\"} 3\n"))
        #expect(text.contains("forcescale_peak_grams_sum{device=\"event5\"} 9388.0\n"))
        // A device that only peaked has no gauges: there is no reading to report.
        #expect(!text.contains("forcescale_weight_grams{"))
    }

    @Test func openMetricsNamesFamiliesWithUnitsAndEnds() {
        var state = MetricsState(release: "1")
        state.observe(reading(1), receivedSeconds: 1)
        state.deviceInfos = [.init(device: "event5", name: "Pad \"A\"", id: "0003:056a:00b9", model: "nominal")]
        let text = state.render(.openMetrics)
        #expect(text.hasSuffix("# EOF\n"))
        #expect(text.contains("# TYPE forcescale_weight_grams gauge\n# UNIT forcescale_weight_grams grams\n"))
        #expect(text.contains("# TYPE forcescale_readings counter\n"))
        #expect(text.contains("forcescale_readings_total{device=\"event5\"} 1\n"))
        #expect(text.contains("# TYPE forcescale_peak_grams histogram\n# UNIT forcescale_peak_grams grams\n"))
        #expect(text.contains("# TYPE forcescale_device info\n"))
        #expect(text.contains(#"forcescale_device_info{device="event5",name="Pad \"A\"",id="0003:056a:00b9",model="nominal"} 1"#))
        #expect(text.contains("# TYPE forcescale_build info\n"))
    }

    @Test func labelValuesAreEscaped() {
        #expect(MetricsWriter.escapeLabel("a\\b\"c\nd") == #"a\\b\"c\nd"#)
        var state = MetricsState(release: "1")
        state.observe(reading(1, device: "x\"y"), receivedSeconds: 1)
        #expect(state.render(.prometheusText).contains(#"forcescale_weight_grams{device="x\"y"} 1.0"#))
    }

    /// Several devices at once (a daemon serving a pen and a pad): a series of each family
    /// per device, one info sample per device, and the whole passes promtool (one family
    /// each, no sample twice).
    @Test func devicesAreSeparateSeries() throws {
        var state = MetricsState(release: "1")
        state.daemonUp = true
        state.observe(reading(1, device: "event5"), receivedSeconds: 1)
        state.observe(reading(2, device: "event7"), receivedSeconds: 1)
        state.observe(reading(3, device: "event7"), receivedSeconds: 1)
        state.observe(peak(3, device: "event7", rumble: .played(latencyMicroseconds: 400)))
        state.observe(peak(1, device: "event5", rumble: .unavailable))
        state.deviceInfos = [.init(device: "event7", name: "Pen", id: "0003:056a:00b9", model: "nominal"),
                             .init(device: "event5", name: "Pad", id: "0011:0002:0007", model: "calibrated")]
        let text = state.render(.prometheusText)
        #expect(text.contains("forcescale_readings_total{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_readings_total{device=\"event7\"} 2\n"))
        #expect(text.contains("forcescale_weight_grams{device=\"event5\"} 1.0\nforcescale_weight_grams{device=\"event7\"} 3.0\n"))
        #expect(text.contains("forcescale_peak_grams_count{device=\"event5\"} 1\n"))
        #expect(text.contains("forcescale_peak_grams_count{device=\"event7\"} 1\n"))
        #expect(text.contains(#"forcescale_device_info{device="event5",name="Pad",id="0011:0002:0007",model="calibrated"} 1"# + "\n"
            + #"forcescale_device_info{device="event7",name="Pen",id="0003:056a:00b9",model="nominal"} 1"#))
        #expect(text.components(separatedBy: "# TYPE forcescale_weight_grams ").count == 2, "one family, not one per device")
        let checked = try Self.promtool(text)
        #expect(checked.status == 0, "promtool check metrics: \(checked.output)\n\(text)")
    }

    @Test func acceptAsksForOpenMetricsOrGetsText() {
        #expect(MetricsFormat.negotiate(accept: nil) == .prometheusText)
        #expect(MetricsFormat.negotiate(accept: "text/plain") == .prometheusText)
        #expect(MetricsFormat.negotiate(accept: "*/*") == .prometheusText)
        #expect(MetricsFormat.negotiate(accept: "application/openmetrics-text") == .openMetrics)
        // What Prometheus itself sends.
        #expect(MetricsFormat.negotiate(accept: "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1") == .openMetrics)
        #expect(MetricsFormat.negotiate(accept: "application/openmetrics-text; q=0") == .prometheusText)
        #expect(MetricsFormat.negotiate(accept: "application/openmetrics-text; version=2.0.0") == .prometheusText)
        #expect(MetricsFormat.openMetrics.contentType.hasPrefix("application/openmetrics-text; version=1.0.0"))
        #expect(MetricsFormat.prometheusText.contentType.hasPrefix("text/plain; version=0.0.4"))
    }

    @Test func rumblesAreCountedByResultAndTheirLatenciesHistogrammed() throws {
        var state = MetricsState(release: "1")
        state.observe(peak(385))
        for latency: Int64 in [80, 300, 300, 2_000, 400_000] { state.observe(peak(385, rumble: .played(latencyMicroseconds: latency))) }
        state.observe(peak(385, rumble: .failed(errno: 5)))
        state.observe(peak(385, device: "event7", rumble: .off))
        let text = state.render(.prometheusText)
        #expect(text.contains("# TYPE forcescale_rumbles_total counter\n"))
        #expect(text.contains("forcescale_rumbles_total{device=\"event5\",result=\"failed\"} 1\nforcescale_rumbles_total{device=\"event5\",result=\"played\"} 5\n"))
        #expect(text.contains("forcescale_rumbles_total{device=\"event7\",result=\"off\"} 1\n"))
        func bucket(_ le: String) -> String { "forcescale_rumble_latency_seconds_bucket{device=\"event5\",le=\"\(le)\"} " }
        #expect(text.contains(bucket("0.0001") + "1\n"))
        #expect(text.contains(bucket("0.00025") + "1\n"))
        #expect(text.contains(bucket("0.0005") + "3\n"))
        #expect(text.contains(bucket("0.0025") + "4\n"))
        #expect(text.contains(bucket("0.1") + "4\n"))
        #expect(text.contains(bucket("+Inf") + "5\n"))
        #expect(text.contains("forcescale_rumble_latency_seconds_count{device=\"event5\"} 5\n"))
        // Only played rumbles have a latency: event7's off makes no histogram.
        #expect(!text.contains("forcescale_rumble_latency_seconds_count{device=\"event7\"}"))
        #expect(text.contains("forcescale_peaks_total{device=\"event5\"} 7\n"))
        let checked = try Self.promtool(text)
        #expect(checked.status == 0, "promtool check metrics: \(checked.output)\n\(text)")
    }

    /// `promtool check metrics` on an exposition: its exit status and what it said.
    private static func promtool(_ exposition: String) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
        process.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        try process.run()
        input.fileHandleForWriting.write(Data(exposition.utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, said)
    }
}
