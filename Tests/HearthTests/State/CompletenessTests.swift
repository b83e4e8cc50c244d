import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// `isComplete(path:query:)`: may a `value` event fire from local data alone?
@Suite struct CompletenessTests {
    static let limited = try! QuerySpec(orderBy: .key).limitToFirst(2)
    static let ranged = try! QuerySpec(orderBy: .value).startAt(.number(1))

    func track(_ s: inout StoreState, _ id: Int64, _ p: Path, _ q: QuerySpec = .default, complete: Bool) {
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: id, location: QueryLocation(path: p, query: q), complete: complete, active: true, lastUse: 0)))
    }

    @Test func nothingKnownIsIncomplete() {
        let s = StoreState()
        #expect(!s.isComplete(path: "", query: .default))
        #expect(!s.isComplete(path: "a/b", query: Self.limited))
    }

    @Test func pendingSetAtOrAboveCompletes() {
        var s = StoreState()
        s.apply(.writeSaved(PendingWrite(id: 1, path: "a/b", operation: .set(.empty))))  // a delete is known data too
        #expect(s.isComplete(path: "a/b", query: .default))
        #expect(s.isComplete(path: "a/b/c/d", query: Self.limited))
        #expect(!s.isComplete(path: "a", query: .default))  // a set below does not complete a parent
        #expect(!s.isComplete(path: "a/bc", query: .default))  // nor a sibling
        s.apply(.writeAcked(id: 1))
        #expect(!s.isComplete(path: "a/b", query: .default))
    }

    @Test func pendingUpdateCompletesExactlyTheChildrenItOverwrites() {
        // Firebase stores a merge as complete overwrites at each child path (WriteTree /
        // CompoundWrite), so a location at or below an update's child is fully known; the
        // update's own location (other children untouched) is not.
        var s = StoreState()
        s.apply(
            .writeSaved(
                PendingWrite(
                    id: 1, path: "a",
                    operation: .update([
                        ChildUpdate(path: "b/c", node: .number(1)), ChildUpdate(path: "d", node: .empty),
                    ]))))
        #expect(s.isComplete(path: "a/b/c", query: .default))
        #expect(s.isComplete(path: "a/b/c/x", query: Self.limited))
        #expect(s.isComplete(path: "a/d", query: .default))
        #expect(!s.isComplete(path: "a", query: .default))
        #expect(!s.isComplete(path: "a/b", query: .default))
        #expect(!s.isComplete(path: "a/e", query: .default))
    }

    @Test func completeDefaultQueryAtPathOrAncestorCompletes() {
        var s = StoreState()
        track(&s, 1, "a", complete: true)
        #expect(s.isComplete(path: "a", query: .default))
        #expect(s.isComplete(path: "a", query: Self.limited))  // a filtered view of complete data
        #expect(s.isComplete(path: "a/b/c", query: .default))
        #expect(s.isComplete(path: "a/b", query: Self.ranged))
        #expect(s.isComplete(path: "a", query: QuerySpec(orderBy: .value)))  // normalized to default
        #expect(!s.isComplete(path: "", query: .default))
        #expect(!s.isComplete(path: "ab", query: .default))
        // An incomplete default query completes nothing.
        track(&s, 2, "x", complete: false)
        #expect(!s.isComplete(path: "x/y", query: .default))
        // Root.
        track(&s, 3, "", complete: true)
        #expect(s.isComplete(path: "x/y", query: Self.limited))
    }

    @Test func exactFilteredQueryCompletesOnlyItself() {
        var s = StoreState()
        track(&s, 1, "a", Self.limited, complete: true)
        #expect(s.isComplete(path: "a", query: Self.limited))
        #expect(!s.isComplete(path: "a", query: .default))
        #expect(!s.isComplete(path: "a", query: Self.ranged))
        #expect(!s.isComplete(path: "a", query: try! QuerySpec(orderBy: .key).limitToFirst(3)))
        // A complete filtered query at an ancestor does not make a child location complete.
        #expect(!s.isComplete(path: "a/b", query: .default))
        #expect(!s.isComplete(path: "a/b", query: Self.limited))
        track(&s, 2, "a/b", Self.ranged, complete: false)
        #expect(!s.isComplete(path: "a/b", query: Self.ranged))
    }

    @Test func randomStatesMatchTheRule() {
        // The rule, stated naively: a pending set (or update child) at or above; a complete
        // default tracked query at or above; the exact tracked query complete.
        for seed: UInt64 in 1...200 {
            var rng = SeededRandom(seed: seed)
            var s = StoreState()
            for _ in 0..<rng.int(0...8) {
                switch rng.int(0..<4) {
                case 0:
                    let op: PendingWrite.Operation =
                        rng.chance(0.5) ? .set(.number(1)) : .update(SmallWorld.children(&rng))
                    s.apply(
                        .writeSaved(
                            PendingWrite(id: s.lastWriteID + 1, path: SmallWorld.path(&rng, maxDepth: 2), operation: op)
                        ))
                case 1: s.apply(.writeAcked(id: SmallWorld.id(&rng)))
                default: s.apply(.trackedQuerySaved(SmallWorld.trackedQuery(&rng)))
                }
            }
            for _ in 0..<10 {
                let p = SmallWorld.path(&rng, maxDepth: 3)
                let q = rng.pick(SmallWorld.queries)
                let loc = QueryLocation(path: p, query: q)
                let byWrite = s.pendingWrites.contains { w in w.touchedPaths.contains { $0.contains(p) } }
                let byDefault = s.trackedQueries.values.contains {
                    $0.query.isDefault && $0.complete && $0.path.contains(p)
                }
                let byExact = s.trackedQueries.values.contains { $0.location == loc && $0.complete }
                #expect(s.isComplete(path: p, query: q) == (byWrite || byDefault || byExact), "seed \(seed) \(loc)")
            }
        }
    }
}
