import ScaleCore
import ScaleDisplay
import Testing

@Suite struct GaugeTests {
    @Test func aReadingPastTheHeaviestCalibrationWeightSaysSo() {
        let gauge = Gauge(style: .plain, unit: .grams, origin: EventTime(microseconds: 0))
        var reading = Reading(
            time: EventTime(microseconds: 1_500_000), raw: 230, force: 0.902, grams: 412, saturated: false, contacts: 1,
            stable: true, model: .calibrated)
        #expect(gauge.line(for: reading).hasSuffix("  stable"))
        reading.beyondCalibration = 180
        #expect(gauge.line(for: reading) == "   1.500 s    90%      412.0 g   [######################  ]  stable, beyond the heaviest calibration weight, 180 g")
    }
}
