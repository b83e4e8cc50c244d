import Foundation
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// `stats()` and a location's state of a lazily loaded store whose cache is not resident
/// (Store+ChunkSizes.swift, CheckpointReader+Sizes.swift): they measure the cache from the
/// checkpoint's chunk table and decode only the chunks an event writes inside — never the whole
/// cache — and give what a store with the cache loaded gives. A prune to a size loads the cache
/// (Store+Prune.swift); it removes what a store loaded before it removes.
@Suite struct NonResidentSizeTests {
    /// 24 rooms of ~105 KB (each split into runs of its own), 12 of them under an inactive tracked
    /// query used in turn, the others untracked entries; an active query inside room 15; a list of
    /// 3,000 items in range chunks under `list` — checkpointed, closed.
    static func makeStore(_ dir: TempDir, _ clock: TestClock) throws {
        let store = try Store.open(directory: dir.path, options: options(clock: clock))
        for room in 0..<24 {
            clock.advance(1000)
            try store.applyServerOverwrite(
                ChunkCheckpointTests.bigRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        for room in 0..<12 {
            clock.advance(1000)
            try store.trackQuery(
                at: QueryLocation(path: Path(keys: ["rooms", ChildKey("r\(room)")]), query: .default),
                complete: true, active: false)
        }
        try store.trackQuery(at: QueryLocation(path: "rooms/r15/0m1005", query: .default), complete: true, active: true)
        try store.applyServerOverwrite(ChunkCheckpointTests.list(), at: "list")
        try store.compact()
        try store.close()
    }

    /// Two copies of ``makeStore(_:_:)``: `lazy` opened as it is (its cache not resident),
    /// `loaded` with its cache loaded by a whole-state read; the same server events on both after.
    static func twoStores(
        _ clock: TestClock, maxInactiveQueries: Int = 1000
    ) throws -> (lazy: Store, loaded: Store, dirs: [TempDir]) {
        let dir = TempDir()
        try makeStore(dir, clock)
        let other = try ChunkCheckpointTests().copy(dir)
        var o = options(clock: clock)
        o.maxInactiveQueries = maxInactiveQueries
        let lazy = try Store.open(directory: dir.path, options: o)
        let loaded = try Store.open(directory: other.path, options: o)
        _ = try loaded.state()
        for store in [lazy, loaded] {
            // Inside one room's run, inside the list's runs, a new room (an untracked entry).
            try store.applyServerOverwrite(.string("changed"), at: "rooms/r20/0m1003/text")
            try store.applyServerMerge([ChildUpdate(path: "i10005/ts", node: .number(-1))], at: "list")
            try store.applyServerOverwrite(Gen.chatRoom(30), at: "rooms/r30")
        }
        return (lazy, loaded, [dir, other])
    }

    func untracked(_ state: StoreState) -> [String] { state.untrackedEntries.map { "\($0.path)=\($0.lastWrite)" } }

    @Test func statsOfANonResidentCacheComeFromTheChunkTable() throws {
        let (lazy, loaded, dirs) = try Self.twoStores(TestClock())
        defer { withExtendedLifetime(dirs) {} }
        let chunks = try #require(lazy.checkpointChunkCount())
        let readBefore = try #require(lazy.readerChunksRead)
        let (a, b) = (try lazy.stats(), try loaded.stats())
        // Only the chunks the two events write inside are decoded: one run of r20, one of the list.
        let read = try #require(lazy.readerChunksRead) - readBefore
        #expect(chunks >= 40 && read <= 2, "\(read) of \(chunks) chunks read")
        // The list's runs are range chunks: their children's count is read from their bytes.
        #expect(try lazy.rangeChunksStoodIn() >= 3)
        #expect(a.serverCacheBytes == b.serverCacheBytes)
        #expect(a.serverCacheBytes == NodeCodec.encodedSize(try loaded.state().serverCache))
        #expect(a.trackedQueries == b.trackedQueries && a.untrackedEntries == b.untrackedEntries)
        #expect(a.pendingWrites == b.pendingWrites && a.activeQueries == b.activeQueries)
        let stats = lazy.residentCacheStats
        #expect(stats.loads == 0 && !stats.cacheResident, "\(stats)")
        try lazy.close()
        try loaded.close()
    }

    /// Pruned to a size, with the disk bound's room too small for the whole checkpoint: the same
    /// rounds, estimate (the room's new file and copy budget follow from it) and queries removed
    /// as with the cache loaded before.
    @Test func aPruneToASizeOfANonResidentCacheRemovesWhatALoadedStoreRemoves() throws {
        let (lazy, loaded, dirs) = try Self.twoStores(TestClock())
        defer { withExtendedLifetime(dirs) {} }
        #expect(try lazy.footprintBytes() == loaded.footprintBytes())
        // Bounds the whole checkpoint does not meet: a target half its estimate, a room less (and
        // a footprint that does not cap the estimate, so that every round's measure counts).
        let ratio = loaded.core.withLock { $0.compressionRatio }
        let whole = Store.estimatedCheckpointBytes(try loaded.state(), ratio: ratio)
        let a = try lazy.prune(target: whole * 0.5, room: whole * 0.4, footprint: whole * 2)
        let b = try loaded.prune(target: whole * 0.5, room: whole * 0.4, footprint: whole * 2)
        #expect(
            a.rounds == b.rounds && a.newFile == b.newFile && a.copyBudget == b.copyBudget,
            "\(a) \(b) of \(whole)")
        #expect(a.rounds >= 2, "\(a)")
        let ids = { (s: Store) in s.trackedQueries().map(\.id) }
        #expect(ids(lazy) == ids(loaded))
        #expect(ids(lazy).count > 1 && ids(lazy).count < 13, "some inactive queries kept, some pruned")
        #expect(untracked(try lazy.state(at: "none")) == untracked(try loaded.state()))
        for room in [0, 5, 11, 15, 20, 23, 30] {
            let path = Path(keys: ["rooms", ChildKey("r\(room)")])
            #expect(try lazy.serverValue(at: path) == loaded.serverValue(at: path), "\(path)")
        }
        try lazy.compact()
        try loaded.compact()
        #expect(try lazy.stats().serverCacheBytes == loaded.stats().serverCacheBytes)
        try lazy.close()
        try loaded.close()
    }

    /// One location's state: its server data where it is, every other part as the whole state's.
    @Test func aLocationsStateReadsOnlyItsChunks() throws {
        let (lazy, loaded, dirs) = try Self.twoStores(TestClock())
        defer { withExtendedLifetime(dirs) {} }
        let readBefore = try #require(lazy.readerChunksRead)
        let state = try lazy.state(at: "rooms/r20")
        let whole = try loaded.state()
        #expect(state.serverCache == Node.empty.updating("rooms/r20", with: whole.serverCache.child(at: "rooms/r20")))
        #expect(state.trackedQueries == whole.trackedQueries && untracked(state) == untracked(whole))
        #expect(try loaded.state(at: "rooms/r20").serverCache == state.serverCache)
        let read = try #require(lazy.readerChunksRead) - readBefore
        #expect(read >= 1 && read <= 4, "\(read): the room's runs")
        #expect(lazy.residentCacheStats.loads == 0)
        try lazy.close()
        try loaded.close()
    }
}

extension Store {
    /// How many chunks the current checkpoint's reader has been asked for whole, while the cache
    /// is not resident.
    var readerChunksRead: Int? { core.withLock { $0.reader?.chunksRead } }

    /// How many range chunks a measure of the cache as it is now stands in for.
    func rangeChunksStoodIn() throws -> Int {
        let source = try #require(core.withLock { $0.chunkSource })
        return try chunkSizes(source).measure.runCounts.count
    }
}
