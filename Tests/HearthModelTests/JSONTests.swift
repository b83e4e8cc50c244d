import Testing
@testable import HearthModel
import HearthTesting

private func byte(_ c: Unicode.Scalar) -> UInt8 { UInt8(ascii: c) }

/// Parses `text`, failing the test on error.
private func parsed(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    do {
        return try JSONValue.parse(text)
    } catch {
        Issue.record("unexpected \(error) for \(text)", sourceLocation: sourceLocation)
        throw error
    }
}

@Suite("JSON parsing")
struct JSONParsingTests {
    @Test("scalars, containers and surrounding whitespace")
    func basics() throws {
        #expect(try parsed("null") == .null)
        #expect(try parsed(" \t\r\n true \n") == .bool(true))
        #expect(try parsed("false") == .bool(false))
        #expect(try parsed("0") == .number(0))
        #expect(try parsed("-12.5e1") == .number(-125))
        #expect(try parsed("\"hi\"") == .string("hi"))
        #expect(try parsed("[]") == .array([]))
        #expect(try parsed("{ }") == .object([]))
        #expect(
            try parsed(#"[1, "a", [true, null], {"k": {}}]"#)
                == [1, "a", [true, .null], ["k": .object([])]])
        let v = try parsed(#"{"b": 1, "a": [2, 3], "c": {"d": "e"}}"#)
        #expect(v.objectMembers?.map(\.key) == ["b", "a", "c"])  // document order kept
        #expect(v["a"]?[1] == 3)
        #expect(v["c"]?["d"]?.stringValue == "e")
    }

    @Test("Bool is never a number")
    func boolVersusNumber() throws {
        let v = try parsed("[true, 1, false, 0]")
        #expect(v.arrayValue == [.bool(true), .number(1), .bool(false), .number(0)])
        #expect(v[0] != v[1])
        #expect(v[0]?.doubleValue == nil)
        #expect(v[1]?.boolValue == nil)
        #expect(v[0]?.boolValue == true)
        #expect(v[1]?.doubleValue == 1)
        #expect(v.serialized() == "[true,1,false,0]")
    }

    @Test("numbers: fast and slow paths, extremes, underflow")
    func numbers() throws {
        #expect(try parsed("123456789012345") == .number(123_456_789_012_345))
        #expect(try parsed("-1234567890123456") == .number(-1_234_567_890_123_456))
        #expect(try parsed("9007199254740993") == .integer(9_007_199_254_740_993))  // exact: beyond 2^53, within Int64
        #expect(try parsed("9007199254740993.0") == .number(9_007_199_254_740_992))  // not an integer literal: rounds
        #expect(try parsed("123456789012345678901234567890") == .number(1.2345678901234568e29))
        #expect(try parsed("1E3") == .number(1000))
        #expect(try parsed("1e+3") == .number(1000))
        #expect(try parsed("25e-1") == .number(2.5))
        #expect(try parsed("0.1") == .number(0.1))
        #expect(try parsed("1.7976931348623157e308") == .number(.greatestFiniteMagnitude))
        #expect(try parsed("-1.7976931348623157e308") == .number(-.greatestFiniteMagnitude))
        #expect(try parsed("5e-324") == .number(.leastNonzeroMagnitude))
        #expect(try parsed("1e-400") == .number(0))  // underflow rounds to zero, not an error
        let negativeZero = try #require(try parsed("-0").doubleValue)
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
    }

    @Test("strings: escapes, raw UTF-8, surrogate pairs, U+0000")
    func strings() throws {
        #expect(try parsed(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try parsed(#""\u0041\u00e9\u20AC""#) == .string("Aé€"))
        #expect(try parsed(#""\ud83d\ude00""#) == .string("😀"))
        #expect(try parsed(#""a\uD83D\uDE00b""#) == .string("a😀b"))
        #expect(try parsed("\"😀 é \u{2028}\"") == .string("😀 é \u{2028}"))
        #expect(try parsed(#""\u0000""#) == .string("\u{0}"))
        #expect(try parsed(#""\u007f""#) == .string("\u{7F}"))
        #expect(try parsed("\"\u{7F}\"") == .string("\u{7F}"))  // DEL is not a control char in JSON
    }

    @Test("canonically equivalent keys are distinct and kept byte-for-byte")
    func exactKeys() throws {
        let composed = "\u{E9}"  // é, U+00E9
        let decomposed = "e\u{301}"  // e + COMBINING ACUTE ACCENT
        #expect(composed == decomposed)  // Swift's String == says equal; we must not.

        for text in [#"{"\u00e9": 1, "e\u0301": 2}"#, "{\"\(composed)\": 1, \"\(decomposed)\": 2}"] {
            let v = try parsed(text)
            let members = try #require(v.objectMembers)
            #expect(members.count == 2)
            #expect(Array(members[0].key.utf8) == [0xC3, 0xA9])
            #expect(Array(members[1].key.utf8) == [0x65, 0xCC, 0x81])
            #expect(v[composed] == 1)
            #expect(v[decomposed] == 2)
            let again = try parsed(v.serialized())
            #expect(again == v)
            #expect(Array(again.objectMembers![1].key.utf8) == [0x65, 0xCC, 0x81])
        }
        #expect(JSONValue.string(composed) != JSONValue.string(decomposed))
        #expect(JSONValue.string(composed).hashValue == JSONValue.string("\u{E9}").hashValue)
        #expect(Set<JSONValue>([.string(composed), .string(decomposed)]).count == 2)
        #expect(JSONMember(key: composed, value: 1) != JSONMember(key: decomposed, value: 1))
    }

    @Test("UTF-8 byte input: arrays, UTF8View, non-contiguous collections")
    func byteInput() throws {
        let text = #"{"a":[1,"é😀",null]}"#
        let expected = try parsed(text)
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
        #expect(try JSONValue.parse(text.utf8) == expected)
        #expect(try JSONValue.parse(text.utf8.lazy.map { $0 }) == expected)
        #expect(try JSONValue.parse(ArraySlice(Array(("  " + text).utf8)).dropFirst(2)) == expected)
    }

    @Test("nesting depth limit")
    func depth() throws {
        #expect(try JSONValue.parse("[1]", maxDepth: 1) == [1])
        #expect(try JSONValue.parse("7", maxDepth: 0) == 7)
        #expect(throws: JSONError.tooDeep(maxDepth: 0, offset: 0)) { try JSONValue.parse("[]", maxDepth: 0) }
        #expect(throws: JSONError.tooDeep(maxDepth: 1, offset: 1)) { try JSONValue.parse("[[1]]", maxDepth: 1) }
        #expect(throws: JSONError.tooDeep(maxDepth: 1, offset: 5)) {
            try JSONValue.parse(#"{"a":{}}"#, maxDepth: 1)
        }
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONValue.parse(ok) != .null)
        let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONError.tooDeep(maxDepth: 512, offset: 512)) { try JSONValue.parse(tooDeep) }
        // The parser is iterative: even a huge limit cannot overflow the stack.
        let hostile = String(repeating: "[{\"a\":", count: 200_000)
        #expect(throws: JSONError.unexpectedEnd(expected: "a value")) {
            try JSONValue.parse(hostile, maxDepth: .max)
        }
        #expect(throws: JSONError.tooDeep(maxDepth: 512, offset: 1536)) { try JSONValue.parse(hostile) }
    }

    @Test("a generated 5 MB document parses")
    func largeDocument() throws {
        var text = "{\"items\":["
        var i = 0
        while text.utf8.count < 5_000_000 {
            if i > 0 { text += "," }
            text += #"{"id":\#(i),"name":"user \#(i) \u00e9\n😀","score":\#(Double(i) * 1.25),"#
            text += #""tags":["a","b\"c",true,false,null],"nested":{"x":-\#(i),"y":[1.5e10,2]}}"#
            i += 1
        }
        text += "]}"
        let v = try JSONValue.parse(text)
        let items = try #require(v["items"]?.arrayValue)
        #expect(items.count == i)
        #expect(items[7]["name"] == "user 7 é\n😀")
        #expect(items[7]["nested"]?["x"] == -7)
        #expect(try JSONValue.parse(Array(text.utf8)) == v)
    }

    @Test("random byte corruption never crashes")
    func fuzz() {
        var rng = SeededRandom(seed: 0x4845_4152_5448)
        let seed = Array(#"{"a":[1,-2.5e3,"x\u00e9\ud83d\ude00é",true,false,null],"b":{"c":{}}}"#.utf8)
        for _ in 0..<5_000 {
            var bytes = seed
            for _ in 0..<Int(rng.next() % 4 + 1) {
                let index = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: rng.next())
                case 1: bytes.remove(at: index)
                default: bytes.insert(UInt8(truncatingIfNeeded: rng.next()), at: index)
                }
                if bytes.isEmpty { break }
            }
            if let v = try? JSONValue.parse(bytes) {
                #expect((try? JSONValue.parse(v.serialized())) == v)
            }
        }
    }
}

@Suite("JSON rejections")
struct JSONRejectionTests {
    static let cases: [(String, JSONError)] = [
        // Structure
        ("", .unexpectedEnd(expected: "a value")),
        ("   ", .unexpectedEnd(expected: "a value")),
        ("[", .unexpectedEnd(expected: "a value")),
        ("[1", .unexpectedEnd(expected: "',' or ']'")),
        (#"{"a""#, .unexpectedEnd(expected: "':'")),
        (#"{"a":1"#, .unexpectedEnd(expected: "',' or '}'")),
        ("{", .unexpectedEnd(expected: "a string key")),
        ("[1,]", .unexpectedCharacter(offset: 3, found: byte("]"), expected: "a value")),
        (#"{"a":1,}"#, .unexpectedCharacter(offset: 7, found: byte("}"), expected: "a string key")),
        ("[,1]", .unexpectedCharacter(offset: 1, found: byte(","), expected: "a value")),
        ("[1 2]", .unexpectedCharacter(offset: 3, found: byte("2"), expected: "',' or ']'")),
        (#"{"a" 1}"#, .unexpectedCharacter(offset: 5, found: byte("1"), expected: "':'")),
        ("{a:1}", .unexpectedCharacter(offset: 1, found: byte("a"), expected: "a string key")),
        ("{'a':1}", .unexpectedCharacter(offset: 1, found: byte("'"), expected: "a string key")),
        ("[1}", .unexpectedCharacter(offset: 2, found: byte("}"), expected: "',' or ']'")),
        ("1 2", .trailingData(offset: 2)),
        ("[1]]", .trailingData(offset: 3)),
        ("{} x", .trailingData(offset: 3)),
        ("truex", .trailingData(offset: 4)),
        ("\u{FEFF}1", .unexpectedCharacter(offset: 0, found: 0xEF, expected: "a value")),
        // Literals
        ("tru", .unexpectedEnd(expected: "'true'")),
        ("True", .unexpectedCharacter(offset: 0, found: byte("T"), expected: "a value")),
        ("nul1", .unexpectedCharacter(offset: 3, found: byte("1"), expected: "'null'")),
        ("NaN", .unexpectedCharacter(offset: 0, found: byte("N"), expected: "a value")),
        ("nan", .unexpectedCharacter(offset: 1, found: byte("a"), expected: "'null'")),
        ("Infinity", .unexpectedCharacter(offset: 0, found: byte("I"), expected: "a value")),
        ("-Infinity", .invalidNumber(offset: 0)),
        // Numbers
        ("01", .invalidNumber(offset: 0)),
        ("-01", .invalidNumber(offset: 0)),
        ("[00]", .invalidNumber(offset: 1)),
        ("+1", .unexpectedCharacter(offset: 0, found: byte("+"), expected: "a value")),
        (".5", .unexpectedCharacter(offset: 0, found: byte("."), expected: "a value")),
        ("1.", .invalidNumber(offset: 0)),
        ("1.e5", .invalidNumber(offset: 0)),
        ("1e", .invalidNumber(offset: 0)),
        ("1e+", .invalidNumber(offset: 0)),
        ("-", .invalidNumber(offset: 0)),
        ("- 1", .invalidNumber(offset: 0)),
        ("0x10", .trailingData(offset: 1)),
        ("1e400", .numberOutOfRange(offset: 0)),
        ("-1e400", .numberOutOfRange(offset: 0)),
        ("[1, 2e308]", .numberOutOfRange(offset: 4)),
        ("1.8e308", .numberOutOfRange(offset: 0)),
        // Strings
        ("\"abc", .unexpectedEnd(expected: "'\"' to close the string")),
        ("\"a\\n", .unexpectedEnd(expected: "'\"' to close the string")),
        ("\"\\", .unexpectedEnd(expected: "an escape sequence")),
        ("\"a\tb\"", .controlCharacterInString(offset: 2)),
        ("\"a\nb\"", .controlCharacterInString(offset: 2)),
        ("\"\u{0}\"", .controlCharacterInString(offset: 1)),
        ("\"\\n\u{1F}\"", .controlCharacterInString(offset: 3)),
        (#""\x""#, .invalidEscape(offset: 1)),
        (#""\'""#, .invalidEscape(offset: 1)),
        (#""ab\U0041""#, .invalidEscape(offset: 3)),
        (#""\u12G4""#, .invalidEscape(offset: 1)),
        (#""\u12""#, .invalidEscape(offset: 1)),
        (#""\u12"#, .unexpectedEnd(expected: "four hex digits after '\\u'")),
        (#""\ud800""#, .invalidUnicode(offset: 1)),
        (#""\udc00""#, .invalidUnicode(offset: 1)),
        (#""a\ude00\ud83d""#, .invalidUnicode(offset: 2)),
        (#""\ud800\u0041""#, .invalidUnicode(offset: 1)),
        (#""\ud800\ud800""#, .invalidUnicode(offset: 1)),
        (#""\ud800x""#, .invalidUnicode(offset: 1)),
        (#""\ud800\n""#, .invalidUnicode(offset: 1)),
        (#""\ud800\uZZZZ""#, .invalidEscape(offset: 7)),
        // Duplicate keys (exact bytes; the same code points however they are spelled)
        (#"{"a":1,"a":2}"#, .duplicateKey("a", offset: 7)),
        (#"{"a":1,"b":{"a":1,"a":2}}"#, .duplicateKey("a", offset: 18)),
        ("{\"\\u00e9\":1,\"\u{E9}\":2}", .duplicateKey("\u{E9}", offset: 12)),
        (#"{"\ud83d\ude00":1,"😀":2}"#, .duplicateKey("😀", offset: 18)),
    ]

    @Test("each malformed text throws its typed error", arguments: 0..<cases.count)
    func rejects(_ index: Int) {
        let (text, error) = Self.cases[index]
        #expect(throws: error, "\(text)") { try JSONValue.parse(text) }
        #expect(throws: error, "\(text) as bytes") { try JSONValue.parse(Array(text.utf8)) }
    }

    @Test("duplicate detection in large objects (indexed path)")
    func largeObjectDuplicates() throws {
        let members = (0..<100).map { "\"k\($0)\":\($0)" }
        let good = "{" + members.joined(separator: ",") + "}"
        #expect(try JSONValue.parse(good).objectMembers?.count == 100)
        let bad = "{" + members.joined(separator: ",") + ",\"k42\":0}"
        #expect(throws: JSONError.duplicateKey("k42", offset: good.utf8.count)) { try JSONValue.parse(bad) }
        // Canonically-equivalent but distinct keys are fine in the indexed path too.
        let distinct = "{" + members.joined(separator: ",") + ",\"\u{E9}\":1,\"e\u{301}\":2}"
        #expect(try JSONValue.parse(distinct).objectMembers?.count == 102)
    }

    @Test(
        "invalid UTF-8 in byte input",
        arguments: [
            ([0x22, 0xFF, 0x22], 1),  // never valid
            ([0x22, 0x61, 0x80, 0x22], 2),  // lone continuation byte
            ([0x22, 0xC0, 0x80, 0x22], 1),  // overlong NUL
            ([0x22, 0xC1, 0xBF, 0x22], 1),  // overlong
            ([0x22, 0xE0, 0x80, 0x80, 0x22], 1),  // overlong 3-byte
            ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // encoded surrogate U+D800
            ([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], 1),  // above U+10FFFF
            ([0x22, 0xF0, 0x80, 0x80, 0x80, 0x22], 1),  // overlong 4-byte
            ([0x22, 0xE2, 0x82, 0x22], 1),  // truncated before the quote
            ([0x22, 0xE2, 0x82], 1),  // truncated at the end
            ([0x22, 0x5C, 0x6E, 0xC3, 0x22], 3),  // invalid after an escape (slow path)
        ] as [([UInt8], Int)])
    func invalidUTF8(_ bytes: [UInt8], offset: Int) {
        #expect(throws: JSONError.invalidUTF8(offset: offset)) { try JSONValue.parse(bytes) }
    }

    @Test("non-ASCII outside strings is an unexpected character")
    func nonASCIIOutsideStrings() {
        #expect(throws: JSONError.unexpectedCharacter(offset: 1, found: 0xC3, expected: "a value")) {
            try JSONValue.parse([0x5B, 0xC3, 0xA9, 0x5D] as [UInt8])
        }
    }

    @Test("offsets map to line and column")
    func lineAndColumn() throws {
        let text = "{\n  \"a\": 1,\n  \"b\": tru\n}"
        let error = try #require(throws: JSONError.self) { try JSONValue.parse(text) }
        #expect(error == .unexpectedCharacter(offset: 22, found: 0x0A, expected: "'true'"))
        #expect(error.offset == 22)
        let location = try #require(error.lineAndColumn(in: text))
        #expect(location.line == 3 && location.column == 11)
        #expect(JSONError.trailingData(offset: 0).lineAndColumn(in: "x")! == (1, 1))
        #expect(JSONError.unexpectedEnd(expected: "a value").offset == nil)
        #expect(JSONError.unexpectedEnd(expected: "a value").lineAndColumn(in: "") == nil)
    }

    @Test("error messages are readable")
    func messages() {
        #expect(
            JSONError.unexpectedCharacter(offset: 3, found: byte("]"), expected: "a value").description
                == "JSON error at byte 3: expected a value but found ']' (0x5D)")
        #expect(
            JSONError.unexpectedCharacter(offset: 0, found: 0x0A, expected: "a value").description
                == "JSON error at byte 0: expected a value but found byte 0x0A")
        #expect(
            JSONError.duplicateKey("a", offset: 7).description
                == "JSON error at byte 7: duplicate object key \"a\"")
        #expect(JSONError.tooDeep(maxDepth: 512, offset: 512).description.contains("512"))
        #expect(
            JSONError.unexpectedEnd(expected: "':'").description
                == "JSON error: the text ended early; expected ':'")
    }
}

@Suite("JSON writing")
struct JSONWritingTests {
    @Test(
        "number formatting",
        arguments: [
            (4.0, "4"), (-12, "-12"), (0, "0"), (-0.0, "0"), (4.5623, "4.5623"), (0.1, "0.1"),
            (1e-7, "1e-7"), (1e300, "1e+300"), (-1e300, "-1e+300"), (.leastNonzeroMagnitude, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (9_007_199_254_740_991, "9007199254740991"), (-9_007_199_254_740_991, "-9007199254740991"),
            (4_010_000_000_000_000, "4010000000000000"), (1e16, "10000000000000000"),
            (123_456_789_012_345.6, "123456789012345.6"), (.nan, "null"), (.infinity, "null"),
        ] as [(Double, String)])
    func numbers(_ value: Double, _ text: String) throws {
        #expect(JSONValue.number(value).serialized() == text)
        if value.isFinite {
            // What we print is valid JSON that reads back as the same Double.
            let back = try #require(try JSONValue.parse(text).doubleValue)
            #expect(back == value)
        }
    }

    @Test("4.0 parses to 4 and prints 4; 2^53 prints valid JSON")
    func fourPointZero() throws {
        #expect(try JSONValue.parse("4.0") == .number(4))
        #expect(try JSONValue.parse("4.0").serialized() == "4")
        #expect(try JSONValue.parse("-0.0").serialized() == "0")
        #expect(try JSONValue.parse("40e-1").serialized() == "4")
        let big = JSONValue.number(9_007_199_254_740_992).serialized()
        #expect(try JSONValue.parse(big) == .number(9_007_199_254_740_992))
    }

    @Test("string escaping")
    func strings() {
        let s = "a\"b\\c/\n\r\t\u{8}\u{C}\u{0}\u{1}\u{1F}\u{7F}é😀\u{2028}\u{2029}"
        #expect(
            JSONValue.string(s).serialized()
                == "\"a\\\"b\\\\c/\\n\\r\\t\\b\\f\\u0000\\u0001\\u001f\u{7F}é😀\u{2028}\u{2029}\"")
        #expect(JSONValue.string("").serialized() == "\"\"")
        #expect(JSONValue.string("\u{1A}x").serialized() == "\"\\u001ax\"")
    }

    @Test("compact containers and literal syntax")
    func containers() {
        let v: JSONValue = ["b": [1, 2.5, "x", true, false, .null], "a": [:], "c": []]
        #expect(v.serialized() == #"{"b":[1,2.5,"x",true,false,null],"a":{},"c":[]}"#)
        #expect(v.serialized(sortKeys: true) == #"{"a":{},"b":[1,2.5,"x",true,false,null],"c":[]}"#)
        #expect("\(v)" == v.serialized())
    }

    @Test("sortKeys uses UTF-16 code unit order, recursively, keeping equivalent keys apart")
    func sortKeys() throws {
        // U+FF61 sorts before U+1F600 by scalar value, but after it by UTF-16 code units
        // (0xFF61 > 0xD83D), which is JavaScript's order.
        let v = try JSONValue.parse(#"{"｡":1,"😀":2,"b":{"z":1,"A":2},"a":3,"e\u0301":4,"\u00e9":5}"#)
        #expect(
            v.serialized(sortKeys: true)
                == "{\"a\":3,\"b\":{\"A\":2,\"z\":1},\"e\u{301}\":4,\"\u{E9}\":5,\"😀\":2,\"｡\":1}")
        #expect(v.serialized() == "{\"｡\":1,\"😀\":2,\"b\":{\"z\":1,\"A\":2},\"a\":3,\"e\u{301}\":4,\"\u{E9}\":5}")
    }

    @Test("append into existing buffers")
    func appending() {
        var bytes: [UInt8] = Array("x=".utf8)
        JSONValue.array([1, "é"]).write(to: &bytes)
        #expect(bytes == Array("x=[1,\"é\"]".utf8))
        var text = "y="
        JSONValue.object([JSONMember(key: "k", value: .null)]).write(to: &text)
        #expect(text == #"y={"k":null}"#)
    }

    @Test(
        "round trips: parse → serialize → parse is equal and serialization is stable",
        arguments: [
            "null", "true", "[]", "{}", "0", "-0", "1.5", "-2.5e-8", "1e300", "5e-324",
            #""\u0000\u001f\"\\ é 😀 \u2028""#,
            #"[1,[2,[3,[4,{"a":[{"b":null}]}]]]]"#,
            #"{"z":1,"a":{"y":[true,false,null,"s"],"x":-3.25},"\u00e9":1,"e\u0301":2}"#,
            "  {\n  \"pretty\" : [ 1 , 2 ] ,\n  \"x\" : { }\n}\n",
        ])
    func roundTrip(_ text: String) throws {
        let v = try JSONValue.parse(text)
        let once = v.serialized()
        let w = try JSONValue.parse(once)
        #expect(w == v)
        #expect(w.serialized() == once)
        #expect(
            try JSONValue.parse(v.serialized(sortKeys: true)).serialized(sortKeys: true)
                == v.serialized(sortKeys: true))
    }
}

@Suite("JSONValue API")
struct JSONValueAPITests {
    @Test("accessors return nil for the wrong case")
    func accessors() {
        let v: JSONValue = ["s": "str", "n": 2, "b": true, "a": [1], "o": ["k": .null], "z": .null]
        #expect(v["s"]?.stringValue == "str")
        #expect(v["n"]?.doubleValue == 2)
        #expect(v["b"]?.boolValue == true)
        #expect(v["a"]?.arrayValue == [1])
        #expect(v["o"]?.objectMembers == [JSONMember(key: "k", value: .null)])
        #expect(v["z"]?.isNull == true)
        #expect(v["missing"] == nil)
        #expect(v["s"]?.doubleValue == nil)
        #expect(v["n"]?.stringValue == nil)
        #expect(v["a"]?["k"] == nil)
        #expect(v["a"]?[0] == 1)
        #expect(v["a"]?[1] == nil)
        #expect(v["a"]?[-1] == nil)
        #expect(v[0] == nil)
        #expect(v.isNull == false)
    }

    @Test("equality is order-sensitive for objects; hashing agrees with equality")
    func equality() {
        let ab: JSONValue = ["a": 1, "b": 2]
        let ba: JSONValue = ["b": 2, "a": 1]
        #expect(ab != ba)
        #expect(ab.serialized(sortKeys: true) == ba.serialized(sortKeys: true))
        #expect(JSONValue.number(0) == JSONValue.number(-0.0))
        #expect(JSONValue.number(0).hashValue == JSONValue.number(-0.0).hashValue)
        #expect(Set<JSONValue>([ab, ["a": 1, "b": 2], ba]).count == 2)
        #expect(JSONValue.array([]) != JSONValue.object([]))
        #expect(JSONValue.string("1") != JSONValue.number(1))
    }
}
