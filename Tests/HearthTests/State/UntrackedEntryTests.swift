import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthTesting

/// LRU bookkeeping: server data no tracked query covers is kept as an antichain of
/// "untracked" entries with their last write time.
@Suite struct UntrackedEntryTests {
    func entries(_ s: StoreState) -> [String] { s.untrackedEntries.map { "\($0.path)@\($0.lastWrite)" } }

    func write(_ s: inout StoreState, _ p: Path, _ t: Int64, _ n: Node = .number(1)) {
        s.apply(.serverOverwrite(path: p, node: n, at: t))
    }

    func track(_ s: inout StoreState, _ id: Int64, _ p: Path, lastUse: Int64 = 0, query: QuerySpec = .default) {
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: id, location: QueryLocation(path: p, query: query), complete: true, active: false,
                    lastUse: lastUse)))
    }

    @Test func uncoveredWritesBecomeEntriesAndAWriteAboveAbsorbsThem() {
        var s = StoreState()
        write(&s, "a/b", 10)
        write(&s, "a/c", 20)
        write(&s, "x", 5)
        #expect(entries(s) == ["a/b@10", "a/c@20", "x@5"])
        write(&s, "a", 15)
        #expect(entries(s) == ["a@15", "x@5"])
        #expect(s.checkInvariants() == nil)
    }

    @Test func aWriteBelowAnEntryRefreshesItsTimeToTheMax() {
        var s = StoreState()
        write(&s, "a", 10)
        write(&s, "a/b/c", 30)
        #expect(entries(s) == ["a@30"])
        write(&s, "a/b", 20)  // older: no change
        #expect(entries(s) == ["a@30"])
        s.apply(.serverMerge(path: "a/q", children: [ChildUpdate(path: "r", node: .bool(true))], at: 40))
        #expect(entries(s) == ["a@40"])
        write(&s, "a", 35)  // same location, older time: keeps the max
        #expect(entries(s) == ["a@40"])
    }

    @Test func writesCoveredByATrackedQueryAddNothing() throws {
        var s = StoreState()
        track(&s, 1, "a")
        write(&s, "a", 10)
        write(&s, "a/b/c", 11)
        s.apply(.serverMerge(path: "a/b", children: [ChildUpdate(path: "z", node: .number(2))], at: 12))
        #expect(entries(s).isEmpty)
        // A filtered query covers its location too.
        track(&s, 2, "f", query: try QuerySpec(orderBy: .key).limitToLast(1))
        write(&s, "f/g", 13)
        #expect(entries(s).isEmpty)
        // A query below the write does not cover it.
        write(&s, "", 14, Node(children: [("a", .number(1)), ("q", .number(2))]))
        #expect(entries(s) == ["/@14"])
    }

    @Test func trackingAQueryRemovesEntriesAtAndBelowItsPath() {
        var s = StoreState()
        write(&s, "a/b", 1)
        write(&s, "a/c/d", 2)
        write(&s, "x", 3)
        track(&s, 1, "a")
        #expect(entries(s) == ["x@3"])
        track(&s, 2, "x")
        #expect(entries(s).isEmpty)
        // Tracking below an entry leaves the entry (its data beside the query is still untracked).
        write(&s, "m", 4)
        track(&s, 3, "m/n")
        #expect(entries(s) == ["m@4"])
    }

    @Test func removingATrackedQueryReAddsItsPathWithItsLastUse() throws {
        var s = StoreState()
        track(&s, 1, "a", lastUse: 77)
        write(&s, "a/b", 5)
        #expect(entries(s).isEmpty)
        s.apply(.trackedQueryRemoved(id: 1))
        #expect(entries(s) == ["a@77"])
        // No data cached at the query's path: re-added all the same (the rule may not consult
        // the cache, which can still be loading when the event is applied); pruning it is free.
        track(&s, 2, "empty", lastUse: 9)
        s.apply(.trackedQueryRemoved(id: 2))
        #expect(entries(s) == ["a@77", "empty@9"])
        // Another query at the same path still covers the data.
        track(&s, 3, "p", lastUse: 1)
        track(&s, 4, "p", lastUse: 2, query: try QuerySpec(orderBy: .key).startAt(.string("k")))
        write(&s, "p", 3)
        s.apply(.trackedQueryRemoved(id: 3))
        #expect(entries(s) == ["a@77", "empty@9"])
        // Re-adding under an existing entry refreshes it to the max instead of nesting.
        write(&s, "z", 50)
        track(&s, 5, "z/y", lastUse: 90)
        write(&s, "z/y", 60)
        s.apply(.trackedQueryRemoved(id: 5))
        #expect(entries(s) == ["a@77", "empty@9", "z@90"])
        #expect(s.checkInvariants() == nil)
    }

    @Test func randomSequencesKeepAnAntichainBoundedByWrittenLocations() {
        for seed: UInt64 in 1...100 {
            var rng = SeededRandom(seed: seed)
            var s = StoreState()
            var model = NaiveState()
            var written = Set<Path>()
            for step in 0..<60 {
                let event: StoreEvent
                switch rng.int(0..<10) {
                case 0...4:
                    event = .serverOverwrite(
                        path: SmallWorld.path(&rng), node: SmallWorld.node(&rng), at: SmallWorld.time(&rng))
                case 5:
                    event = .serverMerge(
                        path: SmallWorld.path(&rng), children: SmallWorld.children(&rng), at: SmallWorld.time(&rng))
                case 6, 7: event = .trackedQuerySaved(SmallWorld.trackedQuery(&rng))
                default: event = .trackedQueryRemoved(id: SmallWorld.id(&rng))
                }
                switch event {
                case .serverOverwrite(let p, _, _), .serverMerge(let p, _, _): written.insert(p)
                case .trackedQueryRemoved(let id): if let q = s.trackedQueries[id] { written.insert(q.path) }
                default: break
                }
                s.apply(event)
                model.apply(event)
                let es = s.untrackedEntries
                func context() -> String { "seed \(seed) step \(step) after \(event)" }
                if es.count > written.count {
                    Issue.record("\(context()): \(es.count) entries for \(written.count) written locations")
                }
                for (i, a) in es.enumerated() {
                    if !written.contains(a.path) { Issue.record("\(context()): entry \(a.path) was never written") }
                    for b in es[(i + 1)...] where a.path.contains(b.path) || b.path.contains(a.path) {
                        Issue.record("\(context()): entries \(a.path) and \(b.path) nest")
                    }
                }
                let diffs = model.differences(from: s)
                if !diffs.isEmpty {
                    Issue.record("\(context()):\n\(diffs.joined(separator: "\n"))")
                    break
                }
            }
        }
    }
}
