import CEvdev
import Foundation
import Glibc

/// One event to inject: type, code, value (the kernel stamps the time).
public struct Event: Sendable {
    public var type: Int32
    public var code: Int32
    public var value: Int32

    public init(_ type: Int32, _ code: Int32, _ value: Int32) {
        self.type = type
        self.code = code
        self.value = value
    }

    public static func abs(_ code: Int32, _ value: Int32) -> Event { Event(EV_ABS, code, value) }
    public static func key(_ code: Int32, _ value: Int32) -> Event { Event(EV_KEY, code, value) }
    public static let report = Event(EV_SYN, SYN_REPORT, 0)
}

/// What the device side saw of force feedback: the kernel hands every upload and erase to
/// the uinput fd as a request that must be answered, and every play or stop as an `EV_FF` event.
public struct ForceFeedbackLog: Sendable {
    public struct Upload: Sendable {
        public var requestID: UInt32
        public var effectID: Int16
        public var type: UInt16
        public var length: UInt16
        /// FF_RUMBLE's motor magnitudes (0 for other types).
        public var strong: UInt16
        public var weak: UInt16
        /// The effect id was already uploaded (an update in place), from `old`.
        public var replacedID: Int16?
        /// FF_HAPTIC's waveform (a usage of the HID haptics page) and intensity in percent
        /// (0 for other types).
        public var hapticUsage: UInt16 = 0
        public var intensity: UInt16 = 0
        /// Whether the device side accepted it (its table may refuse it).
        public var accepted = true
    }

    public var uploads: [Upload] = []
    public var erases: [Int32] = []
    /// For each erase, how many plays had come before it (the uinput fd delivers plays and
    /// requests in the order they were made, so an erase sees every play made before it).
    public var playsBeforeErase: [Int] = []
    public var plays = 0
    public var stops = 0
    public var gains: [Int32] = []
    /// Play counts by effect id.
    public var playsByEffect: [Int: Int] = [:]
    /// Everything in order ("upload 0", "play 0", "stop 0", "erase 0", "gain 65535").
    public var sequence: [String] = []
    /// The markers of `VirtualDevice.queueMarker`, with what had been recorded before each.
    public struct Marker: Sendable {
        public var number: Int
        public var plays: Int
        public var uploads: Int
        public var erases: Int
    }

    public var markers: [Marker] = []
    /// Requests that could not be answered (an ioctl failed).
    public var problems: [String] = []
    /// For each play, in order: `CLOCK_MONOTONIC` seconds when the service thread's `read`
    /// returned it, and the time the kernel stamped on the `EV_FF` event (uinput stamps it
    /// with the monotonic clock when the player's write reaches the device).
    public var playReadTimes: [Double] = []
    public var playStampTimes: [Double] = []
    /// The effect id of each play, in the same order.
    public var playEffects: [Int] = []
}

/// A uinput device built from a `DeviceTable`, on the real kernel. Events are injected with
/// `send`; a thread of its own answers force-feedback requests (the uploader blocks until
/// the device side answers, up to 30 s) and counts plays.
public final class VirtualDevice: @unchecked Sendable {
    public let table: DeviceTable
    public let descriptor: Int32
    /// e.g. "input12".
    public let sysname: String
    /// e.g. "/dev/input/event7".
    public let node: String

    private let lock = NSLock()
    private var log = ForceFeedbackLog()
    private var servicing = false
    private var serviceDone = false
    private var nextMarker = 0
    private var destroyed = false

    /// Creates the device and waits for its event node.
    /// - Throws: `DeviceError` naming what failed.
    public init(_ table: DeviceTable) throws {
        self.table = table
        let fd = Glibc.open("/dev/uinput", O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw DeviceError("/dev/uinput: \(String(cString: strerror(errno)))") }
        func fail(_ what: String) -> DeviceError {
            let error = DeviceError("\(table.name): \(what): \(String(cString: strerror(errno)))")
            Glibc.close(fd)
            return error
        }
        /// Declares an event type and its codes (`setBit` is the type's UI_SET_*BIT).
        func declare(_ type: Int32, _ typeName: String, _ codes: [Int32], _ bitName: String, _ setBit: (Int32, Int32) -> Int32) throws {
            guard !codes.isEmpty else { return }
            guard CEvdev_uinput_set_event_bit(fd, type) == 0 else { throw fail("UI_SET_EVBIT \(typeName)") }
            for code in codes {
                guard setBit(fd, code) == 0 else { throw fail("\(bitName) \(code)") }
            }
        }
        try declare(EV_KEY, "EV_KEY", table.keys, "UI_SET_KEYBIT", CEvdev_uinput_set_key_bit)
        if !table.axes.isEmpty {
            guard CEvdev_uinput_set_event_bit(fd, EV_ABS) == 0 else { throw fail("UI_SET_EVBIT EV_ABS") }
            for axis in table.axes {
                guard CEvdev_uinput_set_abs_bit(fd, axis.code) == 0 else { throw fail("UI_SET_ABSBIT \(axis.code)") }
                var setup = uinput_abs_setup()
                setup.code = UInt16(axis.code)
                setup.absinfo.minimum = axis.minimum
                setup.absinfo.maximum = axis.maximum
                setup.absinfo.fuzz = axis.fuzz
                setup.absinfo.flat = axis.flat
                setup.absinfo.resolution = axis.resolution
                setup.absinfo.value = axis.minimum
                guard CEvdev_uinput_abs_setup(fd, &setup) == 0 else { throw fail("UI_ABS_SETUP \(axis.code)") }
            }
        }
        try declare(EV_REL, "EV_REL", table.relativeAxes, "UI_SET_RELBIT", CEvdev_uinput_set_rel_bit)
        try declare(EV_FF, "EV_FF", table.forceFeedback, "UI_SET_FFBIT", CEvdev_uinput_set_ff_bit)
        for property in table.properties {
            guard CEvdev_uinput_set_property_bit(fd, property) == 0 else { throw fail("UI_SET_PROPBIT \(property)") }
        }
        var setup = uinput_setup()
        setup.id.bustype = table.bus
        setup.id.vendor = table.vendor
        setup.id.product = table.product
        setup.id.version = table.version
        setup.ff_effects_max = table.effectsMax
        withUnsafeMutableBytes(of: &setup.name) { bytes in
            let name = Array(table.name.utf8.prefix(bytes.count - 1))
            bytes.copyBytes(from: name)
            bytes[name.count] = 0
        }
        guard CEvdev_uinput_setup(fd, &setup) == 0 else { throw fail("UI_DEV_SETUP") }
        guard CEvdev_uinput_create(fd) == 0 else { throw fail("UI_DEV_CREATE") }

        var buffer = [CChar](repeating: 0, count: 64)
        guard CEvdev_uinput_sysname(fd, &buffer, UInt32(buffer.count)) >= 0 else { throw fail("UI_GET_SYSNAME") }
        let sysname = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)

        // /sys/devices/virtual/input/inputN/eventM, then /dev/input/eventM from devtmpfs.
        var node: String?
        waitUntil(Self.nodeLimit) {
            let folder = "/sys/devices/virtual/input/\(sysname)"
            if let event = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.first(where: { $0.hasPrefix("event") }) {
                node = "/dev/input/" + event
                return fileExists(node!)
            }
            return false
        }
        guard let node, fileExists(node) else {
            _ = CEvdev_uinput_destroy(fd)
            Glibc.close(fd)
            throw DeviceError("\(table.name): waited \(Int(Self.nodeLimit)) s for the event node of \(sysname) in /sys and /dev/input; it did not come")
        }
        descriptor = fd
        self.sysname = sysname
        self.node = node
        if !table.forceFeedback.isEmpty { startService() }
    }

    /// How long the kernel may take to make or remove a device's nodes (devtmpfs, sysfs):
    /// well under a second on an idle VM.
    static let nodeLimit = 60.0

    deinit { destroy() }

    /// Removes the device (an unplug) and waits for its sysfs entry to go.
    public func destroy() {
        lock.lock()
        if destroyed { lock.unlock(); return }
        destroyed = true
        let wasServicing = servicing
        servicing = false
        lock.unlock()
        if wasServicing {
            // The service thread polls in 50 ms steps; it must be done before the fd closes
            // (a later open could reuse the number).
            let done = waitUntil(Self.nodeLimit) { lock.lock(); defer { lock.unlock() }; return serviceDone }
            if !done { note("\(table.name): waited \(Int(Self.nodeLimit)) s for its FF service thread to stop; it did not") }
        }
        _ = CEvdev_uinput_destroy(descriptor)
        Glibc.close(descriptor)
        let gone = waitUntil(Self.nodeLimit) { !fileExists("/sys/devices/virtual/input/\(sysname)") }
        if !gone { note("\(table.name): waited \(Int(Self.nodeLimit)) s for /sys/devices/virtual/input/\(sysname) to go; it is still there") }
    }

    // MARK: - Injecting

    /// Writes events in one `write`, as a driver would deliver a burst.
    @discardableResult
    public func send(_ events: [Event]) -> Bool {
        var raw = events.map { event -> input_event in
            var entry = input_event()
            entry.type = UInt16(event.type)
            entry.code = UInt16(event.code)
            entry.value = event.value
            return entry
        }
        let size = MemoryLayout<input_event>.stride
        var offset = 0
        let total = raw.count * size
        while offset < total {
            let written = raw.withUnsafeMutableBytes { Glibc.write(descriptor, $0.baseAddress! + offset, total - offset) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                note("\(table.name): write to uinput failed: \(String(cString: strerror(errno)))")
                return false
            }
            offset += written
        }
        return true
    }

    /// One frame: the events, then `SYN_REPORT`.
    @discardableResult
    public func frame(_ events: [Event]) -> Bool { send(events + [.report]) }

    // MARK: - Force feedback, the device side

    public var forceFeedback: ForceFeedbackLog { lock.lock(); defer { lock.unlock() }; return log }

    /// Puts a marker into the device's force-feedback stream, behind everything already
    /// queued on the uinput fd: an `FF_GAIN` event written to the event node, which the
    /// kernel hands to the device side like any play or request (FF devices of the tables
    /// declare FF_GAIN). Once `hasRecorded(marker)` holds, every play, stop, upload and erase
    /// that a program made before the marker was written is in the log: the uinput fd
    /// delivers them in the order they were made. So a check of "no more plays" or "no
    /// erase" can wait for the marker instead of for time.
    /// - Returns: The marker's number, or `nil` when it could not be written.
    public func queueMarker() -> Int? {
        guard table.forceFeedback.contains(FF_GAIN) else { return nil }
        lock.lock()
        nextMarker += 1
        let number = nextMarker
        lock.unlock()
        let fd = Glibc.open(node, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else {
            note("\(table.name): cannot open \(node) to write an FF marker: \(String(cString: strerror(errno)))")
            return nil
        }
        defer { Glibc.close(fd) }
        var event = input_event()
        event.type = UInt16(EV_FF)
        event.code = UInt16(FF_GAIN)
        event.value = Self.markerBase + Int32(number)
        let written = withUnsafeBytes(of: &event) { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == MemoryLayout<input_event>.size else {
            note("\(table.name): writing an FF marker to \(node) failed: \(String(cString: strerror(errno)))")
            return nil
        }
        return number
    }

    /// Whether the device side has seen marker `number` (see `queueMarker`).
    public func hasRecorded(marker number: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return log.markers.contains { $0.number == number }
    }

    /// A gain no scenario sets (forcescale sets one only for --rumble-intensity below 1):
    /// markers are 0xfe00 + n.
    static let markerBase: Int32 = 0xfe00

    private func startService() {
        lock.lock()
        servicing = true
        lock.unlock()
        Thread.detachNewThread { [self] in
            let size = MemoryLayout<input_event>.stride
            var events = [input_event](repeating: input_event(), count: 64)
            while true {
                lock.lock()
                let keepGoing = servicing
                lock.unlock()
                guard keepGoing else { break }
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = events.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                let readAt = Clock.now()
                guard count >= size else { continue }
                for index in 0..<(count / size) { handle(events[index], readAt: readAt) }
                Changes.announce()
            }
            lock.lock()
            serviceDone = true
            lock.unlock()
            Changes.announce()
        }
    }

    private func handle(_ event: input_event, readAt: Double) {
        if Int32(event.type) == EV_UINPUT {
            switch Int32(event.code) {
            case UI_FF_UPLOAD:
                var upload = uinput_ff_upload()
                // The request id travels in the event's value.
                upload.request_id = UInt32(bitPattern: event.value)
                guard CEvdev_uinput_begin_upload(descriptor, &upload) == 0 else {
                    record { $0.problems.append("UI_BEGIN_FF_UPLOAD \(event.value): \(String(cString: strerror(errno)))") }
                    return
                }
                let haptic = upload.effect.type == UInt16(CEVDEV_FF_HAPTIC)
                let usage = haptic ? withUnsafePointer(to: upload.effect) { CEvdev_haptic_usage($0) } : 0
                // A slow or refusing device, as its table says.
                let refusal = table.refusedHapticUsages.contains(usage) ? EINVAL : table.uploadError
                let entry = ForceFeedbackLog.Upload(
                    requestID: upload.request_id, effectID: upload.effect.id, type: upload.effect.type,
                    length: upload.effect.replay.length,
                    strong: upload.effect.type == UInt16(FF_RUMBLE) ? upload.effect.u.rumble.strong_magnitude : 0,
                    weak: upload.effect.type == UInt16(FF_RUMBLE) ? upload.effect.u.rumble.weak_magnitude : 0,
                    replacedID: upload.old.type != 0 ? upload.old.id : nil,
                    hapticUsage: usage,
                    intensity: haptic ? withUnsafePointer(to: upload.effect) { CEvdev_haptic_intensity($0) } : 0,
                    accepted: refusal == 0)
                // Recorded before it is answered: the uploader's ioctl returns only after
                // the answer, so whatever the uploader does next (a notice, its exit) comes
                // after the upload is in the log. (Recording after the answer let scenario b
                // see the reader's notice before its upload.)
                record {
                    $0.uploads.append(entry)
                    $0.sequence.append("upload \(entry.effectID)")
                }
                if table.uploadDelay > 0 { Clock.sleep(table.uploadDelay) }
                upload.retval = -refusal
                guard CEvdev_uinput_end_upload(descriptor, &upload) == 0 else {
                    record { $0.problems.append("UI_END_FF_UPLOAD \(event.value): \(String(cString: strerror(errno)))") }
                    return
                }
            case UI_FF_ERASE:
                var erase = uinput_ff_erase()
                erase.request_id = UInt32(bitPattern: event.value)
                guard CEvdev_uinput_begin_erase(descriptor, &erase) == 0 else {
                    record { $0.problems.append("UI_BEGIN_FF_ERASE \(event.value): \(String(cString: strerror(errno)))") }
                    return
                }
                let id = Int32(erase.effect_id)
                // Recorded before it is answered, as an upload is.
                record {
                    $0.erases.append(id)
                    $0.playsBeforeErase.append($0.plays)
                    $0.sequence.append("erase \(id)")
                }
                erase.retval = 0
                guard CEvdev_uinput_end_erase(descriptor, &erase) == 0 else {
                    record { $0.problems.append("UI_END_FF_ERASE \(event.value): \(String(cString: strerror(errno)))") }
                    return
                }
            default:
                break
            }
        } else if Int32(event.type) == EV_FF {
            let code = Int32(event.code)
            let value = event.value
            record { log in
                if code == FF_GAIN, value > Self.markerBase, value <= Self.markerBase + Int32(nextMarker) {
                    log.markers.append(.init(
                        number: Int(value - Self.markerBase), plays: log.plays, uploads: log.uploads.count, erases: log.erases.count))
                } else if code == FF_GAIN {
                    log.gains.append(value)
                    log.sequence.append("gain \(value)")
                } else if code == FF_AUTOCENTER {
                    log.sequence.append("autocenter \(value)")
                } else if value > 0 {
                    log.plays += 1
                    log.playReadTimes.append(readAt)
                    log.playStampTimes.append(Double(event.time.tv_sec) + Double(event.time.tv_usec) / 1e6)
                    log.playEffects.append(Int(code))
                    log.playsByEffect[Int(code), default: 0] += 1
                    // Keep the sequence short in the 1000-press scenario.
                    if log.plays <= 5 { log.sequence.append("play \(code)") }
                } else {
                    log.stops += 1
                    log.sequence.append("stop \(code)")
                }
            }
        }
    }

    private func record(_ change: (inout ForceFeedbackLog) -> Void) {
        lock.lock()
        change(&log)
        lock.unlock()
    }
}

public struct DeviceError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
