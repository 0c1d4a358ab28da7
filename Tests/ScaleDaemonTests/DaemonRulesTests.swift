import ScaleCore
import ScaleProtocol
import Testing
@testable import ScaleDaemon

/// The daemon's rules without a process, a socket or a device: each request and reading in,
/// the exact lines (as docs/protocol.md writes them) and effects out.
@Suite struct DaemonRulesTests {
    // MARK: - Fixtures

    /// The daemon runs as uid 500; group 600 is `forcescale-control`.
    static let policy = ControlPolicy(daemonUser: 500, group: 600, groupName: "forcescale-control")
    /// A member of the group through a supplementary group.
    static let member = ClientIdentity(id: 1, uid: 1000, gid: 1000, groups: [24, 600])
    /// A user outside the group.
    static let stranger = ClientIdentity(id: 2, uid: 1001, gid: 1001, groups: [24])

    /// A pad of 0–255 at `/dev/input/event5`.
    static let pad = SourceDevice(path: "/dev/input/event5", description: DeviceDescription(
        name: "Test Pressure Pad",
        supportedCodes: [.key: BitSet([Int(EventCode.btnTouch.rawValue)])],
        axes: [.absX: AxisRange(minimum: 0, maximum: 1000), .absPressure: AxisRange(minimum: 0, maximum: 255)]))
    static let tablet = SourceDevice(path: "/dev/input/event9", description: DeviceDescription(
        name: "Test Tablet", axes: [.absPressure: AxisRange(minimum: 0, maximum: 2047)]))

    static func reading(raw: Int32 = 51, grams: Double = 77, contacts: Int = 1, stable: Bool = false, at seconds: Int64 = 8123) -> Reading {
        Reading(
            time: EventTime(microseconds: seconds * 1_000_000 + 401_022), raw: raw, force: Double(raw) / 255, grams: grams,
            saturated: false, contacts: contacts, stable: stable, model: .nominal, steady: stable, steadyThroughout: stable,
            settled: stable ? SettledPressure(mean: Double(raw), standardDeviation: 0, count: 1) : nil)
    }

    /// Rules with the given clients connected (their VERSION greetings discarded).
    static func rules(with clients: [ClientIdentity] = [member, stranger], policy: ControlPolicy = policy) -> DaemonRules {
        var rules = DaemonRules(release: "0.1.0", policy: policy)
        for client in clients { _ = rules.connect(client) }
        return rules
    }

    /// The lines of an outcome for one client, in order.
    static func lines(_ outcome: DaemonRules.Outcome, for client: ClientIdentity) -> [String] {
        outcome.lines.filter { $0.recipients.contains(client.id) }.map(\.text)
    }

    /// The only line of an outcome, which must go to `client` alone.
    static func onlyReply(_ outcome: DaemonRules.Outcome, to client: ClientIdentity) -> String? {
        guard outcome.lines.count == 1, outcome.lines[0].recipients == [client.id], !outcome.lines[0].droppable else { return nil }
        return outcome.lines[0].text
    }

    // MARK: - Greeting and parsing

    @Test func aClientIsGreetedWithVersion() {
        var rules = DaemonRules(release: "0.1.0", policy: Self.policy)
        let outcome = rules.connect(Self.member)
        #expect(Self.onlyReply(outcome, to: Self.member) == #"{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":8}"# + "\n")
        #expect(outcome.effects.isEmpty)
        #expect(rules.clientCount == 1)
    }

    @Test func aLineThatIsNoRequestGetsAnErrorAndTheConnectionStays() {
        var rules = Self.rules()
        let outcome = rules.handle(line: Array(#"{"class":"poll"}"#.utf8), from: Self.member, serving: [Self.pad])
        #expect(Self.onlyReply(outcome, to: Self.member) == #"{"class":"ERROR","message":"unknown class 'poll'"}"# + "\n")
        #expect(outcome.effects.isEmpty)
    }

    @Test func aLineTooLongEndsTheConnection() {
        let outcome = Self.rules().lineTooLong(from: Self.stranger)
        #expect(Self.onlyReply(outcome, to: Self.stranger) == #"{"class":"ERROR","message":"line longer than 65536 bytes"}"# + "\n")
        #expect(outcome.effects == [.close(client: Self.stranger.id)])
    }

    @Test func aClientThatLeftGetsNothing() {
        var rules = Self.rules()
        rules.disconnect(Self.member.id)
        #expect(rules.handle(.poll(), from: Self.member, serving: [Self.pad]) == DaemonRules.Outcome())
        #expect(rules.clientCount == 1)
    }

    // MARK: - Authorisation

    @Test(arguments: [
        ClientRequest.tare(), .calibrate(grams: 100), .calibration(reset: true), .rumble(pattern: HapticPattern.success),
    ])
    func onlyRootTheDaemonsUserAndTheGroupMayChangeState(_ request: ClientRequest) {
        var rules = Self.rules()
        let refused = rules.handle(request, from: Self.stranger, serving: [Self.pad])
        #expect(Self.onlyReply(refused, to: Self.stranger)
            == #"{"class":"ERROR","message":"permission denied: only root, the daemon's user or members of group 'forcescale-control' may \#(request.className)","request":"\#(request.className)"}"# + "\n")
        #expect(refused.effects.isEmpty)
        #expect(refused.audit == .init(level: .notice, message: "client 2 asked for \(request.className): refused, not one of root, the daemon's user or members of group 'forcescale-control'"))
        #expect(rules.calibration(of: "event5") == .none)

        let root = ClientIdentity(id: 3, uid: 0, gid: 0)
        let daemonUser = ClientIdentity(id: 4, uid: 500, gid: 500)
        let primaryMember = ClientIdentity(id: 5, uid: 1002, gid: 600)
        for allowed in [Self.member, root, daemonUser, primaryMember] {
            #expect(Self.policy.mayControl(allowed), "\(allowed)")
        }
        #expect(!Self.policy.mayControl(ClientIdentity(id: 6, uid: nil, gid: nil)), "unknown credentials may only read")
    }

    @Test func withoutTheGroupOnlyRootAndTheDaemonsUserMay() {
        let policy = ControlPolicy(daemonUser: 500, group: nil, groupName: "forcescale-control")
        var rules = Self.rules(policy: policy)
        #expect(Self.onlyReply(rules.handle(.tare(), from: Self.member, serving: [Self.pad]), to: Self.member)
            == #"{"class":"ERROR","message":"permission denied: only root or the daemon's user (group 'forcescale-control' does not exist) may TARE","request":"TARE"}"# + "\n")
        #expect(policy.mayControl(ClientIdentity(id: 3, uid: 0, gid: 0)))
    }

    @Test func everyControlRequestIsLoggedWithWhoAskedAllowedOrRefused() {
        var rules = Self.rules()
        let asker = ClientIdentity(id: 7, label: "client 7 (pid 4242, uid 1001, gid 1001)", uid: 1001, gid: 1001, groups: [24])
        let member = ClientIdentity(id: 8, label: "client 8 (pid 4343, uid 1000, gid 1000)", uid: 1000, gid: 1000, groups: [600])
        _ = rules.connect(asker)
        _ = rules.connect(member)
        let refusedGrab = rules.handle(.grab(enable: true, seconds: 10, device: "event5"), from: asker, serving: [Self.pad])
        #expect(refusedGrab.audit == .init(level: .notice, message: "client 7 (pid 4242, uid 1001, gid 1001) asked for GRAB of event5: refused, not one of root, the daemon's user or members of group 'forcescale-control'"))
        let allowedTare = rules.handle(.tare(device: "event5"), from: member, serving: [Self.pad])
        #expect(allowedTare.audit == .init(level: .info, message: "client 8 (pid 4343, uid 1000, gid 1000) asked for TARE of event5: allowed"))
        let allowedRumble = rules.handle(.rumble(pattern: HapticPattern.success), from: member, serving: [Self.pad])
        #expect(allowedRumble.audit == .init(level: .info, message: "client 8 (pid 4343, uid 1000, gid 1000) asked for RUMBLE: allowed"))
        // Reading is not control: nothing to audit.
        #expect(rules.handle(.poll(), from: asker, serving: [Self.pad]).audit == nil)
    }

    @Test func aClientPastMaxClientsIsToldWhyAndLetGo() {
        var rules = DaemonRules(release: "0.1.0", policy: Self.policy, maximumClients: 2)
        _ = rules.connect(Self.member)
        _ = rules.connect(Self.stranger)
        let third = ClientIdentity(id: 3, label: "client 3 (pid 99, uid 1002, gid 1002)", uid: 1002, gid: 1002)
        let refused = rules.connect(third)
        #expect(Self.onlyReply(refused, to: third)
            == #"{"class":"ERROR","message":"too many clients: 2 are connected, the daemon's max-clients; close one, or raise max-clients in forcescale.conf"}"# + "\n")
        #expect(refused.effects == [.close(client: 3), .log(.warning, "client 3 (pid 99, uid 1002, gid 1002) refused: max-clients 2 are connected")])
        #expect(rules.clientCount == 2)
        // It is not served, even if a line of it arrives before the close.
        #expect(rules.handle(.poll(), from: third, serving: [Self.pad]) == DaemonRules.Outcome())
        // Once one leaves, the next is greeted.
        rules.disconnect(Self.stranger.id)
        #expect(Self.onlyReply(rules.connect(third), to: third)?.contains(#""class":"VERSION""#) == true)
    }

    @Test func anyoneMayRead() {
        var rules = Self.rules()
        #expect(Self.onlyReply(rules.handle(.watch(enable: true, device: nil), from: Self.stranger, serving: [Self.pad]), to: Self.stranger)
            == #"{"class":"WATCH","enable":true}"# + "\n")
        #expect(Self.onlyReply(rules.handle(.calibration(reset: false), from: Self.stranger, serving: [Self.pad]), to: Self.stranger)
            == #"{"class":"CALIBRATION","device":"event5","points":0,"curve":[],"tare":0.0}"# + "\n")
        #expect(rules.handle(.status(), from: Self.stranger, serving: [Self.pad]).effects == [.reportStatus(client: Self.stranger.id, device: nil)])
        #expect(rules.handle(.devices, from: Self.stranger, serving: []).effects == [.listDevices(client: Self.stranger.id)])
    }

    // MARK: - Tare

    @Test func tareTakesTheWeightOnThePadAndSavesIt() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.reading(grams: 31.5)), from: Self.pad)
        let outcome = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        #expect(outcome.lines.isEmpty, "the reply waits for the save")
        var tared = Calibration.none
        tared.tareGrams = 31.5
        #expect(rules.calibration(of: "event5") == tared)
        #expect(outcome.effects == [
            .applyCalibration(tared, device: Self.pad),
            .saveCalibration(tared, device: Self.pad, confirmation: .init(
                client: Self.member.id, request: .tare(), reply: #"{"class":"TARE","device":"event5","grams":31.5}"# + "\n",
                failure: "applied but not saved")),
        ])
    }

    /// A resting weight is tared at its settled weight, not at its last frame's.
    @Test func tareTakesTheSettledWeightOfAStableReading() {
        var rules = Self.rules()
        var stable = Self.reading(grams: 32.9, stable: true)
        stable.settledGrams = 31.4
        _ = rules.receive(.reading(stable), from: Self.pad)
        _ = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        #expect(rules.calibration(of: "event5").tareGrams == 31.4)
    }

    @Test func tareWithNothingOnThePadClearsIt() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.reading(grams: 40)), from: Self.pad)
        _ = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        _ = rules.receive(.reading(Self.reading(raw: 0, grams: 0, contacts: 0)), from: Self.pad)
        let outcome = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        #expect(rules.calibration(of: "event5").tareGrams == 0)
        guard case .saveCalibration(_, _, let confirmation) = outcome.effects.last else {
            Issue.record("no save: \(outcome.effects)")
            return
        }
        #expect(confirmation.reply == #"{"class":"TARE","device":"event5","grams":0.0}"# + "\n")
    }

    /// A resting weight as the pipeline weighs it by the nominal model: raw 51 of 0–255 is
    /// 77 g, settled at the same pressure.
    static func resting(raw: Int32 = 51) -> Reading {
        var reading = reading(raw: raw, grams: Double(raw) / 255 * GramModel.nominalFullScale, stable: true)
        reading.settledGrams = reading.grams
        return reading
    }

    /// Two TAREs sent together (a double click, a script that retries) arrive before the next
    /// reading: the second finds the weight already tared and leaves the tare as it is.
    @Test func aSecondTareBeforeTheNextReadingChangesNothing() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.resting()), from: Self.pad)
        _ = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        #expect(rules.calibration(of: "event5").tareGrams == 77)
        let second = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        #expect(abs(rules.calibration(of: "event5").tareGrams - 77) < 1e-9, "\(rules.calibration(of: "event5"))")
        guard case .saveCalibration(_, _, let confirmation)? = second.effects.last else {
            Issue.record("no save: \(second.effects)")
            return
        }
        #expect(confirmation.reply == #"{"class":"TARE","device":"event5","grams":77.0}"# + "\n")
        // POLL, too, answers with the reading as the tare in force weighs it.
        #expect(rules.lastReading(of: "event5")?.grams == 0)
    }

    /// A TARE right after a new curve tares what the new curve weighs, not what the reading
    /// weighed before it.
    @Test func aTareAfterANewCurveTaresByThatCurve() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.resting()), from: Self.pad)
        let points = [CalibrationPoint(raw: 25, grams: 50), CalibrationPoint(raw: 51, grams: 100), CalibrationPoint(raw: 102, grams: 200)]
        _ = rules.handle(.replaceCurve(points: points, preview: false), from: Self.member, serving: [Self.pad])
        #expect(rules.lastReading(of: "event5")?.model == .calibrated)
        _ = rules.handle(.tare(), from: Self.member, serving: [Self.pad])
        let tare = rules.calibration(of: "event5").tareGrams
        #expect(abs(tare - 100) < 1, "tared \(tare) g: the curve gives 100 g at raw 51, the nominal model 77 g")
    }

    @Test func aFailedSaveRepliesWithTheError() {
        let confirmation = DaemonRules.Confirmation(client: 1, request: .tare(), reply: "", failure: "applied but not saved")
        #expect(confirmation.failureLine("/var/lib/forcescale: Permission denied")
            == #"{"class":"ERROR","message":"applied but not saved: /var/lib/forcescale: Permission denied","request":"TARE"}"# + "\n")
    }

    @Test func withoutADeviceTareCalibrateAndResetAreRefused() {
        var rules = Self.rules()
        for (request, message) in [
            (ClientRequest.tare(), "no device to tare: none is open"),
            (.calibrate(grams: 100), "no device to calibrate: none is open"),
            (.calibration(reset: true), "no device whose calibration to reset: none is open"),
            (.calibration(reset: false), "no device is open"),
        ] {
            let outcome = rules.handle(request, from: Self.member, serving: [])
            #expect(Self.onlyReply(outcome, to: Self.member)
                == #"{"class":"ERROR","message":"\#(message) (plug one in or name it with forcescaled --device; without one, try the demo: forcescale demo --write demo.events, then forcescaled --replay demo.events --loop)","request":"\#(request.className)"}"# + "\n")
            #expect(outcome.effects.isEmpty)
        }
    }

    // MARK: - Calibrate

    @Test func calibrateCompletesOnTheNextSteadyReading() {
        var rules = Self.rules()
        let asked = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        #expect(asked.lines.isEmpty, "no reply before the steady reading")
        #expect(asked.effects == [.log(.info, "client 1 calibrating event5 with 100.0 g: waiting for the next touch to be steady")])

        // A reading that is not steady does not complete it.
        #expect(rules.receive(.reading(Self.reading(raw: 120, stable: false)), from: Self.pad).effects.isEmpty)

        // The point is the steady reading's settled pressure (here a window of one frame).
        let completed = rules.receive(.reading(Self.reading(raw: 152, stable: true)), from: Self.pad)
        let curve = try? Calibration(points: [CalibrationPoint(raw: 152, grams: 100, spread: 0, count: 1)])
        #expect(rules.calibration(of: "event5") == curve)
        #expect(completed.effects == [
            .applyCalibration(rules.calibration(of: "event5"), device: Self.pad),
            .saveCalibration(rules.calibration(of: "event5"), device: Self.pad, confirmation: .init(
                client: Self.member.id, request: .calibrate(grams: 100),
                reply: #"{"class":"CALIBRATE","device":"event5","grams":100.0,"raw":152.0,"points":1,"sd":0.0,"n":1}"# + "\n",
                failure: "applied but not saved")),
        ])
        // Once: the next steady reading adds nothing.
        #expect(rules.receive(.reading(Self.reading(raw: 153, stable: true)), from: Self.pad).effects.isEmpty)
    }

    /// A point is judged steady on raw pressure alone: a reading whose grams a steep
    /// provisional curve puts far from the weight still gives its point when the sensor is
    /// steady, and one stable by its grams alone does not while the sensor is not. The
    /// first steady window may hold the landing's tail: the point waits for a window that
    /// is steady throughout.
    @Test func aPointWaitsForTheSensorNotForTheCurvesGrams() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 260), from: Self.member, serving: [Self.pad])
        let stableByGramsOnly = Reading(
            time: EventTime(microseconds: 10_000_000), raw: 150, force: 0, grams: 260, saturated: false, contacts: 1,
            stable: true, model: .calibrated, steady: false)
        #expect(rules.receive(.reading(stableByGramsOnly), from: Self.pad).effects.isEmpty)
        let firstSteadyWindow = Reading(
            time: EventTime(microseconds: 10_050_000), raw: 151, force: 0, grams: 712, saturated: false, contacts: 1,
            stable: true, model: .calibrated, steady: true, settled: SettledPressure(mean: 152.1, standardDeviation: 1.2, count: 50))
        #expect(rules.receive(.reading(firstSteadyWindow), from: Self.pad).effects.isEmpty)
        let steadyAtTheWrongGrams = Reading(
            time: EventTime(microseconds: 10_550_000), raw: 151, force: 0, grams: 710, saturated: false, contacts: 1,
            stable: true, model: .calibrated, steady: true, steadyThroughout: true,
            settled: SettledPressure(mean: 150.6, standardDeviation: 0.5, count: 50))
        let completed = rules.receive(.reading(steadyAtTheWrongGrams), from: Self.pad)
        #expect(rules.calibration(of: "event5").points.map(\.grams) == [260])
        #expect(completed.effects.count == 2)
    }

    /// A CALIBRATE asked while a weight rests measures that touch; when it is lifted before
    /// it is steady, the request ends with an ERROR and the next touch is not taken.
    @Test func aTouchLiftedBeforeItSettlesEndsTheRequestAndTheNextIsNotTaken() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.reading(raw: 120, stable: false, at: 8120)), from: Self.pad)
        let asked = rules.handle(.calibrate(grams: 260), from: Self.member, serving: [Self.pad])
        #expect(asked.effects == [.log(.info, "client 1 calibrating event5 with 260.0 g: waiting for the touch on the pad to be steady")])
        _ = rules.receive(.reading(Self.reading(raw: 180, stable: false, at: 8121)), from: Self.pad)
        let lifted = rules.receive(.reading(Self.reading(raw: 0, contacts: 0, stable: false, at: 8122)), from: Self.pad)
        #expect(Self.lines(lifted, for: Self.member) == [
            #"{"class":"ERROR","message":"the weight was lifted before it settled: nothing was stored; put the 260 g weight on again, keep it still and ask again","request":"CALIBRATE"}"# + "\n",
        ])
        #expect(lifted.effects.isEmpty)
        // The next object, steady at once, is not taken for the 260 g weight.
        #expect(rules.receive(.reading(Self.reading(raw: 30, stable: true, at: 8123)), from: Self.pad).lines.isEmpty)
        #expect(rules.calibration(of: "event5") == .none)
    }

    /// Asked with nothing on the pad, a CALIBRATE measures the next touch placed; a second
    /// touch after that one was lifted unsettled is not taken either.
    @Test func askedOnAnEmptyPadItMeasuresTheNextTouchOnly() {
        var rules = Self.rules()
        _ = rules.receive(.reading(Self.reading(raw: 0, contacts: 0, at: 8120)), from: Self.pad)
        _ = rules.handle(.measure(grams: 20), from: Self.member, serving: [Self.pad])
        _ = rules.receive(.reading(Self.reading(raw: 40, stable: false, at: 8121)), from: Self.pad)
        let lifted = rules.receive(.reading(Self.reading(raw: 0, contacts: 0, at: 8122)), from: Self.pad)
        #expect(Self.lines(lifted, for: Self.member).first?.contains(#""message":"the weight was lifted before it settled"#) == true)
        #expect(rules.receive(.reading(Self.reading(raw: 42, stable: true, at: 8123)), from: Self.pad).lines.isEmpty)

        // Asked again while nothing is on the pad: the next touch, steady, gives the point.
        _ = rules.receive(.reading(Self.reading(raw: 0, contacts: 0, at: 8124)), from: Self.pad)
        _ = rules.handle(.measure(grams: 20), from: Self.member, serving: [Self.pad])
        let measured = rules.receive(.reading(Self.reading(raw: 42, stable: true, at: 8125)), from: Self.pad)
        #expect(Self.lines(measured, for: Self.member).first?.hasPrefix(#"{"class":"CALIBRATE","device":"event5","grams":20.0,"raw":42.0,"#) == true)
    }

    /// Stable readings while nobody calibrates give the rules nothing to do (who waits is
    /// worked out once, not for each reading); a CALIBRATE after them still completes on
    /// the next stable reading.
    @Test func calibrateAfterStableReadingsCompletesOnTheNextOne() {
        var rules = Self.rules()
        #expect(rules.receive(.reading(Self.reading(raw: 150, stable: true)), from: Self.pad).effects.isEmpty)
        #expect(rules.receive(.reading(Self.reading(raw: 150, stable: true)), from: Self.pad).effects.isEmpty)
        _ = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        let completed = rules.receive(.reading(Self.reading(raw: 152, stable: true)), from: Self.pad)
        #expect(rules.calibration(of: "event5").points.count == 1)
        #expect(completed.effects.first == .applyCalibration(rules.calibration(of: "event5"), device: Self.pad))
    }

    @Test func aSecondCalibrateReplacesTheFirst() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        let second = rules.handle(.calibrate(grams: 200), from: Self.member, serving: [Self.pad])
        #expect(Self.onlyReply(second, to: Self.member)
            == #"{"class":"ERROR","message":"the calibration with 100.0 g was replaced by one with 200.0 g","request":"CALIBRATE"}"# + "\n")
        let completed = rules.receive(.reading(Self.reading(raw: 152, stable: true)), from: Self.pad)
        #expect(rules.calibration(of: "event5").points == [CalibrationPoint(raw: 152, grams: 200, spread: 0, count: 1)])
        #expect(completed.effects.count == 2)
    }

    @Test func aPointThatBreaksTheCurveIsRefused() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        _ = rules.receive(.reading(Self.reading(raw: 152, stable: true)), from: Self.pad)
        _ = rules.handle(.calibrate(grams: 50), from: Self.member, serving: [Self.pad])
        // Two seconds later: the window no longer holds the first point's reading.
        let refused = rules.receive(.reading(Self.reading(raw: 200, stable: true, at: 8125)), from: Self.pad)
        #expect(Self.lines(refused, for: Self.member) == [
            #"{"class":"ERROR","message":"calibration point refused: calibration points must rise: raw 200.0 gives 50 g but the smaller raw 152.0 already gives 100 g; this point was not kept and the earlier ones stay: check that the weight is the one you said, and measure it again","request":"CALIBRATE"}"# + "\n",
        ])
        #expect(refused.effects.isEmpty)
        #expect(rules.calibration(of: "event5").points.count == 1)
    }

    @Test func aClientThatLeavesTakesItsCalibrationAlong() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        rules.disconnect(Self.member.id)
        #expect(rules.receive(.reading(Self.reading(raw: 152, stable: true)), from: Self.pad).effects.isEmpty)
        #expect(rules.calibration(of: "event5") == .none)
    }

    @Test func aPointIsTheSettledPressureOfTheSteadyReading() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 100), from: Self.member, serving: [Self.pad])
        _ = rules.receive(.reading(Self.reading(raw: 140, at: 10)), from: Self.pad)
        let steady = Reading(
            time: EventTime(microseconds: 10_900_000), raw: 155, force: 0, grams: 155, saturated: false, contacts: 1,
            stable: true, model: .nominal, steady: true, steadyThroughout: true, settled: SettledPressure(mean: 152.5, standardDeviation: 1.8708, count: 51))
        let completed = rules.receive(.reading(steady), from: Self.pad)
        #expect(rules.calibration(of: "event5").points == [CalibrationPoint(raw: 152.5, grams: 100, spread: 1.8708, count: 51)])
        #expect(completed.effects.count == 2)
    }

    @Test func measuringWithoutAddingLeavesTheCurveAlone() {
        var rules = Self.rules()
        let asked = rules.handle(.measure(grams: 20), from: Self.member, serving: [Self.pad])
        #expect(asked.lines.isEmpty)
        let measured = rules.receive(.reading(Self.reading(raw: 42, stable: true)), from: Self.pad)
        #expect(Self.lines(measured, for: Self.member) == [
            #"{"class":"CALIBRATE","device":"event5","grams":20.0,"raw":42.0,"points":0,"sd":0.0,"n":1,"added":false}"# + "\n",
        ])
        #expect(measured.effects.isEmpty, "nothing applied, nothing saved")
        #expect(rules.calibration(of: "event5") == .none)
        // Measuring changes nothing, but it is part of calibrating: the group's business.
        #expect(Self.onlyReply(rules.handle(.measure(grams: 20), from: Self.stranger, serving: [Self.pad]), to: Self.stranger)?
            .hasPrefix(#"{"class":"ERROR","message":"permission denied"#) == true)
    }

    @Test func aCurveIsPreviewedThenReplacedKeepingTheTare() throws {
        var rules = Self.rules()
        _ = rules.adopt(try Calibration(points: [CalibrationPoint(raw: 100, grams: 50)], tareGrams: 2), for: Self.pad)
        let points = [
            CalibrationPoint(raw: 42, grams: 20, spread: 0.5, count: 50), CalibrationPoint(raw: 77, grams: 50, spread: 0.5, count: 50),
            CalibrationPoint(raw: 123, grams: 100, spread: 0.5, count: 50), CalibrationPoint(raw: 195, grams: 200, spread: 0.5, count: 50),
        ]
        let preview = rules.handle(.replaceCurve(points: points, preview: true), from: Self.member, serving: [Self.pad])
        let previewLine = try #require(Self.onlyReply(preview, to: Self.member))
        #expect(previewLine.contains(#""points":4,"#) && previewLine.contains(#""tare":2.0,"model":"power""#) && previewLine.hasSuffix(#","preview":true}"# + "\n"), "\(previewLine)")
        #expect(preview.effects.isEmpty)
        #expect(rules.calibration(of: "event5").points.count == 1, "a preview changes nothing")

        let replaced = rules.handle(.replaceCurve(points: points, preview: false), from: Self.member, serving: [Self.pad])
        #expect(rules.calibration(of: "event5").points == points && rules.calibration(of: "event5").tareGrams == 2)
        #expect(replaced.effects.count == 3, "logged, applied, saved: \(replaced.effects)")
        guard case .saveCalibration(_, _, let confirmation)? = replaced.effects.last else {
            Issue.record("not saved: \(replaced.effects)")
            return
        }
        #expect(confirmation.reply.contains(#""model":"power""#) && !confirmation.reply.contains("preview"))

        // Points that do not rise are refused, by name.
        let refused = rules.handle(.replaceCurve(points: [points[1], CalibrationPoint(raw: 50, grams: 200)], preview: true), from: Self.member, serving: [Self.pad])
        #expect(Self.onlyReply(refused, to: Self.member)?.hasPrefix(#"{"class":"ERROR","message":"calibration refused: calibration points must rise"#) == true)
    }

    // MARK: - Calibration

    @Test func resetClearsTheCurveAndTheTare() throws {
        var rules = Self.rules()
        _ = rules.adopt(try Calibration(points: [CalibrationPoint(raw: 152.37, grams: 100), CalibrationPoint(raw: 221.5, grams: 200)], tareGrams: 31.5), for: Self.pad)
        // The report gives the points and the curve fitted to them (two points: the pad's
        // likely family, through both).
        let report = try #require(Self.onlyReply(rules.handle(.calibration(reset: false), from: Self.stranger, serving: [Self.pad]), to: Self.stranger))
        #expect(report.hasPrefix(#"{"class":"CALIBRATION","device":"event5","points":2,"curve":[{"raw":152.37,"grams":100.0,"residual":0.0},{"raw":221.5,"grams":200.0,"residual":0.0}],"tare":31.5,"model":"power","parameters":{"a":"#), "\(report)")
        #expect(report.contains(#""uncertainty":"#), "\(report)")
        let reset = rules.handle(.calibration(reset: true), from: Self.member, serving: [Self.pad])
        #expect(rules.calibration(of: "event5") == .none)
        #expect(reset.lines.isEmpty)
        #expect(reset.effects == [
            .applyCalibration(.none, device: Self.pad),
            .saveCalibration(.none, device: Self.pad, confirmation: .init(
                client: Self.member.id, request: .calibration(reset: true),
                reply: #"{"class":"CALIBRATION","device":"event5","points":0,"curve":[],"tare":0.0}"# + "\n",
                failure: "applied but not saved")),
        ])
    }

    @Test func aDevicesSavedCalibrationIsAppliedWhenAdopted() throws {
        var rules = Self.rules()
        let saved = try Calibration(points: [CalibrationPoint(raw: 100, grams: 50)], tareGrams: 2)
        #expect(rules.adopt(saved, for: Self.pad).effects == [.applyCalibration(saved, device: Self.pad)])
        #expect(rules.calibration(of: "event5") == saved)
    }

    // MARK: - Watch

    @Test func watchersGetReadingsAndPeaksOfTheirDevice() {
        var rules = Self.rules()
        let byName = ClientIdentity(id: 3, uid: 1000, gid: 1000)
        let byPath = ClientIdentity(id: 4, uid: 1000, gid: 1000)
        let elsewhere = ClientIdentity(id: 5, uid: 1000, gid: 1000)
        let everything = ClientIdentity(id: 6, uid: 1000, gid: 1000)
        for client in [byName, byPath, elsewhere, everything] { _ = rules.connect(client) }
        #expect(Self.onlyReply(rules.handle(.watch(enable: true, device: "event5"), from: byName, serving: [Self.pad]), to: byName)
            == #"{"class":"WATCH","enable":true,"device":"event5"}"# + "\n")
        #expect(Self.onlyReply(rules.handle(.watch(enable: true, device: "/dev/input/event5"), from: byPath, serving: [Self.pad]), to: byPath)
            == #"{"class":"WATCH","enable":true,"device":"/dev/input/event5"}"# + "\n")
        _ = rules.handle(.watch(enable: true, device: "event9"), from: elsewhere, serving: [Self.pad, Self.tablet])
        _ = rules.handle(.watch(enable: true, device: nil), from: everything, serving: [Self.pad, Self.tablet])

        let reading = rules.receive(.reading(Self.reading()), from: Self.pad)
        #expect(reading.lines == [DaemonRules.Line(
            #"{"class":"READING","device":"event5","time":8123.401022,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"# + "\n",
            to: [byName.id, byPath.id, everything.id], droppable: true)])
        let peak = rules.receive(.peak(Peak(time: EventTime(microseconds: 1_364_787_582_957_445), raw: 2047, force: 1, grams: 385)), from: Self.tablet)
        #expect(peak.lines == [DaemonRules.Line(
            #"{"class":"PEAK","device":"event9","time":1364787582.957445,"raw":2047,"grams":385.0}"# + "\n",
            to: [elsewhere.id, everything.id], droppable: false)])

        #expect(Self.onlyReply(rules.handle(.watch(enable: false, device: nil), from: everything, serving: [Self.pad]), to: everything)
            == #"{"class":"WATCH","enable":false}"# + "\n")
        #expect(rules.receive(.reading(Self.reading()), from: Self.tablet).lines.map(\.recipients) == [[elsewhere.id]])
    }

    @Test func readingsFollowWhoWatchesNowReadingAfterReading() {
        var rules = Self.rules()
        let late = ClientIdentity(id: 7, uid: 1000, gid: 1000)
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.isEmpty)
        _ = rules.handle(.watch(enable: true, device: nil), from: Self.member, serving: [Self.pad])
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.map(\.recipients) == [[Self.member.id]])
        _ = rules.connect(late)
        _ = rules.handle(.watch(enable: true, device: "event5"), from: late, serving: [Self.pad])
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.map(\.recipients) == [[Self.member.id, late.id]])
        #expect(rules.receive(.reading(Self.reading()), from: Self.tablet).lines.map(\.recipients) == [[Self.member.id]], "late watches event5 only")
        rules.disconnect(Self.member.id)
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.map(\.recipients) == [[late.id]])
        #expect(rules.receive(.reading(Self.reading()), from: Self.tablet).lines.isEmpty)
    }

    @Test func nobodyWatchingSendsNothing() {
        var rules = Self.rules()
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad) == DaemonRules.Outcome())
    }

    @Test func pollAnswersWithTheNewestReadingAndItsDevice() {
        var rules = Self.rules()
        #expect(Self.onlyReply(rules.handle(.poll(), from: Self.stranger, serving: []), to: Self.stranger) == #"{"class":"POLL"}"# + "\n")
        _ = rules.receive(.reading(Self.reading(raw: 121, grams: 47.9, stable: true, at: 8124)), from: Self.pad)
        // The device the reading came from, even once that device is gone.
        #expect(Self.onlyReply(rules.handle(.poll(), from: Self.stranger, serving: []), to: Self.stranger)
            == #"{"class":"POLL","time":8124.401022,"reading":{"class":"READING","device":"event5","time":8124.401022,"raw":121,"force":0.4745,"grams":47.9,"saturated":false,"contacts":1,"stable":true,"model":"nominal"}}"# + "\n")
    }

    // MARK: - Rumble

    @Test func rumbleIsPlayedThenConfirmedEvenWithoutThePressureDevice() {
        var rules = Self.rules()
        let outcome = rules.handle(.rumble(pattern: HapticPattern.success), from: Self.member, serving: [])
        #expect(outcome.lines.isEmpty)
        let confirmation = DaemonRules.Confirmation(
            client: Self.member.id, request: .rumble(pattern: HapticPattern.success),
            reply: #"{"class":"RUMBLE","pattern":"success"}"# + "\n", failure: "rumble unavailable")
        #expect(outcome.effects == [.play(HapticPattern.success, confirmation: confirmation)])
    }

    @Test func rumbleWithoutARumbleDeviceRepliesWithWhy() {
        var rules = Self.rules()
        guard case .play(_, let confirmation) = rules.handle(.rumble(pattern: HapticPattern.impactMedium), from: Self.member, serving: [Self.pad]).effects.first else {
            Issue.record("no play effect")
            return
        }
        // What LiveScale says when no device can rumble, as the daemon passes it on.
        #expect(confirmation.failureLine("/dev/input/event5: rumble failed (no device can rumble)")
            == #"{"class":"ERROR","message":"rumble unavailable: /dev/input/event5: rumble failed (no device can rumble)","request":"RUMBLE"}"# + "\n")
    }

    @Test func anUnknownDeviceOrPatternIsAnError() {
        var rules = Self.rules()
        #expect(Self.onlyReply(rules.handle(line: Array(#"{"class":"RUMBLE","pattern":"boom"}"#.utf8), from: Self.member, serving: [Self.pad]), to: Self.member)
            == #"{"class":"ERROR","message":"unknown pattern 'boom' (known: impact-light, impact-medium, impact-heavy, impact-soft, impact-rigid, selection, success, warning, error)","request":"RUMBLE"}"# + "\n")
        // A WATCH for a device that is not served is refused, naming those that are.
        #expect(Self.onlyReply(rules.handle(line: Array(#"{"class":"WATCH","device":"event99"}"#.utf8), from: Self.member, serving: [Self.pad, Self.tablet]), to: Self.member)
            == #"{"class":"ERROR","message":"no device 'event99' is served (served: event5, event9)","request":"WATCH"}"# + "\n")
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.isEmpty)
        // With none served yet it is accepted, and stays silent until the device appears.
        #expect(Self.onlyReply(rules.handle(line: Array(#"{"class":"WATCH","device":"event99"}"#.utf8), from: Self.member, serving: []), to: Self.member)
            == #"{"class":"WATCH","enable":true,"device":"event99"}"# + "\n")
        #expect(rules.receive(.reading(Self.reading()), from: Self.pad).lines.isEmpty)
    }

    // MARK: - Several devices

    /// A settled reading of `grams` on a 0–255 axis, as the pipeline gives one while a weight
    /// rests: `raw` the frame's, the window's mean a little off it (a unit of noise).
    static func resting(raw: Int32, grams: Double, mean: Double, at seconds: Int64) -> Reading {
        Reading(
            time: EventTime(microseconds: seconds * 1_000_000 + 401_022), raw: raw, force: Double(raw) / 255, grams: grams,
            saturated: false, contacts: 1, stable: true, model: .nominal, steady: true, steadyThroughout: true,
            settled: SettledPressure(mean: mean, standardDeviation: 0.9, count: 50), settledGrams: grams - 0.4)
    }

    @Test func withSeveralDevicesChangesMustNameOneAndTheErrorListsThem() {
        var rules = Self.rules()
        let both = [Self.pad, Self.tablet]
        for request in [ClientRequest.tare(), .calibrate(grams: 100), .measure(grams: 20), .calibration(reset: true), .calibration(reset: false),
                        .replaceCurve(points: [CalibrationPoint(raw: 100, grams: 50)], preview: true)] {
            let outcome = rules.handle(request, from: Self.member, serving: both)
            #expect(Self.onlyReply(outcome, to: Self.member)
                == #"{"class":"ERROR","message":"2 devices are served (event5, event9): name one with --device (the request's 'device')","request":"\#(request.className)"}"# + "\n")
            #expect(outcome.effects.isEmpty, "\(request)")
        }
        let unknown = rules.handle(.tare(device: "event7"), from: Self.member, serving: both)
        #expect(Self.onlyReply(unknown, to: Self.member)
            == #"{"class":"ERROR","message":"no device 'event7' is served (served: event5, event9)","request":"TARE"}"# + "\n")
        #expect(rules.calibration(of: "event5") == .none && rules.calibration(of: "event9") == .none)
    }

    @Test func eachDeviceIsTaredAndCalibratedOnItsOwn() throws {
        var rules = Self.rules()
        let both = [Self.pad, Self.tablet]
        let padSaved = try Calibration(points: [CalibrationPoint(raw: 120, grams: 100)], tareGrams: 0)
        #expect(rules.adopt(padSaved, for: Self.pad).effects == [.applyCalibration(padSaved, device: Self.pad)])
        _ = rules.adopt(.none, for: Self.tablet)
        // Both rest a weight; readings interleave, as two devices' do.
        _ = rules.receive(.reading(Self.resting(raw: 61, grams: 31.9, mean: 60.6, at: 10)), from: Self.pad)
        _ = rules.receive(.reading(Self.resting(raw: 700, grams: 131.6, mean: 701.2, at: 10)), from: Self.tablet)

        // Tare by name: the pad takes its settled weight, the tablet is left alone.
        let tared = rules.handle(.tare(device: "event5"), from: Self.member, serving: both)
        var padNow = padSaved
        padNow.tareGrams = 31.5
        #expect(tared.effects.first == .applyCalibration(padNow, device: Self.pad))
        #expect(rules.calibration(of: "event5") == padNow)
        #expect(rules.calibration(of: "event9") == .none)
        // By path too.
        #expect(Self.onlyReply(rules.handle(.calibration(reset: false, device: "/dev/input/event9"), from: Self.stranger, serving: both), to: Self.stranger)
            == #"{"class":"CALIBRATION","device":"event9","points":0,"curve":[],"tare":0.0}"# + "\n")

        // A calibration of the tablet waits for the tablet's touch, not the pad's.
        _ = rules.handle(.calibrate(grams: 200, device: "event9"), from: Self.member, serving: both)
        #expect(rules.receive(.reading(Self.resting(raw: 62, grams: 32.3, mean: 61.4, at: 11)), from: Self.pad).lines.isEmpty)
        let completed = rules.receive(.reading(Self.resting(raw: 701, grams: 131.8, mean: 700.8, at: 11)), from: Self.tablet)
        #expect(Self.lines(completed, for: Self.member) == [])
        let point = CalibrationPoint(raw: 700.8, grams: 200, spread: 0.9, count: 50)
        #expect(rules.calibration(of: "event9").points == [point])
        #expect(rules.calibration(of: "event5") == padNow, "the pad's curve is untouched")
        guard case .saveCalibration(_, let device, let confirmation) = completed.effects.last else {
            Issue.record("no save: \(completed.effects)")
            return
        }
        #expect(device == Self.tablet)
        #expect(confirmation.reply == #"{"class":"CALIBRATE","device":"event9","grams":200.0,"raw":700.8,"points":1,"sd":0.9,"n":50}"# + "\n")
        #expect(confirmation.request == .calibrate(grams: 200, device: "event9"))
    }

    @Test func aLiftOnOneDeviceDoesNotEndACalibrationOnTheOther() {
        var rules = Self.rules()
        let both = [Self.pad, Self.tablet]
        _ = rules.receive(.reading(Self.reading(raw: 60, grams: 30, at: 10)), from: Self.tablet)
        _ = rules.handle(.calibrate(grams: 100, device: "event9"), from: Self.member, serving: both)
        _ = rules.receive(.reading(Self.reading(raw: 40, grams: 20, at: 10)), from: Self.pad)
        #expect(rules.receive(.reading(Self.reading(raw: 0, grams: 0, contacts: 0, at: 11)), from: Self.pad).lines.isEmpty)
        let lifted = rules.receive(.reading(Self.reading(raw: 0, grams: 0, contacts: 0, at: 11)), from: Self.tablet)
        #expect(Self.lines(lifted, for: Self.member).first?.contains("the weight was lifted before it settled") == true)
        #expect(Self.lines(lifted, for: Self.member).first?.contains(#""request":"CALIBRATE""#) == true)
    }

    @Test func aDeviceThatGoesAwayEndsTheCalibrationsWaitingOnIt() {
        var rules = Self.rules()
        _ = rules.handle(.calibrate(grams: 100, device: "event9"), from: Self.member, serving: [Self.pad, Self.tablet])
        _ = rules.handle(.calibrate(grams: 50), from: Self.stranger, serving: [Self.pad])
        #expect(rules.remove("event5").lines.isEmpty, "the stranger may not calibrate: nothing waits on the pad")
        let removed = rules.remove("event9")
        #expect(Self.onlyReply(removed, to: Self.member)
            == #"{"class":"ERROR","message":"event9 went away before the weight settled: nothing was stored","request":"CALIBRATE"}"# + "\n")
    }

    @Test func pollAndWatchWithSeveralDevices() {
        var rules = Self.rules()
        let both = [Self.pad, Self.tablet]
        _ = rules.receive(.reading(Self.reading(raw: 51, grams: 77, at: 10)), from: Self.pad)
        _ = rules.receive(.reading(Self.reading(raw: 102, grams: 19.2, at: 11)), from: Self.tablet)
        let padLine = #"{"class":"READING","device":"event5","time":10.401022,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"#
        let tabletLine = #"{"class":"READING","device":"event9","time":11.401022,"raw":102,"force":0.4,"grams":19.2,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"#
        #expect(Self.onlyReply(rules.handle(.poll(), from: Self.stranger, serving: both), to: Self.stranger)
            == #"{"class":"POLL","time":11.401022,"reading":"# + tabletLine + #","readings":["# + padLine + "," + tabletLine + "]}\n")
        #expect(Self.onlyReply(rules.handle(.poll(device: "event5"), from: Self.stranger, serving: both), to: Self.stranger)
            == #"{"class":"POLL","time":10.401022,"reading":"# + padLine + "}\n")
        #expect(rules.handle(.status(device: "event9"), from: Self.stranger, serving: both).effects == [.reportStatus(client: Self.stranger.id, device: Self.tablet)])
        #expect(rules.handle(.status(), from: Self.stranger, serving: both).effects == [.reportStatus(client: Self.stranger.id, device: nil)])
        // One watch of one device, one of all: interleaved readings go each to its watchers.
        _ = rules.handle(.watch(enable: true, device: "event9"), from: Self.stranger, serving: both)
        _ = rules.handle(.watch(enable: true, device: nil), from: Self.member, serving: both)
        for second in 12...14 {
            #expect(rules.receive(.reading(Self.reading(at: Int64(second))), from: Self.pad).lines.map(\.recipients) == [[Self.member.id]])
            #expect(rules.receive(.reading(Self.reading(at: Int64(second))), from: Self.tablet).lines.map(\.recipients) == [[Self.member.id, Self.stranger.id]])
        }
    }
}
