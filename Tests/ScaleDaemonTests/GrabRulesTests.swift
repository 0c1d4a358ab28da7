import ScaleCore
import ScaleProtocol
import Testing
@testable import ScaleDaemon

/// GRAB's rules (docs/protocol.md, GRAB): who may take a device, one grab at a time, the
/// bound, and every way a grab ends, as lines and effects. The grab itself (EVIOCGRAB) is
/// the daemon's effect, tried on a real kernel by scenario x.
@Suite struct GrabRulesTests {
    typealias Fixtures = DaemonRulesTests
    static let member = Fixtures.member
    static let stranger = Fixtures.stranger
    static let other = ClientIdentity(id: 3, uid: 1002, gid: 600)
    static let pad = Fixtures.pad

    static func rules() -> DaemonRules { Fixtures.rules(with: [member, stranger, other]) }

    static func confirmation(for client: ClientIdentity, seconds: Double, request: ClientRequest) -> DaemonRules.Confirmation {
        DaemonRules.Confirmation(
            client: client.id, request: request,
            reply: #"{"class":"GRAB","device":"event5","grabbed":true,"seconds":\#(GrabMessage(grabbed: true, seconds: seconds).seconds!)}"# + "\n",
            failure: "could not take event5")
    }

    @Test func aMemberTakesTheDeviceForTheSecondsAskedAndTheReplyWaitsOnTheGrab() {
        var rules = Self.rules()
        let request = ClientRequest.grab(enable: true, seconds: 60, device: nil)
        let outcome = rules.handle(request, from: Self.member, serving: [Self.pad])
        #expect(outcome.lines.isEmpty)
        #expect(outcome.effects.contains(.grab(Self.pad, seconds: 60, confirmation: Self.confirmation(for: Self.member, seconds: 60, request: request))))
        #expect(rules.grab == DaemonRules.Grab(client: Self.member.id, device: Self.pad, seconds: 60))
    }

    @Test(arguments: [nil, 121.0, 1e9])
    func noClientGetsMoreThanTheBound(_ asked: Double?) {
        var rules = Self.rules()
        let outcome = rules.handle(.grab(enable: true, seconds: asked), from: Self.member, serving: [Self.pad])
        #expect(rules.grab?.seconds == DaemonRules.maximumGrabSeconds)
        #expect(outcome.effects.contains { if case .grab(_, let seconds, _) = $0 { seconds == 120 } else { false } })
    }

    @Test func onlyTheDaemonsGroupMayGrabAsForTare() {
        var rules = Self.rules()
        let refused = rules.handle(.grab(enable: true), from: Self.stranger, serving: [Self.pad])
        #expect(Fixtures.onlyReply(refused, to: Self.stranger)
            == #"{"class":"ERROR","message":"permission denied: only root, the daemon's user or members of group 'forcescale-control' may GRAB","request":"GRAB"}"# + "\n")
        #expect(refused.effects.isEmpty)
        #expect(rules.grab == nil)
    }

    @Test func oneGrabAtATime() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true, seconds: 30, device: "event5"), from: Self.member, serving: [Self.pad, Fixtures.tablet])
        let second = rules.handle(.grab(enable: true, device: "event9"), from: Self.other, serving: [Self.pad, Fixtures.tablet])
        #expect(Fixtures.onlyReply(second, to: Self.other)
            == #"{"class":"ERROR","message":"one grab at a time: event5 is taken for another client's weighing; try again when it ends (within 30 s)","request":"GRAB"}"# + "\n")
        #expect(second.effects.isEmpty)
        let again = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        #expect(Fixtures.onlyReply(again, to: Self.member)
            == #"{"class":"ERROR","message":"you hold event5 already: give it back (GRAB with \"enable\":false) before taking it again","request":"GRAB"}"# + "\n")
        #expect(rules.grab?.client == Self.member.id)
    }

    @Test func severalDevicesNeedTheOneNamed() {
        var rules = Self.rules()
        let outcome = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad, Fixtures.tablet])
        #expect(Fixtures.onlyReply(outcome, to: Self.member)
            == #"{"class":"ERROR","message":"2 devices are served (event5, event9): name one with --device (the request's 'device')","request":"GRAB"}"# + "\n")
        #expect(rules.grab == nil)
        let none = rules.handle(.grab(enable: true), from: Self.member, serving: [])
        #expect(Fixtures.onlyReply(none, to: Self.member)?.contains("no device to take: none is open") == true)
    }

    @Test func theHolderGivesItBack() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        let request = ClientRequest.grab(enable: false)
        let outcome = rules.handle(request, from: Self.member, serving: [Self.pad])
        // The reply waits on the release: a client that has it has its device given back.
        #expect(outcome.lines.isEmpty)
        #expect(outcome.effects.last == .releaseGrab(Self.pad, reply: DaemonRules.Confirmation(
            client: Self.member.id, request: request, reply: #"{"class":"GRAB","device":"event5","grabbed":false}"# + "\n",
            failure: "could not give event5 back")))
        #expect(rules.grab == nil)
    }

    @Test func anotherClientCannotGiveBackWhatItDoesNotHold() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        let outcome = rules.handle(.grab(enable: false), from: Self.stranger, serving: [Self.pad])
        #expect(Fixtures.onlyReply(outcome, to: Self.stranger) == #"{"class":"GRAB","grabbed":false}"# + "\n")
        #expect(outcome.effects.isEmpty)
        #expect(rules.grab?.client == Self.member.id)
    }

    @Test func theHoldersConnectionGoingGivesItBack() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        #expect(rules.disconnect(Self.stranger.id) == DaemonRules.Outcome())
        let outcome = rules.disconnect(Self.member.id)
        #expect(outcome.lines.isEmpty)
        #expect(outcome.effects.first == .releaseGrab(Self.pad))
        #expect(rules.grab == nil)
    }

    @Test func theBoundPassingGivesItBackAndTellsTheHolder() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true, seconds: 5), from: Self.member, serving: [Self.pad])
        let outcome = rules.grabExpired()
        #expect(Fixtures.onlyReply(outcome, to: Self.member) == #"{"class":"GRAB","device":"event5","grabbed":false,"ended":"expired"}"# + "\n")
        #expect(outcome.effects.first == .releaseGrab(Self.pad))
        #expect(rules.grab == nil)
        #expect(rules.grabExpired() == DaemonRules.Outcome())
    }

    @Test func theDeviceGoingEndsItsGrab() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        let outcome = rules.remove("event5")
        #expect(Fixtures.lines(outcome, for: Self.member) == [#"{"class":"GRAB","device":"event5","grabbed":false,"ended":"device-gone"}"# + "\n"])
        #expect(rules.grab == nil)
    }

    @Test func aGrabThatFailedIsForgottenSoAnotherMayTry() {
        var rules = Self.rules()
        _ = rules.handle(.grab(enable: true), from: Self.member, serving: [Self.pad])
        rules.grabFailed(client: Self.member.id)
        #expect(rules.grab == nil)
        let outcome = rules.handle(.grab(enable: true), from: Self.other, serving: [Self.pad])
        #expect(outcome.effects.contains { if case .grab = $0 { true } else { false } })
    }
}
