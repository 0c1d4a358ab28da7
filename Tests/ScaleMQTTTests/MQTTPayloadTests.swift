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
}
