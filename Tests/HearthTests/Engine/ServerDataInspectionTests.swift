import HearthModel
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// `Store.applyServerOverwrite` and `applyServerMerge` check a server event's data and encode
/// it in one walk before the lock (`EventCodec.inspectedServerEvent`): the record must be the
/// bytes the batch path writes, and the store must refuse exactly what a batch's
/// `applyServerOverwrite` / `applyServerMerge` refuse, with the same errors, committing nothing
/// refused.
@Suite struct ServerDataInspectionTests {
    /// The event's encoding is what `encode(_:)` writes for it in a batch, alone or followed
    /// by other events, for random overwrites and merges.
    @Test func theOneWalkWritesTheBatchBytes() {
        for seed: UInt64 in 1...500 {
            var rng = SeededRandom(seed: seed)
            let at = Int64(rng.next() % 1_000_000)
            let event: StoreEvent =
                rng.next() % 2 == 0
                ? .serverMerge(path: "rooms/r1", children: SmallWorld.children(&rng, serverValues: false), at: at)
                : .serverOverwrite(path: "a/b", node: SmallWorld.node(&rng, serverValues: false), at: at)
            let (bytes, tooDeep) = EventCodec.inspectedServerEvent(event)
            #expect(tooDeep == nil, "seed \(seed)")
            #expect(EventCodec.encode([event], firstEncoded: bytes) == EventCodec.encode([event]), "seed \(seed)")
            let more: [StoreEvent] = [event, .serverOverwrite(path: "z", node: .number(1), at: at)]
            #expect(EventCodec.encode(more, firstEncoded: bytes) == EventCodec.encode(more), "seed \(seed)")
        }
    }

    /// At and around the depth limit the walk refuses exactly what the batch's check
    /// (`Node.nestingExceeds`) refuses, naming a merge's child by its full path.
    @Test func theOneWalkRefusesExactlyWhatTheBatchRefuses() {
        for levels in [0, 1, NodeCodec.maxDepth - 1, NodeCodec.maxDepth, NodeCodec.maxDepth + 1, 80] {
            let node = Node.nested(levels, .number(1))
            let refused = node.nestingExceeds(NodeCodec.maxDepth)
            let overwrite = EventCodec.inspectedServerEvent(.serverOverwrite(path: "a", node: node, at: 1))
            #expect(overwrite.tooDeep == (refused ? "a" : nil), "\(levels) levels")
            #expect((try? StoreBatch.validate(node, at: "a")) == nil ? refused : !refused, "\(levels) levels")
            let children = [ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "y/z", node: node)]
            let merge = EventCodec.inspectedServerEvent(.serverMerge(path: "a", children: children, at: 1))
            #expect(merge.tooDeep == (refused ? "a/y/z" : nil), "\(levels) levels")
        }
    }

    /// Through the store: what is accepted is stored and logged as the batch path stores it
    /// (a reopen replays it), what is refused throws the batch path's error and commits nothing.
    /// A direct call commits its one event without a batch unless a filtered query is tracked;
    /// either way the state — the cache, the untracked entries,
    /// a filtered query's tracked keys — is what the same calls as batches leave, call by call,
    /// and so are the records, which rebuild it at the next open.
    @Test func theDirectCallsLeaveWhatBatchesLeave() throws {
        let filteredQuery = try QuerySpec(orderBy: .key).limitToFirst(2)
        for (seed, query) in [(UInt64(1), QuerySpec.default), (2, filteredQuery), (3, filteredQuery)] {
            var rng = SeededRandom(seed: seed)
            let (directDir, batchDir) = (TempDir(), TempDir())
            let clock = TestClock()
            var direct = try Store.open(directory: directDir.path, options: options(clock: clock))
            var batched = try Store.open(directory: batchDir.path, options: options(clock: clock))
            let location = QueryLocation(path: "rooms", query: query)
            for store in [direct, batched] {
                try store.trackQuery(at: location, complete: true, active: true, keys: [])
            }
            for step in 0..<150 {
                let at =
                    rng.next() % 2 == 0 ? Path("rooms") : Path(keys: [ChildKey("rooms")] + SmallWorld.path(&rng).keys)
                if rng.next() % 2 == 0 {
                    let node = SmallWorld.node(&rng)
                    try direct.applyServerOverwrite(node, at: at)
                    try batched.commit { (b: inout StoreBatch) throws(StoreError) in
                        try b.applyServerOverwrite(node, at: at)
                    }
                } else {
                    let children = SmallWorld.children(&rng)
                    try direct.applyServerMerge(children, at: at)
                    try batched.commit { (b: inout StoreBatch) throws(StoreError) in
                        try b.applyServerMerge(children, at: at)
                    }
                }
                let (d, b) = (try direct.fullyLoadedCore().loading.state, try batched.fullyLoadedCore().loading.state)
                if d != b {
                    Issue.record("seed \(seed) step \(step): the direct call left another state")
                    return
                }
                if step % 50 == 49 {
                    try direct.close()
                    try batched.close()
                    direct = try Store.open(directory: directDir.path, options: options(clock: clock))
                    batched = try Store.open(directory: batchDir.path, options: options(clock: clock))
                    // Listened again after the restart, as a client does: an inactive query's
                    // keys are not kept in step with writes (its view is gone).
                    for store in [direct, batched] {
                        try store.commit { (b: inout StoreBatch) throws(StoreError) in try b.setQueryActive(location) }
                    }
                }
            }
            let keys = try direct.fullyLoadedCore().loading.state.trackedQuery(at: location)?.keys ?? []
            #expect(query == .default || !keys.isEmpty, "seed \(seed): the filtered query's keys were tracked")
        }
    }

    @Test func theStoreRefusesWhatABatchRefuses() throws {
        let dir = TempDir()
        var store = try Store.open(directory: dir.path)
        let ok = Node.nested(NodeCodec.maxDepth, .number(1))
        let deep = Node.nested(NodeCodec.maxDepth + 1, .number(1))
        let first = try store.applyServerOverwrite(ok, at: "rooms/r1")
        try store.applyServerMerge([ChildUpdate(path: "m/x", node: .string("hi"))], at: "rooms")
        // Each refused call, directly and as a batch of the same call: the same error.
        let badChild = [ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "y", node: deep)]
        let badPath = [ChildUpdate(path: "x", node: .number(1)), ChildUpdate(path: "a#b", node: .number(1))]
        let cases:
            [(direct: (Store) throws(StoreError) -> Void, batch: (inout StoreBatch) throws(StoreError) -> Void)] = [
                (
                    { s throws(StoreError) in try s.applyServerOverwrite(deep, at: "rooms/r2") },
                    { b throws(StoreError) in try b.applyServerOverwrite(deep, at: "rooms/r2") }
                ),
                (
                    { s throws(StoreError) in try s.applyServerMerge(badChild, at: "rooms") },
                    { b throws(StoreError) in try b.applyServerMerge(badChild, at: "rooms") }
                ),
                (
                    { s throws(StoreError) in try s.applyServerOverwrite(.number(1), at: "rooms/.info/x") },
                    { b throws(StoreError) in try b.applyServerOverwrite(.number(1), at: "rooms/.info/x") }
                ),
                (
                    { s throws(StoreError) in try s.applyServerMerge(badPath, at: "rooms") },
                    { b throws(StoreError) in try b.applyServerMerge(badPath, at: "rooms") }
                ),
            ]
        for (i, c) in cases.enumerated() {
            var direct: StoreError?
            do { try c.direct(store) } catch { direct = error }
            var batched: StoreError?
            do { try store.commit(c.batch) } catch { batched = error }
            #expect(direct != nil, "case \(i)")
            #expect(direct.map { "\($0)" } == batched.map { "\($0)" }, "case \(i)")
        }
        #expect(store.lastLSN == first + 1, "nothing refused was committed")
        let before = try store.state().serverCache
        #expect(before.child(at: "rooms/r1") == ok)
        #expect(before.child(at: "rooms/m/x") == .string("hi"))
        try store.close()
        store = try Store.open(directory: dir.path)
        defer { try? store.close() }
        #expect(try store.state().serverCache == before)
    }
}
