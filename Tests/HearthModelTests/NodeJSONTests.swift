import Testing
@testable import HearthModel

@Suite struct NodeJSONTests {
    @Test(arguments: [
        #"{"a":1,"b":{"c":"x","d":true}}"#,
        #"{"a":{".value":1,".priority":"p"}}"#,
        #"{"a":{"b":1,".priority":2.5}}"#,
        #"{"s":{".sv":"timestamp"},"n":{".sv":{"increment":2}}}"#,
        #""just a string""#,
        "4",
        "null",
        #"{"\u00e9":1,"e\u0301":2}"#,
    ])
    func exportRoundTrip(_ text: String) throws {
        let node = try Node(jsonText: text)
        let again = try Node(jsonText: node.exportJSONString())
        #expect(again == node)
        #expect(again.exportJSONString() == node.exportJSONString())
    }

    @Test func wholeNumbersPrintWithoutFraction() throws {
        #expect(try Node(jsonText: "4.0").plainJSONString() == "4")
        #expect(
            try Node(jsonText: #"{"a":4,"b":4.5,"c":-0.0,"d":1e21}"#).plainJSONString()
                == #"{"a":4,"b":4.5,"c":0,"d":1e+21}"#)
    }

    @Test func boolStaysDistinctFromNumbers() throws {
        let node = try Node(jsonText: #"{"t":true,"one":1,"f":false,"zero":0}"#)
        #expect(node.child("t").leafValue == .bool(true))
        #expect(node.child("one").leafValue == .number(1))
        #expect(node.plainJSONString() == #"{"f":false,"one":1,"t":true,"zero":0}"#)
    }

    @Test func plainDropsPrioritiesExportKeepsThem() throws {
        let node = try Node(jsonText: #"{"a":{".value":1,".priority":"p"},".priority":3}"#)
        #expect(node.plainJSONString() == #"{"a":1}"#)
        #expect(node.exportJSONString() == #"{"a":{".value":1,".priority":"p"},".priority":3}"#)
    }

    /// What Firebase's SDKs send for a server value with a priority (`val(true)` of it): the
    /// value's server value is read as one (the JS SDK's transaction tests write it so).
    @Test func serverValueInsideValue() throws {
        let node = try Node(jsonText: #"{".value":{".sv":"timestamp"},".priority":3}"#)
        #expect(node.leafValue == .serverValue(.timestamp) && node.priority == .number(3))
        #expect(try Node(jsonText: #"{".value":{".sv":{"increment":2}}}"#).leafValue == .serverValue(.increment(2)))
        #expect(throws: NodeError.self) { try Node(jsonText: #"{".value":{".sv":"timestamp","x":1}}"#) }
        #expect(throws: NodeError.self) { try Node(jsonText: #"{".value":{".sv":"never"}}"#) }
    }

    @Test func emptyAndNullChildrenVanish() throws {
        #expect(try Node(jsonText: #"{"a":{},"b":null,"c":{"d":null}}"#).isEmpty)
        #expect(try Node(jsonText: #"{".priority":1}"#).isEmpty)
        #expect(try Node(jsonText: #"{"a":{".value":null,".priority":1}}"#).isEmpty)
    }

    @Test func arraysBecomeIndexKeyedChildren() throws {
        let node = try Node(jsonText: #"[10,null,30,"x","y","z","a","b","c","d","e","f"]"#)
        #expect(node.childCount == 11)
        #expect(node.child("0") == .number(10))
        #expect(!node.hasChild("1"))
        #expect(node.children.map(\.key.string) == ["0", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"])
    }

    @Test func keysAreKeptExactly() throws {
        let node = try Node(jsonText: #"{"\u00e9":1,"e\u0301":2}"#)
        #expect(node.childCount == 2)
        #expect(node.child(ChildKey("\u{E9}")) == .number(1))
        #expect(node.child(ChildKey("e\u{301}")) == .number(2))
    }

    @Test func validationErrorsNameThePath() {
        func message(_ text: String, at path: Path = .root) -> String? {
            do { _ = try Node(jsonText: text, at: path); return nil } catch { return error.description }
        }
        #expect(message(#"{"a":{"b.c":1}}"#)?.contains("b.c") == true)
        #expect(message(#"{"a":{"b.c":1}}"#)?.contains("a/b.c") == true)
        #expect(message(#"{"a":{"b$":1}}"#) != nil)
        #expect(message(#"{"a":{".value":1,"b":2}}"#)?.contains("\"a\"") == true)
        #expect(message(#"{"a":{".value":{"x":1}}}"#) != nil)
        #expect(message(#"{"a":{".priority":true,"b":1}}"#)?.contains("priority") == true)
        #expect(message(#"{"a":{".sv":"bogus"}}"#)?.contains("server value") == true)
        #expect(message(#"{"a":{".foo":1}}"#)?.contains(".foo") == true)
        #expect(message("{") != nil)
        #expect(message(#"{"a":1,"a":2}"#) != nil)
        let deep = String(repeating: #"{"k":"#, count: 33) + "1" + String(repeating: "}", count: 33)
        #expect(message(deep)?.contains("32") == true)
        let ok = String(repeating: #"{"k":"#, count: 32) + "1" + String(repeating: "}", count: 32)
        #expect(message(ok) == nil)
        // The write location counts towards the depth.
        #expect(message(ok, at: "base")?.contains("base/") == true)
        #expect(message(#"{"k":""# + String(repeating: "x", count: Node.maxLeafUTF8Length + 1) + #""}"#) != nil)
    }

    @Test func javaScriptNumberText() {
        let cases: [(Double, String)] = [
            (0, "0"), (-0.0, "0"), (4, "4"), (-12, "-12"), (4.5623, "4.5623"), (0.1, "0.1"),
            (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.000001, "0.000001"), (1e21, "1e+21"),
            (1e20, "100000000000000000000"), (Double("123456789012345680000")!, "123456789012345680000"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (Double.leastNonzeroMagnitude, "5e-324"),
            (12345678901234568, "12345678901234568"), (-1.5e300, "-1.5e+300"), (0.5, "0.5"),
            (100, "100"), (1.25e-5, "0.0000125"),
        ]
        for (d, expected) in cases {
            #expect(JSONValue.javaScriptNumberText(d) == expected, "\(d)")
        }
    }
}
