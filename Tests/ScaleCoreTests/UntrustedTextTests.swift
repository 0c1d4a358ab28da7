import Testing
@testable import ScaleCore

@Suite struct UntrustedTextTests {
    @Test func plainNamesAreUnchanged() {
        for name in ["SynPS/2 Synaptics TouchPad", "Wacom Intuos5 touch M Pen", "pen.evemu#2", "Ünïcödé 触控板", ""] {
            #expect(UntrustedText.escaped(name) == name)
        }
    }

    @Test func theIssuesHostileNamePrintsAsOneVisibleLine() {
        let hostile = "Pad\u{1B}]0;PWNED\u{07}\u{1B}[31m RED\n<0>forcescaled: FORGED"
        let escaped = UntrustedText.escaped(hostile)
        #expect(escaped == #"Pad\e]0;PWNED\a\e[31m RED\n<0>forcescaled: FORGED"#)
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }

    @Test func everyControlCharacterBecomesAnEscape() {
        for value in UInt32(0)..<0x20 {
            let escaped = UntrustedText.escaped("a" + String(Unicode.Scalar(value)!) + "b")
            #expect(escaped.hasPrefix("a\\") && escaped.hasSuffix("b"))
            #expect(escaped.unicodeScalars.allSatisfy { $0.value >= 0x20 })
        }
        #expect(UntrustedText.escaped("\u{7F}") == #"\x7F"#)
        #expect(UntrustedText.escaped("\u{0}") == #"\x00"#)
        #expect(UntrustedText.escaped("\u{9B}31m") == #"\u{009B}31m"#)
    }

    @Test func reorderingAndInvisibleCharactersAreShown() {
        #expect(UntrustedText.escaped("evil\u{202E}gpj.exe") == #"evil\u{202E}gpj.exe"#)
        #expect(UntrustedText.escaped("a\u{200B}b\u{2028}c") == #"a\u{200B}b\u{2028}c"#)
    }

    @Test func aBackslashIsDoubledSoThatAnEscapeIsNeverForged() {
        #expect(UntrustedText.escaped(#"\e[31m"#) == #"\\e[31m"#)
        #expect(UntrustedText.escaped("\u{1B}") != UntrustedText.escaped(#"\e"#))
    }

    @Test func spreadsheetFormulasAreNeutralised() {
        #expect(UntrustedText.spreadsheetSafe("=HYPERLINK(\"x\")") == "'=HYPERLINK(\"x\")")
        for lead in ["+", "-", "@", "\t", "\r"] {
            #expect(UntrustedText.spreadsheetSafe(lead + "1") == "'" + lead + "1")
        }
        #expect(UntrustedText.spreadsheetSafe("Pad") == "Pad")
        #expect(UntrustedText.spreadsheetSafe("") == "")
    }
}
