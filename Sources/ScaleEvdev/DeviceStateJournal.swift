import CEvdev
import Glibc

/// Keeps libevdev's copy of a device's state current for `EvdevDevice.drain`, which reads the
/// node itself, without calling into libevdev for every event.
///
/// libevdev's state is read only when the kernel drops events (`SYN_DROPPED`): its
/// resynchronisation compares the device's state with what this reader last delivered.
/// Telling it about each event as it is read (`libevdev_set_event_value`) would cost three
/// calls into the library per frame, and under emulation each of those costs far more than
/// its instructions (BENCHMARKS.md, Live). So the journal keeps the newest value of each code
/// (and, for type-B multitouch, of each slot's codes) that changed since libevdev last took
/// them, and hands libevdev those values, one call each, before anything reads libevdev's
/// state (`catchUp`). libevdev's state is a value per code and per slot, so it ends where
/// it would have ended event by event; a touch that streams a thousand pressures costs one
/// call when libevdev is next read, not a thousand, and no event is kept to be replayed
/// into it.
///
/// What libevdev decides per event is decided here instead, with what it would decide it
/// from: whether the device has the code (a bitmap taken once at open), and for type-B
/// multitouch the current slot (an out-of-range slot is capped to the last, as libevdev does)
/// and each slot's tracking ID (a second tracking ID in a slot that has one, or -1 in a slot
/// without one, is dropped, as libevdev's sanitising drops it).
struct DeviceStateJournal {
    private let handle: OpaquePointer
    /// Bit `type << 10 | code` is set when the device has the code (every code has fewer than
    /// 10 bits: KEY_MAX is 0x2ff).
    private let codes: [UInt64]
    /// libevdev's slot count: -1 for a device without type-B multitouch.
    private let slotCount: Int32
    private var currentSlot: Int32 = 0
    private var trackingIDs: [Int32] = []
    /// The newest value of each piece of state: first the codes of the four types libevdev
    /// keeps values of (`typeIndex << 10 | code`), then each slot's multitouch codes
    /// (`slotsStart + slot * codesPerSlot + code - ABS_MT_SLOT - 1`).
    private var newest: [Int32]
    /// The indices of `newest` that changed since libevdev last took them, in the order they
    /// first changed, and the same as a bitmap (so that each goes in the list once).
    private var changed: [Int] = []
    private var isChanged: [UInt64]

    /// Where the slots' codes start in `newest`: 1,024 codes for each of EV_KEY, EV_ABS,
    /// EV_SW and EV_LED come first.
    private static let slotsStart = 4 << 10
    /// The multitouch codes after ABS_MT_SLOT, up to ABS_MAX, that each slot has a value of.
    private static let codesPerSlot = Int(ABS_MAX - ABS_MT_SLOT)

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
        let stateCount = Self.slotsStart + Int(max(slotCount, 0)) * Self.codesPerSlot
        newest = [Int32](repeating: 0, count: stateCount)
        isChanged = [UInt64](repeating: 0, count: (stateCount + 63) / 64)
        takeSlots()
    }

    /// Takes in one event read from the node. - Returns: false for an event that
    /// `libevdev_next_event` would not have delivered; `event` as it would have delivered it
    /// (a capped slot index).
    mutating func admit(_ event: inout input_event) -> Bool {
        guard event.code < 1024, event.type <= UInt16(EV_MAX) else { return false }
        let bit = Int(event.type) << 10 | Int(event.code)
        guard codes[bit >> 6] & (1 << UInt64(bit & 63)) != 0 else { return false }
        let typeIndex: Int
        switch Int32(event.type) {
        case EV_ABS:
            typeIndex = 1
            if slotCount > 0, event.code == UInt16(ABS_MT_SLOT) {
                if event.value < 0 || event.value >= slotCount { event.value = slotCount - 1 }
                currentSlot = event.value
            } else if slotCount > 0, event.code > UInt16(ABS_MT_SLOT), trackingIDs.indices.contains(Int(currentSlot)) {
                if event.code == UInt16(ABS_MT_TRACKING_ID) {
                    let held = trackingIDs[Int(currentSlot)]
                    if (event.value == -1) == (held == -1) { return false }
                    trackingIDs[Int(currentSlot)] = event.value
                }
                record(Self.slotsStart + Int(currentSlot) * Self.codesPerSlot + Int(event.code) - Int(ABS_MT_SLOT) - 1, event.value)
                return true
            }
        case EV_KEY: typeIndex = 0
        case EV_SW: typeIndex = 2
        case EV_LED: typeIndex = 3
        default: return true
        }
        record(typeIndex << 10 | Int(event.code), event.value)
        return true
    }

    private mutating func record(_ index: Int, _ value: Int32) {
        newest[index] = value
        let mask: UInt64 = 1 << UInt64(index & 63)
        guard isChanged[index >> 6] & mask == 0 else { return }
        isChanged[index >> 6] |= mask
        changed.append(index)
    }

    /// Hands libevdev the newest value of everything that changed: from here libevdev's
    /// state is the device's as this reader has delivered it.
    mutating func catchUp() {
        guard !changed.isEmpty else { return }
        let slotEvent = 1 << 10 | Int(ABS_MT_SLOT)
        var slotsChanged = false
        for index in changed {
            isChanged[index >> 6] &= ~(1 << UInt64(index & 63))
            if index >= Self.slotsStart {
                // Straight into the slot: libevdev_set_event_value would take the slot to be
                // the current one, and would refuse a new tracking ID where the old one was
                // lifted in between, which this journal has already sanitised event by event.
                let slotIndex = index - Self.slotsStart
                let code = UInt32(ABS_MT_SLOT) + 1 + UInt32(slotIndex % Self.codesPerSlot)
                _ = libevdev_set_slot_value(handle, UInt32(slotIndex / Self.codesPerSlot), code, newest[index])
                slotsChanged = true
            } else if index == slotEvent, slotCount > 0 {
                slotsChanged = true
            } else {
                _ = libevdev_set_event_value(handle, Self.types[index >> 10], UInt32(index & 1023), newest[index])
            }
        }
        changed.removeAll(keepingCapacity: true)
        // The current slot last, as libevdev's own slot event sets it: its axes' values (what
        // libevdev_get_event_value answers for a multitouch code) are then that slot's.
        if slotsChanged {
            _ = libevdev_set_event_value(handle, UInt32(EV_ABS), UInt32(ABS_MT_SLOT), currentSlot)
        }
    }

    /// The types whose values `newest` keeps, by their index there (`index >> 10`).
    private static let types = [EV_KEY, EV_ABS, EV_SW, EV_LED].map { UInt32($0) }

    /// Takes the slots' state from libevdev, after its resynchronisation rebuilt it.
    mutating func takeSlots() {
        guard slotCount > 0 else { return }
        currentSlot = libevdev_get_current_slot(handle)
        trackingIDs = (0..<UInt32(slotCount)).map { libevdev_get_slot_value(handle, $0, UInt32(ABS_MT_TRACKING_ID)) }
    }
}
