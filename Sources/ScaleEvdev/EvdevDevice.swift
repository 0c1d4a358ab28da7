import CEvdev
import Glibc
import ScaleCore
import ScalePOSIX

/// Why a device could not be opened, with what to do about it.
package struct DeviceOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    package var path: String
    package var errno: Errno

    package init(path: String, errno: Errno) {
        self.path = path
        self.errno = errno
    }

    /// What the user can do about it.
    package var advice: String {
        switch errno {
        case .permissionDenied:
            return "add yourself to group 'input' (sudo usermod -aG input $USER, then log in again) or run the forcescaled service"
        case .noSuchFile, Errno(rawValue: ENODEV):
            return "the device is gone; 'forcescale devices' lists what is there"
        case Errno(rawValue: ENOTTY), Errno(rawValue: EINVAL):
            return "this is not an evdev input device"
        case Errno(rawValue: EBUSY):
            return "another program holds the device for itself (EVIOCGRAB): end it (an 'evtest --grab', a 'forcescale read --grab', a remote-desktop or game tool) and try again"
        default:
            return "'forcescale devices' shows what can be opened"
        }
    }

    package var description: String { "\(path): \(errno) (\(advice))" }
}

/// What one drain of a device's queue found.
package enum DeviceReadOutcome: Equatable, Sendable {
    /// Every queued event was read; wait for the fd to become readable again.
    case drained
    /// The device is gone (`ENODEV`): close it and wait for it to come back.
    case removed
    /// Reading failed in a way that will not heal; stop watching this fd.
    case failed(Errno)
}

/// An evdev device opened through libevdev: its description, its events, and the file
/// descriptor that force feedback writes to.
package final class EvdevDevice {
    package let path: String
    package let descriptor: FileDescriptor
    /// Whether the device was opened read-write (needed to play force feedback).
    package let isWritable: Bool
    package let description: DeviceDescription
    /// The clock the kernel stamps this device's events with: `CLOCK_MONOTONIC`, asked for
    /// when the device is opened (`CLOCK_REALTIME` only where a kernel refused that).
    package let eventClock: clockid_t
    private let handle: OpaquePointer
    /// Where `drain` reads raw events: a few frames of a busy multitouch pad.
    private let batch: UnsafeMutableBufferPointer<input_event>
    /// What `drain` read that libevdev's state has not taken in yet.
    private var journal: DeviceStateJournal

    /// Opens a device without grabbing it, so the desktop keeps its pointer.
    /// - Parameters:
    ///   - path: The event node, e.g. `/dev/input/event5`.
    ///   - wantsWrite: Open read-write for force feedback; falls back to read-only when only
    ///     reading is allowed.
    /// - Throws: `DeviceOpenError` naming the path and what to do.
    package init(path: String, wantsWrite: Bool) throws(DeviceOpenError) {
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
        // and a wall-clock jump cannot stall or flood the readings. A kernel that refuses
        // (none since 3.4) keeps stamping with CLOCK_REALTIME, and `eventClock` says so.
        eventClock = libevdev_set_clock_id(device, CLOCK_MONOTONIC) == 0 ? CLOCK_MONOTONIC : CLOCK_REALTIME
        descriptor = FileDescriptor(rawValue: fd)
        isWritable = writable
        handle = device
        batch = .allocate(capacity: 128)
        journal = DeviceStateJournal(handle: device)
        description = Self.describe(device)
    }

    deinit {
        batch.deallocate()
        libevdev_free(handle)
        try? descriptor.close()
    }

    /// Takes the device for this process alone. Off by default: a grabbed touchpad stops
    /// moving the desktop's pointer.
    package func grab() throws(DeviceOpenError) {
        let status = libevdev_grab(handle, LIBEVDEV_GRAB)
        if status < 0 { throw DeviceOpenError(path: path, errno: Errno(rawValue: -status)) }
    }

    /// Gives a grabbed device back to every reader. Closing the descriptor does too, so a
    /// device is never left taken by a process that ended.
    package func ungrab() {
        // libevdev answers -EINVAL only for a mode it does not know; releasing a device this
        // descriptor does not hold is no error to the kernel.
        _ = libevdev_grab(handle, LIBEVDEV_UNGRAB)
    }

    /// Reads every queued event.
    ///
    /// One `read(2)` per wake-up in the steady state: the kernel's evdev hands out whole
    /// frames (never a frame without its `SYN_REPORT`), so after a read that did not fill the
    /// buffer everything queued has been seen, and the loop's level-triggered epoll wakes the
    /// owner again for the next frame. `libevdev_next_event` reads again whenever its own
    /// queue is empty, so every drain through it would end with a read that returns
    /// `EAGAIN`: two reads per wake-up where one does.
    /// libevdev still keeps the device's state: what the events change goes into it through
    /// ``DeviceStateJournal`` (the newest value of each, whenever it is to be read), so
    /// that on `SYN_DROPPED` its resynchronisation compares the kernel's state with what this
    /// reader last delivered; from a `SYN_DROPPED` on, reading goes through libevdev until the
    /// kernel's queue is empty.
    /// - Parameters:
    ///   - onEvent: Called for each event in order.
    ///   - onResynchronize: Called when the kernel dropped events (`SYN_DROPPED`); the
    ///     events that follow until the next `SYN_REPORT` are libevdev's rebuilt state.
    /// - Returns: Why reading stopped.
    package func drain(onEvent: (InputEvent) -> Void, onResynchronize: () -> Void) -> DeviceReadOutcome {
        let bytes = UnsafeMutableRawBufferPointer(batch)
        while true {
            let count: Int
            do { count = try descriptor.read(into: bytes) / MemoryLayout<input_event>.stride } catch {
                switch error.rawValue {
                case EAGAIN: return .drained
                case ENODEV: return .removed
                default: return .failed(error)
                }
            }
            for index in 0..<count {
                var event = batch[index]
                if event.type == UInt16(EV_SYN), event.code == UInt16(SYN_DROPPED) {
                    // What follows in the batch is stale: libevdev's resynchronisation
                    // discards it with the kernel's queue, as the kernel's documentation asks.
                    journal.catchUp()
                    defer { journal.takeSlots() }
                    return drainThroughLibevdev(droppedAt: event.time, onEvent: onEvent, onResynchronize: onResynchronize)
                }
                guard journal.admit(&event) else { continue }
                onEvent(Self.convert(event))
            }
            // A short read emptied the kernel's queue (0 is an empty read, never a frame).
            if count < batch.count { return .drained }
        }
    }

    /// Reads through libevdev from a `SYN_DROPPED` on, until the kernel's queue is empty:
    /// libevdev rebuilds the state from the device and hands out the difference.
    /// - Parameter droppedAt: The `SYN_DROPPED`'s timestamp, which the rebuilt events carry
    ///   (libevdev stamps them with the last event it read itself, which this reader bypassed).
    private func drainThroughLibevdev(
        droppedAt: timeval, onEvent: (InputEvent) -> Void, onResynchronize: () -> Void
    ) -> DeviceReadOutcome {
        var event = input_event()
        // The first call stands for the SYN_DROPPED this reader has already taken.
        var flags = LIBEVDEV_READ_FLAG_FORCE_SYNC.rawValue
        var stampRebuilt = true
        while true {
            let status = libevdev_next_event(handle, flags, &event)
            switch status {
            case Int32(LIBEVDEV_READ_STATUS_SUCCESS.rawValue):
                onEvent(Self.convert(event))
            case Int32(LIBEVDEV_READ_STATUS_SYNC.rawValue):
                if flags != LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    // A SYN_DROPPED (the forced one first): from now on read libevdev's sync events.
                    onResynchronize()
                    flags = LIBEVDEV_READ_FLAG_SYNC.rawValue
                } else {
                    if stampRebuilt { event.time = droppedAt }
                    onEvent(Self.convert(event))
                }
            case -EAGAIN:
                if flags == LIBEVDEV_READ_FLAG_SYNC.rawValue {
                    // Sync finished: back to the normal queue, which libevdev may hold part of.
                    flags = LIBEVDEV_READ_FLAG_NORMAL.rawValue
                    stampRebuilt = false
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

    /// The device's present state (libevdev's, read when the device was opened and kept
    /// since), whole, as the events that bring a reader that has seen nothing to it: the keys
    /// held down, every absolute axis's value, and every slot's values, each slot's tracking
    /// id first (-1 where no contact is), then a `SYN_REPORT` stamped `time`.
    ///
    /// A pen resting on a tablet or an object on a pad when the scale opens the device is
    /// weighed from the start instead of ignored until it is lifted: the kernel sends no event
    /// for a key that is already down. A slot with no contact still holds the values of its
    /// last one (libevdev reads them all with EVIOCGMTSLOTS at open), and the kernel sends no
    /// ABS_MT_PRESSURE for a new contact whose pressure equals the held value: the reader
    /// must know it to read that contact's first frames right.
    /// - Parameter time: The time the state is read at (the device's clock, `CLOCK_MONOTONIC`).
    /// - Returns: The events; a frame without a contact when nothing touches.
    package func currentState(at time: EventTime) -> [InputEvent] {
        journal.catchUp()
        func event(_ type: Int32, _ code: Int, _ value: Int32) -> InputEvent {
            InputEvent(time: time, type: EventType(rawValue: UInt16(type)), code: EventCode(rawValue: UInt16(code)), value: value)
        }
        var events: [InputEvent] = []
        for code in description.supportedCodes[.key]?.members ?? [] {
            let value = libevdev_get_event_value(handle, UInt32(EV_KEY), UInt32(code))
            if value != 0 { events.append(event(EV_KEY, code, value)) }
        }
        let slotCode = Int(ABS_MT_SLOT)
        let axisCodes = description.axes.keys.map { Int($0.rawValue) }.sorted()
        for code in axisCodes where code < slotCode {
            events.append(event(EV_ABS, code, libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(code))))
        }
        if description.axes[.absMTSlot] != nil {
            // The tracking ID first: it is what starts (or, at -1, ends) a touch in its slot.
            let trackingID = Int(ABS_MT_TRACKING_ID)
            let touchAxes = [trackingID] + axisCodes.filter { $0 > slotCode && $0 != trackingID }
            for slot in 0..<max(0, libevdev_get_num_slots(handle)) {
                events.append(event(EV_ABS, slotCode, slot))
                for code in touchAxes {
                    events.append(event(EV_ABS, code, libevdev_get_slot_value(handle, UInt32(slot), UInt32(code))))
                }
            }
            events.append(event(EV_ABS, slotCode, libevdev_get_current_slot(handle)))
        }
        return events + [event(EV_SYN, Int(SYN_REPORT), 0)]
    }

    /// Whether the device is still plugged in. An unplugged device's descriptor stays open
    /// and reads nothing until it is read (ENODEV), so a device that is only written to (a
    /// separate rumble device) is asked this way. The kernel removes the node from
    /// /dev/input before it marks the device gone (evdev_disconnect), so a watcher of the
    /// directory that sees the node go can still find the descriptor answering: a node that
    /// is gone, or is another device's now, says it too.
    package var isPresent: Bool {
        var version: Int32 = 0
        if CEvdev_driver_version(descriptor.rawValue, &version) != 0, errno == ENODEV { return false }
        var opened = stat()
        var named = stat()
        guard fstat(descriptor.rawValue, &opened) == 0 else { return true }
        // Only a node known to be missing counts: any other failure to look is no news.
        guard stat(path, &named) == 0 else { return errno != ENOENT }
        return named.st_rdev == opened.st_rdev
    }

    /// Writes one event to the device (force-feedback play, stop and gain).
    /// - Throws: `Errno` when the write fails.
    package func write(type: EventType, code: UInt16, value: Int32) throws(Errno) {
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
