import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A cache that stays resident across checkpoints (an eagerly loaded store; a lazy one while
/// server data streams in) copies its unchanged chunks at every checkpoint: each checkpoint's
/// encoder records what its chunks encode (CheckpointEncoder.recordOrigins), not only a whole
/// load of the cache.
@Suite struct ResidentChunkReuseTests {
    func eagerOptions(_ fs: SimulatedFileSystem? = nil) -> Store.Options {
        var o = fs.map { options($0) } ?? options()
        o.lazyCacheLoad = false
        return o
    }

    /// The whole cache of the store's current checkpoint, read by a fresh reader.
    func checkpointCache(_ store: Store) throws -> Node {
        try CheckpointReader(try #require(store.log.checkpoint)).fullCache()
    }

    func counters(_ store: Store) -> ResidentCache.Counters { store.resident.counters.withLock { $0 } }

    @Test func everyCheckpointOfAResidentCacheCopiesTheUnchangedChunks() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: eagerOptions())
        for room in 0..<40 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.compact()
        var last = counters(store)
        for round in 0..<3 {
            try store.applyServerOverwrite(.string("changed \(round)"), at: "rooms/r5/m1010/text")
            try store.applyServerOverwrite(
                json(#"{"a":\#(round)}"#), at: Path(keys: ["rooms", ChildKey("new\(round)")]))
            let expected = try store.state()
            try store.compact()
            let now = counters(store)
            // The cache never left memory (no load) and nearly every chunk was copied, at
            // every checkpoint — also from chunks that were themselves copies.
            #expect(store.residentCacheStats.loads == 0)
            #expect(now.copiedChunks - last.copiedChunks >= 15, "round \(round): \(now)")
            #expect(now.encodedChunks - last.encodedChunks <= 4, "round \(round): \(now)")
            #expect(now.copiedRawBytes > now.encodedRawBytes / 2, "round \(round): \(now)")
            #expect(now.rejectedCopies == 0)
            #expect(try checkpointCache(store) == expected.serverCache)
            last = now
        }
        // The origins kept are the current checkpoint's, and its range chunks are recorded as
        // spans of their parents' children maps (shared with the cache), not pairs per child.
        let origins = try #require(store.core.withLock { $0.cacheOrigins })
        #expect(origins.checkpoint.lsn == store.log.checkpoint?.lsn)
        var spans = 0
        for case .some(let origin) in origins.nodes {
            switch origin {
            case .span: spans += 1
            case .run: Issue.record("a range chunk's origin kept as pairs")
            case .whole: break
            }
        }
        #expect(spans >= 15)
        let expected = try store.state()
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state() == expected)
        try reopened.close()
    }

    @Test func aLazyCacheUnderAServerStreamCopiesAtEveryCheckpoint() throws {
        let dir = TempDir()
        var o = options()
        o.checkpointMinimumBytes = 64 << 10
        o.residentCacheQuietNanos = 60_000_000_000
        let store = try Store.open(directory: dir.path, options: o)
        // A chat room's messages arriving one by one: the list grows at its end, so its
        // earlier range chunks stay the same children and are copied.
        var model = Node.empty
        for m in 0..<6000 {
            let key = ChildKey("m\(100_000 + m)")
            let node = json(
                #"{"from":"u\#(m % 17)","text":"message \#(m) \#(String(repeating: "lorem ", count: 20))"}"#)
            try store.applyServerOverwrite(node, at: Path(keys: ["rooms", "r0", "messages", key]))
            model = model.updating(Path(keys: [key]), with: node)
        }
        let stats = store.residentCacheStats
        let c = counters(store)
        let checkpoints = store.core.withLock { $0.checkpointsWritten }
        #expect(stats.cacheResident && stats.drops == 0, "\(stats)")
        #expect(checkpoints >= 5, "\(checkpoints) checkpoints")
        // Most raw bytes of the later checkpoints were copied, not encoded again.
        #expect(c.copiedRawBytes > c.encodedRawBytes, "\(c)")
        #expect(c.rejectedCopies == 0)
        #expect(try store.serverValue(at: "rooms/r0/messages") == model)
        // The chunks stay bounded (small runs are not copied: ChunkOrigins.minimumCopiedRun).
        let chunks = try CheckpointReader(try #require(store.log.checkpoint)).directory.chunks.count
        let raw = NodeCodec.encodedSize(model)
        #expect(chunks <= 4 * (raw / CheckpointFormat.chunkTarget + 1), "\(chunks) chunks for \(raw) bytes")
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.serverValue(at: "rooms/r0/messages") == model)
        try reopened.close()
    }

    @Test func aDroppedCacheKeepsNoOrigins() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        for room in 0..<10 {
            try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
        }
        try store.compact()  // drops the resident cache at its end
        #expect(!store.residentCacheStats.cacheResident)
        #expect(store.core.withLock { $0.cacheOrigins == nil })
        try store.close()
    }

    /// A crash at any file-system call of a checkpoint that copies the chunks the previous
    /// checkpoint's encoder recorded (the cache never loaded from a checkpoint), then a power
    /// cut: recovery gives exactly the state committed before it.
    @Test(arguments: 0..<12)
    func aCrashDuringAResidentReusingCheckpointRecoversTheCommittedState(point: Int) throws {
        func prepare(_ fs: SimulatedFileSystem) throws -> (Store, StoreState) {
            let store = try Store.open(directory: "/db", options: eagerOptions(fs))
            for room in 0..<24 {
                try store.applyServerOverwrite(Gen.chatRoom(room), at: Path(keys: ["rooms", ChildKey("r\(room)")]))
            }
            try store.compact()
            try store.applyServerOverwrite(.string("changed"), at: "rooms/r7/m1010/text")
            return (store, try store.state())
        }
        let dry = SimulatedFileSystem(seed: 9)
        let (dryStore, _) = try prepare(dry)
        let before = dry.callCount
        try dryStore.compact()
        let calls = dry.callCount - before
        #expect(counters(dryStore).copiedChunks >= 3, "\(counters(dryStore))")
        try dryStore.close()

        let fs = SimulatedFileSystem(seed: 9)
        let (store, expected) = try prepare(fs)
        fs.crash(afterCalls: 1 + point * max(1, calls / 12))
        _ = try? store.compact()
        let mode = SimulatedFileSystem.PowerCutMode.all[point % SimulatedFileSystem.PowerCutMode.all.count]
        fs.powerCut(mode: mode)
        let recovered = try Store.open(directory: "/db", options: options(fs))
        #expect(try recovered.state().serverCache == expected.serverCache, "point \(point) of \(calls), \(mode)")
        try recovered.close()
    }
}
