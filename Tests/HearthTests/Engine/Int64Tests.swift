import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog

/// 64-bit integers stay exact: the model, JSON in and out, the node codec,
/// the log and checkpoint, ordering, increments — while the node hash stays Firebase's.
/// Ports firebase-ios-sdk `FLevelDBStorageEngineTests` testLongValuesDontLosePrecision,
/// testIntegersAreReturnedsAsIntegers and testDoublesAreRoundedProperly.
@Suite struct Int64Tests {
    let long: Int64 = 1_542_405_709_418_655_810

    @Test func longValuesDontLosePrecisionThroughTheStoreAndARestart() throws {
        let dir = TempDir()
        let data = try Node(jsonText: #"{"long":1542405709418655810,"float":2.47,"int":247}"#)
        #expect(data.child("long").leafValue == .integer(long))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.applyServerOverwrite(data, at: "foo")
            #expect(try store.serverValue(at: "foo/long") == Node(.integer(long)))
            try store.compact()  // through a checkpoint
            try store.applyServerOverwrite(Node(.integer(.min)), at: "bar")  // and the log tail
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let back = try store.serverValue(at: "foo")
        #expect(back.exportJSONString() == #"{"float":2.47,"int":247,"long":1542405709418655810}"#)
        #expect(back.child("int").leafValue == .number(247))
        #expect(try store.serverValue(at: "bar") == Node(.integer(.min)))
        try store.close()
    }

    @Test func oneRepresentationPerValue() throws {
        #expect(try JSONValue.parse("9007199254740992") == .number(9_007_199_254_740_992))  // 2^53: exact as a double
        #expect(try JSONValue.parse("9007199254740993") == .integer(9_007_199_254_740_993))  // 2^53 + 1
        #expect(try JSONValue.parse("-9007199254740993") == .integer(-9_007_199_254_740_993))
        #expect(try JSONValue.parse("9223372036854775807") == .integer(.max))
        #expect(try JSONValue.parse("-9223372036854775808") == .integer(.min))
        #expect(try JSONValue.parse("18446744073709551615") == .number(18_446_744_073_709_551_616))  // beyond Int64: a double (2^64, the nearest)
        #expect(try JSONValue.parse("9007199254740993.0") == .number(9_007_199_254_740_992))  // a fraction: a double
        #expect(LeafValue.integer(exactly: 12) == .number(12))
        for text in ["9007199254740993", "-9223372036854775808", "1542405709418655810"] {
            #expect(try JSONValue.parse(text).serialized() == text)
            #expect(try Node(jsonText: text).exportJSONString() == text)
        }
    }

    @Test func theCodecKeepsIntegersAndRejectsANonCanonicalOne() throws {
        for v in [long, .max, .min, (1 << 53) + 1, -(1 << 53) - 1] {
            let node = Node(.integer(v), priority: .string("p"))
            #expect(try NodeCodec.decode(NodeCodec.encode(node)) == node)
            #expect(NodeCodec.encodedSize(node) == NodeCodec.encode(node).count)
        }
        var w = ByteWriter()
        w.u8(0x08)
        w.u64(UInt64(bitPattern: 42))
        #expect(throws: DecodeError.self) { try NodeCodec.decode(w.bytes) }
    }

    @Test func integersOrderByExactValueAmongNumbers() throws {
        let big = LeafValue.integer((1 << 53) + 1)
        #expect(LeafValue.compareForOrdering(.number(9_007_199_254_740_992), big) < 0)
        #expect(LeafValue.compareForOrdering(big, .integer((1 << 53) + 2)) < 0)
        #expect(LeafValue.compareForOrdering(big, .number(1e300)) < 0)
        #expect(LeafValue.compareForOrdering(.integer(.min), .number(-1e300)) > 0)
        #expect(LeafValue.compareForOrdering(big, .string("0")) < 0)  // numbers before strings
        #expect(LeafValue.compareForOrdering(.bool(true), big) < 0)
        let data = try Node(jsonText: #"{"a":9007199254740993,"b":9007199254740992,"c":9007199254740994,"d":1.5}"#)
        #expect(QuerySpec(orderBy: .value).window(of: data).keys.map(\.string) == ["d", "b", "a", "c"])
    }

    @Test func theHashIsFirebasesAsADouble() throws {
        // Firebase hashes a LongNode as `number:` + the hex of the value as a double.
        let node = Node(.integer(long))
        #expect(node.hash == Node(.number(Double(long))).hash)
        // testDoublesAreRoundedProperly: the iOS SDK's hash of 2.47.
        #expect(Node(.number(2.47)).hash == "EsibHXKcBp2/b/bn/a0C5WffcUU=")
    }

    @Test func incrementsStayExact() throws {
        #expect(ServerValuePlaceholder.increment(.integer((1 << 53) + 1), by: 1) == .integer((1 << 53) + 2))
        #expect(ServerValuePlaceholder.increment(.number(9_007_199_254_740_992), by: 1) == .integer((1 << 53) + 1))
        #expect(ServerValuePlaceholder.increment(.integer(.max), by: 1) == .number(Double(Int64.max) + 1))  // overflow: a double
        #expect(ServerValuePlaceholder.increment(.integer(long), by: 0.5) == .number(Double(long) + 0.5))
        #expect(ServerValuePlaceholder.increment(.string("x"), by: 3) == .number(3))
        #expect(ServerValuePlaceholder.increment(nil, by: 3) == .number(3))
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(Node(.integer(long)), at: "n")
        try store.saveWrite(.set(Node(.serverValue(.increment(1)))), at: "n")
        #expect(try store.value(at: "n") == Node(.integer(long + 1)))
        try store.close()
    }
}
