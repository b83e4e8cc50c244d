import Foundation
import Hearth
import HearthModel
import Testing
@testable import HearthDatabase

/// Firebase's untyped values, converted as `FSnapshotUtilities nodeFrom:` converts them and
/// validated as `FValidation` validates them.
@Suite struct AnyValueTests {
    func value(_ v: Any?) throws(DatabaseError) -> DatabaseValue { try DatabaseValue(any: v) }

    /// The node an untyped value denotes when written at `path`.
    func node(_ v: Any?, at path: Path = .root) throws(DatabaseError) -> Node {
        try HearthDatabase.node(from: DatabaseValue(any: v), at: path)
    }

    @Test func booleansAreCFBooleansNotZeroAndOne() throws {
        #expect(try value(true) == .bool(true))
        #expect(try value(false) == .bool(false))
        #expect(try value(NSNumber(value: true)) == .bool(true))
        #expect(try value(NSNumber(value: false)) == .bool(false))
        #expect(try value(true as NSNumber) == .bool(true))
        // A number that happens to be 0 or 1 stays a number, boxed or not.
        #expect(try value(NSNumber(value: 1)) == .int(1))
        #expect(try value(NSNumber(value: 0)) == .int(0))
        #expect(try value(NSNumber(value: Int8(1))) == .int(1))
        #expect(try value(1) == .int(1))
        #expect(try value(0) == .int(0))
        #expect(try value(NSNumber(value: 1.0)) == .double(1))
        #expect(try node(NSNumber(value: true)) == .bool(true))
        #expect(try node(NSNumber(value: 1)) == Node(.integer(exactly: 1)))
    }

    @Test func everyNumberWidth() throws {
        #expect(try value(Int8(-8)) == .int(-8))
        #expect(try value(Int16(-16)) == .int(-16))
        #expect(try value(Int32(-32)) == .int(-32))
        #expect(try value(Int64.min) == .int(.min))
        #expect(try value(UInt8(8)) == .int(8))
        #expect(try value(UInt16(16)) == .int(16))
        #expect(try value(UInt32(32)) == .int(32))
        #expect(try value(UInt(64)) == .int(64))
        #expect(try value(UInt64(Int64.max)) == .int(.max))
        #expect(try value(UInt64.max) == .double(Double(UInt64.max)))
        #expect(try value(NSNumber(value: UInt64.max)) == .double(Double(UInt64.max)))
        #expect(try value(NSNumber(value: Int64.max)) == .int(.max))
        #expect(try value(1.5) == .double(1.5))
        #expect(try value(Float(0.5)) == .double(0.5))
        #expect(try value(CGFloat(2.5)) == .double(2.5))
        #expect(try value(NSNumber(value: Float(0.25))) == .double(0.25))
    }

    @Test func nullsStringsAndOptionals() throws {
        #expect(try value(nil) == .null)
        #expect(try value(NSNull()) == .null)
        let none: Int? = nil
        #expect(try value(none as Any) == .null)
        let some: Int?? = 3
        #expect(try value(some as Any) == .int(3))
        #expect(try value("x") == .string("x"))
        #expect(try value("y" as NSString) == .string("y"))
        #expect(try value("xyz".dropFirst()) == .string("yz"))
        #expect(try node(nil) == .empty)
    }

    @Test func arraysAndDictionariesNest() throws {
        let any: [String: Any] = [
            "name": "Ada", "n": 3, "ok": true, "tags": ["a", NSNull(), 2] as [Any],
            "inner": ["deep": ["x": 1.5]] as [String: Any],
        ]
        #expect(
            try value(any)
                == [
                    "name": "Ada", "n": 3, "ok": true, "tags": ["a", nil, 2], "inner": ["deep": ["x": .double(1.5)]],
                ])
        #expect(
            try node(any)
                == Node(
                    jsonText: #"{"name":"Ada","n":3,"ok":true,"tags":{"0":"a","2":2},"inner":{"deep":{"x":1.5}}}"#))
        let hashable: [AnyHashable: Any] = ["a": 1]
        #expect(try value(hashable) == ["a": 1])
        let ns: NSDictionary = ["k": NSArray(array: [1, "b"])]
        #expect(try value(ns) == ["k": [1, "b"]])
        #expect(try value(["typed": DatabaseValue.int(4)] as [String: Any]) == ["typed": 4])
    }

    /// `.value` and `.priority` keys carry a priority, at any depth; `.sv` is a server value.
    @Test func prioritiesAndServerValues() throws {
        let leaf: [String: Any] = [".value": 3, ".priority": 1]
        #expect(try node(leaf) == Node(jsonText: #"{".value":3,".priority":1}"#))
        #expect(try node(leaf).priority != nil)
        let nested: [String: Any] = ["a": [".value": "x", ".priority": "p"], "b": ["c": 1, ".priority": 2.5]]
        let n = try node(nested)
        #expect(n == (try Node(jsonText: #"{"a":{".value":"x",".priority":"p"},"b":{"c":1,".priority":2.5}}"#)))
        #expect(n.child(ChildKey("a")).priority != nil && n.child(ChildKey("b")).priority != nil)
        #expect(try value([".sv": "timestamp"] as [String: Any]) == [".sv": "timestamp"])
        #expect(
            try node([".sv": "timestamp"] as [String: Any])
                == HearthDatabase.node(from: .serverTimestamp, at: .root))
    }

    @Test func invalidValuesAreRefused() throws {
        #expect(throws: DatabaseError.self) { try node(Double.nan) }
        #expect(throws: DatabaseError.self) { try node(-Double.infinity) }
        #expect(throws: DatabaseError.self) { try node(["a": Float.nan] as [String: Any]) }
        #expect(throws: DatabaseError.self) { try value(Date()) }
        #expect(throws: DatabaseError.self) { try value(["d": URL(fileURLWithPath: "/")] as [String: Any]) }
        let numberKeys: [AnyHashable: Any] = [1: "one"]
        #expect(throws: DatabaseError.self) { try value(numberKeys) }
        #expect(throws: DatabaseError.self) { try value(["ok": [2: "two"] as [AnyHashable: Any]] as [String: Any]) }
    }

    @Test func invalidKeysAreRefused() throws {
        for key in ["a.b", "a#", "$x", "[", "]", "a/b", ""] {
            #expect(throws: DatabaseError.self, "\(key)") { try node([key: 1] as [String: Any]) }
            #expect(throws: DatabaseError.self, "nested \(key)") { try node(["ok": [key: 1]] as [String: Any]) }
        }
        #expect(try node(["a-b_c d": 1] as [String: Any]) == Node(jsonText: #"{"a-b_c d":1}"#))
    }

    @Test func depthBeyond32IsRefused() throws {
        var deep: Any = 1
        for _ in 0..<31 { deep = ["d": deep] as [String: Any] }  // a leaf 31 levels down
        _ = try node(deep)
        _ = try node(deep, at: "k")
        deep = ["d": deep] as [String: Any]
        deep = ["d": deep] as [String: Any]
        #expect(throws: DatabaseError.self) { try node(deep) }
        // A structure far deeper than any write fails with an error, not the stack.
        for _ in 0..<2000 { deep = [deep] as [Any] }
        #expect(throws: DatabaseError.self) { try value(deep) }
    }
}
