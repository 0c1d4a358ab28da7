import ScaleCore
import ScaleProtocol

/// The calibration file's contents: one JSON object on one line, written with
/// `JSONLineWriter` and read with `JSONValue` (both in ScaleCore), so that the daemon needs
/// no Foundation:
///
///     {"format":"forcescale-calibration","version":1,"device":"Wacom Intuos4 6x9 Pen",
///      "id":"0003:056a:00b9","tare_grams":12.5,"points":[{"raw":1200.0,"grams":100.0}]}
///
/// A point taken since curves are fitted (protocol 1.1) also has `sd` and `n`: the standard deviation and count of
/// the raw readings averaged into it, which the fit uses to tell noise from a bend. They are
/// optional, so the format's version stays 1: files of earlier releases load unchanged (and
/// get the fitted curve; their points only lack a spread), and earlier releases reading a
/// newer file ignore the two keys, as they ignore any key they do not know.
///
/// Numbers are written in Swift's shortest form that reads back as the same `Double`, so a
/// save and a load change nothing. `device` and `id` are there for people reading the file;
/// the file's name is what ties it to the device.
enum CalibrationFile {
    static let format = "forcescale-calibration"
    static let version = 1
    /// Far more than any calibration needs; a bigger file is not one of ours.
    static let maximumBytes = 256 * 1024

    /// Why a file's contents are not a calibration, in words for the log.
    struct Invalid: Error, Equatable {
        var reason: String
    }

    /// The file's text for a calibration.
    /// - Throws: `Invalid` when the tare is not a finite number (nothing else can be wrong:
    ///   `Calibration` checks its points).
    static func encode(_ calibration: Calibration, for device: DeviceDescription) throws(Invalid) -> String {
        guard calibration.tareGrams.isFinite else {
            throw Invalid(reason: "the tare (\(calibration.tareGrams) g) is not a number")
        }
        var json = JSONLineWriter()
        json.add("format", string: format)
        json.add("version", integer: version)
        json.add("device", string: device.name)
        json.add("id", string: device.identity.description)
        json.add("tare_grams", literal: calibration.tareGrams.description)
        json.add("points", objects: calibration.points.map { point in
            var entry = JSONLineWriter()
            entry.add("raw", literal: point.raw.description)
            entry.add("grams", literal: point.grams.description)
            entry.add("sd", literal: point.spread.flatMap { $0.isFinite ? $0.description : nil })
            entry.add("n", integer: point.count)
            return entry
        })
        return json.line
    }

    /// Reads a file's bytes back into a calibration.
    /// - Throws: `Invalid` saying what is wrong: not JSON, not this format, a newer version,
    ///   a missing or ill-typed field, or points that do not make a rising curve.
    static func decode(_ bytes: [UInt8]) throws(Invalid) -> Calibration {
        guard !bytes.isEmpty else { throw Invalid(reason: "the file is empty") }
        guard bytes.count <= maximumBytes else { throw Invalid(reason: "the file is larger than \(maximumBytes / 1024) KiB") }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw Invalid(reason: "not JSON: \(error)")
        }
        guard json["format"]?.stringValue == format else {
            throw Invalid(reason: "not a forcescale calibration (no \"format\":\"\(format)\")")
        }
        guard let fileVersion = json["version"]?.numberValue else { throw Invalid(reason: "no \"version\"") }
        guard fileVersion == Double(version) else {
            throw Invalid(reason: "format version \(fileVersion) is not supported (this forcescale reads version \(version))")
        }
        guard let tare = json["tare_grams"]?.numberValue else { throw Invalid(reason: "no \"tare_grams\" number") }
        guard tare.magnitude <= CalibrationPoint.maximumGrams else {
            throw Invalid(reason: "the tare (\(tare) g) is beyond the \(Int(CalibrationPoint.maximumGrams)) g any pad carries")
        }
        guard let entries = json["points"]?.arrayValue else { throw Invalid(reason: "no \"points\" list") }
        var points: [CalibrationPoint] = []
        for (index, entry) in entries.enumerated() {
            guard let raw = entry["raw"]?.numberValue, let grams = entry["grams"]?.numberValue else {
                throw Invalid(reason: "point \(index + 1) lacks a \"raw\" or \"grams\" number")
            }
            var spread: Double?
            if let value = entry["sd"], value != .null {
                guard let number = value.numberValue, number >= 0 else { throw Invalid(reason: "point \(index + 1) has an \"sd\" that is not a number of 0 or more") }
                spread = number
            }
            var count: Int?
            if let value = entry["n"], value != .null {
                guard let number = value.numberValue.flatMap({ Int(exactly: $0) }), number > 0 else {
                    throw Invalid(reason: "point \(index + 1) has an \"n\" that is not a whole number above 0")
                }
                count = number
            }
            points.append(CalibrationPoint(raw: raw, grams: grams, spread: spread, count: count))
        }
        do {
            // The axis minimum is the device's business, checked when the calibration is used;
            // here only the curve's own shape is checked.
            return try Calibration(points: points, tareGrams: tare, axisMinimum: Int32.min)
        } catch {
            throw Invalid(reason: error.description)
        }
    }
}
