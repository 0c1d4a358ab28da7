import Testing
@testable import ScaleCore

@Suite struct ContactTrackerTests {
    func samples(_ device: DeviceDescription, _ script: EventScript) throws -> [FrameSample] { try samples(device, mode: .primary, script) }

    func samples(_ device: DeviceDescription, mode: ContactMode, _ script: EventScript) throws -> [FrameSample] {
        var tracker = ContactTracker(source: try PressureSource.select(for: device), mode: mode)
        return script.events.compactMap { tracker.consume($0) }
    }

    @Test func singleTouchFollowsTheTouchButton() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absPressure, 30)])          // hovering: pressure but no touch
        script.press(at: 10, 40)
        script.pressure(at: 20, 50)
        script.lift(at: 30)
        #expect(try samples(TestDevice.singleTouch(), script) == [
            FrameSample(time: ms(0), contacts: 0, raw: 0),
            FrameSample(time: ms(10), contacts: 1, raw: 40),
            FrameSample(time: ms(20), contacts: 1, raw: 50),
            FrameSample(time: ms(30), contacts: 0, raw: 0),
        ])
    }

    @Test func withoutTouchButtonPressureAboveMinimumIsContact() throws {
        var script = EventScript()
        script.pressure(at: 0, 10)
        script.pressure(at: 10, 10)   // the minimum of this device: no contact
        script.pressure(at: 20, 11)
        let device = TestDevice.singleTouch(min: 10, max: 100, touchButton: false)
        #expect(try samples(device, script).map(\.contacts) == [0, 0, 1])
    }

    @Test func primaryIsTheOldestContactAndHandsOverWhenItLifts() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, 7), (.absolute, .absMTPressure, 100)])
        script.frame(at: 10, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 8), (.absolute, .absMTPressure, 200)])
        // Slot 1 went down first, so it stays primary although slot 0 has the lower index.
        script.frame(at: 20, [(.absolute, .absMTSlot, 1), (.absolute, .absMTPressure, 110)])
        script.frame(at: 30, [(.absolute, .absMTTrackingID, -1)])
        script.frame(at: 40, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, -1)])
        #expect(try samples(TestDevice.multitouch(), script) == [
            FrameSample(time: ms(0), contacts: 1, raw: 100),
            FrameSample(time: ms(10), contacts: 2, raw: 100),
            FrameSample(time: ms(20), contacts: 2, raw: 110),
            FrameSample(time: ms(30), contacts: 1, raw: 200),
            FrameSample(time: ms(40), contacts: 0, raw: 0),
        ])
    }

    @Test func aNewTrackingIDInAUsedSlotIsANewContact() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 1), (.absolute, .absMTPressure, 50)])
        script.frame(at: 10, [(.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, 2), (.absolute, .absMTPressure, 60)])
        // Slot 0 is reused for tracking id 3 without a -1 first: it is now the youngest.
        script.frame(at: 20, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 3), (.absolute, .absMTPressure, 70)])
        #expect(try samples(TestDevice.multitouch(), script).map(\.raw) == [50, 50, 60])
    }

    @Test func sumAndMaxCombineAllContacts() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 1), (.absolute, .absMTPressure, 30),
                             (.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, 2), (.absolute, .absMTPressure, 45)])
        let device = TestDevice.multitouch(min: 10, max: 200)
        // Sum adds the pressures above the minimum: 10 + (30 - 10) + (45 - 10) = 65.
        #expect(try samples(device, mode: .sum, script).map(\.raw) == [65])
        #expect(try samples(device, mode: .max, script).map(\.raw) == [45])
        #expect(try samples(device, mode: .primary, script).map(\.raw) == [30])
    }

    @Test func eventsAfterSynDroppedAreDiscardedUpToTheNextReport() throws {
        var script = EventScript()
        script.press(at: 0, 40)
        script.frame(at: 10, [(.synchronization, .synDropped, 0), (.absolute, .absPressure, 250)])
        script.pressure(at: 20, 60)
        // The frame cut by SYN_DROPPED yields nothing; the one after it is read normally.
        #expect(try samples(TestDevice.singleTouch(), script).map(\.raw) == [40, 60])
    }

    /// A multitouch slot keeps its ABS_MT_PRESSURE across contacts: the kernel sends none for
    /// a new contact whose pressure equals the value the slot holds (input_handle_abs_event
    /// drops an unchanged value), so the held value is the new contact's pressure.
    @Test func aNewContactStartsWithThePressureItsSlotHolds() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 1), (.absolute, .absMTPressure, 614)])
        script.frame(at: 10, [(.absolute, .absMTTrackingID, -1)])
        script.frame(at: 20, [(.absolute, .absMTTrackingID, 2)])
        #expect(try samples(TestDevice.multitouch(), script) == [
            FrameSample(time: ms(0), contacts: 1, raw: 614),
            FrameSample(time: ms(10), contacts: 0, raw: 0),
            FrameSample(time: ms(20), contacts: 1, raw: 614),
        ])
    }

    /// The state a reader is given at open (EvdevDevice.currentState): every slot's values,
    /// an inactive slot's with tracking id -1. It makes no contact, and the next contact in
    /// that slot starts at the held pressure; a slot whose contact rests reads at once.
    @Test func heldValuesOfInactiveSlotsFromTheOpeningStateCarryIntoTheNextContact() throws {
        var script = EventScript()
        script.frame(at: 0, [
            (.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, -1), (.absolute, .absMTPressure, 614),
            (.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, -1), (.absolute, .absMTPressure, 0),
            (.absolute, .absMTSlot, 0),
        ])
        script.frame(at: 10, [(.absolute, .absMTTrackingID, 5)])
        script.frame(at: 20, [(.absolute, .absMTTrackingID, -1)])
        #expect(try samples(TestDevice.multitouch(), script) == [
            FrameSample(time: ms(0), contacts: 0, raw: 0),
            FrameSample(time: ms(10), contacts: 1, raw: 614),
            FrameSample(time: ms(20), contacts: 0, raw: 0),
        ])
        var resting = EventScript()
        resting.frame(at: 0, [
            (.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 9), (.absolute, .absMTPressure, 300),
            (.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, -1), (.absolute, .absMTPressure, 77),
            (.absolute, .absMTSlot, 0),
        ])
        resting.frame(at: 10, [(.absolute, .absMTSlot, 1), (.absolute, .absMTTrackingID, 10)])
        #expect(try samples(TestDevice.multitouch(), mode: .max, resting).map(\.raw) == [300, 300])
        #expect(try samples(TestDevice.multitouch(), mode: .sum, resting).map(\.raw) == [300, 377])
    }

    /// After SYN_DROPPED libevdev sends only what differs from its view (sync_mt_state):
    /// a touch that began during the drop at the held pressure comes as its tracking id alone.
    @Test func aTouchStartedDuringADropAtTheHeldPressureReadsIt() throws {
        var tracker = ContactTracker(source: try PressureSource.select(for: TestDevice.multitouch()), mode: .primary)
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 1), (.absolute, .absMTPressure, 250)])
        script.frame(at: 10, [(.absolute, .absMTTrackingID, -1)])
        var out = script.events.compactMap { tracker.consume($0) }
        _ = tracker.consume(InputEvent(time: ms(20), type: .synchronization, code: .synDropped, value: 0))
        tracker.acceptResynchronizedState()
        var sync = EventScript()
        sync.frame(at: 20, [(.absolute, .absMTSlot, 0), (.absolute, .absMTTrackingID, 2)])
        out += sync.events.compactMap { tracker.consume($0) }
        #expect(out.map(\.raw) == [250, 0, 250])
        #expect(out.map(\.contacts) == [1, 0, 1])
    }

    @Test func outOfRangeSlotsAreIgnoredNotFatal() throws {
        var script = EventScript()
        script.frame(at: 0, [(.absolute, .absMTSlot, 9), (.absolute, .absMTTrackingID, 1), (.absolute, .absMTPressure, 99)])
        script.frame(at: 10, [(.absolute, .absMTSlot, -1), (.absolute, .absMTTrackingID, 2)])
        #expect(try samples(TestDevice.multitouch(slots: 2), script).map(\.contacts) == [0, 0])
    }
}

@Suite struct PressureSourceTests {
    @Test func prefersMultitouchPressure() throws {
        #expect(try PressureSource.select(for: TestDevice.multitouch(slots: 3)) == .multitouch(axis: AxisRange(minimum: 0, maximum: 255), slotCount: 3))
        #expect(try PressureSource.select(for: TestDevice.singleTouch()) == .singleTouch(axis: AxisRange(minimum: 0, maximum: 255), hasTouchButton: true))
    }

    @Test func noPressureAxisIsAnError() {
        let mouse = DeviceDescription(name: "Mouse", axes: [.absX: AxisRange(minimum: 0, maximum: 10)])
        #expect(throws: DeviceSetupError.noPressureAxis(device: "Mouse")) { try PressureSource.select(for: mouse) }
    }

    @Test(arguments: [(Int32(0), Int32(0)), (5, 5), (10, 3)])
    func degenerateRangeIsAnErrorNamingDeviceAndAxis(min: Int32, max: Int32) {
        let device = TestDevice.singleTouch(min: min, max: max, name: "Broken pad")
        #expect(throws: DeviceSetupError.degenerateRange(device: "Broken pad", axis: "ABS_PRESSURE", minimum: min, maximum: max)) {
            try PressureSource.select(for: device)
        }
        let message = DeviceSetupError.degenerateRange(device: "Broken pad", axis: "ABS_PRESSURE", minimum: min, maximum: max).description
        #expect(message.contains("'Broken pad'") && message.contains("ABS_PRESSURE range \(min)..\(max) is degenerate"))
    }

    @Test func aOneStepRangeIsUsable() throws {
        // 0–1 is coarse but not degenerate: force is 0 or 1.
        var pipeline = try ScalePipeline(device: TestDevice.singleTouch(min: 0, max: 1))
        var script = EventScript()
        script.press(at: 0, 1)
        #expect(pipeline.run(script.events).readings.map(\.force) == [1])
    }

    @Test func implausibleSlotRangeIsAnError() {
        var device = TestDevice.multitouch()
        device.axes[.absMTSlot] = AxisRange(minimum: 0, maximum: 2_000_000_000)
        #expect(throws: DeviceSetupError.implausibleSlots(device: "test mt pad", minimum: 0, maximum: 2_000_000_000)) {
            try PressureSource.select(for: device)
        }
    }
}
