import ScaleClient
import Testing

@Suite struct ReconnectPolicyTests {
    @Test func delaysDoubleFromATenthOfASecondToTheCap() {
        let policy = ReconnectPolicy()
        #expect((1...8).map(policy.delay(beforeAttempt:)) == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5, 5])
        // Far into an outage the delay stays at the cap, without overflowing on the way.
        #expect(policy.delay(beforeAttempt: 10_000) == 5)
    }

    @Test func aCustomPolicyKeepsItsOwnStartAndCap() {
        let policy = ReconnectPolicy(initialDelay: 0.25, maximumDelay: 1)
        #expect((1...4).map(policy.delay(beforeAttempt:)) == [0.25, 0.5, 1, 1])
    }
}
