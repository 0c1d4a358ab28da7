import ScaleCore

/// Writes recordings as `libinput record` version-1 YAML (libinput's
/// tools/libinput-record.c, libinput-record(1)): one device with its `evdev` description
/// (`name`, `id`, `codes`, `absinfo`, `properties`), `udev` (which `libinput replay`
/// requires), then `events`, each frame a `- evdev:`
/// list of `[sec, usec, type, code, value]` closed by its SYN_REPORT, so `libinput replay`
/// recreates the device and forcescale's reader reads back the same `Recording`.
///
/// Pure text, like `EvemuWriter`: the caller streams `header`, then `line(for:startsFrame:)`
/// per event, starting a frame after each SYN_REPORT.
package enum LibinputRecordWriter {
    /// Everything up to and including the device's `events:` key. `comments` become `#`
    /// lines at the top.
    package static func header(for device: DeviceDescription, node: String = "/dev/input/event0", comments: [String] = []) -> String {
        var out = ""
        for comment in comments { out += "# \(comment)\n" }
        out += "version: 1\n"
        out += "ndevices: 1\n"
        out += "devices:\n"
        out += "- node: \(quoted(node))\n"
        out += "  evdev:\n"
        out += "    name: \(quoted(device.name))\n"
        let id = device.identity
        out += "    id: [\(id.bus), \(id.vendor), \(id.product), \(id.version)]\n"
        out += "    codes:\n"
        for type in device.supportedCodes.keys.sorted() {
            guard let codes = device.supportedCodes[type] else { continue }
            out += "      \(type.rawValue): [\(codes.members.map(String.init).joined(separator: ", "))]\n"
        }
        if !device.axes.isEmpty {
            out += "    absinfo:\n"
            for code in device.axes.keys.sorted() {
                let axis = device.axes[code]!
                out += "      \(code.rawValue): [\(axis.minimum), \(axis.maximum), \(axis.fuzz), \(axis.flat), \(axis.resolution)]\n"
            }
        }
        out += "    properties: [\(device.properties.members.map(String.init).joined(separator: ", "))]\n"
        // libinput replay fetches 'udev: properties:' for every device (it compares them with
        // the new device's and only warns), so the key must be there.
        out += "  udev:\n"
        out += "    properties:\n"
        out += "    - ID_INPUT=1\n"
        out += "  events:\n"
        return out
    }

    /// One event as a list item, newline included; with `startsFrame` the `- evdev:` line
    /// that opens its frame comes first.
    package static func line(for event: InputEvent, startsFrame: Bool) -> String {
        let micros = event.time.microseconds
        var seconds = micros / 1_000_000
        var usec = micros % 1_000_000
        if usec < 0 { usec += 1_000_000; seconds -= 1 }
        let item = "    - [\(pad(seconds, 3)), \(pad(usec, 6)), \(pad(Int64(event.type.rawValue), 2)), \(pad(Int64(event.code.rawValue), 3)), \(pad(Int64(event.value), 6))]\n"
        return startsFrame ? "  - evdev:\n" + item : item
    }

    /// A whole recording as text. Events after the last SYN_REPORT (a frame the recording
    /// cut off) are left out: a frame must end in SYN_REPORT.
    package static func text(of recording: Recording, node: String = "/dev/input/event0") -> String {
        var out = header(for: recording.device, node: node, comments: recording.comments)
        let lastReport = recording.events.lastIndex { $0.type == .synchronization && $0.code == .synReport }
        guard let lastReport else { return out + "    []\n" }
        var startsFrame = true
        for event in recording.events[...lastReport] {
            out += line(for: event, startsFrame: startsFrame)
            startsFrame = event.type == .synchronization && event.code == .synReport
        }
        return out
    }

    /// Several devices in one record, as `libinput record --all` writes them: each device's
    /// description and its own events, in the order given (a device without events gets an
    /// empty list). `comments` become `#` lines at the top; the recordings' own are left out.
    package static func text(of devices: [(recording: Recording, node: String)], comments: [String] = []) -> String {
        var out = ""
        for comment in comments { out += "# \(comment)\n" }
        out += "version: 1\nndevices: \(devices.count)\ndevices:\n"
        for (recording, node) in devices {
            let single = text(of: Recording(device: recording.device, events: recording.events), node: node)
            // The single record without its first three lines (version, ndevices, devices).
            out += single.split(separator: "\n", maxSplits: 3, omittingEmptySubsequences: false)[3]
        }
        return out
    }

    /// A YAML double-quoted scalar.
    private static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7f {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
