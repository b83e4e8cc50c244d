@_spi(HearthInternals) import HearthLog
import Foundation
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// Checkpoints of a lazily loaded store whose cache is not resident (Store+ChunkCheckpoint.swift):
/// they decode only the chunks the server events since the last checkpoint write inside, never
/// load the whole cache, and leave the same state — read back, reopened, verified — as the
/// checkpoint written after a whole load.
@Suite struct ChunkCheckpointTests {
    /// 40 rooms of 200 messages (~1.2 MB of JSON, dozens of chunks), and a list of 3,000 items
    /// split into range chunks with a tracked `limitToLast(50)` ordered by a child (an order
    /// index, body format 5) — checkpointed, closed.
    func makeStore(_ dir: TempDir) throws {
        let store = try Store.open(directory: dir.path, options: options())
        for room in 0..<40 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.applyServerOverwrite(Self.list(), at: "list")
        try store.trackQuery(at: Self.window, complete: true, active: false)
        try store.compact()
        try store.close()
    }

    static let window = QueryLocation(path: "list", query: try! QuerySpec(orderBy: .child("ts")).limitToLast(50))

    static func list() -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        for i in 0..<3000 {
            let ts = (i * 7919) % 3001
            pairs.append(
                (
                    ChildKey("i\(10000 + i)"),
                    json(#"{"ts":\#(ts),"body":"item \#(i) \#(String(repeating: "x", count: 60))"}"#)
                ))
        }
        return Node(children: pairs)
    }

    /// Three chat rooms' messages in one room (~105 KB of JSON).
    static func bigRoom(_ room: Int) -> Node {
        var pairs: [(key: ChildKey, value: Node)] = []
        for (n, part) in [room, room + 1000, room + 2000].enumerated() {
            for (key, value) in Gen.chatRoom(part).children { pairs.append((ChildKey("\(n)" + key.string), value)) }
        }
        return Node(children: pairs)
    }

    /// The same server events on two copies of one store: `lazy` checkpoints with its cache not
    /// resident, `loaded` after a whole-state read loaded it (the checkpoint of the whole cache).
    func applyBoth(_ lazy: Store, _ loaded: Store, _ body: (Store) throws -> Void) throws {
        try body(lazy)
        try body(loaded)
    }

    func copy(_ from: TempDir) throws -> TempDir {
        let to = TempDir()
        try? FileManager.default.removeItem(atPath: to.path)
        try FileManager.default.copyItem(atPath: from.path, toPath: to.path)
        return to
    }

    /// The whole checkpoint of a closed store: its cache, and its order indexes' entries.
    func checkpointContent(_ dir: TempDir) throws -> (cache: Node, indexes: [[(key: ChildKey, value: Node)]]) {
        let log = try Log.open(directory: dir.path)
        defer { try? log.close() }
        let reader = try CheckpointReader(try #require(log.checkpoint))
        try reader.verifyAllChunks()
        var indexes: [[(key: ChildKey, value: Node)]] = []
        for i in reader.directory.orderIndexes.indices {
            indexes.append(
                try reader.directory.orderIndexes[i].runs.indices.flatMap { try reader.orderIndexRun(i, $0) })
        }
        return (try reader.fullCache(), indexes)
    }

    func same(_ a: [[(key: ChildKey, value: Node)]], _ b: [[(key: ChildKey, value: Node)]]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in x.count == y.count && zip(x, y).allSatisfy { $0 == $1 } }
    }

    /// The store of ``makeStore(_:)`` and a copy: `lazy` opened as it is (its cache not resident),
    /// `loaded` with its cache loaded by a whole-state read.
    func twoStores() throws -> (dir: TempDir, other: TempDir, lazy: Store, loaded: Store) {
        let dir = TempDir()
        try makeStore(dir)
        let other = try copy(dir)
        let lazy = try Store.open(directory: dir.path, options: options())
        let loaded = try Store.open(directory: other.path, options: options())
        _ = try loaded.state()
        return (dir, other, lazy, loaded)
    }

    /// Closes both stores; their checkpoints hold the same cache and the same order index.
    func closeAndCompare(_ lazy: Store, _ dir: TempDir, _ loaded: Store, _ other: TempDir) throws {
        try lazy.close()
        try loaded.close()
        let (a, b) = (try checkpointContent(dir), try checkpointContent(other))
        #expect(a.cache == b.cache)
        #expect(a.indexes.count == 1 && same(a.indexes, b.indexes))
    }

    @Test func aCheckpointOfANonResidentCacheDecodesOnlyTheChunksWrittenInside() throws {
        let (dir, other, lazy, loaded) = try twoStores()
        let chunks = try #require(lazy.checkpointChunkCount())
        #expect(chunks >= 20)
        try applyBoth(lazy, loaded) { store in
            // Inside one room's chunk, a new room beside the others, a room replaced whole,
            // a message removed: the list and every other room untouched.
            try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
            try store.applyServerMerge(
                [ChildUpdate(path: "r40", node: Gen.chatRoom(40)), ChildUpdate(path: "r7", node: .string("gone"))],
                at: "rooms")
            try store.applyServerOverwrite(.empty, at: "rooms/r9/m1003")
            try store.compact()
        }
        let stats = lazy.residentCacheStats
        #expect(stats.loads == 0 && !stats.cacheResident, "\(stats)")
        #expect(stats.chunkCheckpoints == 1)
        // The runs of rooms holding r5, r7, r9 and the new r40's key (a room is ~35 KB: runs
        // of two), and any run too short to be reused (encoded anew, so decoded).
        #expect(stats.chunkCheckpointDecodes >= 1 && stats.chunkCheckpointDecodes <= 6, "\(stats)")
        #expect(stats.deferredEvents == 0)
        // The reads after it come from the new checkpoint, equal to the loaded store's.
        for path: Path in ["rooms/r5", "rooms/r7", "rooms/r9", "rooms/r40", "rooms/r39", "list", .root] {
            #expect(try lazy.serverValue(at: path) == loaded.serverValue(at: path), "\(path)")
        }
        #expect(
            try lazy.query(Self.window.query, at: "list").window == loaded.query(Self.window.query, at: "list").window)
        try closeAndCompare(lazy, dir, loaded, other)
    }

    /// A write inside the indexed list decodes the list (its order index is written anew from
    /// its children); one beside it copies the index as it is.
    @Test func anOrderIndexIsCopiedUnlessItsLocationChanged() throws {
        let (dir, other, lazy, loaded) = try twoStores()
        let listChunks = try #require(lazy.checkpointChunkCount(under: "list"))
        #expect(listChunks >= 3)
        try applyBoth(lazy, loaded) { store in
            try store.applyServerOverwrite(.string("x"), at: "rooms/r1/m1001/text")
            try store.compact()
        }
        // The room's chunk, and any run too short to be reused (encoded anew, so decoded).
        let first = lazy.residentCacheStats.chunkCheckpointDecodes
        #expect(first >= 1 && first <= 4)
        try applyBoth(lazy, loaded) { store in
            try store.applyServerOverwrite(json(#"{"ts":99999,"body":"last"}"#), at: "list/i10005")
            try store.compact()
        }
        let stats = lazy.residentCacheStats
        #expect(stats.loads == 0 && stats.chunkCheckpoints == 2)
        let second = stats.chunkCheckpointDecodes - first
        #expect(second >= listChunks && second <= listChunks + 3, "\(stats)")
        #expect(
            try lazy.query(Self.window.query, at: "list").window == loaded.query(Self.window.query, at: "list").window)
        try closeAndCompare(lazy, dir, loaded, other)
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.serverValue(at: "list/i10005/ts") == .number(99999))
        try reopened.close()
    }

    /// A prune of a cache not resident loads nothing: its rounds come from the tracked queries and
    /// untracked entries, its event is deferred with the server events (reads see it at once) and
    /// the checkpoint after it removes the pruned chunks unread. The same state as a store that
    /// keeps its cache resident, pruned the same way.
    @Test func aPruneOfANonResidentCacheLoadsNothing() throws {
        let dir = TempDir()
        let clock = TestClock()
        do {
            var o = options(clock: clock)
            o.maxInactiveQueries = 1000
            let store = try Store.open(directory: dir.path, options: o)
            // Rooms of ~105 KB: each split into runs of its own, which a prune of the room
            // removes without reading them.
            for room in 0..<24 {
                clock.advance(1000)
                try store.applyServerOverwrite(Self.bigRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
            }
            for room in 0..<12 {
                clock.advance(1000)
                try store.trackQuery(
                    at: QueryLocation(path: Path(keys: ["rooms", ChildKey("r\(room)")]), query: .default),
                    complete: true, active: false)
            }
            // Active: kept inside a room the prune removes.
            try store.trackQuery(
                at: QueryLocation(path: "rooms/r15/0m1005", query: .default), complete: true, active: true)
            try store.compact()
            try store.close()
        }
        let other = try copy(dir)
        var lazyOptions = options(clock: clock)
        lazyOptions.maxInactiveQueries = 6
        var eagerOptions = lazyOptions
        eagerOptions.lazyCacheLoad = false
        let lazy = try Store.open(directory: dir.path, options: lazyOptions)
        let eager = try Store.open(directory: other.path, options: eagerOptions)
        let chunks = try #require(lazy.checkpointChunkCount())
        try lazy.pruneInactiveQueries()
        try eager.pruneInactiveQueries()
        #expect(lazy.trackedQueries().count == eager.trackedQueries().count)
        #expect(lazy.trackedQueries().count <= 7)
        #expect(lazy.residentCacheStats.loads == 0)
        #expect(lazy.residentCacheStats.deferredEvents >= 1)
        let paths: [Path] = [
            "rooms/r0", "rooms/r5", "rooms/r11", "rooms/r15", "rooms/r15/0m1005", "rooms/r23", "rooms",
        ]
        for path in paths { #expect(try lazy.serverValue(at: path) == eager.serverValue(at: path), "\(path)") }
        #expect(try lazy.serverValue(at: "rooms/r15/0m1005") != .empty)
        #expect(try lazy.serverValue(at: "rooms/r20") == .empty)
        try lazy.compact()
        try eager.compact()
        let stats = lazy.residentCacheStats
        #expect(stats.loads == 0 && stats.chunkCheckpoints == 1 && stats.deferredEvents == 0, "\(stats)")
        // The run of r15 holding the kept m1005; the pruned rooms' runs go unread.
        #expect(chunks >= 40)
        #expect(stats.chunkCheckpointDecodes >= 1 && stats.chunkCheckpointDecodes <= 2, "\(stats) of \(chunks) chunks")
        for path in paths { #expect(try lazy.serverValue(at: path) == eager.serverValue(at: path), "\(path)") }
        try lazy.close()
        try eager.close()
        #expect(try checkpointContent(dir).cache == checkpointContent(other).cache)
    }

    /// Events committed after a checkpoint's snapshot stay deferred, and reads see them on the
    /// new checkpoint's chunks.
    @Test func eventsAfterTheSnapshotStayDeferred() throws {
        let dir = TempDir()
        try makeStore(dir)
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(.string("before"), at: "rooms/r2/m1002/text")
        try store.writeCheckpoint(afterSnapshot: {
            _ = try? store.applyServerOverwrite(.string("after"), at: "rooms/r3/m1003/text")
        })
        let stats = store.residentCacheStats
        #expect(stats.chunkCheckpoints == 1 && stats.loads == 0)
        #expect(stats.deferredEvents == 1)
        #expect(try store.serverValue(at: "rooms/r2/m1002/text") == .string("before"))
        #expect(try store.serverValue(at: "rooms/r3/m1003/text") == .string("after"))
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.serverValue(at: "rooms/r3/m1003/text") == .string("after"))
        #expect(try reopened.serverValue(at: "rooms/r2/m1002/text") == .string("before"))
        try reopened.close()
    }
}

extension Store {
    /// The cache chunks of the checkpoint the store reads from, while its cache is not resident
    /// (at or below `path`).
    func checkpointChunkCount(under path: Path = .root) -> Int? {
        core.withLock { core in
            core.reader.map { reader in reader.directory.chunks.count { path.contains($0.path) } }
        }
    }
}
