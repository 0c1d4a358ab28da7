import ScaleCore

extension StatusMessage {
    /// STATUS's `rumbles`: the PEAK rumbles since the daemon started, played and failed,
    /// with the latencies of those that played (since protocol 1.4).
    public struct RumbleSummary: Hashable, Sendable {
        public var played: Int
        public var failed: Int
        /// The median latency in seconds, to the microsecond; `nil` before one played.
        public var p50: Double?
        /// The 99th percentile.
        public var p99: Double?
        /// The longest.
        public var max: Double?

        /// The summary, field by field.
        public init(played: Int, failed: Int, p50: Double? = nil, p99: Double? = nil, max: Double? = nil) {
            self.played = played
            self.failed = failed
            self.p50 = p50.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.rumbleLatency) }
            self.p99 = p99.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.rumbleLatency) }
            self.max = max.map { JSONLineWriter.round($0, decimals: ProtocolDecimals.rumbleLatency) }
        }

        /// The summary of the daemon's counts; `nil` while no rumble was played or failed,
        /// so that STATUS leaves the field out.
        public init?(_ statistics: RumbleStatistics) {
            guard statistics.played + statistics.failed > 0 else { return nil }
            func seconds(_ microseconds: Int64?) -> Double? { microseconds.map { Double($0) / 1e6 } }
            self.init(
                played: statistics.played, failed: statistics.failed, p50: seconds(statistics.quantileMicroseconds(0.5)),
                p99: seconds(statistics.quantileMicroseconds(0.99)), max: seconds(statistics.maximumMicroseconds))
        }

        init(fields: MessageFields) throws(ProtocolDecodeError) {
            self.init(
                played: try fields.integer("played"), failed: try fields.integer("failed"), p50: try fields.optionalNumber("p50"),
                p99: try fields.optionalNumber("p99"), max: try fields.optionalNumber("max"))
        }

        /// `{"played":…,"failed":…,"p50":…,"p99":…,"max":…}`
        var json: JSONLineWriter {
            var json = JSONLineWriter()
            json.add("played", integer: played)
            json.add("failed", integer: failed)
            json.add("p50", number: p50, decimals: ProtocolDecimals.rumbleLatency)
            json.add("p99", number: p99, decimals: ProtocolDecimals.rumbleLatency)
            json.add("max", number: max, decimals: ProtocolDecimals.rumbleLatency)
            return json
        }
    }
}
