import Testing
@testable import ScaleCore

@Suite struct SuggestionTests {
    @Test func aTypoWithinAThirdToAHalfOfTheWordIsMeant() {
        #expect(Suggestion.closest(to: "wiegh", among: ["watch", "weigh", "tare"]) == "weigh")
        #expect(Suggestion.closest(to: "treshold", among: ["threshold", "hysteresis"]) == "threshold")
        #expect(Suggestion.closest(to: "--jabc", among: ["--json", "--loop"]) == "--json")
    }

    @Test func aWordFarFromEveryCandidateMeansNone() {
        #expect(Suggestion.closest(to: "bogus", among: ["log", "tare"]) == nil)
        #expect(Suggestion.closest(to: "--jabcd", among: ["--json"]) == nil)
        #expect(Suggestion.closest(to: "x", among: [String]()) == nil)
    }

    @Test func theFirstOfEquallyCloseCandidatesWins() {
        #expect(Suggestion.closest(to: "lug", among: ["log", "lag"]) == "log")
    }

    @Test func editDistanceCountsInsertionsDeletionsAndSubstitutions() {
        #expect(Suggestion.editDistance("kitten", "sitting") == 3)
        #expect(Suggestion.editDistance("", "abc") == 3)
        #expect(Suggestion.editDistance("same", "same") == 0)
        #expect(Suggestion.editDistance("ab", "ba") == 2)
    }
}
