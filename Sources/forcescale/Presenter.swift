import ScaleCore
import ScaleDisplay
import ScalePOSIX
import ScaleProtocol

/// Shows pipeline output: JSON lines, gauge lines, or a gauge redrawn in place.
protocol Presenter {
    /// - Parameter origin: The time shown as 0.000 s.
    func begin(device: DeviceDescription, source: PressureSource, model: GramModelKind, origin: EventTime) throws
    func show(_ output: ScaleOutput) throws
    func end() throws
}

/// The protocol's JSON lines, one per reading or peak.
final class JSONPresenter: Presenter {
    let output: OutputChannel
    let flushEachLine: Bool

    init(output: OutputChannel, flushEachLine: Bool) {
        self.output = output
        self.flushEachLine = flushEachLine
    }

    func begin(device: DeviceDescription, source: PressureSource, model: GramModelKind, origin: EventTime) throws {}

    func show(_ value: ScaleOutput) throws {
        try output.write { value.appendLine(to: &$0) }
        if flushEachLine { try output.flush() }
    }

    func end() throws { try output.flush() }
}

/// The human gauge. As plain lines it prints every reading; redrawn in place (on a
/// terminal, in real time) it keeps one live line and leaves a line behind for each PEAK
/// and for each weight when it is lifted.
final class GaugePresenter: Presenter {
    let output: OutputChannel
    let style: GaugeStyle
    let unit: MassUnit
    let inPlace: Bool
    let flushEachLine: Bool
    /// Whether each line starts with the name of its device: for the daemon's stream when
    /// it carries several devices.
    var labelsDevices = false
    /// The name each device gives itself (STATUS's `name`), by its name in the protocol:
    /// labels read `Wacom Intuos4 6x9 Pen (event5)`, the part in parentheses what
    /// `--device` takes.
    var deviceNames: [String: String] = [:]
    private var gauge: Gauge?
    /// The last stable reading of each device (by name; `""` for one without), for the line
    /// its lift leaves.
    private var lastStable: [String: ReadingMessage] = [:]
    /// The longest device name labelled so far, which the labels are padded to.
    private var labelWidth = 0
    private var liveLine = ""
    /// The least raw pressure that saturates each device (by name; `""` for one without):
    /// the axis maximum when this process reads the device, else the lowest raw of a
    /// saturated READING seen, so that a PEAK there is shown as the lower bound it is.
    private var saturatingRaw: [String: Int32] = [:]

    init(output: OutputChannel, style: GaugeStyle, unit: MassUnit, inPlace: Bool, flushEachLine: Bool) {
        self.output = output
        self.style = style
        self.unit = unit
        self.inPlace = inPlace
        self.flushEachLine = flushEachLine
    }

    func begin(device: DeviceDescription, source: PressureSource, model: GramModelKind, origin: EventTime) throws {
        gauge = Gauge(style: style, unit: unit, origin: origin)
        let axis = source.axis
        saturatingRaw[""] = axis.maximum
        var modelText = model.rawValue
        if model == .physical { modelText += " (\(axis.resolution) units per gram)" }
        try output.write("\(untrusted: device.name): \(source.axisCode.absoluteAxisName) \(axis.minimum)..\(axis.maximum), \(modelText) model\n")
        try output.flush()
    }

    func show(_ value: ScaleOutput) throws {
        switch value {
        case .reading(let reading): try show(reading: ReadingMessage(reading))
        case .peak(let peak): try show(peak: PeakMessage(peak))
        }
    }

    /// Shows a READING, from this process's pipeline or the daemon's stream.
    func show(reading: ReadingMessage) throws {
        let gauge = gauge(startingAt: reading.time)
        let label = label(reading.device)
        if reading.saturated, reading.contacts > 0 {
            saturatingRaw[reading.device ?? ""] = min(reading.raw, saturatingRaw[reading.device ?? ""] ?? .max)
        }
        guard inPlace else {
            try output.write(label + gauge.line(for: reading) + "\n")
            if flushEachLine { try output.flush() }
            return
        }
        let device = reading.device ?? ""
        if reading.contacts == 0 {
            liveLine = ""
            try leaveLine(label + gauge.liftLine(at: reading.time, lastStable: lastStable[device]))
            lastStable[device] = nil
        } else {
            if reading.stable { lastStable[device] = reading }
            liveLine = label + gauge.line(for: reading)
            try output.write("\r\u{1B}[K" + liveLine)
            try output.flush()
        }
    }

    /// Shows a PEAK, from this process's pipeline or the daemon's stream.
    func show(peak: PeakMessage) throws {
        let saturated = saturatingRaw[peak.device ?? ""].map { peak.raw >= $0 } ?? false
        try leaveLine(label(peak.device) + gauge(startingAt: peak.time).line(for: peak, saturated: saturated))
    }

    /// `Wacom Intuos4 6x9 Pen (event5)  `, or `event5  ` for a device whose own name is not
    /// known: padded, when lines are labelled.
    private func label(_ device: String?) -> String {
        guard labelsDevices, let device else { return "" }
        let text = deviceNames[device].map { "\(untrusted: $0) (\(untrusted: device))" } ?? UntrustedText.escaped(device)
        labelWidth = max(labelWidth, text.count)
        return text.padding(labelWidth) + "  "
    }

    /// The gauge; without a begin() (the daemon's stream has no device header), times count
    /// from the first output.
    private func gauge(startingAt time: EventTime) -> Gauge {
        if let gauge { return gauge }
        let started = Gauge(style: style, unit: unit, origin: time)
        gauge = started
        return started
    }

    func end() throws {
        if inPlace, !liveLine.isEmpty { try output.write("\n") }
        try output.flush()
    }

    /// Prints a permanent line above the live one.
    private func leaveLine(_ line: String) throws {
        if inPlace {
            try output.write("\r\u{1B}[K" + line + "\n" + liveLine)
            try output.flush()
        } else {
            try output.write(line + "\n")
            if flushEachLine { try output.flush() }
        }
    }
}

extension PipelineOptions {
    /// The presenter these options ask for, fitted to where standard output goes.
    /// - Parameters:
    ///   - liveGauge: Redraw the gauge in place on a terminal (when `realtime`).
    ///   - flushEachLine: Write each line out as it comes when `realtime`; `false` when the
    ///     caller flushes `OutputChannel.standardOutput` itself after each batch (`read`,
    ///     once per wake-up of its loop).
    func makePresenter(liveGauge: Bool, flushEachLine: Bool = true) -> Presenter {
        let output = OutputChannel.standardOutput
        let flushes = realtime && flushEachLine
        if json { return JSONPresenter(output: output, flushEachLine: flushes) }
        let terminal = output.isTerminal
        let style = GaugeStyle(unicode: terminal && Environment.usesUTF8, color: terminal && !Environment.prefersNoColor)
        return GaugePresenter(output: output, style: style, unit: unit, inPlace: liveGauge && realtime && terminal, flushEachLine: flushes)
    }
}
