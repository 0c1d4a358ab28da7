import Testing
@testable import ScaleCore

@Suite struct HapticPatternTests {
    @Test func allPatternsInTheDocumentedOrder() {
        #expect(HapticPattern.all.map(\.name) == [
            "impact-light", "impact-medium", "impact-heavy", "impact-soft", "impact-rigid",
            "selection", "success", "warning", "error",
        ])
    }

    @Test func everyNameResolvesToItsPattern() {
        for pattern in HapticPattern.all {
            #expect(HapticPattern.named(pattern.name) == pattern)
        }
        #expect(Set(HapticPattern.all.map(\.name)).count == HapticPattern.all.count)
    }

    @Test func unknownNamesResolveToNothing() {
        #expect(HapticPattern.named("impact-medium-rare") == nil)
        #expect(HapticPattern.named("") == nil)
        // Names are exact, as on the command line.
        #expect(HapticPattern.named("Impact-Heavy") == nil)
    }

    @Test func peakIsTheHeavyImpact() {
        #expect(HapticPattern.peak == HapticPattern.named("impact-heavy"))
    }

    @Test(arguments: HapticPattern.all)
    func durationsAreFinitePositiveAndShort(_ pattern: HapticPattern) {
        #expect(!pattern.segments.isEmpty)
        for segment in pattern.segments {
            // replay.length 0 means "forever" to the kernel.
            #expect(segment.durationMilliseconds > 0)
            #expect(segment.durationMilliseconds <= HapticSegment.maximumDurationMilliseconds)
            #expect(segment.pauseMilliseconds >= 0)
        }
        #expect(pattern.segments.last?.pauseMilliseconds == 0)
        #expect(pattern.totalMilliseconds <= 1000)
        #expect(!pattern.summary.isEmpty)
    }

    @Test(arguments: HapticPattern.all)
    func levelsAreWithinZeroToOneAndSomethingMoves(_ pattern: HapticPattern) {
        for segment in pattern.segments {
            #expect((0...1).contains(segment.strong))
            #expect((0...1).contains(segment.weak))
            #expect(segment.strongMagnitude > 0 || segment.weakMagnitude > 0)
        }
    }

    @Test func notificationsHaveTheirPulseCounts() {
        #expect(HapticPattern.named("success")?.segments.count == 2)
        #expect(HapticPattern.named("warning")?.segments.count == 2)
        #expect(HapticPattern.named("error")?.segments.count == 3)
        for name in ["impact-light", "impact-medium", "impact-heavy", "impact-soft", "impact-rigid", "selection"] {
            #expect(HapticPattern.named(name)?.segments.count == 1)
        }
    }

    @Test func shapesMatchTheirDescriptions() throws {
        let light = try #require(HapticPattern.named("impact-light")).segments[0]
        let heavy = try #require(HapticPattern.named("impact-heavy")).segments[0]
        let rigid = try #require(HapticPattern.named("impact-rigid")).segments[0]
        let soft = try #require(HapticPattern.named("impact-soft")).segments[0]
        let selection = try #require(HapticPattern.named("selection")).segments[0]
        #expect(light.strong == 0)
        #expect(heavy.strongMagnitude == .max)
        #expect(rigid.durationMilliseconds < light.durationMilliseconds)
        #expect(soft.durationMilliseconds > heavy.durationMilliseconds)
        #expect(soft.weak > soft.strong)
        #expect(selection.strong == 0 && selection.durationMilliseconds <= 10)

        let success = try #require(HapticPattern.named("success")).segments
        #expect(success[1].strong > success[0].strong)
        let warning = try #require(HapticPattern.named("warning")).segments
        #expect(warning[0].pauseMilliseconds > success[0].pauseMilliseconds)
        let error = try #require(HapticPattern.named("error")).segments
        #expect(error.allSatisfy { $0.strong >= 0.8 })
    }

    @Test func magnitudesRoundAndClampToTheKernelsU16() {
        #expect(HapticSegment(strong: 1, weak: 0, durationMilliseconds: 1).strongMagnitude == 0xFFFF)
        #expect(HapticSegment(strong: 1, weak: 0, durationMilliseconds: 1).weakMagnitude == 0)
        // 0.5 * 65535 = 32767.5, rounded half away from zero.
        #expect(HapticSegment(strong: 0.5, weak: 0.5, durationMilliseconds: 1).strongMagnitude == 32768)
        #expect(HapticSegment(strong: 2, weak: -1, durationMilliseconds: 1).strongMagnitude == 0xFFFF)
        #expect(HapticSegment(strong: 2, weak: -1, durationMilliseconds: 1).weakMagnitude == 0)
        #expect(HapticSegment(strong: .nan, weak: .infinity, durationMilliseconds: 1).strongMagnitude == 0)
        #expect(HapticSegment(strong: .nan, weak: .infinity, durationMilliseconds: 1).weakMagnitude == 0xFFFF)
    }

    @Test func scalingMultipliesLevelsAndKeepsTheRhythm() {
        let error = HapticPattern.error
        let half = error.scaled(intensity: 0.5)
        #expect(half.name == error.name)
        #expect(half.segments.count == error.segments.count)
        for (original, scaled) in zip(error.segments, half.segments) {
            #expect(scaled.strong == original.strong / 2)
            #expect(scaled.weak == original.weak / 2)
            #expect(scaled.durationMilliseconds == original.durationMilliseconds)
            #expect(scaled.pauseMilliseconds == original.pauseMilliseconds)
        }
        #expect(half.segments[0].strongMagnitude == 32768)
        #expect(half.totalMilliseconds == error.totalMilliseconds)
    }

    @Test func scalingClampsTheIntensity() {
        let heavy = HapticPattern.impactHeavy
        #expect(heavy.scaled(intensity: 1) == heavy)
        #expect(heavy.scaled(intensity: 3) == heavy)
        let silent = heavy.scaled(intensity: -0.5)
        #expect(silent.segments.allSatisfy { $0.strongMagnitude == 0 && $0.weakMagnitude == 0 })
        #expect(silent.totalMilliseconds == heavy.totalMilliseconds)
        #expect(heavy.scaled(intensity: .nan) == silent)
    }

    @Test func zeroIntensityGivesZeroMagnitudes() {
        for pattern in HapticPattern.all {
            let silent = pattern.scaled(intensity: 0)
            #expect(silent.segments.allSatisfy { $0.strongMagnitude == 0 && $0.weakMagnitude == 0 })
        }
    }

    @Test func totalCountsDurationsAndPauses() {
        let pattern = HapticPattern(name: "t", summary: "t", segments: [
            HapticSegment(strong: 1, weak: 1, durationMilliseconds: 30, pauseMilliseconds: 70),
            HapticSegment(strong: 1, weak: 1, durationMilliseconds: 45),
        ])
        #expect(pattern.totalMilliseconds == 145)
        #expect(HapticPattern(name: "empty", summary: "", segments: []).totalMilliseconds == 0)
    }

    @Test func forceFeedbackCodesMatchTheKernel() {
        #expect(EventCode.ffRumble.rawValue == 0x50)
        #expect(EventCode.ffGain.rawValue == 0x60)
    }
}
