import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// The prune before a checkpoint returns at once when nothing can need pruning (the footprint
/// meets the target and the inactive queries are within their limit), without the estimate
/// and pass that walk the whole cache and every pending write — and still prunes when
/// something does.
@Suite struct PruneSkipTests {
    @Test func aCheckpointAmongPendingWritesSkipsThePrunePass() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        for i in 0..<300 {
            try store.saveWrite(.set(.string("w\(i)")), at: Path(keys: ["outbox", ChildKey("w\(i)")]))
        }
        try store.compact()
        try store.saveWrite(.set(.string("more")), at: "outbox/more")
        try store.compact()
        let (skipped, pruned) = store.core.withLock { ($0.prunePassesSkipped, $0.prunedRounds) }
        #expect(skipped >= 2)
        #expect(pruned == 0)
        #expect(try store.state().pendingWrites.count == 301)
        try store.close()
    }

    @Test func tooManyInactiveQueriesStillPrune() throws {
        let dir = TempDir()
        let clock = TestClock()
        var o = options(clock: clock)
        o.maxInactiveQueries = 3
        let store = try Store.open(directory: dir.path, options: o)
        for i in 0..<8 {
            clock.advance(1000)
            let path = Path(keys: ["q", ChildKey("q\(i)")])
            try store.applyServerOverwrite(.string("v\(i)"), at: path)
            _ = try store.trackQuery(at: QueryLocation(path: path, query: .default), complete: true, active: false)
        }
        try store.compact()
        #expect(store.core.withLock { $0.prunedRounds } > 0)
        #expect(try store.state().trackedQueries.count <= 3)
        #expect(try store.serverValue(at: "q/q7") == .string("v7"))
        try store.close()
    }
}
