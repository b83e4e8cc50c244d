import Foundation
import HearthModel
import Testing
@testable import HearthDatabase

/// Keys that differ only in Unicode normalization are two children, in every value the client
/// builds or reads: Swift's `String ==` finds them equal, the database does not.
@Suite struct ExactKeyTests {
    /// `é` precomposed (U+00E9).
    static let composed = "\u{E9}"
    /// `e` and a combining acute accent (U+0065 U+0301).
    static let decomposed = "e\u{301}"
    /// Both, as JSON text.
    static let bothJSON = #"{"\u00e9":1,"e\u0301":2}"#

    let ref = offlineDatabase().reference().child("k")

    /// Strings as their UTF-8 bytes, which (unlike `String ==`) tell the two keys apart.
    static func exact(_ strings: [String?]) -> [[UInt8]] { strings.map { Array(($0 ?? "").utf8) } }

    /// The two keys with their own values, whatever holds them.
    func expectBoth(_ object: DatabaseValue.Object?, _ comment: Comment? = nil) {
        #expect(object?.count == 2, comment)
        #expect(object?[Self.composed] == 1, comment)
        #expect(object?[Self.decomposed] == 2, comment)
    }

    @Test func literalsAndObjectsKeepBothKeys() {
        #expect(Self.composed == Self.decomposed, "String == merges them: the premise of these tests")
        let literal: DatabaseValue = [Self.composed: 1, Self.decomposed: 2]
        expectBoth(literal.objectValue)
        #expect(literal[Self.composed] == 1 && literal[Self.decomposed] == 2)
        let object: DatabaseValue.Object = [Self.composed: 1, Self.decomposed: 2]
        expectBoth(object)
        #expect(
            Self.exact(object.keys) == Self.exact([Self.decomposed, Self.composed]),
            "key order: by UTF-16 code units (e < é)")
        #expect(Self.exact(object.map(\.key)) == Self.exact(object.keys))
        var built = DatabaseValue.Object()
        built[Self.composed] = 1
        built[Self.decomposed] = 2
        expectBoth(built)
        built[Self.composed] = nil
        #expect(built.count == 1 && built[Self.decomposed] == 2)
        // The same key twice keeps its last value.
        let a = "a"
        let twice: DatabaseValue.Object = [a: 1, a: 2]
        #expect(twice == ["a": 2])
        #expect(DatabaseValue.Object([(key: a, value: .int(1)), (key: a, value: .int(2))]) == ["a": 2])
        #expect(DatabaseValue.Object([Self.composed: 1]) != [Self.decomposed: 1])
    }

    @Test func writtenValuesKeepBothChildren() throws {
        let node = try node(from: [Self.composed: 1, Self.decomposed: 2], at: Path(keys: ["k"]))
        #expect(node.childCount == 2)
        #expect(node == (try Node(jsonText: Self.bothJSON)))
        // updateChildValues: two paths, two children.
        let updates = try childUpdates(from: ["x/" + Self.composed: 1, "x/" + Self.decomposed: 2], at: .root)
        #expect(updates.map(\.path) == [Path(keys: ["x", "e\u{301}"]), Path(keys: ["x", "\u{E9}"])])
        #expect(updates.map(\.node) == [.number(2), .number(1)])
    }

    @Test func snapshotsKeepBothChildren() throws {
        let snapshot = DataSnapshot(ref: ref, node: try Node(jsonText: Self.bothJSON))
        expectBoth(snapshot.databaseValue.objectValue)
        expectBoth(snapshot.exportedDatabaseValue.objectValue)
        #expect(snapshot.childrenCount == 2)
        let children = snapshot.children.map { ($0.key, $0.databaseValue) }
        #expect(Self.exact(children.map(\.0)) == Self.exact([Self.decomposed, Self.composed]))
        #expect(children.map(\.1) == [2, 1])
        #expect(snapshot.childSnapshot(forPath: Self.composed).databaseValue == 1)
        #expect(snapshot.childSnapshot(forPath: Self.decomposed).databaseValue == 2)
    }

    /// `[String: Any]` cannot hold both keys: such an object is a `DatabaseValue.Object`, at any
    /// depth, and every other object stays a `[String: Any]`.
    @Test func untypedValueNeverDropsAChild() throws {
        let snapshot = DataSnapshot(ref: ref, node: try Node(jsonText: #"{"in":\#(Self.bothJSON),"plain":{"a":1}}"#))
        let top = try #require(snapshot.value as? [String: Any])
        #expect((top["plain"] as? [String: Any])?["a"] as? Int == 1)
        #expect(top["in"] as? [String: Any] == nil)
        expectBoth(top["in"] as? DatabaseValue.Object)
        let export = try #require(snapshot.valueInExportFormat() as? [String: Any])
        expectBoth(export["in"] as? DatabaseValue.Object)
    }

    struct Accents: Codable, Equatable {
        var composed: Int
        var decomposed: Int

        struct Key: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(composed: Int, decomposed: Int) {
            self.composed = composed
            self.decomposed = decomposed
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            composed = try c.decode(Int.self, forKey: Key(stringValue: ExactKeyTests.composed))
            decomposed = try c.decode(Int.self, forKey: Key(stringValue: ExactKeyTests.decomposed))
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(composed, forKey: Key(stringValue: ExactKeyTests.composed))
            try c.encode(decomposed, forKey: Key(stringValue: ExactKeyTests.decomposed))
        }
    }

    @Test func codableKeepsBothChildren() throws {
        let node = try Node(jsonText: Self.bothJSON)
        let accents = Accents(composed: 1, decomposed: 2)
        #expect(try NodeDecoder().decode(Accents.self, from: node) == accents)
        #expect(try NodeEncoder().encode(accents, at: .root) == node)
        expectBoth(try NodeDecoder().decode(DatabaseValue.self, from: node).objectValue)
        // DatabaseValue's own Codable, through Hearth's coders.
        #expect(try NodeEncoder().encode([Self.composed: 1, Self.decomposed: 2] as DatabaseValue, at: .root) == node)
        // A [String: Int] would keep one of the two: decoding one fails, naming both keys.
        do {
            _ = try NodeDecoder().decode([String: Int].self, from: node)
            Issue.record("decoded both keys into one String-keyed dictionary")
        } catch {
            #expect("\(error)".contains("U+0065 U+0301") && "\(error)".contains("U+00E9"), "\(error)")
        }
        // Keys that do not collide decode as before.
        #expect(try NodeDecoder().decode([String: Int].self, from: Node(jsonText: #"{"a":1,"\u00e9":2}"#)).count == 2)
    }
}
