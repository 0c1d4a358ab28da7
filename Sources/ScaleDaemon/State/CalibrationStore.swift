import Glibc
import ScaleCore
import ScalePOSIX

/// Per-device calibration and tare, one small JSON file per device in a directory of the
/// daemon's own (`/var/lib/forcescale`, say): `<directory>/<identity>.json` with the
/// identity of `DeviceDescription.stateIdentity`.
///
/// Saves are atomic and durable (see `DurableFile`). A file that cannot be read as a
/// calibration is not fatal: it is renamed aside to `<file>.corrupt-<n>` for a person to
/// look at, reported once, and the device starts uncalibrated.
final class CalibrationStore {
    /// What `load` found.
    enum LoadResult: Hashable, Sendable {
        /// The saved calibration (its points and tare).
        case loaded(Calibration)
        /// Nothing was saved for this device.
        case nothingSaved
        /// The file was damaged or not a calibration; it now lives at `movedTo`, and the
        /// next load finds nothing. `reason` says what was wrong, for the log.
        case corrupt(movedTo: String, reason: String)
    }

    let directory: String

    /// Temporaries of saves that a kill interrupted, removed when the store was opened.
    let removedTemporaries: Int

    /// Opens the store, making its directory (mode 0700: calibrations are nobody else's
    /// business) if it is missing, and removing the temporaries of saves a kill interrupted
    /// (one daemon per state directory). Its parent must exist.
    /// - Throws: `SystemError` naming the directory, with a hint: parent missing, read-only
    ///   file system, a file in the way.
    init(directory: String) throws(SystemError) {
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        try DurableFile.makeDirectory(self.directory)
        removedTemporaries = DurableFile.removeTemporaries(in: self.directory)
    }

    /// The file that holds `device`'s calibration.
    func path(for device: DeviceDescription) -> String {
        directory + "/" + Self.fileName(for: device)
    }

    /// Reads `device`'s calibration.
    /// - Returns: `.loaded`, `.nothingSaved`, or `.corrupt` after moving the bad file aside.
    /// - Throws: `SystemError` when the file cannot be read at all (no permission, a
    ///   directory in its place) or a corrupt one cannot be moved aside.
    func load(for device: DeviceDescription) throws(SystemError) -> LoadResult {
        let path = path(for: device)
        guard let bytes = try DurableFile.read(path, limit: CalibrationFile.maximumBytes) else { return .nothingSaved }
        do {
            return .loaded(try CalibrationFile.decode(bytes))
        } catch {
            return .corrupt(movedTo: try moveAside(path), reason: error.reason)
        }
    }

    /// Saves `device`'s calibration, replacing any earlier one atomically.
    /// - Throws: `SystemError` naming the file: the directory vanished and cannot be made
    ///   again, the disk is full or read-only, or the tare is not a number (`EINVAL`).
    func save(_ calibration: Calibration, for device: DeviceDescription) throws(SystemError) {
        let text: String
        do {
            text = try CalibrationFile.encode(calibration, for: device)
        } catch {
            throw SystemError(path: path(for: device), errno: Errno(rawValue: EINVAL), hint: error.reason + "; tare again")
        }
        // Someone may have removed the directory since the store was opened.
        try DurableFile.makeDirectory(directory)
        try DurableFile.replace(text, named: Self.fileName(for: device), in: directory)
    }

    static func fileName(for device: DeviceDescription) -> String {
        device.stateIdentity + ".json"
    }

    /// Renames a bad file to the first free `<path>.corrupt-<n>`, keeping earlier ones.
    private func moveAside(_ path: String) throws(SystemError) -> String {
        var status = stat()
        for number in 1... {
            let destination = path + ".corrupt-\(number)"
            guard lstat(destination, &status) != 0 else { continue }
            guard rename(path, destination) == 0 else {
                throw SystemError(path: path, errno: .current, hint: "it is corrupt and could not be moved aside; remove it")
            }
            return destination
        }
        fatalError("unreachable: numbers do not run out")
    }
}
