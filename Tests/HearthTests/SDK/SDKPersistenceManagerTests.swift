// Ports of the Firebase SDKs' persistence-manager unit tests, run against Hearth's store:
// firebase-android-sdk `core/persistence/DefaultPersistenceManagerTest.java` and
// `TrackedQueryManagerTest.java`, firebase-ios-sdk `FPersistenceManagerTest.m` and
// `FTrackedQueryManagerTest.m` (the iOS files assert the same cases under the same names, plus
// `testPruneQueriesOverMaxSizeUsingPercent`). Each test names the SDK test it ports; what the
// SDK asserts through its manager, Hearth asserts through `StoreBatch` and the state.
//
// | SDK test                                   | here | notes |
// |--------------------------------------------|------|-------|
// | serverCacheFiltersResults1                 | ✓    | "nothing known" is `nil` here, an empty uninitialized CacheNode there |
// | serverCacheFiltersResults2                 | ✓    | |
// | noLimitNonDefaultQueryIsTreatedAsDefault   | ✓    | |
// | applyUserMergeUsesRelativePath             | ✓    | |
// | findTrackedQuery                           | ✓    | |
// | removeTrackedQuery                         | ✓    | |
// | setQueryActiveAndInactive                  | ✓    | |
// | setQueryComplete                           | ✓    | |
// | setQueriesComplete                         | ✓    | |
// | isQueryComplete                            | ✓    | |
// | pruneOldQueries                            | ✓    | one `Pruner.round` per SDK prune call (fraction 0.5, then 1.0) |
// | pruneQueriesOverMaxSize                    | ✓    | `maxInactiveQueries` is Firebase's maxNumberToKeep |
// | pruneQueriesOverMaxSizeUsingPercent (iOS)  | ✓    | |
// | pruneDefaultWithDeeperQueries              | ✓    | |
// | pruneQueriesWithDefaultQueryOnParent       | ✓    | |
// | getKnownCompleteChildren                   | ✓    | |
// | ensureTrackedQueryForNewQuery              | ✓    | through `applyUserWriteToServerCache` (ensureCompleteTrackedQuery is private) |
// | ensureTrackedQueryForAlreadyTrackedQuery   | ✓    | |
// | hasActiveDefaultQuery                      | ✓    | |
// | cacheSanityCheck                           | ✓    | `verifyCache` is the state's `checkInvariants()` + a reopen that must read the same |
import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

@Suite struct SDKPersistenceManagerTests {
    /// Firebase's `SAMPLE_QUERYPARAMS` (a filtered query) and the query locations of the tests.
    static let sampleParams = try! QuerySpec(orderBy: .child(try! Path(validating: "foo"))).startAt(.number(3))
        .limitToFirst(5)
    static func filtered(_ path: Path) -> QueryLocation { QueryLocation(path: path, query: sampleParams) }
    static func defaultAt(_ path: Path) -> QueryLocation { QueryLocation(path: path, query: .default) }
    let sampleFoo = filtered("foo")
    let limit3Foo = QueryLocation(path: "foo", query: try! QuerySpec(orderBy: .key).limitToLast(3))

    final class Harness {
        let dir = TempDir()
        let clock = TestClock()
        var store: Store

        init() throws {
            store = try Store.open(directory: dir.path, options: options(clock: clock))
        }

        func commit(_ body: (inout StoreBatch) throws -> Void) throws {
            try store.commit { b in try body(&b) }
        }

        func query(_ location: QueryLocation) throws -> TrackedQuery? { try store.state().trackedQuery(at: location) }

        /// `verifyCache`: the invariants hold, and a reopened store reads the same queries.
        func verify() throws {
            let before = try store.state()
            #expect(before.checkInvariants() == nil)
            try store.close()
            store = try Store.open(directory: dir.path, options: options(clock: clock))
            let after = try store.state()
            #expect(after.trackedQueries.count == before.trackedQueries.count)
            for q in before.trackedQueries.values {
                let back = after.trackedQueries[q.id]
                // A reopen is a new session: active queries come back inactive (sessionStarted).
                #expect(back?.location == q.location && back?.complete == q.complete && back?.keys == q.keys)
            }
        }
    }

    func json(_ text: String) -> Node { try! Node(jsonText: text) }

    // MARK: - DefaultPersistenceManagerTest / FPersistenceManagerTest

    @Test func serverCacheFiltersResults1() throws {
        let h = try Harness()
        try h.commit { b in
            try b.updateServerCache(.number(1), for: Self.defaultAt("foo/bar"))
            try b.updateServerCache(.number(2), for: Self.defaultAt("foo/baz"))
            try b.updateServerCache(.number(3), for: Self.defaultAt("foo/quu/1"))
            try b.updateServerCache(.number(4), for: Self.defaultAt("foo/quu/2"))
        }
        // No tracked query says any of it is complete: nothing known at foo.
        #expect(try h.store.serverCache(for: Self.defaultAt("foo")) == nil)
    }

    @Test func serverCacheFiltersResults2() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(limit3Foo)
            try b.updateServerCache(json(#"{"a":1,"b":2,"c":3,"d":4}"#), for: Self.defaultAt("foo"))
            try b.trackQuery(at: limit3Foo, keys: ["a", "b"])
        }
        let cache = try #require(try h.store.serverCache(for: Self.defaultAt("foo")))
        #expect(!cache.complete)
        #expect(cache.node == json(#"{"a":1,"b":2}"#))
    }

    @Test func noLimitNonDefaultQueryIsTreatedAsDefaultQuery() throws {
        let h = try Harness()
        let data = json(#"{"foo":1,"bar":2}"#)
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("foo"))
            try b.updateServerCache(data, for: Self.defaultAt("foo"))
            try b.setQueryComplete(Self.defaultAt("foo"))
        }
        let orderBy = QueryLocation(path: "foo", query: QuerySpec(orderBy: .child(try Path(validating: "index-key"))))
        let cache = try #require(try h.store.serverCache(for: orderBy))
        #expect(cache.complete)
        #expect(cache.node == data)
        #expect(orderBy.query == .default)  // normalized: an ordering alone loads all data
    }

    @Test func applyUserMergeUsesRelativePath() throws {
        let h = try Harness()
        try h.store.applyServerOverwrite(json(#"{"foo":{"bar":"bar-value","baz":"baz-value"}}"#), at: .root)
        try h.commit { b in
            try b.applyUserWriteToServerCache(
                [ChildUpdate(path: "baz", node: .string("new-baz")), ChildUpdate(path: "qux", node: .string("qux"))],
                at: "foo")
        }
        #expect(try h.store.serverValue(at: .root) == json(#"{"foo":{"bar":"bar-value","baz":"new-baz","qux":"qux"}}"#))
    }

    // MARK: - TrackedQueryManagerTest / FTrackedQueryManagerTest

    @Test func findTrackedQuery() throws {
        let h = try Harness()
        #expect(try h.query(sampleFoo) == nil)
        try h.commit { b in try b.setQueryActive(sampleFoo) }
        #expect(try h.query(sampleFoo) != nil)
    }

    @Test func removeTrackedQuery() throws {
        let h = try Harness()
        try h.commit { b in try b.setQueryActive(sampleFoo) }
        #expect(try h.query(sampleFoo) != nil)
        try h.commit { b in try b.untrackQuery(at: sampleFoo) }
        #expect(try h.query(sampleFoo) == nil)
        try h.verify()
    }

    @Test func setQueryActiveAndInactive() throws {
        let h = try Harness()
        try h.commit { b in try b.setQueryActive(sampleFoo) }
        var q = try #require(try h.query(sampleFoo))
        #expect(q.active && q.lastUse == h.clock())
        h.clock.advance(1)
        try h.commit { b in try b.setQueryInactive(sampleFoo) }
        q = try #require(try h.query(sampleFoo))
        #expect(!q.active && q.lastUse == h.clock())
        try h.verify()
    }

    @Test func setQueryComplete() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(sampleFoo)
            try b.setQueryComplete(sampleFoo)
        }
        #expect(try h.query(sampleFoo)?.complete == true)
        try h.verify()
    }

    @Test func setQueriesComplete() throws {
        let h = try Harness()
        let all = [
            Self.defaultAt("foo"), Self.defaultAt("foo/bar"), Self.defaultAt("elsewhere"),
            Self.filtered("foo"), Self.filtered("foo/baz"), Self.filtered("elsewhere"),
        ]
        try h.commit { b in for l in all { try b.setQueryActive(l) } }
        try h.commit { b in try b.setQueryComplete(Self.defaultAt("foo")) }
        #expect(try h.query(Self.defaultAt("foo"))?.complete == true)
        #expect(try h.query(Self.defaultAt("foo/bar"))?.complete == true)
        #expect(try h.query(Self.filtered("foo"))?.complete == true)
        #expect(try h.query(Self.filtered("foo/baz"))?.complete == true)
        #expect(try h.query(Self.defaultAt("elsewhere"))?.complete == false)
        #expect(try h.query(Self.filtered("elsewhere"))?.complete == false)
        try h.verify()
    }

    @Test func isQueryComplete() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(sampleFoo)
            try b.setQueryComplete(sampleFoo)
            try b.setQueryActive(Self.defaultAt("bar"))
            try b.setQueryActive(Self.defaultAt("baz"))
            try b.setQueryComplete(Self.defaultAt("baz"))
        }
        let s = try h.store.state()
        #expect(s.isServerCacheComplete(path: "foo", query: Self.sampleParams))
        #expect(!s.isServerCacheComplete(path: "bar", query: .default))
        #expect(!s.isServerCacheComplete(path: .root, query: .default))
        #expect(s.isServerCacheComplete(path: "baz", query: .default))
        #expect(s.isServerCacheComplete(path: "baz/quu", query: .default))
    }

    /// One SDK `pruneOldQueries(policy)` call is one pruning round here, applied.
    func pruneRound(_ h: Harness, fraction: Double, maxInactive: Int = .max) throws -> PruneResult? {
        let s = try h.store.state()
        guard let result = Pruner.round(s, fraction: fraction, maxInactiveQueries: maxInactive) else { return nil }
        var applied = s
        applied.apply(.cachePruned(result))
        #expect(applied.checkInvariants() == nil)
        try h.commit { b in b.events.append(.cachePruned(result)) }
        return result
    }

    func idsAt(_ h: Harness, _ paths: [Path]) throws -> Set<Int64> {
        Set(try paths.map { try #require(try h.query(Self.defaultAt($0))?.id) })
    }

    @Test func pruneOldQueries() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("active1"))
            try b.setQueryActive(Self.defaultAt("active2"))
            try b.setQueryActive(Self.defaultAt("inactive1"))
            try b.setQueryInactive(Self.defaultAt("inactive1"))
        }
        for name in ["inactive2", "inactive3", "inactive4"] {
            h.clock.advance(1)
            try h.commit { b in
                try b.setQueryActive(Self.defaultAt(Path(keys: [ChildKey(name)])))
                try b.setQueryInactive(Self.defaultAt(Path(keys: [ChildKey(name)])))
            }
        }
        let firstIDs = try idsAt(h, ["inactive1", "inactive2"]), secondIDs = try idsAt(h, ["inactive3", "inactive4"])
        let first = try #require(try pruneRound(h, fraction: 0.5))
        #expect(Set(first.prunedPaths) == ["inactive1", "inactive2"])
        #expect(Set(first.removedQueryIDs) == firstIDs)
        let second = try #require(try pruneRound(h, fraction: 1.0))
        #expect(Set(second.prunedPaths) == ["inactive3", "inactive4"])
        #expect(Set(second.removedQueryIDs) == secondIDs)
        #expect(try pruneRound(h, fraction: 1.0) == nil)
        #expect(try h.query(Self.defaultAt("active1")) != nil && h.query(Self.defaultAt("active2")) != nil)
        try h.verify()
    }

    /// `count` inactive default queries at `0`, `1`, …, each used one tick after the last.
    func inactiveQueries(_ count: Int) throws -> Harness {
        let h = try Harness()
        for i in 0..<count {
            let location = Self.defaultAt(Path(keys: [ChildKey("\(i)")]))
            try h.commit { b in
                try b.setQueryActive(location)
                try b.setQueryInactive(location)
            }
            h.clock.advance(1)
        }
        return h
    }

    @Test func pruneQueriesOverMaxSize() throws {
        let h = try inactiveQueries(15)
        let result = try #require(try pruneRound(h, fraction: 0.2, maxInactive: 10))
        #expect(Set(result.prunedPaths) == Set((0..<5).map { Path(keys: [ChildKey("\($0)")]) }))
        try h.verify()
    }

    @Test func pruneQueriesOverMaxSizeUsingPercent() throws {
        // iOS: 10 inactive queries, keep at most 6, prune 60% at once: 0…5 pruned, 6…9 kept.
        let h = try inactiveQueries(10)
        let result = try #require(try pruneRound(h, fraction: 0.6, maxInactive: 6))
        #expect(Set(result.prunedPaths) == Set((0..<6).map { Path(keys: [ChildKey("\($0)")]) }))
    }

    @Test func pruneDefaultWithDeeperQueries() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("foo"))
            try b.setQueryActive(Self.filtered("foo/a"))
            try b.setQueryActive(Self.filtered("foo/b"))
            try b.setQueryInactive(Self.defaultAt("foo"))
        }
        let result = try #require(try pruneRound(h, fraction: 1.0))
        #expect(result.prunedPaths == ["foo"])
        #expect(Set(result.keptPaths) == ["foo/a", "foo/b"])
        try h.verify()
    }

    @Test func pruneQueriesWithDefaultQueryOnParent() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("foo"))
            try b.setQueryActive(Self.filtered("foo/a"))
            try b.setQueryActive(Self.filtered("foo/b"))
            try b.setQueryInactive(Self.filtered("foo/a"))
            try b.setQueryInactive(Self.filtered("foo/b"))
        }
        // foo/a and foo/b are pruned as queries; their data is kept, as the active default
        // query at foo needs it (Firebase: prune foo/a, foo/b, keep foo).
        let ids = Set(
            [try h.query(Self.filtered("foo/a"))?.id, try h.query(Self.filtered("foo/b"))?.id].compactMap { $0 })
        let result = try #require(try pruneRound(h, fraction: 1.0))
        #expect(ids.count == 2 && Set(result.removedQueryIDs) == ids)
        let s = try h.store.state()
        #expect(s.trackedQuery(at: Self.filtered("foo/a")) == nil && s.trackedQuery(at: Self.filtered("foo/b")) == nil)
        #expect(s.trackedQuery(at: Self.defaultAt("foo")) != nil)
        try h.verify()
    }

    @Test func getKnownCompleteChildren() throws {
        let h = try Harness()
        #expect(try h.store.state().knownCompleteChildren(at: "foo").isEmpty)
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("foo/a"))
            try b.setQueryComplete(Self.defaultAt("foo/a"))
            try b.setQueryActive(Self.defaultAt("foo/not-included"))
            try b.setQueryActive(Self.defaultAt("foo/deep/not-included"))
            try b.setQueryComplete(Self.defaultAt("foo/deep/not-included"))
            try b.setQueryActive(sampleFoo)
        }
        try h.commit { b in try b.updateTrackedQueryKeys(at: sampleFoo, added: ["d", "e"], removed: []) }
        let s = try h.store.state()
        #expect(s.knownCompleteChildren(at: "foo") == ["a", "d", "e"])
        #expect(s.knownCompleteChildren(at: .root).isEmpty)
        #expect(s.knownCompleteChildren(at: "foo/baz").isEmpty)
    }

    @Test func ensureTrackedQueryForNewQuery() throws {
        let h = try Harness()
        try h.commit { b in try b.applyUserWriteToServerCache(.number(1), at: "foo") }
        let q = try #require(try h.query(Self.defaultAt("foo")))
        #expect(q.complete && !q.active && q.lastUse == h.clock())
    }

    @Test func ensureTrackedQueryForAlreadyTrackedQuery() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(Self.defaultAt("foo"))
            try b.setQueryInactive(Self.defaultAt("foo"))
        }
        let lastTick = h.clock()
        h.clock.advance(1)
        try h.commit { b in try b.applyUserWriteToServerCache(.number(1), at: "foo") }
        let q = try #require(try h.query(Self.defaultAt("foo")))
        #expect(q.complete)
        #expect(q.lastUse == lastTick)
    }

    @Test func hasActiveDefaultQuery() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(sampleFoo)
            try b.setQueryActive(Self.defaultAt("bar"))
        }
        try h.commit { b in
            #expect(!b.hasActiveDefaultQuery(covering: "foo"))
            #expect(!b.hasActiveDefaultQuery(covering: .root))
            #expect(b.hasActiveDefaultQuery(covering: "bar"))
            #expect(b.hasActiveDefaultQuery(covering: "bar/baz"))
        }
        // And so an acknowledged write under an active default query is not cached by hand.
        try h.commit { b in try b.applyUserWriteToServerCache(.number(7), at: "bar/baz") }
        #expect(try h.store.serverValue(at: "bar/baz").isEmpty)
    }

    @Test func cacheSanityCheck() throws {
        let h = try Harness()
        try h.commit { b in
            try b.setQueryActive(sampleFoo)
            try b.setQueryActive(Self.defaultAt("foo"))
        }
        try h.verify()
        try h.commit { b in try b.setQueryComplete(sampleFoo) }
        try h.verify()
        try h.commit { b in try b.setQueryInactive(Self.defaultAt("foo")) }
        try h.verify()
    }
}

/// The persistence calls Hearth adds beyond the SDK tests' reach.
@Suite struct PersistenceAPITests {
    @Test func anAckedWriteGoesToTheServerCacheResolvedAndCompleteInOneCommit() throws {
        let dir = TempDir()
        let clock = TestClock()
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        try store.setServerTimeOffset(100)
        let id = try store.saveWrite(
            .set(try Node(jsonText: #"{"at":{".sv":"timestamp"},"n":{".sv":{"increment":2}}}"#)), at: "a")
        try store.applyServerOverwrite(.number(5), at: "a/n")
        let result = try store.commit { b in try b.applyAckedWrite(id) }
        #expect(result.events.contains(.writeAcked(id: id)))
        #expect(store.pendingWrites().isEmpty)
        #expect(try store.serverValue(at: "a") == (try Node(jsonText: #"{"at":\#(clock() + 100),"n":7}"#)))
        #expect(try store.state().trackedQuery(at: QueryLocation(path: "a", query: .default))?.complete == true)
        #expect(throws: StoreError.self) { try store.commit { b in try b.applyAckedWrite(id) } }
        try store.close()
    }

    @Test func removeAllWritesRevertsEveryPendingWrite() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let a = try store.saveWrite(.set(.number(1)), at: "a")
        let b = try store.saveWrite(.set(.number(2)), at: "b")
        try store.ackWrite(a)
        var removed: [Int64] = []
        try store.commit { batch in
            let c = try batch.saveWrite(.set(.number(3)), at: "c")
            removed = try batch.removeAllWrites()
            #expect(removed == [b, c])
        }
        #expect(store.pendingWrites().isEmpty)
        #expect(try store.value(at: .root).isEmpty)
        try store.close()
    }

    @Test func serverCacheForAQueryDoesNotWaitForTheBackgroundLoad() throws {
        let dir = TempDir()
        let last2 = QueryLocation(path: "scores", query: try QuerySpec(orderBy: .value).limitToLast(2))
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.commit { b in
                try b.applyServerOverwrite(try Node(jsonText: #"{"a":1,"b":2,"c":3}"#), at: "scores")
                try b.setQueryActive(last2)
                try b.setQueryComplete(last2)
            }
            try store.compact()
            try store.close()
        }
        var o = options()
        o.lazyCacheLoad = true
        o.backgroundMaintenance = true
        let store = try Store.open(directory: dir.path, options: o)
        let early = try #require(try store.serverCache(for: last2))
        try store.waitUntilLoaded()
        let late = try #require(try store.serverCache(for: last2))
        #expect(early.node == late.node && early.complete && late.complete)
        #expect(late.node == (try Node(jsonText: #"{"b":2,"c":3}"#)))
        try store.close()
    }
}
