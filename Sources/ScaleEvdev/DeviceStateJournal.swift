import CEvdev
import Glibc

/// Keeps libevdev's copy of a device's state current for `EvdevDevice.drain`, which reads the
/// node itself, without calling into libevdev for every event.
///
/// libevdev's state is read only when the kernel drops events (`SYN_DROPPED`): its
/// resynchronisation compares the device's state with what this reader last delivered.
/// Telling it about each event as it is read (`libevdev_set_event_value`) cost three calls
/// into the library per frame, and under emulation each of those costs far more than its
/// instructions (BENCHMARKS.md, Live). So the events that change state are queued here and
/// handed to libevdev in order, through the same `libevdev_set_event_value`, when the queue
/// is full and before anything reads libevdev's state (`catchUp`): libevdev ends in the state
/// it would have had event by event.
///
/// What libevdev decides per event is decided here instead, with what it would decide it
/// from: whether the device has the code (a bitmap taken once at open), and for type-B
/// multitouch the current slot (an out-of-range slot is capped to the last, as libevdev does)
/// and each slot's tracking ID (a second tracking ID in a slot that has one, or -1 in a slot
/// without one, is dropped, as libevdev's sanitising drops it).
struct DeviceStateJournal {
    /// How many state-changing events wait before they go into libevdev.
    static let capacity = 256

    private let handle: OpaquePointer
    /// Bit `type << 10 | code` is set when the device has the code (every code has fewer than
    /// 10 bits: KEY_MAX is 0x2ff).
    private let codes: [UInt64]
    /// libevdev's slot count: -1 for a device without type-B multitouch.
    private let slotCount: Int32
    private var currentSlot: Int32 = 0
    private var trackingIDs: [Int32] = []
    private var pending: [input_event] = []

    init(handle: OpaquePointer) {
        self.handle = handle
        var codes = [UInt64](repeating: 0, count: (Int(EV_MAX) + 1) << 10 / 64)
        for type in 0...UInt32(EV_MAX) where libevdev_has_event_type(handle, type) == 1 {
            // EV_SYN has no code bitmap: libevdev takes every code of a type the device has.
            let maximum = type == UInt32(EV_SYN) ? 1023 : libevdev_event_type_get_max(type)
            guard maximum >= 0 else { continue }
            for code in 0...UInt32(min(maximum, 1023))
            where type == UInt32(EV_SYN) || libevdev_has_event_code(handle, type, code) == 1 {
                let bit = Int(type) << 10 | Int(code)
                codes[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }
        self.codes = codes
        slotCount = libevdev_get_num_slots(handle)
        pending.reserveCapacity(Self.capacity)
        takeSlots()
    }

    /// Takes in one event read from the node. - Returns: false for an event that
    /// `libevdev_next_event` would not have delivered; `event` as it would have delivered it
    /// (a capped slot index).
    mutating func admit(_ event: inout input_event) -> Bool {
        guard event.code < 1024, event.type <= UInt16(EV_MAX) else { return false }
        let bit = Int(event.type) << 10 | Int(event.code)
        guard codes[bit >> 6] & (1 << UInt64(bit & 63)) != 0 else { return false }
        switch Int32(event.type) {
        case EV_ABS:
            if slotCount >= 0, event.code == UInt16(ABS_MT_SLOT) {
                if event.value < 0 || event.value >= slotCount { event.value = slotCount - 1 }
                currentSlot = event.value
            } else if slotCount >= 0, event.code == UInt16(ABS_MT_TRACKING_ID), trackingIDs.indices.contains(Int(currentSlot)) {
                let held = trackingIDs[Int(currentSlot)]
                if (event.value == -1) == (held == -1) { return false }
                trackingIDs[Int(currentSlot)] = event.value
            }
        case EV_KEY, EV_LED, EV_SW:
            break
        default:
            return true
        }
        if pending.count == Self.capacity { catchUp() }
        pending.append(event)
        return true
    }

    /// Hands every queued event to libevdev, in order: from here libevdev's state is the
    /// device's as this reader has delivered it.
    mutating func catchUp() {
        for event in pending {
            _ = libevdev_set_event_value(handle, UInt32(event.type), UInt32(event.code), event.value)
        }
        pending.removeAll(keepingCapacity: true)
    }

    /// Takes the slots' state from libevdev, after its resynchronisation rebuilt it.
    mutating func takeSlots() {
        guard slotCount >= 0 else { return }
        currentSlot = libevdev_get_current_slot(handle)
        trackingIDs = (0..<UInt32(slotCount)).map { libevdev_get_slot_value(handle, $0, UInt32(ABS_MT_TRACKING_ID)) }
    }
}
