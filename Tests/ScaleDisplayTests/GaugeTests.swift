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

    /// A saturated reading is a lower bound everywhere the gauge shows it: the weight's
    /// column, the words, and the line left when the weight is lifted.
    @Test func aSaturatedReadingIsShownAsALowerBound() {
        let reading = ReadingMessage(
            time: EventTime(microseconds: 2_000_000), raw: 255, force: 1, grams: 384.8, saturated: true, contacts: 1,
            stable: true, model: .nominal, settledGrams: 384.6)
        let plain = Gauge(style: .plain, unit: .grams, origin: EventTime(microseconds: 0))
        #expect(plain.line(for: reading) == "   2.000 s  100%+    >=384.6 g   [########################]  stable, at least 384.6 g (saturated)")
        #expect(plain.liftLine(at: EventTime(microseconds: 3_000_000), lastStable: reading) == "   3.000 s  weighed at least 384.6 g (saturated)")
        let unicode = Gauge(style: GaugeStyle(unicode: true, color: false), unit: .ounces, origin: EventTime(microseconds: 0))
        #expect(unicode.line(for: reading).contains("  ≥13.566 oz  "), "\(unicode.line(for: reading))")
        #expect(unicode.line(for: reading).hasSuffix("stable, at least 13.566 oz (saturated)"))
        var unsaturated = reading
        unsaturated.saturated = false
        #expect(!plain.line(for: unsaturated).contains("at least") && !plain.line(for: unsaturated).contains(">="))
        #expect(plain.liftLine(at: EventTime(microseconds: 3_000_000), lastStable: unsaturated) == "   3.000 s  weighed 384.6 g (stable)")
    }
}
