/// The daemon's lines other than READING and PEAK (those are ``ProtocolMessage``): the
/// VERSION greeting, the reply to each ``ClientRequest``, and ERROR, as text. Each function
/// builds the typed message a client decodes (``VersionMessage``, ``StatusMessage``…) and
/// returns its line, newline included, so each message's shape is written down once.
public enum DaemonMessage {
    /// Raised when a change would break existing clients.
    public static let protocolMajor = 1
    /// Raised when classes or fields are added; clients ignore what they do not know.
    public static let protocolMinor = 2
    /// How the ERROR that ends a CALIBRATE begins when its touch was lifted before it was
    /// steady (docs/protocol.md, CALIBRATE): clients may offer to try the weight again.
    public static let liftedBeforeSettling = "the weight was lifted before it settled"
    /// Decimals of calibration points (raw averages and known weights) and CALIBRATE's reply.
    public static let calibrationDecimals = 2
    /// Decimals of a fitted curve's parameters in CALIBRATION (normalised pressure).
    public static let parameterDecimals = 6
    /// Decimals of STATUS's uptime: milliseconds.
    public static let uptimeDecimals = 3

    /// The greeting sent on connect: the line of ``VersionMessage``.
    /// - Parameter release: The daemon's release.
    /// - Returns: `{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":0}` and a newline.
    public static func version(release: String) -> String {
        VersionMessage(release: release).line
    }

    /// An ERROR for a request that cannot be read.
    /// - Parameter error: What is wrong; `request` is written only when the class was known.
    /// - Returns: `{"class":"ERROR","message":…,"request":…}` and a newline.
    public static func error(_ error: RequestError) -> String {
        error.line
    }

    /// An ERROR for a failure while serving a valid request (the device is gone, no rumble
    /// device).
    /// - Parameters:
    ///   - message: One sentence naming the problem.
    ///   - request: The request that failed.
    /// - Returns: `{"class":"ERROR","message":"no rumble device","request":"RUMBLE"}` and a newline.
    public static func error(_ message: String, request: ClientRequest? = nil) -> String {
        error(RequestError(message: message, requestClass: request?.className))
    }

    /// The reply to WATCH: the line of ``WatchMessage``.
    /// - Parameters:
    ///   - enable: Whether the client now receives READING and PEAK lines.
    ///   - device: The device it watches, when it asked for one.
    /// - Returns: `{"class":"WATCH","enable":true,"device":"event5"}` and a newline.
    public static func watch(enable: Bool, device: String? = nil) -> String {
        WatchMessage(enable: enable, device: device).line
    }

    /// The reply to POLL: the line of ``PollMessage``.
    /// - Parameters:
    ///   - time: The daemon's time when it answered, in the clock of the event times;
    ///     left out when `nil`.
    ///   - reading: The newest reading, nested as its READING object; left out when there
    ///     has been none.
    ///   - device: The `device` of the nested reading.
    /// - Returns: `{"class":"POLL","time":…,"reading":{"class":"READING",…}}` and a newline.
    public static func poll(time: EventTime? = nil, reading: Reading?, device: String? = nil) -> String {
        PollMessage(time: time, reading: reading.map { ReadingMessage($0, device: device) }).line
    }

    /// The reply to DEVICES: the line of ``DevicesMessage``.
    /// - Parameter devices: The devices, best first.
    /// - Returns: `{"class":"DEVICES","devices":[{"path":…,…}]}` and a newline.
    public static func devices(_ devices: [DeviceSummary]) -> String {
        DevicesMessage(devices: devices).line
    }

    /// The reply to STATUS.
    /// - Parameter status: What the daemon reports.
    /// - Returns: The line of ``StatusMessage``.
    public static func status(_ status: StatusSnapshot) -> String {
        status.line
    }

    /// The reply to TARE: the line of ``TareMessage``.
    /// - Parameters:
    ///   - grams: The tare offset now stored, subtracted from every reading.
    ///   - device: The device whose tare it is.
    /// - Returns: `{"class":"TARE","device":…,"grams":…}` and a newline.
    public static func tare(grams: Double, device: String? = nil) -> String {
        TareMessage(device: device, grams: grams).line
    }

    /// The reply to CALIBRATE: the line of ``CalibrateMessage``.
    /// - Parameters:
    ///   - point: The point added (or measured): the known weight and the stable raw
    ///     pressure it gave, with the spread and count of the readings averaged.
    ///   - points: How many points the curve has now.
    ///   - device: The device calibrated.
    ///   - added: `false` for a point only measured (`"add":false`).
    /// - Returns: `{"class":"CALIBRATE","device":…,"grams":…,"raw":…,"points":…,"sd":…,"n":…}`
    ///   and a newline.
    public static func calibrate(_ point: CalibrationPoint, points: Int, device: String? = nil, added: Bool = true) -> String {
        CalibrateMessage(point: point, points: points, device: device, added: added).line
    }

    /// The reply to CALIBRATION, the same shape whether or not the request reset the
    /// calibration (after a reset: `"points":0,"curve":[],"tare":0.0`).
    /// - Parameters:
    ///   - calibration: The device's curve and tare.
    ///   - fit: The curve fitted to its points, with how good it is.
    ///   - device: The device.
    ///   - preview: `true` when the reply shows a curve that was not put in force.
    /// - Returns: The line of ``CalibrationMessage``.
    public static func calibration(_ calibration: Calibration, fit: CalibrationFit? = nil, device: String? = nil, preview: Bool = false) -> String {
        CalibrationMessage(calibration, fit: fit, device: device, preview: preview).line
    }

    /// The reply to RUMBLE, once the pattern has started playing.
    /// - Parameter pattern: The pattern played.
    /// - Returns: `{"class":"RUMBLE","pattern":"success"}` and a newline.
    public static func rumble(pattern: HapticPattern) -> String {
        RumbleMessage(pattern: pattern).line
    }

    /// A pressure axis as DEVICES and `forcescale devices --json` describe it.
    /// - Parameters:
    ///   - code: The `EV_ABS` code.
    ///   - range: Its absinfo.
    /// - Returns: `{"axis":"ABS_MT_PRESSURE","min":…,"max":…,"fuzz":…,"resolution":…}` to nest.
    public static func pressureAxis(_ code: EventCode, _ range: AxisRange) -> JSONLineWriter {
        DevicesMessage.PressureAxis(code: code, range: range).json
    }
}
