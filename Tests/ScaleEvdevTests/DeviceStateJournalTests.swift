import CEvdev
import Glibc
import Testing
@testable import ScaleEvdev

/// The journal against libevdev itself: two libevdev devices without a node (libevdev_new,
/// codes enabled by hand) take the same events, one through the journal, one event by event
/// the way `drain` fed libevdev before the journal (`libevdev_set_event_value` per event,
/// refusals decided by its status). They must deliver the same events and end in the same
/// state.
@Suite struct DeviceStateJournalTests {
    /// A two-slot type-B touchpad with pressure and a button, nothing else.
    static func makePad() -> OpaquePointer {
        let handle = libevdev_new()!
        func enable(_ code: Int32, _ minimum: Int32, _ maximum: Int32) {
            var info = input_absinfo()
            info.minimum = minimum
            info.maximum = maximum
            #expect(libevdev_enable_event_code(handle, UInt32(EV_ABS), UInt32(code), &info) == 0)
        }
        enable(ABS_PRESSURE, 0, 255)
        enable(ABS_MT_SLOT, 0, 1)
        enable(ABS_MT_TRACKING_ID, 0, 65535)
        enable(ABS_MT_PRESSURE, 0, 255)
        #expect(libevdev_enable_event_code(handle, UInt32(EV_KEY), UInt32(BTN_TOUCH), nil) == 0)
        #expect(libevdev_enable_event_type(handle, UInt32(EV_SYN)) == 0)
        return handle
    }

    static func event(_ type: Int32, _ code: Int32, _ value: Int32) -> input_event {
        var event = input_event()
        event.type = UInt16(type)
        event.code = UInt16(code)
        event.value = value
        return event
    }

    /// What `drain` did per event before the journal.
    static func feedDirectly(_ handle: OpaquePointer, _ event: inout input_event) -> Bool {
        let type = UInt32(event.type), code = UInt32(event.code)
        guard libevdev_has_event_code(handle, type, code) == 1 else { return false }
        switch Int32(event.type) {
        case EV_ABS:
            if code == UInt32(ABS_MT_SLOT) {
                let slots = libevdev_get_num_slots(handle)
                if slots > 0, event.value < 0 || event.value >= slots { event.value = slots - 1 }
            }
            let status = libevdev_set_event_value(handle, type, code, event.value)
            return !(status != 0 && code == UInt32(ABS_MT_TRACKING_ID))
        case EV_KEY, EV_LED, EV_SW:
            _ = libevdev_set_event_value(handle, type, code, event.value)
            return true
        default:
            return true
        }
    }

    /// Gives `original` to the journal and, event by event, to `direct`: both must deliver it
    /// or drop it, and deliver the same value.
    static func expectSameDelivery(of original: input_event, through journal: inout DeviceStateJournal, as direct: OpaquePointer) {
        var throughJournal = original, eventByEvent = original
        let admitted = journal.admit(&throughJournal)
        let delivered = feedDirectly(direct, &eventByEvent)
        #expect(admitted == delivered, "type \(original.type) code \(original.code) value \(original.value)")
        #expect(throughJournal.value == eventByEvent.value, "the value delivered for code \(original.code)")
    }

    static func state(_ handle: OpaquePointer) -> [Int32] {
        var values: [Int32] = [libevdev_get_current_slot(handle)]
        for code in [ABS_PRESSURE, ABS_MT_SLOT, ABS_MT_TRACKING_ID, ABS_MT_PRESSURE] {
            values.append(libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(code)))
        }
        values.append(libevdev_get_event_value(handle, UInt32(EV_KEY), UInt32(BTN_TOUCH)))
        for slot in 0..<UInt32(2) {
            for code in [ABS_MT_TRACKING_ID, ABS_MT_PRESSURE] {
                values.append(libevdev_get_slot_value(handle, slot, UInt32(code)))
            }
        }
        return values
    }

    @Test func deliversAndEndsInTheStateThatEventByEventUpdatesGave() {
        let journaled = Self.makePad(), direct = Self.makePad()
        defer { libevdev_free(journaled); libevdev_free(direct) }
        #expect(libevdev_get_num_slots(journaled) == 2)
        var journal = DeviceStateJournal(handle: journaled)

        var events: [input_event] = [
            Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_TRACKING_ID, 7),
            Self.event(EV_ABS, ABS_MT_PRESSURE, 40), Self.event(EV_KEY, BTN_TOUCH, 1),
            Self.event(EV_ABS, ABS_PRESSURE, 40), Self.event(EV_SYN, SYN_REPORT, 0),
            // A second tracking ID in a slot that has one: dropped.
            Self.event(EV_ABS, ABS_MT_TRACKING_ID, 8),
            // An axis the pad does not have: dropped.
            Self.event(EV_ABS, ABS_X, 100),
            // A slot past the last: capped to slot 1, where the touch then goes.
            Self.event(EV_ABS, ABS_MT_SLOT, 5), Self.event(EV_ABS, ABS_MT_TRACKING_ID, 9),
            Self.event(EV_ABS, ABS_MT_PRESSURE, 60), Self.event(EV_SYN, SYN_REPORT, 0),
            // Lifting a slot without a touch: dropped; lifting slot 1's touch: kept.
            Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_TRACKING_ID, -1),
            Self.event(EV_ABS, ABS_MT_TRACKING_ID, -1), Self.event(EV_ABS, ABS_MT_SLOT, 1),
            Self.event(EV_ABS, ABS_MT_TRACKING_ID, -1), Self.event(EV_SYN, SYN_REPORT, 0),
        ]
        // A touch that streams: hundreds of values of one code, of which libevdev needs the last.
        for step in 0..<Int32(300) {
            events.append(Self.event(EV_ABS, ABS_PRESSURE, step % 256))
            events.append(Self.event(EV_SYN, SYN_REPORT, 0))
        }
        events.append(Self.event(EV_KEY, BTN_TOUCH, 0))

        for original in events { Self.expectSameDelivery(of: original, through: &journal, as: direct) }
        journal.catchUp()
        #expect(Self.state(journaled) == Self.state(direct))
        #expect(libevdev_get_event_value(journaled, UInt32(EV_ABS), UInt32(ABS_PRESSURE)) == 299 % 256)
    }

    @Test func libevdevTakesTheValuesOnlyWhenCaughtUp() {
        let handle = Self.makePad()
        defer { libevdev_free(handle) }
        var journal = DeviceStateJournal(handle: handle)
        var press = Self.event(EV_ABS, ABS_PRESSURE, 90)
        let admitted = journal.admit(&press)
        #expect(admitted)
        #expect(libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(ABS_PRESSURE)) == 0, "queued, not yet in libevdev")
        journal.catchUp()
        #expect(libevdev_get_event_value(handle, UInt32(EV_ABS), UInt32(ABS_PRESSURE)) == 90)
    }

    /// Between two catch-ups a slot's touch is lifted and a new one put down, the current slot
    /// moves back and forth, and a slot that is not current changes: libevdev, given only the
    /// newest values, ends as it did event by event (the new touch's tracking ID is not refused
    /// for following another, and the multitouch axes read as the current slot's). Caught up
    /// twice, so that the second starts from the first's state.
    @Test func newestValuesEndWhereEveryEventDid() {
        let journaled = Self.makePad(), direct = Self.makePad()
        defer { libevdev_free(journaled); libevdev_free(direct) }
        var journal = DeviceStateJournal(handle: journaled)
        let periods: [[input_event]] = [
            [
                Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_TRACKING_ID, 1),
                Self.event(EV_ABS, ABS_MT_PRESSURE, 30), Self.event(EV_ABS, ABS_MT_SLOT, 1),
                Self.event(EV_ABS, ABS_MT_TRACKING_ID, 2), Self.event(EV_ABS, ABS_MT_PRESSURE, 50),
                Self.event(EV_KEY, BTN_TOUCH, 1), Self.event(EV_SYN, SYN_REPORT, 0),
                Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_PRESSURE, 35),
                Self.event(EV_SYN, SYN_REPORT, 0),
            ],
            [
                // Slot 0's touch lifted and a new one down, while slot 1 is current for a while.
                Self.event(EV_ABS, ABS_MT_TRACKING_ID, -1), Self.event(EV_ABS, ABS_MT_SLOT, 1),
                Self.event(EV_ABS, ABS_MT_PRESSURE, 55), Self.event(EV_SYN, SYN_REPORT, 0),
                Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_TRACKING_ID, 3),
                Self.event(EV_ABS, ABS_MT_PRESSURE, 20), Self.event(EV_ABS, ABS_MT_SLOT, 1),
                Self.event(EV_ABS, ABS_MT_PRESSURE, 60), Self.event(EV_SYN, SYN_REPORT, 0),
                // Back in slot 0, its pressure changes last.
                Self.event(EV_ABS, ABS_MT_SLOT, 0), Self.event(EV_ABS, ABS_MT_PRESSURE, 25),
                Self.event(EV_KEY, BTN_TOUCH, 0), Self.event(EV_KEY, BTN_TOUCH, 1),
                Self.event(EV_SYN, SYN_REPORT, 0),
            ],
        ]
        for events in periods {
            for original in events { Self.expectSameDelivery(of: original, through: &journal, as: direct) }
            journal.catchUp()
            #expect(Self.state(journaled) == Self.state(direct))
        }
        #expect(libevdev_get_slot_value(journaled, 0, UInt32(ABS_MT_TRACKING_ID)) == 3)
        #expect(libevdev_get_event_value(journaled, UInt32(EV_ABS), UInt32(ABS_MT_PRESSURE)) == 25)
    }

    @Test func slotsAreTakenBackFromLibevdevAfterItRebuiltThem() {
        let handle = Self.makePad()
        defer { libevdev_free(handle) }
        var journal = DeviceStateJournal(handle: handle)
        // libevdev's resynchronisation put a touch in slot 1 and made it current.
        _ = libevdev_set_slot_value(handle, 1, UInt32(ABS_MT_TRACKING_ID), 12)
        _ = libevdev_set_event_value(handle, UInt32(EV_ABS), UInt32(ABS_MT_SLOT), 1)
        journal.takeSlots()
        var again = Self.event(EV_ABS, ABS_MT_TRACKING_ID, 13)
        let secondTouch = journal.admit(&again)
        #expect(!secondTouch, "slot 1 already has a touch")
        var lift = Self.event(EV_ABS, ABS_MT_TRACKING_ID, -1)
        let lifted = journal.admit(&lift)
        #expect(lifted)
    }
}
