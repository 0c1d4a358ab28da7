import ArgumentParsing
import ScaleCore
import ScaleEvdev
import ScalePOSIX
import ScaleProtocol

enum DevicesCommand: ParsableCommand {
    static let json = OptionKey(flag: "json", help: "Print one JSON object per device.")
    static let socket = OptionKey<String?>(
        "socket", valueName: "path", help: "Ask the forcescaled listening on this socket instead of opening the devices.", parser: .text)

    static let configuration = CommandConfiguration(
        name: "devices",
        abstract: "List input devices, their pressure axes and force feedback.",
        discussion: """
            Shows every /dev/input/event* node: name, links, bus:vendor:product, kind, \
            pressure axes, input properties, force-feedback capabilities, and whether you \
            can open it. The device 'read' would pick on its own is marked 'best'. With \
            --socket, asks forcescaled instead (its DEVICES reply: what the daemon can see \
            and which devices it reads).
            """,
        options: [json, socket])

    static func run(_ command: ParsedCommand) throws -> Int32 {
        if let socket = command[Self.socket] { return throughDaemon(socket: socket, json: command[Self.json]) }
        let asJSON = command[Self.json]
        return reportingFailures {
            let devices = DeviceDiscovery.scan()
            let best = try? DeviceDiscovery.choose(nil, from: devices).path
            let output = OutputChannel.standardOutput
            if devices.isEmpty, !asJSON {
                try output.write("No input devices in \(DeviceDiscovery.inputDirectory). \(DaemonConnection.demoRoute)\n")
            }
            for device in devices {
                try output.write(asJSON ? json(device, isBest: device.path == best) : text(device, isBest: device.path == best))
            }
            try output.flush()
        }
    }

    /// The daemon's DEVICES reply: the line itself with --json, a line per device otherwise.
    static func throughDaemon(socket: String, json: Bool) -> Int32 {
        DaemonConnection.run {
            let client = try DaemonConnection.connect(socket)
            let reply = try client.request(.devices, expecting: DevicesMessage.self)
            let output = OutputChannel.standardOutput
            if json {
                try output.write(reply.text + "\n")
            } else {
                let devices = reply.message.devices
                if devices.isEmpty { try output.write("forcescaled sees no input devices. \(DaemonConnection.demoRoute)\n") }
                // Every word of the reply is the daemon's (names and paths from devices),
                // so each is written as UntrustedText escapes it.
                for device in devices {
                    let name = device.name.map { "  \(untrusted: $0)" } ?? ""
                    // A kind this client does not know is shown by its name all the same.
                    let kind = device.kind.map { "  (\(untrusted: $0.rawValue))" } ?? ""
                    let active = device.active ? "  ← read by forcescaled" : ""
                    let problem = device.error.map { "\n  cannot open: \(untrusted: $0)" } ?? ""
                    try output.write("\(untrusted: device.path)\(name)\(kind)\(active)\(problem)\n")
                }
            }
            try output.flush()
        }
    }

    static func text(_ device: DiscoveredDevice, isBest: Bool) -> String {
        var lines: [String] = []
        switch device.details {
        case .failure(let error):
            lines.append("\(untrusted: device.path)  (cannot open)")
            lines.append("  access      \(error.errno): \(error.advice)")
        case .success(let details):
            let description = details.description
            lines.append("\(untrusted: device.path)  \(untrusted: description.name)  (\(description.kind.rawValue))" + (isBest ? "  ← best" : ""))
            lines.append("  id          \(description.identity)")
            let axes = description.pressureAxes.map { axis in
                "\(axis.code.absoluteAxisName) \(axis.range.minimum)..\(axis.range.maximum) fuzz \(axis.range.fuzz) resolution \(axis.range.resolution)"
            }
            lines.append("  pressure    " + (axes.isEmpty ? "none" : axes.joined(separator: "; ")))
            if !axes.isEmpty, let problem = setupProblem(description) {
                lines.append("              unusable: \(untrusted: problem)")
            }
            if let weighing = Weighing(description) { lines.append("  weighs      " + weighing.text) }
            let properties = propertyNames(description)
            lines.append("  properties  " + (properties.isEmpty ? "none" : properties.joined(separator: ", ")))
            lines.append("  rumble      " + forceFeedbackText(details.forceFeedback, haptic: hapticCheck(device.path, details)))
            lines.append("  access      " + (details.isWritable ? "read-write" : "read-only (weighing works; rumble needs write access: group 'input')"))
        }
        // A link's name is udev's, often made of the device's own name and serial.
        for link in device.links { lines.append("  link        \(untrusted: link)") }
        return lines.joined(separator: "\n") + "\n\n"
    }

    static func json(_ device: DiscoveredDevice, isBest: Bool) -> String {
        var json = JSONLineWriter()
        json.add("class", string: "DEVICE")
        json.add("path", string: device.path)
        json.add("links", strings: device.links)
        switch device.details {
        case .failure(let error):
            json.add("access", string: "none")
            json.add("error", string: error.description)
        case .success(let details):
            let description = details.description
            json.add("name", string: description.name)
            json.add("id", string: description.identity.description)
            json.add("kind", string: description.kind.rawValue)
            json.add("pressure", objects: description.pressureAxes.map { DevicesMessage.PressureAxis(code: $0.code, range: $0.range).json })
            json.add("canWeigh", bool: description.canWeigh)
            if let weighing = Weighing(description) {
                var weighs = JSONLineWriter()
                weighs.add("pressure", string: weighing.summary)
                weighs.add("contacts", string: weighing.contacts.rawValue)
                weighs.add("model", string: weighing.model.rawValue)
                json.add("weighs", object: weighs)
            }
            json.add("properties", strings: propertyNames(description))
            var ff = JSONLineWriter()
            ff.add("effects", integer: details.forceFeedback.effectsCapacity)
            ff.add("rumble", bool: details.forceFeedback.canRumble)
            if let haptic = hapticCheck(device.path, details) {
                switch haptic {
                case .success(let waveform): ff.add("haptic", string: waveform.name)
                case .failure(let error): ff.add("haptic_error", string: error.description)
                }
            }
            ff.add("gain", bool: details.forceFeedback.supportsGain)
            ff.add("types", strings: details.forceFeedback.effectTypes.map(\.name))
            json.add("ff", object: ff)
            json.add("access", string: details.isWritable ? "read-write" : "read-only")
            json.add("best", bool: isBest)
        }
        return json.line
    }

    /// How forcescale weighs on a device unless told otherwise: which pressure axis, how its
    /// contacts combine and why, and which gram model (before any calibration, which wins).
    struct Weighing {
        var summary: String
        var contacts: ContactMode
        var model: GramModelKind
        var resolution: Int32
        /// A pressure pad's contacts, summed by default.
        var sumsPressurePad: Bool

        init?(_ description: DeviceDescription) {
            guard description.canWeigh, let source = try? PressureSource.select(for: description) else { return nil }
            contacts = ContactMode.default(for: description)
            summary = source.summary(contacts: contacts)
            resolution = source.axis.resolution
            model = GramModel(axis: source.axis).kind
            if case .multitouch = source, contacts == .sum { sumsPressurePad = true } else { sumsPressurePad = false }
        }

        /// e.g. `ABS_MT_PRESSURE, the sum of the contacts (a pressure pad: …); grams from its
        /// resolution, 40 units per gram (physical)`.
        var text: String {
            let why = sumsPressurePad ? " (a pressure pad: what rests on it presses beside the finger, so the pad carries the sum)" : ""
            let grams = model == .physical
                ? "grams from its resolution, \(resolution) units per gram (physical)"
                : "grams on the nominal 385 g full scale until calibrated (the axis gives no resolution)"
            return summary + why + "; " + grams
        }
    }

    static func propertyNames(_ description: DeviceDescription) -> [String] {
        [(InputProperty.pointer, "pointer"), (.direct, "direct"), (.buttonPad, "buttonpad"), (.pressurePad, "pressure pad")]
            .filter { description.has($0.0) }.map(\.1)
    }

    /// What a device with FF_HAPTIC plays, found by uploading its PEAK's effect (and erasing
    /// it); `nil` for a device without FF_HAPTIC or opened read-only.
    static func hapticCheck(_ path: String, _ details: DiscoveredDevice.Details) -> Result<HapticWaveform, ForceFeedbackError>? {
        guard details.forceFeedback.canHaptic, details.isWritable else { return nil }
        return ForceFeedbackProbe.hapticWaveform(of: path)
    }

    static func forceFeedbackText(_ ff: ForceFeedbackCapabilities, haptic: Result<HapticWaveform, ForceFeedbackError>? = nil) -> String {
        guard ff.effectsCapacity > 0 else { return "none (no force feedback)" }
        var parts = ["\(ff.effectsCapacity) effects"]
        switch haptic {
        case .success(let waveform)?: parts.append("haptic \(waveform.name) (FF_HAPTIC)")
        case .failure(let error)?: parts.append("FF_HAPTIC, but \(error.explanation)")
        case nil where ff.canHaptic: parts.append("FF_HAPTIC (which waveforms it plays needs write access to find out)")
        case nil: break
        }
        parts.append(ff.canRumble ? "rumble" : "no rumble")
        if ff.supportsGain { parts.append("gain") }
        let others = ff.effectTypes.filter { $0 != .rumble && $0 != .haptic }.map(\.name)
        if !others.isEmpty { parts.append("also " + others.joined(separator: ", ")) }
        return parts.joined(separator: ", ")
    }

    /// Why a device with a pressure axis still cannot weigh, or `nil` when it can.
    static func setupProblem(_ description: DeviceDescription) -> String? {
        do {
            _ = try PressureSource.select(for: description)
            return nil
        } catch {
            return error.description
        }
    }
}
