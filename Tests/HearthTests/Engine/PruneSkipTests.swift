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

    /// A store (maxInactiveQueries 3) with eight inactive complete queries at `q/q0`…`q/q7`, each
    /// over its value `v0`…`v7`, used a second apart.
    static func eightInactiveQueriesOverALimitOfThree(_ dir: TempDir) throws -> Store {
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
        return store
    }

    @Test func tooManyInactiveQueriesStillPrune() throws {
        let dir = TempDir()
        let store = try Self.eightInactiveQueriesOverALimitOfThree(dir)
        try store.compact()
        #expect(store.core.withLock { $0.prunedRounds } > 0)
        #expect(try store.state().trackedQueries.count <= 3)
        #expect(try store.serverValue(at: "q/q7") == .string("v7"))
        try store.close()
    }

    /// Under the cap, the pass before a checkpoint that prunes for the query limit alone does
    /// not estimate the checkpoint's size (a walk over the whole cache and every pending
    /// write): the footprint meets the target already. Over it, the estimate is still made
    /// (DiskBoundTests check what it prunes).
    @Test func aQueryLimitPassUnderTheCapMakesNoSizeEstimate() throws {
        let dir = TempDir()
        let store = try Self.eightInactiveQueriesOverALimitOfThree(dir)
        for i in 0..<50 {
            try store.saveWrite(.set(.string("w\(i)")), at: Path(keys: ["outbox", ChildKey("w\(i)")]))
        }
        try store.compact()
        let (rounds, estimates) = store.core.withLock { ($0.prunedRounds, $0.checkpointSizeEstimates) }
        #expect(rounds > 0)
        #expect(estimates == 0)
        #expect(try store.state().trackedQueries.count <= 3)
        #expect(try store.state().pendingWrites.count == 50)
        try store.close()

        // Past the cap (24 incompressible-ish 60 KB values under 1 MiB): the pass estimates.
        let small = TempDir()
        let tight = try Store.open(directory: small.path, options: options(cap: Store.minimumCacheSize))
        var random = SeededRandom(seed: 48)
        for i in 0..<24 {
            let noise = (0..<60_000).map { _ in Character(UnicodeScalar(UInt8(97 + random.next() % 26))) }
            try tight.applyServerOverwrite(.string(String(noise)), at: Path(keys: ["big", ChildKey("b\(i)")]))
        }
        try tight.compact()
        #expect(tight.core.withLock { $0.checkpointSizeEstimates } > 0)
        try tight.close()
    }
}
