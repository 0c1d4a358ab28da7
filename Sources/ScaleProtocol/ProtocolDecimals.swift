/// How many decimals each kind of number has on the wire (docs/protocol.md): the messages
/// round to these when made, so that a decoded line equals the message it was written from.
public enum ProtocolDecimals {
    /// Grams in readings, peaks, tares and uncertainties: a touchpad resolves about 0.1 g at best.
    public static let grams = 1
    /// Normalised force: enough for a 0–8191 pen axis.
    public static let force = 4
    /// Calibration points (raw averages and known weights) and CALIBRATE's reply.
    public static let calibration = 2
    /// A fitted curve's parameters in CALIBRATION (normalised pressure).
    public static let parameters = 6
    /// STATUS's uptime: milliseconds.
    public static let uptime = 3
    /// PEAK's `rumble_latency` and STATUS's rumble latencies, in seconds: microseconds, as
    /// event times.
    public static let rumbleLatency = 6
}
