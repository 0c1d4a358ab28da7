import Testing
import ScaleCore
@testable import ScaleProtocol

@Suite struct ReadingLineTests {
    @Test func readingIsByteExact() {
        let value = Reading(time: EventTime(seconds: 1382570965, microseconds: 747302), raw: 51, force: 0.2, grams: 77.0, saturated: false, contacts: 1, stable: false, model: .nominal)
        #expect(ReadingMessage(value, device: "event5").line ==
            #"{"class":"READING","device":"event5","time":1382570965.747302,"raw":51,"force":0.2,"grams":77.0,"saturated":false,"contacts":1,"stable":false,"model":"nominal"}"# + "\n")
        // No device: the field is left out, never null.
        #expect(!ReadingMessage(value).line.contains("device"))
    }

    @Test func roundsGramsToATenthAndForceToFourDecimals() {
        let value = Reading(time: EventTime(microseconds: 5), raw: 1, force: 1.0 / 3.0, grams: 12.3456, saturated: true, contacts: 2, stable: true, model: .calibrated)
        #expect(ReadingMessage(value).line ==
            #"{"class":"READING","time":0.000005,"raw":1,"force":0.3333,"grams":12.3,"saturated":true,"contacts":2,"stable":true,"model":"calibrated"}"# + "\n")
        let negativeZero = Reading(time: EventTime(microseconds: 0), raw: 0, force: 0, grams: -0.04, saturated: false, contacts: 0, stable: false, model: .physical)
        #expect(ReadingMessage(negativeZero).line.contains(#""grams":0.0,"#))
    }

    @Test func peakIsByteExact() {
        let peak = Peak(time: EventTime(seconds: 12, microseconds: 34), raw: 255, force: 1, grams: 385)
        #expect(PeakMessage(peak).line == #"{"class":"PEAK","time":12.000034,"raw":255,"grams":385.0}"# + "\n")
    }

    @Test func escapesStrings() {
        var json = JSONLineWriter()
        json.add("name", string: "Pad \"Pro\"\\\n\u{01}")
        #expect(json.line == #"{"name":"Pad \"Pro\"\\\n\u0001"}"# + "\n")
    }
}
