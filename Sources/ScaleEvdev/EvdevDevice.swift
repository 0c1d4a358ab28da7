import CEvdev
import Glibc
import ScaleCore
import ScalePOSIX

/// Why a device could not be opened, with what to do about it.
public struct DeviceOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var errno: Errno

    public init(path: String, errno: Errno) {
        self.path = path
        self.errno = errno
    }

    /// What the user can do about it.
    public var advice: String {
        switch errno {
        case .permissionDenied:
            return "add yourself to group 'input' (sudo usermod -aG input $USER, then log in again) or run the forcescaled service"
        case .noSuchFile, Errno(rawValue: ENODEV):
            return "the device is gone; 'forcescale devices' lists what is there"
        case Errno(rawValue: ENOTTY), Errno(rawValue: EINVAL):
            return "this is not an evdev input device"
        default:
            return "'forcescale devices' shows what can be opened"
        }
    }

    public var description: String { "\(path): \(errno) (\(advice))" }
}

/// What one drain of a device's queue found.
public enum DeviceReadOutcome: Equatable, Sendable {
    /// Every queued event was read; wait for the fd to become readable again.
    case drained
    /// The device is gone (`ENODEV`): close it and wait for it to come back.
    case removed
    /// Reading failed in a way that will not heal; stop watching this fd.
    case failed(Errno)
}

/// An evdev device opened through libevdev: its description, its events, and the file
/// descriptor that force feedback writes to.
public final class EvdevDevice {
    public let path: String
    public let descriptor: FileDescriptor
    /// Whether the device was opened read-write (needed to play force feedback).
    public let isWritable: Bool
    public let description: DeviceDescription
    private let handle: OpaquePointer

    /// Opens a device without grabbing it, so the desktop keeps its pointer.
    /// - Parameters:
    ///   - path: The event node, e.g. `/dev/input/event5`.
    ///   - wantsWrite: Open read-write for force feedback; falls back to read-only when only
    ///     reading is allowed.
    /// - Throws: `DeviceOpenError` naming the path and what to do.
    public init(path: String, wantsWrite: Bool) throws(DeviceOpenError) {
        self.path = path
        var fd: Int32 = -1
        var writable = false
        if wantsWrite {
            fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
            writable = fd >= 0
            if fd < 0, Errno.current != .permissionDenied { throw DeviceOpenError(path: path, errno: .current) }
        }
        if fd < 0 { fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
        guard fd >= 0 else { throw DeviceOpenError(path: path, errno: .current) }
        var device: OpaquePointer?
        let status = libevdev_new_from_fd(fd, &device)
        guard status == 0, let device else {
            close(fd)
            throw DeviceOpenError(path: path, errno: Errno(rawValue: -status))
        }
        // Monotonic timestamps: the throttle's deadlines then map straight onto a timerfd,
        // and a wall-clock jump cannot stall or flood the readings.
        _ = libevdev_set_clock_id(device, CLOCK_MONOTONIC)
        descriptor = FileDescriptor(rawValue: fd)
        isWritable = writable
        handle = device
        description = Self.describe(device)
    }

    deinit {
        libevdev_free(handle)
        try? descriptor.close()
    }

    /// Takes the device for this process alone. Off by default: a grabbed touchpad stops
    /// moving the desktop's pointer.
    public func grab() throws(DeviceOpenError) {
        let status = libevdev_grab(handle, LIBEVDEV_GRAB)
        if status < 0 { throw DeviceOpenError(path: path, errno: Errno(rawValue: -status)) }
    }

    /// Reads every queued event.
    /// - Parameters:
    ///   - onEvent: Called for each event in order.
    ///   - onResynchronize: Called when the kernel dropped events (`SYN_DROPPED`); the
    ///     events that follow until the next `SYN_REPORT` are libevdev's rebuilt state.
    /// - Returns: Why reading stopped.
    public func drain(onEvent: (InputEvent) -> Void, onResynchronize: () -> Void) -> DeviceReadOutcome {
        var event = input_event()
        var flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
        while true {
            let status = libevdev_next_event(handle, flags, &event)
            switch status {
            case Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue):
                onEvent(Self.convert(event))
            case Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue):
                if flags == LIBEVDEV_READ_FLAG_NORMAL.rawValue {
                    // This is the SYN_DROPPED itself: from now on read libevdev's sync events.
                    onResynchronize()
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                } else {
                    onEvent(Self.convert(event))
                }
            case -EAGAIN:
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    // Sync finished: back to the normal queue.
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
                    continue
                }
                return .drained
            case -EINTR:
                continue
            case -ENODEV:
                return .removed
            default:
                return .failed(Errno(rawValue: -status))
            }
        }
    }

    /// Whether the device is still plugged in. An unplugged device's descriptor stays open
    /// and reads nothing until it is read (ENODEV), so a device that is only written to (a
    /// separate rumble device) is asked this way.
    public var isPresent: Bool {
        var version: Int32 = 0
        return CEvdev_driver_version(descriptor.rawValue, &version) == 0 || errno != ENODEV
    }

    /// Writes one event to the device (force-feedback play, stop and gain).
    /// - Throws: `Errno` when the write fails.
    public func write(type: EventType, code: UInt16, value: Int32) throws(Errno) {
        var event = input_event()
        event.type = type.rawValue
        event.code = code
        event.value = value
        let size = MemoryLayout<input_event>.size
        let written = try withUnsafeBytes(of: &event) { bytes throws(Errno) in try descriptor.write(bytes) }
        if written != size { throw Errno(rawValue: EIO) }
    }

    private static func convert(_ event: input_event) -> InputEvent {
        InputEvent(
            time: EventTime(seconds: Int64(event.time.tv_sec), microseconds: Int64(event.time.tv_usec)),
            type: EventType(rawValue: event.type), code: EventCode(rawValue: event.code), value: event.value)
    }

    private static func describe(_ device: OpaquePointer) -> DeviceDescription {
        var properties = BitSet()
        for property in 0...UInt32(INPUT_PROP_MAX) where libevdev_has_property(device, property) == 1 {
            properties.insert(Int(property))
        }
        var codes: [EventType: BitSet] = [:]
        var axes: [EventCode: AxisRange] = [:]
        let maxima: [(UInt32, UInt32)] = [
            (UInt32(EV_SYN), UInt32(SYN_MAX)), (UInt32(EV_KEY), UInt32(KEY_MAX)), (UInt32(EV_REL), UInt32(REL_MAX)),
            (UInt32(EV_ABS), UInt32(ABS_MAX)), (UInt32(EV_MSC), UInt32(MSC_MAX)), (UInt32(EV_FF), UInt32(FF_MAX)),
        ]
        for (type, maximum) in maxima where libevdev_has_event_type(device, type) == 1 {
            var set = BitSet()
            for code in 0...maximum where libevdev_has_event_code(device, type, code) == 1 {
                set.insert(Int(code))
                if type == UInt32(EV_ABS), let info = libevdev_get_abs_info(device, code) {
                    axes[EventCode(rawValue: UInt16(code))] = AxisRange(
                        minimum: info.pointee.minimum, maximum: info.pointee.maximum, fuzz: info.pointee.fuzz,
                        flat: info.pointee.flat, resolution: info.pointee.resolution)
                }
            }
            codes[EventType(rawValue: UInt16(type))] = set
        }
        return DeviceDescription(
            name: libevdev_get_name(device).map { String(cString: $0) } ?? "unnamed device",
            identity: DeviceIdentity(
                bus: UInt16(truncatingIfNeeded: libevdev_get_id_bustype(device)),
                vendor: UInt16(truncatingIfNeeded: libevdev_get_id_vendor(device)),
                product: UInt16(truncatingIfNeeded: libevdev_get_id_product(device)),
                version: UInt16(truncatingIfNeeded: libevdev_get_id_version(device))),
            properties: properties, supportedCodes: codes, axes: axes)
    }
}
