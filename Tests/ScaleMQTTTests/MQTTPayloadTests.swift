import ScaleCore
@testable import ScaleMQTT
import ScaleProtocol
import Testing

@Suite struct MQTTPayloadTests {
    @Test func aReadingPastTheHeaviestCalibrationWeightSaysSoInItsAttributes() {
        let inside = ReadingMessage(
            device: "event5", time: EventTime(microseconds: 8_124_950_871), raw: 121, force: 0.4745, grams: 47.9, saturated: false,
            contacts: 1, stable: true, model: .calibrated)
        #expect(MQTTBridge.payload(of: inside) == String(inside.line.dropLast()))
        var past = inside
        past.beyondCalibration = 40
        #expect(MQTTBridge.payload(of: past)
            == #"{"class":"READING","device":"event5","time":8124.950871,"raw":121,"force":0.4745,"grams":47.9,"saturated":false,"contacts":1,"stable":true,"model":"calibrated","beyond_calibration":40.0,"calibration_note":"beyond the heaviest calibration weight, 40 g"}"#)
    }

    /// A saturated weight is a lower bound: its attributes say so in words, and the number
    /// stays with its flag (the `saturated` problem sensor reads that).
    @Test func aSaturatedWeightSaysItIsALowerBoundInItsAttributes() {
        let saturated = ReadingMessage(
            device: "pad.events", time: EventTime(microseconds: 5_000_000), raw: 255, force: 1, grams: 385, saturated: true,
            contacts: 1, stable: true, model: .nominal, settledGrams: 384.8)
        #expect(MQTTBridge.payload(of: saturated)
            == #"{"class":"READING","device":"pad.events","time":5.000000,"raw":255,"force":1.0,"grams":385.0,"saturated":true,"contacts":1,"stable":true,"model":"nominal","settled_grams":384.8,"saturation_note":"at least 384.8 g (saturated)"}"#)
    }
}
