import Testing
@testable import ScaleCore

/// The writer's text is what every client parses: keys in order, escapes as JSON wants them,
/// and whatever it writes parses back to what was put in.
@Suite struct JSONLineWriterTests {
    @Test func escapesWhatJSONRequiresAndCopiesTheRest() {
        var json = JSONLineWriter()
        json.add("plain", string: "Wacom Cintiq 13HD Pen")
        json.add("quote\"key", string: "say \"hi\"\\now")
        json.add("controls", string: "a\nb\rc\td\u{1}e\u{1F}")
        json.add("unicode", string: "Pâté 🍏 €")
        json.add("list", strings: ["x", "y\"z", ""])
        #expect(json.line == #"{"plain":"Wacom Cintiq 13HD Pen","quote\"key":"say \"hi\"\\now","controls":"a\nb\rc\td\u0001e\u001f","unicode":"Pâté 🍏 €","list":["x","y\"z",""]}"# + "\n")
        #expect(Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(json.object) } == .success(.object([
            "plain": .string("Wacom Cintiq 13HD Pen"), "quote\"key": .string("say \"hi\"\\now"),
            "controls": .string("a\nb\rc\td\u{1}e\u{1F}"), "unicode": .string("Pâté 🍏 €"),
            "list": .array([.string("x"), .string("y\"z"), .string("")]),
        ])))
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
    }
}
