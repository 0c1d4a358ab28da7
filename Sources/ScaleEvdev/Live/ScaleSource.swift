import ScaleCore

/// Where a scale's readings come from, as the daemon sees it: a live device (`LiveScale`)
/// or a recording played as if live (`RecordingScale`). Both run on the owner's loop and
/// hand their outputs, each with the device it came from, to a callback.
///
/// Making a source sends nothing: outputs and notices begin with `start()`, so the owner can
/// keep the source (and apply a calibration) before the first one arrives.
package protocol ScaleSource: AnyObject {
    /// The device being read: its node (or file) and description.
    var currentDevice: (path: String, description: DeviceDescription)? { get }
    var gramModel: GramModelKind? { get }
    /// The device that rumbles on a PEAK, if any.
    var rumblePath: String? { get }
    /// Begins reading: outputs and notices are sent from here on, never from the initialiser.
    /// - Throws: What stops the source from reading at all (no device, a loop failure).
    func start() throws
    /// Applies a calibration from now on.
    func setCalibration(_ calibration: Calibration)
    /// Plays a haptic pattern without blocking the loop.
    /// - Throws: `ForceFeedbackError` when nothing can rumble.
    func play(_ pattern: HapticPattern) throws(ForceFeedbackError)
    /// Stops reading; the held reading goes out first.
    func stop()
}
