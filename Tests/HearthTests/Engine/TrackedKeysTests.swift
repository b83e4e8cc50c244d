import Foundation
import Testing
@_spi(HearthInternals) @testable import Hearth

/// Tracked keys of filtered queries follow the data: Firebase's
/// `SyncPoint.applyOperationToView` → `updateTrackedQueryKeys`, and
/// `TrackedQueryManager.getKnownCompleteChildren` over every filtered query at a path.
@Suite struct TrackedKeysTests {
    let scores: Path = "scores"

    func keys(_ store: Store, _ location: QueryLocation) throws -> [String] {
        try store.state().trackedQuery(at: location)?.keys?.map(\.string).sorted() ?? []
    }

    func listen(_ store: Store, _ query: QuerySpec) throws -> EventLog {
        let log = EventLog()
        _ = try store.addListener(at: scores, query: query) { log.record($0) }
        store.waitForEventDelivery()
        return log
    }

    /// The issue's reproduction: a complete `limitToLast(2)` over {a:1,b:2,c:3}, then the server
    /// adds d:4. Offline, after a restart, the query must answer [c, d] (it answered [b, c]).
    @Test func keysOfACompleteLimitQueryFollowAServerUpdate() throws {
        let dir = TempDir()
        let last2 = try QuerySpec(orderBy: .value).limitToLast(2)
        let location = QueryLocation(path: scores, query: last2)
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(try! Node(jsonText: #"{"a":1,"b":2,"c":3}"#), at: scores)
                try b.trackQuery(at: location, complete: true, active: true)
            }
            #expect(try keys(store, location) == ["b", "c"])
            try store.applyServerMerge([ChildUpdate(path: "d", node: .number(4))], at: scores)
            #expect(try keys(store, location) == ["c", "d"])
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        #expect(try keys(store, location) == ["c", "d"])
        let result = try store.query(last2, at: scores)
        #expect(result.window.keys.map(\.string) == ["c", "d"])
        #expect(result.complete)
        let log = try listen(store, last2)
        #expect(summary(log.take()) == ["child_added c", "child_added d after c", #"value {"c":3,"d":4}"#])
        try store.close()
    }

    /// A child leaving the window (removed on the server) leaves the keys; the next one in
    /// (sent by the server, as it does for a limit query) joins them.
    @Test func keysFollowRemovalsAndWholeOverwrites() throws {
        let dir = TempDir()
        let last2 = try QuerySpec(orderBy: .value).limitToLast(2)
        let location = QueryLocation(path: scores, query: last2)
        let store = try Store.open(directory: dir.path, options: options())
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(try! Node(jsonText: #"{"b":2,"c":3}"#), at: scores)
            try b.trackQuery(at: location, complete: true, active: true)
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(.empty, at: "scores/c")
            try b.applyServerOverwrite(.number(1), at: "scores/a")
        }
        #expect(try keys(store, location) == ["a", "b"])
        // An overwrite above the query's path replaces its view's children.
        try store.applyServerOverwrite(try! Node(jsonText: #"{"scores":{"x":10,"y":20,"z":30}}"#), at: .root)
        #expect(try keys(store, location) == ["y", "z"])
        // A deep update to a child the view does not hold does not bring it in.
        try store.applyServerOverwrite(.number(99), at: "scores/w/deep")
        #expect(try keys(store, location) == ["y", "z"])
        // A value change can move a held child out of the window when another is in the view.
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            try b.applyServerOverwrite(.number(25), at: "scores/x")
        }
        #expect(try keys(store, location) == ["x", "z"])
        try store.close()
    }

    /// Item 2: an incomplete `limitToLast(3)` whose keys are [a, b] serves a and b to an
    /// offline re-listen — child events, no value.
    @Test func knownCompleteChildrenIncludeIncompleteFilteredQueries() throws {
        let dir = TempDir()
        let last3 = try QuerySpec(orderBy: .value).limitToLast(3)
        let location = QueryLocation(path: scores, query: last3)
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.trackQuery(at: location, active: true)
                try b.applyServerMerge(
                    [ChildUpdate(path: "a", node: .number(1)), ChildUpdate(path: "b", node: .number(2))], at: scores)
            }
            #expect(try keys(store, location) == ["a", "b"])
            #expect(try store.state().trackedQuery(at: location)?.complete == false)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        let log = try listen(store, last3)
        #expect(summary(log.take()) == ["child_added a", "child_added b after a"])
        // Another filtered query at the path is served the same known children.
        let first1 = try listen(store, try QuerySpec(orderBy: .key).limitToFirst(1))
        #expect(summary(first1.take()) == ["child_added a"])
        try store.close()
    }

    /// A new filtered query starts with the keys of its window over what is known complete at
    /// its path, not over every cached child (a deep listen's partial child is not complete).
    @Test func aNewFilteredQueryStartsFromKnownCompleteData() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let top = QueryLocation(path: scores, query: try QuerySpec(orderBy: .key).limitToFirst(5))
        try store.commit { (b: inout StoreBatch) throws(StoreError) in
            // Complete data at scores/a (a default query there), partial data at scores/p/name.
            try b.applyServerOverwrite(try! Node(jsonText: #"{"x":1}"#), at: "scores/a")
            try b.trackQuery(at: QueryLocation(path: "scores/a", query: .default), complete: true)
            try b.applyServerOverwrite(.string("partial"), at: "scores/p/name")
        }
        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.trackQuery(at: top, active: true) }
        #expect(try keys(store, top) == ["a"])
        try store.close()
    }

    /// The keys survive a checkpoint and the log replay after it.
    @Test func keyChangesSurviveCompactionAndReplay() throws {
        let dir = TempDir()
        let last2 = try QuerySpec(orderBy: .value).limitToLast(2)
        let location = QueryLocation(path: scores, query: last2)
        do {
            let store = try Store.open(directory: dir.path, options: options())
            try store.commit { (b: inout StoreBatch) throws(StoreError) in
                try b.applyServerOverwrite(try! Node(jsonText: #"{"a":1,"b":2,"c":3}"#), at: scores)
                try b.trackQuery(at: location, complete: true, active: true)
            }
            try store.compact()
            try store.applyServerMerge([ChildUpdate(path: "d", node: .number(4))], at: scores)
            try store.close()
        }
        let store = try Store.open(directory: dir.path, options: options())
        #expect(try keys(store, location) == ["c", "d"])
        try store.close()
    }

    @Test func theEventRoundTripsAndFolds() throws {
        let event = StoreEvent.trackedQueryKeysChanged(id: 7, added: ["d", "e"], removed: ["b"])
        let back = try EventCodec.decode(EventCodec.encode([event]))
        guard case let .trackedQueryKeysChanged(id, added, removed)? = back.first else {
            Issue.record("wrong event \(back)")
            return
        }
        #expect(id == 7 && Set(added) == ["d", "e"] && removed == ["b"])
        var s = StoreState()
        let loc = QueryLocation(path: scores, query: try QuerySpec(orderBy: .value).limitToLast(2))
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(id: 7, location: loc, complete: true, active: true, lastUse: 0, keys: ["b", "c"])))
        s.apply(event)
        #expect(s.trackedQuery(at: loc)?.keys == ["c", "d", "e"])
        // Unknown ids and default queries (no keys) are left alone.
        s.apply(.trackedQueryKeysChanged(id: 99, added: ["z"], removed: []))
        s.apply(
            .trackedQuerySaved(
                TrackedQuery(
                    id: 8, location: QueryLocation(path: "p", query: .default), complete: true, active: true, lastUse: 0
                )))
        s.apply(.trackedQueryKeysChanged(id: 8, added: ["z"], removed: []))
        #expect(s.trackedQuery(at: QueryLocation(path: "p", query: .default))?.keys == nil)
        #expect(s.checkInvariants() == nil)
    }
}
