import ScaleCore
import ScaleProtocol

/// The two exposition formats `/metrics` speaks.
package enum MetricsFormat: Sendable, Hashable {
    /// Prometheus's text format 0.0.4: `text/plain; version=0.0.4; charset=utf-8`.
    case prometheusText
    /// OpenMetrics 1.0.0: `# UNIT`, counters as families without `_total`, info metrics,
    /// and `# EOF` at the end.
    case openMetrics

    /// The `Content-Type` of a response in this format.
    var contentType: String {
        switch self {
        case .prometheusText: return "text/plain; version=0.0.4; charset=utf-8"
        case .openMetrics: return "application/openmetrics-text; version=1.0.0; charset=utf-8"
        }
    }

    /// The format an `Accept` header asks for: OpenMetrics when it names
    /// `application/openmetrics-text` with a q-value above 0 (and, if it gives a version,
    /// 1.0.0), the text format otherwise, as Prometheus's own client libraries negotiate.
    /// - Parameter accept: The request's `Accept` header, if any.
    package static func negotiate(accept: String?) -> MetricsFormat {
        guard let accept else { return .prometheusText }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingSpaces }
            guard parts.first?.lowercased() == "application/openmetrics-text" else { continue }
            var accepted = true
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
                guard pair.count == 2 else { continue }
                switch pair[0].lowercased() {
                case "q": if let q = Double(pair[1]), q <= 0 { accepted = false }
                case "version": if pair[1] != "1.0.0" { accepted = false }
                default: break
                }
            }
            if accepted { return .openMetrics }
        }
        return .prometheusText
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// What `/metrics` reports (docs/web.md, "Metrics"), kept from the stream as it passes:
/// pure, fed with each READING and PEAK and the time it came (the caller's wall clock), and
/// rendered on demand. One set of gauges and counters per device, by the READING's
/// `device`; a histogram of each press's peak grams (one observation per PEAK).
struct MetricsState: Sendable {
    /// The histogram's upper bounds, in grams: light things to a kilogram and more; 385 is
    /// the nominal model's full scale, so that a saturated press of it falls in its own bucket.
    static let peakBuckets: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 385, 500, 1000, 2000, 5000]
    /// The rumble latency histogram's upper bounds, in seconds: from a tenth of a
    /// millisecond (a write straight after the frame) to a tenth of a second, past which a
    /// rumble no longer feels like the press's own.
    static let rumbleLatencyBuckets: [Double] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1]

    /// One device's latest values and totals.
    struct DeviceSeries: Sendable, Hashable {
        var grams = 0.0
        var force = 0.0
        var raw: Int32 = 0
        var saturated = false
        var stable = false
        var contacts = 0
        var model = ""
        var readings: UInt64 = 0
        var peaks: UInt64 = 0
        /// The wall-clock time the latest reading came, in seconds since 1970.
        var lastReadingSeconds = 0.0
        /// Per bucket of `peakBuckets` (not cumulative), then the count above the last.
        var peakCounts: [UInt64] = Array(repeating: 0, count: MetricsState.peakBuckets.count + 1)
        var peakSum = 0.0
        /// Whether a READING came for it (a PEAK alone makes only the peak series).
        var hasReading = false
        /// PEAK rumbles by their outcome's name (`played`, `failed`, …).
        var rumbles: [String: UInt64] = [:]
        /// Per bucket of `rumbleLatencyBuckets` (not cumulative), then the count above the last.
        var rumbleLatencyCounts: [UInt64] = Array(repeating: 0, count: MetricsState.rumbleLatencyBuckets.count + 1)
        var rumbleLatencySum = 0.0
        /// Rumbles with a latency: those that played.
        var rumbleLatencyObservations: UInt64 = 0
    }

    /// What the daemon says about a device it serves (STATUS and DEVICES), for the info metric.
    struct DeviceInfo: Sendable, Hashable {
        /// The node name, as READING's `device`.
        var device: String
        var name: String
        /// `bus:vendor:product`.
        var id: String
        var model: String

        init(device: String, name: String, id: String, model: String) {
            self.device = device
            self.name = name
            self.id = id
            self.model = model
        }
    }

    private(set) var devices: [String: DeviceSeries] = [:]
    var daemonUp = false
    /// One per device served, as the last scrape found them.
    var deviceInfos: [DeviceInfo] = []
    /// forcescale-web's release, for `forcescale_build_info`.
    let release: String

    init(release: String) {
        self.release = release
    }

    /// The label of a line without `device` (a replay may have none).
    static func label(_ device: String?) -> String { device ?? "" }

    /// Takes a READING.
    /// - Parameters:
    ///   - reading: The reading.
    ///   - receivedSeconds: When it came, in wall-clock seconds since 1970.
    mutating func observe(_ reading: ReadingMessage, receivedSeconds: Double) {
        var series = devices[Self.label(reading.device)] ?? DeviceSeries()
        series.grams = reading.shownGrams
        series.force = reading.force
        series.raw = reading.raw
        series.saturated = reading.saturated
        series.stable = reading.stable
        series.contacts = reading.contacts
        series.model = reading.model.rawValue
        series.readings += 1
        series.lastReadingSeconds = receivedSeconds
        series.hasReading = true
        devices[Self.label(reading.device)] = series
    }

    /// Takes a PEAK: one observation of the histogram.
    mutating func observe(_ peak: PeakMessage) {
        var series = devices[Self.label(peak.device)] ?? DeviceSeries()
        series.peaks += 1
        series.peakSum += peak.grams
        let bucket = Self.peakBuckets.firstIndex { peak.grams <= $0 } ?? Self.peakBuckets.count
        series.peakCounts[bucket] += 1
        if let outcome = peak.rumble { series.rumbles[outcome, default: 0] += 1 }
        if let latency = peak.rumbleLatency {
            series.rumbleLatencyObservations += 1
            series.rumbleLatencySum += latency
            series.rumbleLatencyCounts[Self.rumbleLatencyBuckets.firstIndex { latency <= $0 } ?? Self.rumbleLatencyBuckets.count] += 1
        }
        devices[Self.label(peak.device)] = series
    }

    /// The exposition, in `format`.
    func render(_ format: MetricsFormat) -> String {
        var out = MetricsWriter(format: format)
        let names = devices.keys.sorted()
        let withReadings = names.filter { devices[$0]!.hasReading }

        func gauge(_ name: String, unit: String? = nil, _ help: String, _ value: (DeviceSeries) -> String) {
            out.family(name, type: "gauge", unit: unit, help: help)
            for device in withReadings {
                out.sample(name, labels: [("device", device)], value(devices[device]!))
            }
        }
        gauge("forcescale_weight_grams", unit: "grams", "Weight of the latest reading, after tare: its settled weight while stable.") { MetricsWriter.number($0.grams) }
        gauge("forcescale_force_ratio", "Normalised force of the latest reading, 0 to 1.") { MetricsWriter.number($0.force) }
        gauge("forcescale_raw", "Pressure of the latest reading in device units.") { "\($0.raw)" }
        gauge("forcescale_saturated", "1 when the latest reading reached the axis maximum (100%+ force).") { $0.saturated ? "1" : "0" }
        gauge("forcescale_stable", "1 when the weight has settled.") { $0.stable ? "1" : "0" }
        gauge("forcescale_contacts", "Active contacts in the latest reading; 0 is a release.") { "\($0.contacts)" }
        gauge("forcescale_last_reading_timestamp_seconds", unit: "seconds",
              "When forcescale-web received the latest reading, in seconds since 1970.") { MetricsWriter.number($0.lastReadingSeconds) }

        out.family("forcescale_readings", type: "counter", help: "READING lines received from the daemon.")
        for device in names { out.sample("forcescale_readings_total", labels: [("device", device)], "\(devices[device]!.readings)") }
        out.family("forcescale_peaks", type: "counter", help: "PEAK lines received from the daemon: presses that reached the peak threshold.")
        for device in names { out.sample("forcescale_peaks_total", labels: [("device", device)], "\(devices[device]!.peaks)") }

        out.family("forcescale_peak_grams", type: "histogram", unit: "grams", help: "Weight at each PEAK, one observation per PEAK.")
        for device in names {
            let series = devices[device]!
            out.histogram("forcescale_peak_grams", device: device, bounds: Self.peakBuckets, counts: series.peakCounts, sum: series.peakSum)
        }

        out.family("forcescale_rumbles", type: "counter", help: "PEAK rumbles by result: played, failed, unavailable (no device can rumble) or off.")
        for device in names {
            for (result, count) in devices[device]!.rumbles.sorted(by: { $0.key < $1.key }) {
                out.sample("forcescale_rumbles_total", labels: [("device", device), ("result", result)], "\(count)")
            }
        }
        out.family("forcescale_rumble_latency_seconds", type: "histogram", unit: "seconds",
                   help: "From the event time of the frame that reached the peak threshold to the rumble's play accepted by the kernel.")
        for device in names where devices[device]!.rumbleLatencyObservations > 0 {
            let series = devices[device]!
            out.histogram("forcescale_rumble_latency_seconds", device: device, bounds: Self.rumbleLatencyBuckets,
                          counts: series.rumbleLatencyCounts, sum: series.rumbleLatencySum)
        }

        out.family("forcescale_daemon_up", type: "gauge", help: "1 while forcescale-web is connected to forcescaled.")
        out.sample("forcescale_daemon_up", labels: [], daemonUp ? "1" : "0")

        out.info("forcescale_device", help: "The devices forcescaled serves, by name, bus:vendor:product id and gram model.")
        for info in deviceInfos.sorted(by: { $0.device < $1.device }) {
            out.sample("forcescale_device_info", labels: [("device", info.device), ("name", info.name), ("id", info.id), ("model", info.model)], "1")
        }
        out.info("forcescale_build", help: "forcescale-web's release.")
        out.sample("forcescale_build_info", labels: [("version", release)], "1")
        return out.finish()
    }
}

/// Writes families and samples in one of the two formats.
struct MetricsWriter {
    let format: MetricsFormat
    private var text = ""

    init(format: MetricsFormat) {
        self.format = format
        text.reserveCapacity(4096)
    }

    /// A family's metadata. In the text format a counter's `# TYPE` names its sample
    /// (`…_total`); in OpenMetrics the family, which is the sample's name without `_total`.
    mutating func family(_ name: String, type: String, unit: String? = nil, help: String) {
        switch format {
        case .prometheusText:
            let sampleName = type == "counter" ? name + "_total" : name
            text += "# HELP \(sampleName) \(Self.escapeHelp(help))\n# TYPE \(sampleName) \(type)\n"
        case .openMetrics:
            text += "# TYPE \(name) \(type)\n"
            if let unit { text += "# UNIT \(name) \(unit)\n" }
            text += "# HELP \(name) \(Self.escapeHelp(help))\n"
        }
    }

    /// An info metric: OpenMetrics's `info` type (samples end in `_info`), a gauge of 1 in
    /// the text format.
    mutating func info(_ family: String, help: String) {
        switch format {
        case .prometheusText: text += "# HELP \(family)_info \(Self.escapeHelp(help))\n# TYPE \(family)_info gauge\n"
        case .openMetrics: text += "# TYPE \(family) info\n# HELP \(family) \(Self.escapeHelp(help))\n"
        }
    }

    mutating func sample(_ name: String, labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapeLabel($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " \(value)\n"
    }

    /// A histogram's samples for one device: cumulative buckets, `+Inf`, count and sum.
    /// - Parameters:
    ///   - counts: Per bound (not cumulative), then the count above the last.
    mutating func histogram(_ name: String, device: String, bounds: [Double], counts: [UInt64], sum: Double) {
        var cumulative: UInt64 = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counts[index]
            sample(name + "_bucket", labels: [("device", device), ("le", Self.number(bound))], "\(cumulative)")
        }
        let total = cumulative + counts[bounds.count]
        sample(name + "_bucket", labels: [("device", device), ("le", "+Inf")], "\(total)")
        sample(name + "_count", labels: [("device", device)], "\(total)")
        sample(name + "_sum", labels: [("device", device)], Self.number(sum))
    }

    mutating func finish() -> String {
        if format == .openMetrics { text += "# EOF\n" }
        return text
    }

    /// A number as both formats accept it, and as OpenMetrics requires for `le` (canonical:
    /// `1.0`, not `1`; `+Inf`).
    static func number(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        return "\(value)"
    }

    static func escapeLabel(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func escapeHelp(_ value: String) -> String {
        value.replacingBackslashesAndNewlines
    }
}

extension String {
    fileprivate var replacingBackslashesAndNewlines: String {
        var out = ""
        for character in self {
            switch character {
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
