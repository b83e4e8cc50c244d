import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A checkpoint copies the cache chunks nothing changed since the previous one (ChunkOrigins,
/// CheckpointEncoder.reuse): the copies happen, the result reads back exactly as a fresh
/// encode of the same state, and a damaged old chunk is never copied.
@Suite struct ChunkReuseTests {
    /// 40 rooms of 200 messages (~1.2 MB of JSON, dozens of chunks), checkpointed and closed.
    func makeStore(_ dir: TempDir) throws {
        let store = try Store.open(directory: dir.path, options: options())
        for room in 0..<40 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.compact()
        try store.close()
    }

    /// The whole cache of the store's current checkpoint, read by a fresh reader.
    func checkpointCache(_ store: Store) throws -> Node {
        try CheckpointReader(try #require(store.log.checkpoint)).fullCache()
    }

    /// The same state encoded fresh (no reuse) into a new store's checkpoint, read back.
    func freshlyEncoded(_ state: StoreState) throws -> Node {
        let dir = TempDir()
        var o = options()
        o.lazyCacheLoad = false
        let store = try Store.open(directory: dir.path, options: o)
        try store.applyServerOverwrite(state.serverCache, at: .root)
        try store.compact()
        defer { try? store.close() }
        return try checkpointCache(store)
    }

    @Test func aCheckpointAfterASmallChangeCopiesTheOtherChunks() throws {
        let dir = TempDir()
        try makeStore(dir)
        let store = try Store.open(directory: dir.path, options: options())
        let before = try #require(store.log.checkpoint).lsn
        try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
        try store.applyServerOverwrite(.empty, at: "rooms/r17")
        try store.applyServerOverwrite(json(#"{"a":1}"#), at: "rooms/r17b")
        let expected = try store.state()
        try store.compact()
        #expect(try #require(store.log.checkpoint).lsn > before)
        let counters = store.resident.counters.withLock { $0 }
        // Nearly every chunk is copied: only the changed room's chunks (and the root's run
        // around the new room) are encoded.
        #expect(counters.copiedChunks >= 15, "\(counters)")
        #expect(counters.encodedChunks <= 4, "\(counters)")
        #expect(counters.rejectedCopies == 0)
        #expect(try checkpointCache(store) == expected.serverCache)
        #expect(try checkpointCache(store) == freshlyEncoded(expected))
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state() == expected)
        try reopened.close()
    }

    @Test("a load records a range chunk as the loaded node's own map, not a copy of its pairs, and copies it next")
    func aLoadRecordsRangeChunksAsSpans() throws {
        let dir = TempDir()
        var store = try Store.open(directory: dir.path, options: options())
        // One node of 3,000 children of ~100 bytes: several range chunks.
        let kids = (0..<3_000).map {
            (Path(keys: [ChildKey(String(format: "k%05d", $0))]), Node.string(String(repeating: "x", count: 90)))
        }
        try store.applyServerOverwrite(Node.empty.merging(kids), at: "big")
        try store.compact()
        let reader = try CheckpointReader(try #require(store.log.checkpoint))
        let (cache, origins) = try reader.fullCacheWithOrigins()
        let ranges = origins.chunks.indices.filter { if case .range = origins.chunks[$0].kind { true } else { false } }
        #expect(ranges.count >= 3)
        for i in ranges {
            guard case .span(let map)? = origins.nodes[i] else {
                Issue.record("range chunk \(i) kept a copy of its pairs")
                continue
            }
            #expect(map.isIdentical(to: cache.child(at: origins.chunks[i].path).children))
        }
        try store.close()
        // Loaded again by the store, changed in one child: the other ranges are copied.
        store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(.string("changed"), at: "big/k01500")
        let expected = try store.state()
        try store.compact()
        let counters = store.resident.counters.withLock { $0 }
        #expect(counters.copiedChunks >= ranges.count - 2, "\(counters)")  // all but the changed one and a short last run
        #expect(counters.rejectedCopies == 0)
        #expect(try checkpointCache(store) == expected.serverCache)
        try store.close()
    }

    @Test func aNodeGainingChildrenEveryCheckpointKeepsItsChunksBounded() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        func message(_ m: Int) -> Node {
            json(#"{"from":"u\#(m % 17)","text":"message \#(m) \#(String(repeating: "lorem ", count: 20))"}"#)
        }
        try store.applyServerOverwrite(
            Node(children: (0..<2000).map { (key: ChildKey("m\(1000 + $0)"), value: message($0)) }), at: "rooms/r0")
        try store.compact()
        for cycle in 0..<12 {
            for m in 0..<3 {
                try store.applyServerOverwrite(
                    message(m), at: Path(keys: ["rooms", "r0", ChildKey("m\(5000 + cycle * 3 + m)")]))
            }
            _ = try store.state()  // a whole load: the next checkpoint copies
            try store.compact()
        }
        #expect(store.resident.counters.withLock { $0.copiedChunks } > 12)
        let chunks = try CheckpointReader(try #require(store.log.checkpoint)).directory.chunks.count
        // A fresh encode of the same cache, for comparison.
        let freshDir = TempDir()
        var o = options()
        o.lazyCacheLoad = false
        let fresh = try Store.open(directory: freshDir.path, options: o)
        try fresh.applyServerOverwrite(try store.state().serverCache, at: .root)
        try fresh.compact()
        let freshChunks = try CheckpointReader(try #require(fresh.log.checkpoint)).directory.chunks.count
        #expect(chunks <= freshChunks + 2, "\(chunks) chunks, \(freshChunks) fresh")
        try fresh.close()
        try store.close()
    }

    @Test func nothingIsCopiedWithoutReuse() throws {
        // The counters tell copies from encodes: a store loaded eagerly has no origins.
        let dir = TempDir()
        try makeStore(dir)
        var o = options()
        o.lazyCacheLoad = false
        let store = try Store.open(directory: dir.path, options: o)
        try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
        try store.compact()
        let counters = store.resident.counters.withLock { $0 }
        #expect(counters.copiedChunks == 0)
        #expect(counters.encodedChunks >= 15)
        try store.close()
    }

    @Test func aDamagedOldChunkIsEncodedNotCopied() throws {
        let dir = TempDir()
        try makeStore(dir)
        let store = try Store.open(directory: dir.path, options: options())
        try store.applyServerOverwrite(.string("changed"), at: "rooms/r5/m1010/text")
        let expected = try store.state()  // loads the cache: the origins are now recorded
        // Flip a byte in the stored bytes of two chunks of the old checkpoint, after the load.
        let checkpoint = try #require(store.log.checkpoint)
        let reader = try CheckpointReader(checkpoint)
        let damaged = [reader.directory.chunks[3], reader.directory.chunks[reader.directory.chunks.count - 2]]
        for c in damaged {
            // The chunk's bytes are in the checkpoint's file or in one it references.
            let file = try #require(checkpoint.file(id: c.fileID(own: checkpoint.id)))
            let handle = try #require(FileHandle(forUpdatingAtPath: dir.path + "/" + file.fileName))
            defer { try? handle.close() }
            let at = UInt64(64) + c.offset + UInt64(c.storedLength / 2)
            try handle.seek(toOffset: at)
            let byte = try #require(try handle.read(upToCount: 1)?.first)
            try handle.seek(toOffset: at)
            try handle.write(contentsOf: [byte ^ 0x5A])
        }
        try store.compact()
        let counters = store.resident.counters.withLock { $0 }
        #expect(counters.rejectedCopies == 2, "\(counters)")
        #expect(counters.copiedChunks >= 15)
        // The damaged chunks' nodes were encoded from memory: the new checkpoint is whole.
        try CheckpointReader(try #require(store.log.checkpoint)).verifyAllChunks()
        #expect(try checkpointCache(store) == expected.serverCache)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state() == expected)
        try reopened.close()
    }

    /// Random server events, pending writes and their acks, prunes (inactive queries over
    /// their limit), compactions, whole-state reads, drops and reopens on a lazily loaded
    /// store (its checkpoints reuse chunks) and an eagerly loaded one (never): after every
    /// compaction the lazy store's checkpoint holds exactly the eager one's cache.
    @Test(arguments: [11, 12, 13, 14] as [UInt64])
    func reusingCheckpointsReadBackAsFreshOnes(seed: UInt64) throws {
        let lazyDir = TempDir(), eagerDir = TempDir()
        let lazyClock = TestClock(), eagerClock = TestClock()
        func storeOptions(_ clock: TestClock, lazy: Bool) -> Store.Options {
            var o = options(clock: clock)
            o.lazyCacheLoad = lazy
            o.checkpointMinimumBytes = 32 << 10
            o.maxInactiveQueries = 5
            return o
        }
        var lazy = try Store.open(directory: lazyDir.path, options: storeOptions(lazyClock, lazy: true))
        var eager = try Store.open(directory: eagerDir.path, options: storeOptions(eagerClock, lazy: false))
        var random = SeededRandom(seed: seed)
        func key(_ prefix: String, _ n: Int) -> ChildKey {
            ChildKey("\(prefix)\(Int.random(in: 0..<n, using: &random))")
        }
        func path() -> Path {
            var keys = [key("a", 3)]
            for _ in 0..<Int.random(in: 1...2, using: &random) { keys.append(key("b", 40)) }
            return Path(keys: keys)
        }
        func value() -> Node {
            Gen.cacheValue(&random, kinds: 8, maxRepeats: 20_000, maxChildren: 30)
        }
        var copied = 0, copiedWrites = 0, pendingIDs: [Int64] = []
        func totals() -> Int { lazy.resident.counters.withLock { $0.copiedChunks } }
        func writeTotals() -> Int { eager.resident.counters.withLock { $0.copiedWriteChunks } }
        for step in 0..<300 {
            lazyClock.advance(1000)
            eagerClock.advance(1000)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                let (p, v) = (path(), value())
                try lazy.applyServerOverwrite(v, at: p)
                try eager.applyServerOverwrite(v, at: p)
            case 45..<55:
                let p = Path(keys: [key("a", 3)])
                let children = (0..<Int.random(in: 1...3, using: &random)).map { _ in
                    ChildUpdate(path: Path(keys: [key("b", 40)]), node: value())
                }
                try lazy.applyServerMerge(children, at: p)
                try eager.applyServerMerge(children, at: p)
            case 55..<62:
                let (p, v) = (path(), value())
                let id = try lazy.saveWrite(.set(v), at: p)
                #expect(try eager.saveWrite(.set(v), at: p) == id)
                pendingIDs.append(id)
            case 62..<66:
                guard !pendingIDs.isEmpty else { continue }
                let id = pendingIDs.remove(at: Int.random(in: 0..<pendingIDs.count, using: &random))
                try lazy.ackWrite(id)
                try eager.ackWrite(id)
            case 66..<74:
                let location = QueryLocation(path: path(), query: .default)
                _ = try lazy.trackQuery(at: location, complete: true, active: false)
                _ = try eager.trackQuery(at: location, complete: true, active: false)
            case 74..<77:
                _ = try lazy.state()
            case 77..<79:
                lazy.dropResidentCache()
            case 79..<90:
                try lazy.compact()
                try eager.compact()
                #expect(
                    try checkpointCache(lazy) == checkpointCache(eager), "seed \(seed) step \(step): checkpoints differ"
                )
                // The checkpoint's pending writes (chunks copied or encoded) are the state's.
                for store in [lazy, eager] {
                    let written = try CheckpointReader(try #require(store.log.checkpoint)).directory.state.writes.all()
                    #expect(try written == store.state().pendingWrites, "seed \(seed) step \(step)")
                }
            default:
                copied += totals()
                copiedWrites += writeTotals()
                try lazy.close()
                try eager.close()
                lazy = try Store.open(directory: lazyDir.path, options: storeOptions(lazyClock, lazy: true))
                eager = try Store.open(directory: eagerDir.path, options: storeOptions(eagerClock, lazy: false))
                #expect(try lazy.state() == eager.state(), "seed \(seed) step \(step): reopened states differ")
            }
        }
        copied += totals()
        copiedWrites += writeTotals()
        try lazy.compact()
        try eager.compact()
        #expect(try checkpointCache(lazy) == checkpointCache(eager))
        #expect(try lazy.state() == eager.state())
        #expect(copied > 10, "seed \(seed): \(copied) chunks copied")
        #expect(copiedWrites > 0, "seed \(seed): no write chunk copied")
        try lazy.close()
        try eager.close()
    }
}
