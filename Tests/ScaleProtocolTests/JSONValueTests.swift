import Testing
@testable import ScaleProtocol
@testable import ScaleCore

/// Parses, returning the error instead of throwing it, so that `#expect` can compare.
private func parsed(_ text: String) -> Result<JSONValue, JSONParseError> {
    Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(text) }
}

private func parsed(bytes: [UInt8]) -> Result<JSONValue, JSONParseError> {
    Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(bytes) }
}

private func failure(_ offset: Int, _ message: String) -> Result<JSONValue, JSONParseError> {
    .failure(JSONParseError(offset: offset, message: message))
}

@Suite struct JSONValueTests {
    // MARK: Valid documents

    @Test func scalarsAtTheTop() {
        #expect(parsed("null") == .success(.null))
        #expect(parsed("true") == .success(.bool(true)))
        #expect(parsed("false") == .success(.bool(false)))
        #expect(parsed("0") == .success(.number(0)))
        #expect(parsed("-0") == .success(.number(-0.0)))
        #expect(parsed("42") == .success(.number(42)))
        #expect(parsed("-12.5e3") == .success(.number(-12500)))
        #expect(parsed("1E+2") == .success(.number(100)))
        #expect(parsed("25e-2") == .success(.number(0.25)))
        #expect(parsed("0.125") == .success(.number(0.125)))
        #expect(parsed(#""POLL""#) == .success(.string("POLL")))
        #expect(parsed(#""""#) == .success(.string("")))
    }

    @Test func whitespaceAroundValuesAndTokens() {
        #expect(parsed(" \t\r\n 1 \n") == .success(.number(1)))
        #expect(parsed("{ \"a\" :\t[ 1 ,\r\n2 ] }\r\n") == .success(.object(["a": .array([.number(1), .number(2)])])))
    }

    @Test func containers() {
        #expect(parsed("[]") == .success(.array([])))
        #expect(parsed("{}") == .success(.object([:])))
        #expect(parsed(#"[null,true,"x",[{}],{"k":[]}]"#) == .success(.array([
            .null, .bool(true), .string("x"), .array([.object([:])]), .object(["k": .array([])]),
        ])))
        let request = parsed(#"{"class":"CALIBRATE","grams":100.0,"extra":{"nested":[1,2,3]}}"#)
        #expect(request == .success(.object([
            "class": .string("CALIBRATE"),
            "grams": .number(100),
            "extra": .object(["nested": .array([.number(1), .number(2), .number(3)])]),
        ])))
    }

    @Test func duplicateKeysKeepTheLastValue() {
        #expect(parsed(#"{"a":1,"b":2,"a":3}"#) == .success(.object(["a": .number(3), "b": .number(2)])))
    }

    /// Numbers of up to 15 digits are worked out from their digits: they must be the
    /// `Double` that `strtod` (through `Double(String)`) gives, bit for bit, whatever the
    /// digits, and the longer or exponent forms keep going through it.
    @Test func numbersAreTheDoublesStrtodGives() {
        var generator = SystemRandomNumberGenerator()
        var texts = ["0", "-0", "0.0", "1", "-1", "0.1", "0.2", "0.3", "1.5", "77.0", "8123.401022", "1364787582.957445",
                     "0.000001", "0.0012", "999999999999999", "999999999999999.9", "123456789012345", "1234567890123456",
                     "0.12345678901234567", "4503599627370497", "9007199254740993", "1e3", "1.5E-7", "-2.5e+2", "100.000000000000000"]
        for _ in 0..<20_000 {
            let integer = UInt64.random(in: 0...9_999_999_999, using: &generator)
            let fraction = String(UInt64.random(in: 0...999_999, using: &generator))
            let decimals = Int.random(in: 0...6, using: &generator)
            let sign = Bool.random(using: &generator) ? "-" : ""
            texts.append(decimals == 0 ? "\(sign)\(integer)" : "\(sign)\(integer).\(String(repeating: "0", count: max(0, decimals - fraction.count)))\(fraction.prefix(decimals))")
        }
        for text in texts {
            guard case .success(.number(let value)) = parsed(text), let expected = Double(text) else {
                Issue.record("\(text) did not parse as a number")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) against strtod's \(expected)")
        }
    }

    @Test func accessors() throws {
        let value = try JSONValue.parse(#"{"s":"x","b":false,"n":1.5,"a":[null],"o":{}}"#)
        #expect(value["s"]?.stringValue == "x")
        #expect(value["b"]?.boolValue == false)
        #expect(value["n"]?.numberValue == 1.5)
        #expect(value["a"]?.arrayValue == [.null])
        #expect(value["a"]?.arrayValue?.first?.isNull == true)
        #expect(value["o"]?.objectValue == [:])
        #expect(value["missing"] == nil)
        #expect(value["s"]?.numberValue == nil)
        #expect(JSONValue.array([])["s"] == nil)
    }

    // MARK: Strings

    @Test func simpleEscapes() {
        #expect(parsed(#""\"\\\/\b\f\n\r\t""#) == .success(.string("\"\\/\u{08}\u{0C}\n\r\t")))
        #expect(parsed(#""a\nb""#) == .success(.string("a\nb")))
    }

    @Test func unicodeEscapes() {
        #expect(parsed(#""\u0041\u00e9\u20AC""#) == .success(.string("Aé€")))
        #expect(parsed(#""\u0000""#) == .success(.string("\u{0}")))
        // A surrogate pair is one scalar outside the basic plane.
        #expect(parsed(#""\uD83D\uDE00""#) == .success(.string("😀")))
        #expect(parsed(#""x\ud834\udd1ey""#) == .success(.string("x𝄞y")))
        #expect(parsed(#""\uDBFF\uDFFF""#) == .success(.string("\u{10FFFF}")))
    }

    @Test func rawUTF8PassesThroughAndMixesWithEscapes() {
        #expect(parsed(#""é😀 Magic Trackpad""#) == .success(.string("é😀 Magic Trackpad")))
        #expect(parsed(#""é\t😀""#) == .success(.string("é\t😀")))
    }

    @Test func invalidEscapes() {
        #expect(parsed(#""a\qb""#) == failure(2, "invalid escape '\\q'"))
        #expect(parsed(#""\u12""#) == failure(5, "\\u needs 4 hex digits"))
        #expect(parsed(#""\u12G4""#) == failure(5, "\\u needs 4 hex digits"))
        #expect(parsed(#""\u"#) == failure(3, "\\u needs 4 hex digits"))
        #expect(parsed(#""\"#) == failure(2, "unterminated string"))
        // Lone surrogates cannot be a Swift String: an error at the escape.
        #expect(parsed(#""\uD800""#) == failure(1, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""ab\uD800x""#) == failure(3, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""\uD800\u0041""#) == failure(1, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""\uD800\uD800""#) == failure(1, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""\uDC00\uD800""#) == failure(1, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""\uD800\n""#) == failure(1, "unpaired surrogate in \\u escape"))
        #expect(parsed(#""\uD800\u00""#) == failure(11, "\\u needs 4 hex digits"))
    }

    @Test func controlCharactersMustBeEscaped() {
        #expect(parsed("\"a\tb\"") == failure(2, "control characters in strings must be escaped"))
        #expect(parsed("\"a\nb\"") == failure(2, "control characters in strings must be escaped"))
        #expect(parsed(bytes: [0x22, 0x00, 0x22]) == failure(1, "control characters in strings must be escaped"))
        // DEL is not a control character for JSON.
        #expect(parsed("\"\u{7F}\"") == .success(.string("\u{7F}")))
    }

    @Test func unterminatedString() {
        #expect(parsed(#""abc"#) == failure(4, "unterminated string"))
        #expect(parsed(#"{"class"#) == failure(7, "unterminated string"))
    }

    @Test func invalidUTF8IsRejectedWhereItStarts() {
        let cases: [[UInt8]] = [
            [0x22, 0x61, 0xC3, 0x28, 0x22],  // a lead byte without its continuation
            [0x22, 0x61, 0x80, 0x22],  // a lone continuation byte
            [0x22, 0x61, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0x61, 0xE0, 0x80, 0xAF, 0x22],  // overlong, three bytes
            [0x22, 0x61, 0xED, 0xA0, 0x80, 0x22],  // an encoded surrogate
            [0x22, 0x61, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0x61, 0xF5, 0x80, 0x80, 0x80, 0x22],  // no such lead byte
            [0x22, 0x61, 0xE2, 0x82],  // cut short
            [0x22, 0x61, 0xFF, 0x22],
        ]
        for bytes in cases {
            #expect(parsed(bytes: bytes) == failure(2, "invalid UTF-8"), "\(bytes)")
        }
        // The longest valid sequences of each length.
        #expect(parsed(bytes: [0x22, 0xDF, 0xBF, 0xEF, 0xBF, 0xBF, 0xF4, 0x8F, 0xBF, 0xBF, 0x22])
            == .success(.string("\u{7FF}\u{FFFF}\u{10FFFF}")))
        // Outside strings a non-ASCII byte is just unexpected; a byte order mark is not whitespace.
        #expect(parsed(bytes: [0xEF, 0xBB, 0xBF, 0x31]) == failure(0, "expected a value"))
        #expect(parsed(bytes: [0x5B, 0xC3, 0xA9, 0x5D]) == failure(1, "expected a value"))
    }

    // MARK: Numbers

    @Test func numberGrammar() {
        #expect(parsed("01") == failure(0, "leading zeros are not allowed"))
        #expect(parsed("-01") == failure(0, "leading zeros are not allowed"))
        #expect(parsed("[1,00]") == failure(3, "leading zeros are not allowed"))
        #expect(parsed("1.") == failure(2, "unexpected end of input, expected a digit after '.'"))
        #expect(parsed("1.e5") == failure(2, "expected a digit after '.'"))
        #expect(parsed("1e") == failure(2, "unexpected end of input, expected a digit in the exponent"))
        #expect(parsed("1e+") == failure(3, "unexpected end of input, expected a digit in the exponent"))
        #expect(parsed("[1e-x]") == failure(4, "expected a digit in the exponent"))
        #expect(parsed("-") == failure(1, "unexpected end of input, expected a digit"))
        #expect(parsed("-a") == failure(1, "expected a digit"))
        #expect(parsed("+1") == failure(0, "expected a value"))
        #expect(parsed(".5") == failure(0, "expected a value"))
        #expect(parsed("0x10") == failure(1, "unexpected data after the JSON value"))
        #expect(parsed("1 2") == failure(2, "unexpected data after the JSON value"))
    }

    @Test func nanAndInfinityAreRejected() {
        #expect(parsed("NaN") == failure(0, "NaN and Infinity are not JSON numbers"))
        #expect(parsed("Infinity") == failure(0, "NaN and Infinity are not JSON numbers"))
        #expect(parsed("-Infinity") == failure(1, "NaN and Infinity are not JSON numbers"))
        #expect(parsed(#"{"grams":NaN}"#) == failure(9, "NaN and Infinity are not JSON numbers"))
        #expect(parsed("nan") == failure(0, "expected 'null'"))
    }

    @Test func bigAndSmallNumbers() {
        #expect(parsed("1.7976931348623157e308") == .success(.number(.greatestFiniteMagnitude)))
        #expect(parsed("-1.7976931348623157e308") == .success(.number(-.greatestFiniteMagnitude)))
        #expect(parsed("9007199254740993") == .success(.number(9007199254740992)))
        #expect(parsed(String(repeating: "9", count: 300)) == .success(.number(1e300)))
        // Too small to represent is zero, which is finite.
        #expect(parsed("1e-400") == .success(.number(0)))
        #expect(parsed("4.9e-324") == .success(.number(.leastNonzeroMagnitude)))
        #expect(parsed("1e-99999999999999999999") == .success(.number(0)))
        // Too big to represent is an error, never infinity.
        #expect(parsed("1e309") == failure(0, "number out of range"))
        #expect(parsed("[-1e400]") == failure(1, "number out of range"))
        #expect(parsed("1e99999999999999999999") == failure(0, "number out of range"))
        #expect(parsed(String(repeating: "9", count: 400)) == failure(0, "number out of range"))
        let long = "0." + String(repeating: "1", count: 100_000)
        #expect(parsed(long) == .success(.number(0.1111111111111111)))
    }

    // MARK: Structure

    @Test func structuralErrorsWithOffsets() {
        #expect(parsed("") == failure(0, "unexpected end of input, expected a value"))
        #expect(parsed("   ") == failure(3, "unexpected end of input, expected a value"))
        #expect(parsed(#"{"a" 1}"#) == failure(5, "expected ':'"))
        #expect(parsed(#"{"class" "POLL"}"#) == failure(9, "expected ':'"))
        #expect(parsed(#"{"class":"POLL""#) == failure(15, "unexpected end of input, expected ',' or '}'"))
        #expect(parsed(#"{"a":1 "b":2}"#) == failure(7, "expected ',' or '}'"))
        #expect(parsed("[1 2]") == failure(3, "expected ',' or ']'"))
        #expect(parsed("[1,2,]") == failure(5, "trailing comma before ']'"))
        #expect(parsed(#"{"a":1,}"#) == failure(7, "trailing comma before '}'"))
        #expect(parsed(#"{"a":1, }"#) == failure(8, "trailing comma before '}'"))
        #expect(parsed("{,}") == failure(1, "expected a string key"))
        #expect(parsed("{a:1}") == failure(1, "expected a string key"))
        #expect(parsed("{'a':1}") == failure(1, "expected a string key"))
        #expect(parsed("[,1]") == failure(1, "expected a value"))
        #expect(parsed(#"{"a":}"#) == failure(5, "expected a value"))
        #expect(parsed("[") == failure(1, "unexpected end of input, expected a value"))
        #expect(parsed("]") == failure(0, "expected a value"))
        #expect(parsed("{}}") == failure(2, "unexpected data after the JSON value"))
    }

    @Test func literalsAreExact() {
        #expect(parsed("tru") == failure(0, "expected 'true'"))
        #expect(parsed("[fals]") == failure(1, "expected 'false'"))
        #expect(parsed("nul") == failure(0, "expected 'null'"))
        #expect(parsed("True") == failure(0, "expected a value"))
        #expect(parsed("truex") == failure(4, "unexpected data after the JSON value"))
    }

    @Test func commentsAreRejected() {
        #expect(parsed(#"{"class":"POLL"} // poll"#) == failure(17, "comments are not allowed"))
        #expect(parsed("/* hi */ 1") == failure(0, "comments are not allowed"))
        #expect(parsed("[1,/*x*/2]") == failure(3, "comments are not allowed"))
    }

    @Test func nestingIsLimited() {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect((try? JSONValue.parse(deepest)) != nil)
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(parsed(tooDeep) == failure(64, "nesting deeper than 64 levels"))
        // Far deeper input fails at the same place instead of exhausting the stack.
        #expect(parsed(String(repeating: "[", count: 1_000_000)) == failure(64, "nesting deeper than 64 levels"))
        let objects = String(repeating: #"{"a":"#, count: 100_000)
        #expect(parsed(objects) == failure(5 * 64, "nesting deeper than 64 levels"))
        // Depth is nesting, not the number of containers: many siblings are fine.
        let siblings = "[" + Array(repeating: "[[]]", count: 10_000).joined(separator: ",") + "]"
        #expect(parsed(siblings).map { $0.arrayValue?.count } == .success(10_000))
    }

    @Test func offsetsCountUTF8BytesOfTheSubstring() {
        let text = "ignored é {\"é\":x}"
        let start = text.firstIndex(of: "{")!
        let result = Result { () throws(JSONParseError) -> JSONValue in try JSONValue.parse(text[start...]) }
        // "{", the two-byte "é" in quotes, ":" put the "x" at byte 6.
        #expect(result == failure(6, "expected a value"))
    }

    @Test func errorDescription() {
        #expect(JSONParseError(offset: 12, message: "expected ':'").description == "malformed JSON at byte 12: expected ':'")
    }

    // MARK: Robustness

    /// 100,000 random lines and 100,000 mutations of valid ones, from a fixed seed: each
    /// either parses or throws with an offset inside the input; none traps or hangs. Request
    /// parsing and ERROR encoding get the same lines, and every ERROR line must itself parse.
    @Test func randomAndMutatedLinesNeverTrap() {
        var random = SplitMix64(seed: 0x5CA1E)
        let seeds: [[UInt8]] = [
            #"{"class":"WATCH","enable":true,"device":"event5"}"#,
            #"{"class":"CALIBRATE","grams":100.0}"#,
            #"{"class":"CALIBRATION","reset":true}"#,
            #"{"class":"RUMBLE","pattern":"success"}"#,
            #"{"a":[1,-2.5e-3,true,false,null,{"b":"\u00e9\uD83D\uDE00\n\\"}],"c":{}}"#,
            #"[[[[[[{"x":[0,1e308,-0.0]}]]]]]]"#,
            "\"é😀\"",
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]":,\/ntfrueals0123456789-+.eEuDd"#.utf8) + [0x20, 0x09, 0x0A, 0x00, 0x80, 0xC3, 0xED, 0xF4, 0xFF]
        var parsedCount = 0
        var failedCount = 0
        for round in 0..<200_000 {
            var line: [UInt8]
            if round % 2 == 0 {
                let length = Int(random.next() % 96)
                line = (0..<length).map { _ in
                    random.next() % 4 == 0 ? UInt8(truncatingIfNeeded: random.next()) : alphabet[Int(random.next() % UInt64(alphabet.count))]
                }
            } else {
                line = seeds[Int(random.next() % UInt64(seeds.count))]
                for _ in 0...(random.next() % 4) { mutate(&line, random: &random, alphabet: alphabet) }
            }
            do {
                _ = try JSONValue.parse(line)
                parsedCount += 1
            } catch {
                failedCount += 1
                if error.offset < 0 || error.offset > line.count {
                    Issue.record("offset \(error.offset) outside \(line.count) bytes: \(line)")
                }
            }
            if case .failure(let error) = ClientRequest.parse(line: line) {
                let reply = error.line
                let value = try? JSONValue.parse(reply)
                if value?["class"] != .string("ERROR") || value?["message"] != .string(error.message) {
                    Issue.record("ERROR line does not parse back: \(reply)")
                }
            }
        }
        #expect(parsedCount + failedCount == 200_000)
        // The mutations leave a fair share valid, so success paths are exercised too.
        #expect(parsedCount > 5_000)
        #expect(failedCount > 100_000)
    }

    /// Changes a line the way a fuzzer does: replace, insert, delete, duplicate, truncate.
    private func mutate(_ line: inout [UInt8], random: inout SplitMix64, alphabet: [UInt8]) {
        let position = line.isEmpty ? 0 : Int(random.next() % UInt64(line.count))
        let byte = random.next() % 3 == 0 ? UInt8(truncatingIfNeeded: random.next()) : alphabet[Int(random.next() % UInt64(alphabet.count))]
        switch random.next() % 5 {
        case 0 where !line.isEmpty: line[position] = byte
        case 1: line.insert(byte, at: position)
        case 2 where !line.isEmpty: line.remove(at: position)
        case 3 where !line.isEmpty:
            let end = min(line.count, position + 1 + Int(random.next() % 8))
            line.insert(contentsOf: line[position..<end], at: position)
        default: line.removeSubrange(position..<line.count)
        }
    }
}
