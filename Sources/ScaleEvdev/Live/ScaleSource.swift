import ScaleCore

/// A device a source reads, as the daemon reports it.
package struct SourceDeviceStatus: Sendable {
    /// The device as its outputs name it.
    package var device: SourceDevice
    /// The gram model of its readings.
    package var gramModel: GramModelKind
    /// The most it can weigh (``GramModel/fullScale``): a reading there is saturated.
    package var fullScale: Double
    /// The pressure axis its force is read from.
    package var pressureSource: PressureSource
    /// How the pressures of several contacts make the frame's.
    package var contactMode: ContactMode
    /// The node its PEAKs rumble through; `nil` when they cannot rumble.
    package var rumblePath: String?
    /// How its PEAKs are felt there: a rumble or a haptic waveform.
    package var feedback: FeedbackKind?
    /// Why its PEAKs cannot be felt although rumble is on (no haptic on this pad, say).
    package var feedbackProblem: String?
    /// How often the kernel dropped its events (`SYN_DROPPED`).
    package var droppedEvents: Int

    package init(
        device: SourceDevice, gramModel: GramModel, pressureSource: PressureSource, contactMode: ContactMode,
        rumblePath: String? = nil, feedback: FeedbackKind? = nil, feedbackProblem: String? = nil, droppedEvents: Int
    ) {
        self.device = device
        self.gramModel = gramModel.kind
        fullScale = gramModel.fullScale
        self.pressureSource = pressureSource
        self.contactMode = contactMode
        self.rumblePath = rumblePath
        self.feedback = feedback
        self.feedbackProblem = feedbackProblem
        self.droppedEvents = droppedEvents
    }
}

/// Where a scale's readings come from, as the daemon sees it: live devices (`LiveScale`)
/// or a recording played as if live (`RecordingScale`). Both run on the owner's loop and
/// hand their outputs, each with the device it came from, to a callback.
///
/// Making a source sends nothing: outputs and notices begin with `start()`, so the owner can
/// keep the source (and apply a calibration) before the first one arrives.
package protocol ScaleSource: AnyObject {
    /// The devices being read, in the order they were opened.
    var servedDevices: [SourceDeviceStatus] { get }
    /// Begins reading: outputs and notices are sent from here on, never from the initialiser.
    /// - Throws: What stops the source from reading at all (no device, a loop failure).
    func start() throws
    /// Applies a calibration to one device's readings from now on.
    func setCalibration(_ calibration: Calibration, for device: SourceDevice)
    /// Plays a haptic pattern without blocking the loop.
    /// - Throws: `ForceFeedbackError` when nothing can rumble.
    func play(_ pattern: HapticPattern) throws(ForceFeedbackError)
    /// Takes one of its devices for this process alone (EVIOCGRAB), or gives it back; the
    /// source goes on reading it either way.
    /// - Parameters:
    ///   - grabbed: Take (`true`) or give back.
    ///   - device: The device.
    /// - Returns: Whether the source serves that device (nothing was done when it does not).
    /// - Throws: `DeviceOpenError` when the device cannot be taken: another program holds
    ///   it (`EBUSY`), or it is gone.
    func setGrabbed(_ grabbed: Bool, device: SourceDevice) throws(DeviceOpenError) -> Bool
    /// Stops reading; the held readings go out first.
    func stop()
}
