import ScaleCore
import ScaleDisplay
import ScaleProtocol
import Testing

@Suite struct GaugeTests {
    @Test func aReadingPastTheHeaviestCalibrationWeightSaysSo() {
        let gauge = Gauge(style: .plain, unit: .grams, origin: EventTime(microseconds: 0))
        var reading = ReadingMessage(
            time: EventTime(microseconds: 1_500_000), raw: 230, force: 0.902, grams: 412, saturated: false, contacts: 1,
            stable: true, model: .calibrated)
        #expect(gauge.line(for: reading).hasSuffix("  stable"))
        reading.beyondCalibration = 180
        #expect(gauge.line(for: reading) == "   1.500 s    90%      412.0 g   [######################  ]  stable, beyond the heaviest calibration weight, 180 g")
    }

    @Test func aModelThisBuildDoesNotKnowIsNamedAfterTheLine() {
        let gauge = Gauge(style: .plain, unit: .grams, origin: EventTime(microseconds: 0))
        let reading = ReadingMessage(
            time: EventTime(microseconds: 20_000), raw: 120, force: 0.4706, grams: 123.4, saturated: false, contacts: 1,
            stable: true, model: "future-model")
        #expect(gauge.line(for: reading) == "   0.020 s    47%      123.4 g   [###########             ]  stable  future-model model")
    }
}
