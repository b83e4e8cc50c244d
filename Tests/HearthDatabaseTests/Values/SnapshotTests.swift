import Foundation
import HearthModel
import Testing
@testable import HearthDatabase

@Suite struct SnapshotTests {
    let ref = offlineDatabase().reference().child("scores")

    /// {"a": {"s": 3, .priority 2}, "b": {"s": 1, .priority 1}, "c": {"s": 2}, "d": 5}
    func data() throws -> Node {
        try Node(jsonText: #"{"a":{"s":3,".priority":2},"b":{"s":1,".priority":1},"c":{"s":2},"d":5}"#)
    }

    func keys(_ s: DataSnapshot) -> [String] { s.children.map { $0.key } }

    @Test func childrenFollowTheQueryOrder() throws {
        let n = try data()
        #expect(keys(DataSnapshot(ref: ref, node: n, index: .key)) == ["a", "b", "c", "d"])
        // Priority: none first (c, d by key), then numbers.
        #expect(keys(DataSnapshot(ref: ref, node: n, index: .priority)) == ["c", "d", "b", "a"])
        // Value: leaves before children nodes; children nodes tie and order by key.
        #expect(keys(DataSnapshot(ref: ref, node: n, index: .value)) == ["d", "a", "b", "c"])
        // Child "s": missing (d) first, then 1, 2, 3.
        #expect(keys(DataSnapshot(ref: ref, node: n, index: .child(Path(keys: ["s"])))) == ["d", "b", "c", "a"])
    }

    @Test func childSnapshotsHaveRefsAndPriorityOrder() throws {
        let s = DataSnapshot(ref: ref, node: try data(), index: .value)
        let first = try #require(s.children.first { _ in true })
        #expect(first.ref == ref.child("d"))
        #expect(first.index == .priority)
        #expect(s.children.count == 4)
        #expect(s.childrenCount == 4)
    }

    @Test func childSnapshotHasChildAndExists() throws {
        let s = DataSnapshot(ref: ref, node: try data())
        #expect(s.exists())
        #expect(s.key == "scores")
        #expect(s.hasChildren())
        #expect(s.hasChild("a"))
        #expect(s.hasChild("a/s"))
        #expect(s.hasChild("/a//s/"))
        #expect(!s.hasChild("a/t"))
        #expect(!s.hasChild("zzz"))
        #expect(!s.hasChild("a.b"))
        let deep = s.childSnapshot(forPath: "a/s")
        #expect(deep.ref == ref.child("a/s"))
        #expect(deep.key == "s")
        #expect(deep.databaseValue == 3)
        #expect(!deep.hasChildren())
        let missing = s.childSnapshot(forPath: "x/y")
        #expect(!missing.exists())
        #expect(missing.value == nil)
        #expect(missing.key == "y")
        let bad = s.childSnapshot(forPath: "a$")
        #expect(!bad.exists())
        #expect(bad.ref.invalid != nil)
        let leaf = s.childSnapshot(forPath: "d")
        #expect(leaf.childSnapshot(forPath: "x").exists() == false)
        #expect(leaf.childrenCount == 0)
    }

    @Test func priorities() throws {
        let s = DataSnapshot(ref: ref, node: try data())
        #expect(s.priority == nil)
        #expect(s.childSnapshot(forPath: "a").priority == 2)
        let stringPriority = DataSnapshot(ref: ref, node: Node(.number(1.5), priority: .string("p")))
        #expect(stringPriority.priority == "p")
        #expect(stringPriority.databaseValue == 1.5)
        #expect(stringPriority.exportedDatabaseValue == [".value": 1.5, ".priority": "p"])
        let v = stringPriority.valueInExportFormat() as? [String: Any]
        #expect(v?[".value"] as? Double == 1.5)
        #expect(v?[".priority"] as? String == "p")
    }

    @Test func untypedValue() throws {
        let s = DataSnapshot(
            ref: ref,
            node: try Node(
                jsonText: #"{"n":3,"f":2.5,"t":true,"s":"x","arr":{"0":"a","2":"c"},"o":{"k":{"z":null,"y":1}}}"#))
        let v = try #require(s.value as? [String: Any])
        #expect(v["n"] as? Int == 3)
        #expect(v["f"] as? Double == 2.5)
        #expect(v["t"] as? Bool == true)
        #expect(v["s"] as? String == "x")
        let arr = try #require(v["arr"] as? [Any])
        #expect(arr.count == 3)
        #expect(arr[0] as? String == "a")
        #expect(arr[1] is NSNull)
        #expect(((v["o"] as? [String: Any])?["k"] as? [String: Any])?["y"] as? Int == 1)
        #expect(DataSnapshot(ref: ref, node: .empty).value == nil)
        #expect(!DataSnapshot(ref: ref, node: .empty).exists())
        #expect(DataSnapshot(ref: ref, node: .empty).valueInExportFormat() == nil)
        let export = try #require(DataSnapshot(ref: ref, node: try data()).valueInExportFormat() as? [String: Any])
        #expect((export["a"] as? [String: Any])?[".priority"] as? Int == 2)
    }

    @Test func decodesItsData() throws {
        struct Score: Codable, Equatable { var s: Int }
        let s = DataSnapshot(ref: ref, node: try data())
        #expect(try s.childSnapshot(forPath: "a").data(as: Score.self) == Score(s: 3))
        #expect(try s.childSnapshot(forPath: "d").data(as: Int.self) == 5)
        #expect(try s.childSnapshot(forPath: "missing").data(as: Int?.self) == nil)
        #expect(throws: DatabaseError.self) { try s.childSnapshot(forPath: "missing").data(as: Score.self) }
        #expect(throws: DatabaseError.self) { try s.childSnapshot(forPath: "d").data(as: Score.self) }
    }

    @Test func databaseValueAppliesTheArrayHeuristic() throws {
        let s = DataSnapshot(ref: ref, node: try Node(jsonText: #"{"0":"a","1":{"x":1,".priority":3}}"#))
        #expect(s.databaseValue == ["a", ["x": 1]])
        #expect(s.exportedDatabaseValue == ["0": "a", "1": ["x": 1, ".priority": 3]])
    }
}
