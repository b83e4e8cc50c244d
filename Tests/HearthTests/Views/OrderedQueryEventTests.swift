import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthModel

/// The assertions of the Firebase JavaScript SDK's tests about `child_moved` and previous
/// sibling names (`order.test.ts`, `order_by.test.ts`, `query.test.ts`), ported from a live
/// server to the view engine: each JS test's writes are local writes to one ``SyncTree``, as
/// the JS tests' writes raise their events locally before the server answers.
@Suite struct OrderedQueryEventTests {
    /// One listener on a sync tree, fed local writes; records its events as
    /// `"kind key prev"` (`"value"` for value events).
    final class Client {
        let tree = SyncTree()
        private var nextWrite: Int64 = 0
        private(set) var log: [String] = []

        init(_ path: Path = "l", query: QuerySpec = .default, kinds: ViewEventKinds = .all) {
            record(tree.addListener(at: path, query: query, registration: RegistrationID(1), kinds: kinds))
        }

        func set(_ path: Path, _ json: String) {
            let node: Node
            do { node = try Node(jsonText: json) } catch { fatalError("bad test JSON \(json): \(error)") }
            record(tree.applyUserOverwrite(node, at: path, writeID: nextWrite))
            nextWrite += 1
        }

        func server(_ path: Path, _ json: String) {
            do { record(tree.applyServerOverwrite(try Node(jsonText: json), at: path)) } catch {
                fatalError("bad test JSON \(json): \(error)")
            }
        }

        /// The events recorded since the last call.
        func take() -> [String] {
            defer { log = [] }
            return log
        }

        private func record(_ events: [ViewEvent]) {
            for e in events {
                switch e.kind {
                case .value: log.append("value")
                case .childRemoved: log.append("\(e.kind.rawValue) \(e.childKey?.string ?? "?")")
                default:
                    log.append(
                        "\(e.kind.rawValue) \(e.childKey?.string ?? "?") \(e.previousChildKey?.string ?? "null")")
                }
            }
        }
    }

    // MARK: - Queries that load all data, ordered by something other than priority

    @Test func orderByChildWithoutLimitMovesAChildWhoseScoreChanged() {
        let c = Client(query: QuerySpec(orderBy: .child("score")))
        c.set("l", #"{"a":{"score":1},"b":{"score":2},"c":{"score":3}}"#)
        #expect(c.take() == ["child_added a null", "child_added b a", "child_added c b", "value"])
        c.set("l/b/score", "0")
        // Firebase's order, and previous keys in score order (b is first now), not key order.
        #expect(c.take() == ["child_moved b null", "child_changed b null", "value"])
        // A change that keeps the score is no move.
        c.set("l/b/name", #""bee""#)
        #expect(c.take() == ["child_changed b null", "value"])
    }

    /// order_by.test.ts "Fires child_moved events".
    @Test func orderByChildFiresChildMoved() {
        let c = Client(query: QuerySpec(orderBy: .child("nuggets")), kinds: .childMoved)
        c.set(
            "l",
            #"{"alex":{"nuggets":60},"rob":{"nuggets":56},"vassili":{"nuggets":55.5},"tony":{"nuggets":52},"greg":{"nuggets":52}}"#
        )
        #expect(c.take().isEmpty)
        c.set("l/greg/nuggets", "57")
        #expect(c.take() == ["child_moved greg rob"])
    }

    /// order_by.test.ts "Snapshots are iterated in order" and "… for value": child_added
    /// previous keys follow the query's order.
    @Test(arguments: [
        (
            QueryIndex.child("nuggets"),
            #"{"alex":{"nuggets":60},"rob":{"nuggets":56},"vassili":{"nuggets":55.5},"tony":{"nuggets":52},"greg":{"nuggets":52}}"#
        ),
        (QueryIndex.value, #"{"alex":60,"rob":56,"vassili":55.5,"tony":52,"greg":52}"#),
    ])
    func childAddedInQueryOrder(_ index: QueryIndex, _ json: String) {
        let c = Client(query: QuerySpec(orderBy: index), kinds: .childAdded)
        c.set("l", json)
        #expect(
            c.take() == [
                "child_added greg null", "child_added tony greg", "child_added vassili tony", "child_added rob vassili",
                "child_added alex rob",
            ])
    }

    @Test func orderByValueWithoutLimitMoves() {
        let c = Client(query: QuerySpec(orderBy: .value))
        c.set("l", #"{"a":1,"b":2,"c":3}"#)
        _ = c.take()
        c.set("l/c", "0")
        #expect(c.take() == ["child_moved c null", "child_changed c null", "value"])
        // Same value with a priority: a change of the whole value, so a move (to the same place).
        c.set("l/a", #"{".value":1,".priority":5}"#)
        #expect(c.take() == ["child_moved a c", "child_changed a c", "value"])
    }

    @Test func orderByDeepChildWithoutLimitMoves() {
        let c = Client(query: QuerySpec(orderBy: .child("stats/score")))
        c.set("l", #"{"a":{"stats":{"score":1}},"b":{"stats":{"score":2}},"c":{"stats":{"score":3}}}"#)
        _ = c.take()
        c.set("l/a/stats/score", "9")
        #expect(c.take() == ["child_moved a c", "child_changed a c", "value"])
        // Beside the indexed path: a change, no move.
        c.set("l/a/stats/games", "4")
        #expect(c.take() == ["child_changed a c", "value"])
    }

    /// The key index never moves a child (`KeyIndex.indexedValueChanged` is false), whatever
    /// its priority does; previous keys are in key order.
    @Test func orderByKeyIgnoresPriorityChanges() {
        let c = Client(query: QuerySpec(orderBy: .key))
        c.set(
            "l",
            #"{"a":{".value":"a",".priority":3},"b":{".value":"b",".priority":2},"c":{".value":"c",".priority":1}}"#)
        #expect(c.take() == ["child_added a null", "child_added b a", "child_added c b", "value"])
        c.set("l/c", #"{".value":"c",".priority":10}"#)
        #expect(c.take() == ["child_changed c b", "value"])
    }

    // MARK: - The default query (priority order): order.test.ts

    /// "Ensure prevName is correct on child_added event" and "… when adding new nodes".
    @Test func childAddedPreviousKeys() {
        let c = Client(kinds: .childAdded)
        c.set("l", #"{"b":2,"c":3,"d":4}"#)
        #expect(c.take() == ["child_added b null", "child_added c b", "child_added d c"])
        c.set("l/a", "1")
        #expect(c.take() == ["child_added a null"])
        c.set("l/e", "5")
        #expect(c.take() == ["child_added e d"])
        // "… with JSON": the whole object again, with one more child.
        c.set("l", #"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}"#)
        #expect(c.take() == ["child_added f e"])
    }

    /// "Ensure prevName is correct when moving nodes" (setPriority one child at a time).
    @Test func childMovedPreviousKeysByPriority() {
        let c = Client(kinds: .childMoved)
        for (i, k) in ["a", "b", "c", "d"].enumerated() {
            c.set(Path(keys: ["l", ChildKey(k)]), #"{".value":"\#(k)",".priority":\#(i + 1)}"#)
        }
        #expect(c.take().isEmpty)
        c.set("l/d/.priority", "0")
        #expect(c.take() == ["child_moved d null"])
        c.set("l/a/.priority", "4")
        #expect(c.take() == ["child_moved a c"])
        c.set("l/c/.priority", "0.5")
        #expect(c.take() == ["child_moved c d"])
    }

    /// "Ensure prevName is correct when moving nodes by setting whole JSON".
    @Test func childMovedPreviousKeysByWholeObject() {
        let c = Client(kinds: .childMoved)
        func object(_ priorities: [(String, Double)]) -> String {
            "{" + priorities.map { #""\#($0.0)":{".value":"\#($0.0)",".priority":\#($0.1)}"# }.joined(separator: ",")
                + "}"
        }
        c.set("l", object([("a", 1), ("b", 2), ("c", 3), ("d", 4)]))
        c.set("l", object([("d", 0), ("a", 1), ("b", 2), ("c", 3)]))
        #expect(c.take() == ["child_moved d null"])
        c.set("l", object([("d", 0), ("b", 2), ("c", 3), ("a", 4)]))
        #expect(c.take() == ["child_moved a c"])
        c.set("l", object([("d", 0), ("c", 0.5), ("b", 2), ("a", 4)]))
        #expect(c.take() == ["child_moved c d"])
    }

    /// "Case 595: Should not get child_moved event when deleting prioritized grandchild".
    @Test func noMoveWhenAPrioritizedGrandchildGoes() {
        let c = Client(kinds: .childMoved)
        // The server said the location is empty: the view is complete, so writes below a
        // child raise that child's events.
        c.server("l", "null")
        c.set("l/test/foo", #"{".value":42,".priority":"5"}"#)
        c.set("l/test/foo2", #"{".value":42,".priority":"10"}"#)
        c.set("l/test/foo", "null")
        c.set("l/test/foo2", "null")
        #expect(c.take().isEmpty)
    }

    /// "Case 2003: Should get child_moved for any priority change, regardless of whether it
    /// affects ordering" (both spellings).
    @Test func anyPriorityChangeMoves() {
        let all =
            #"{"a":{".value":"a",".priority":0},"b":{".value":"b",".priority":1},"c":{".value":"c",".priority":2},"d":{".value":"d",".priority":3}}"#
        let c = Client(kinds: .childMoved)
        c.set("l", all)
        #expect(c.take().isEmpty)
        c.set("l/b", #"{".value":"b",".priority":1.5}"#)
        #expect(c.take() == ["child_moved b a"])

        let whole = Client(kinds: .childMoved)
        whole.set("l", all)
        whole.set("l", all.replacingOccurrences(of: #""b",".priority":1"#, with: #""b",".priority":1.5"#))
        #expect(whole.take() == ["child_moved b a"])
    }

    // MARK: - Limited queries: query.test.ts

    /// "Set a limit, add some nodes, ensure prevName works correctly".
    @Test func limitedChildAddedPreviousKeys() throws {
        let c = Client(query: try QuerySpec.default.limitToLast(2), kinds: .childAdded)
        c.set("l/a", "1")
        #expect(c.take() == ["child_added a null"])
        c.set("l/c", "3")
        #expect(c.take() == ["child_added c a"])
        c.set("l/b", "2")
        #expect(c.take() == ["child_added b null"])
        c.set("l/d", "4")
        #expect(c.take() == ["child_added d c"])
    }

    /// "Set a limit, move some nodes, ensure prevName works correctly" (string and numeric
    /// priorities alike).
    @Test func limitedChildMovedPreviousKeys() throws {
        let c = Client(query: try QuerySpec.default.limitToLast(2), kinds: .childMoved)
        for (k, p) in [("a", 10), ("b", 20), ("c", 30), ("d", 40)] {
            c.set(Path(keys: ["l", ChildKey(k)]), #"{".value":"\#(k)",".priority":\#(p)}"#)
        }
        c.set("l/c/.priority", "50")
        #expect(c.take() == ["child_moved c d"])
        c.set("l/c/.priority", "35")
        #expect(c.take() == ["child_moved c null"])
        // b stays below the window (c 35, d 40): nothing.
        c.set("l/b/.priority", "33")
        #expect(c.take().isEmpty)

        let numeric = Client(query: try QuerySpec.default.limitToLast(2), kinds: .childMoved)
        for (i, k) in ["a", "b", "c", "d"].enumerated() {
            numeric.set(Path(keys: ["l", ChildKey(k)]), #"{".value":"\#(k)",".priority":\#(i + 1)}"#)
        }
        numeric.set("l/c/.priority", "10")
        #expect(numeric.take() == ["child_moved c d"])
    }
}
