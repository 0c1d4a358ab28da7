import Testing
@testable import ScaleProtocol
@testable import ScaleCore

/// The writer's text is what every client parses: keys in order, escapes as JSON wants them,
/// and whatever it writes parses back to what was put in.
@Suite struct JSONLineWriterTests {
    @Test func escapesWhatJSONRequiresAndCopiesTheRest() {
        var json = JSONLineWriter()
        json.add("plain", string: "Wacom Cintiq 13HD Pen")
        json.add("quoted", string: "say \"hi\"\\now")
        json.add("controls", string: "a\nb\rc\td\u{1}e\u{1F}")
        json.add("unicode", string: "Pâté 🍏 €")
        json.add("list", strings: ["x", "y\"z", ""])
        #expect(json.line == #"{"plain":"Wacom Cintiq 13HD Pen","quoted":"say \"hi\"\\now","controls":"a\nb\rc\td\u0001e\u001f","unicode":"Pâté 🍏 €","list":["x","y\"z",""]}"# + "\n")
        #expect(Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(json.object) } == .success(.object([
            "plain": .string("Wacom Cintiq 13HD Pen"), "quoted": .string("say \"hi\"\\now"),
            "controls": .string("a\nb\rc\td\u{1}e\u{1F}"), "unicode": .string("Pâté 🍏 €"),
            "list": .array([.string("x"), .string("y\"z"), .string("")]),
        ])))
    }

    /// Keys are literals of the code, written as they are; a key made at run time (a fit's
    /// parameter names) goes through `add(name:number:decimals:)`, which escapes it.
    @Test func aKeyMadeAtRunTimeIsEscaped() {
        var json = JSONLineWriter()
        json.add("first", integer: 1)
        json.add(name: "quote\"key\\", number: 1.24, decimals: 1)
        json.add(name: "unused", number: .nan, decimals: 1)
        json.add(name: "a", number: -2, decimals: 0)
        #expect(json.object == #"{"first":1,"quote\"key\\":1.2,"a":-2.0}"#)
        var alone = JSONLineWriter()
        alone.add(name: "k", number: 3, decimals: 0)
        #expect(alone.object == #"{"k":3.0}"#)
    }

    @Test func numbersBooleansAndNestedObjectsKeepTheirOrder() {
        var inner = JSONLineWriter()
        inner.add("g", number: 20.04, decimals: 1)
        inner.add("raw", integer: -3)
        var json = JSONLineWriter()
        json.add("missing", string: nil)
        json.add("n", number: 0.12345, decimals: 4)
        json.add("neg", number: -0.00001, decimals: 2)
        json.add("ok", bool: true)
        json.add("time", literal: "1382570965.747302")
        json.add("point", object: inner)
        json.add("points", objects: [inner, inner])
        json.add("none", objects: [])
        #expect(json.object == #"{"n":0.1235,"neg":0.0,"ok":true,"time":1382570965.747302,"point":{"g":20.0,"raw":-3},"points":[{"g":20.0,"raw":-3},{"g":20.0,"raw":-3}],"none":[]}"#)
        // The line three ways, the same bytes: as a String, appended to bytes, in its own array.
        var appended = Array("before ".utf8)
        json.appendLine(to: &appended)
        #expect(appended == Array("before \(json.line)".utf8))
        #expect(json.lineBytes() == Array(json.line.utf8) && json.line.hasSuffix("}\n"))
    }

    /// Numbers are written from their digits, not through `description`: they must come out
    /// as `description` wrote them, byte for byte, over the whole range a line can carry.
    @Test func roundedNumbersComeOutAsDescriptionWritesThem() {
        var values: [Double] = [
            0, -0.0, 0.5, -0.5, 0.05, 0.00005, 0.000049999, -0.00005, 0.0001, 1e-7, 77, 77.04999, 385,
            0.1 + 0.2, 999_999_999.99994, 999_999_999.99996, 1e9, -1e9, 123_456_789.123456, 1e15, 1e16,
            9_007_199_254_740_992, 1e300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
        ]
        // And a spread of magnitudes from 10^-6 to 10^11, both signs (a fixed generator).
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let mantissa = Double(state >> 11) / Double(1 << 53)
            let exponent = Int((state >> 3) % 18) - 6
            var scale = 1.0
            for _ in 0..<abs(exponent) { scale *= 10 }
            let value = exponent < 0 ? mantissa / scale : mantissa * scale
            values.append(state & 1 == 0 ? value : -value)
        }
        for decimals in 0...6 {
            for value in values {
                var bytes: [UInt8] = []
                DecimalDigits.appendRounded(value, decimals: decimals, to: &bytes)
                let expected = JSONLineWriter.round(value, decimals: decimals).description
                #expect(String(decoding: bytes, as: UTF8.self) == expected, "\(value) to \(decimals) decimals")
            }
        }
    }

    @Test func integersAndTimesComeOutAsTheirDescriptions() {
        for value in [0, 1, -1, 9, 10, -10, 1_000_000, Int.max, Int.min, Int(Int32.min)] {
            var json = JSONLineWriter()
            json.add("n", integer: value)
            #expect(json.object == "{\"n\":\(String(value))}")
        }
        let times: [(Int64, String)] = [
            (0, "0.000000"), (1, "0.000001"), (-1, "-0.000001"), (1_000_000, "1.000000"),
            (-1_500_000, "-1.500000"), (1_382_570_965_747_302, "1382570965.747302"),
        ]
        for (microseconds, text) in times {
            #expect(EventTime(microseconds: microseconds).description == text)
            var json = JSONLineWriter()
            json.add("time", time: EventTime(microseconds: microseconds))
            #expect(json.object == "{\"time\":\(text)}")
        }
    }
}
