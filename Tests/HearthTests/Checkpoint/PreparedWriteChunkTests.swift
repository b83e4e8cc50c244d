import Foundation
import Synchronization
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// Pending-write chunks cut and compressed between checkpoints (PreparedWriteChunks.swift,
/// Store+WritePreparation.swift): the next checkpoint writes each whose writes are all still
/// pending and unchanged, encodes the rest, and reads back exactly as a fresh encode.
@Suite struct PreparedWriteChunkTests: WriteChunkSuite {
    func counters(_ store: Store) -> ResidentCache.Counters { store.resident.counters.withLock { $0 } }

    @Test func aCheckpointWritesThePreparedChunks() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        _ = try writes(store, 0..<600)
        let prepared = store.core.withLock { $0.preparedWrites.runs }
        // ~450-byte writes: 16 KiB chunks of ~36 writes; all but the last few chunks prepared.
        #expect(prepared.count >= 12, "\(prepared.count) prepared")
        #expect(zip(prepared, prepared.dropFirst()).allSatisfy { $0.entry.lastID < $1.entry.firstID })
        // Prepared from the kept bodies, they are the chunks a fresh cut of the writes makes.
        let fresh = CheckpointEncoder.preparedWriteChunks(
            try store.state().pendingWrites, level: options().pendingWriteCompressionLevel)
        #expect(prepared.map(\.stored) == fresh.prefix(prepared.count).map(\.stored))
        #expect(prepared.map(\.entry) == fresh.prefix(prepared.count).map(\.entry))
        // The bodies kept are those of the writes after the last prepared chunk.
        let (through, kept) = store.core.withLock { ($0.preparedWrites.throughID, $0.preparedWrites.bodies.map(\.id)) }
        #expect(through == prepared.last?.entry.lastID)
        #expect(kept == Array((through + 1)...600))
        try store.compact()
        let c = counters(store)
        #expect(c.preparedWriteChunks == prepared.count, "\(c)")
        #expect(c.copiedWriteChunks == 0 && c.rejectedCopies == 0)
        #expect(store.core.withLock { $0.preparedWrites.runs.isEmpty })
        let expected = try store.state().pendingWrites
        #expect(expected.count == 600)
        #expect(try checkpointWrites(store) == expected)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state().pendingWrites == expected)
        try reopened.close()
    }

    @Test func aPreparedChunkWithAWriteGoneIsEncodedAgain() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let ids = try writes(store, 0..<600)
        let prepared = store.core.withLock { $0.preparedWrites.runs }
        #expect(prepared.count >= 12)
        // One write acknowledged in the third prepared chunk, one reverted in the fifth.
        try store.ackWrite(prepared[2].writes[3].id)
        try store.revertWrite(prepared[4].writes[0].id)
        try store.compact()
        let c = counters(store)
        #expect(c.preparedWriteChunks == prepared.count - 2, "\(c), \(prepared.count) prepared")
        let expected = try store.state().pendingWrites
        #expect(expected.count == 598)
        #expect(!expected.contains { $0.id == prepared[2].writes[3].id || $0.id == prepared[4].writes[0].id })
        #expect(try checkpointWrites(store) == expected)
        // Later writes are prepared after the checkpoint's snapshot, never again before it.
        _ = try writes(store, 600..<1200)
        let next = store.core.withLock { $0.preparedWrites.runs }
        #expect(next.first.map { $0.entry.firstID > ids[599] } ?? false)
        try store.compact()
        let d = counters(store)
        #expect(d.preparedWriteChunks == c.preparedWriteChunks + next.count, "\(d)")
        #expect(d.copiedWriteChunks >= prepared.count - 2, "the first checkpoint's full chunks are copied: \(d)")
        let all = try store.state().pendingWrites
        #expect(all.count == 1198)
        #expect(try checkpointWrites(store) == all)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state().pendingWrites == all)
        try reopened.close()
    }

    /// The prepared chunks are the very bytes a fresh encode writes: the whole body is the same.
    @Test func withPreparedChunksTheBodyIsTheFreshEncodesBytes() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        _ = try writes(store, 0..<300)
        try store.applyServerOverwrite(json(#"{"a":{"b":1},"c":"text"}"#), at: "cache")
        let state = try store.state()
        try store.close()
        for level: Int32 in [1, 6, 9] {
            let prepared = CheckpointEncoder.preparedWriteChunks(state.pendingWrites, level: level)
            #expect(prepared.count >= 6)
            var fresh: [UInt8] = []
            _ = CheckpointEncoder(compressionLevel: level).encode(state) { fresh += $0 }
            var encoder = CheckpointEncoder(compressionLevel: level)
            encoder.preparedWrites = prepared
            var withPrepared: [UInt8] = []
            let summary = encoder.encode(state) { withPrepared += $0 }
            #expect(summary.preparedWriteChunks == prepared.count)
            #expect(withPrepared == fresh, "level \(level)")
        }
    }

    /// Pending-write chunks are deflated at ``Store/Options/pendingWriteCompressionLevel``,
    /// prepared or encoded by the checkpoint, and cache chunks at `compressionLevel`: each
    /// part of the body is the bytes an encoder at that one level writes.
    @Test func writeChunksHaveTheirOwnLevel() throws {
        for (cacheLevel, writeLevel) in [(6, 1), (1, 9), (9, 6)] as [(Int32, Int32)] {
            let dir = TempDir()
            var o = options()
            o.compressionLevel = cacheLevel
            o.pendingWriteCompressionLevel = writeLevel
            let store = try Store.open(directory: dir.path, options: o)
            try store.applyServerOverwrite(
                json(#"{"a":"\#(String(repeating: "cached text ", count: 500))","b":{"c":1}}"#), at: "cache")
            _ = try writes(store, 0..<300)
            let prepared = store.core.withLock { $0.preparedWrites.runs }
            #expect(prepared.count >= 6, "levels \(cacheLevel)/\(writeLevel): \(prepared.count) prepared")
            let state = try store.state()
            #expect(
                prepared.map(\.stored)
                    == CheckpointEncoder.preparedWriteChunks(state.pendingWrites, level: writeLevel)
                    .prefix(prepared.count).map(\.stored), "levels \(cacheLevel)/\(writeLevel)")
            try store.compact()
            let checkpoint = try #require(store.log.checkpoint)
            let body = try checkpoint.read(offset: 0, count: Int(checkpoint.bodySize))
            var cacheOnly: [UInt8] = []
            let cache = CheckpointEncoder(compressionLevel: cacheLevel).encode(state) { cacheOnly += $0 }
            var writesOnly: [UInt8] = []
            let writes = CheckpointEncoder(compressionLevel: writeLevel).encode(state) { writesOnly += $0 }
            let cacheEnd = try #require(cache.writeRuns.first).entry.offset
            #expect(body.prefix(Int(cacheEnd)) == cacheOnly.prefix(Int(cacheEnd)), "levels \(cacheLevel)/\(writeLevel)")
            let writesStart = try #require(writes.writeRuns.first).entry.offset
            let writesEnd = try #require(writes.writeRuns.last).entry
            let writeBytes = writesOnly[Int(writesStart)..<Int(writesEnd.offset) + writesEnd.storedLength]
            #expect(
                Array(body[Int(cacheEnd)..<Int(cacheEnd) + writeBytes.count]) == Array(writeBytes),
                "levels \(cacheLevel)/\(writeLevel)")
            try store.close()
            #expect(try Store.open(directory: dir.path, options: o).state().pendingWrites == state.pendingWrites)
        }
        var bad = options()
        for level: Int32 in [0, 10] {
            bad.pendingWriteCompressionLevel = level
            #expect(throws: StoreError.self) { try Store.open(directory: TempDir().path, options: bad) }
        }
    }

    /// A prepared chunk whose writes are not the state's (ids overlapping a previous
    /// checkpoint's chunk, or writes changed) is not written.
    @Test func aPreparedChunkIsWrittenOnlyForExactlyItsWrites() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        _ = try writes(store, 0..<200)
        let state = try store.state()
        try store.close()
        let prepared = CheckpointEncoder.preparedWriteChunks(state.pendingWrites, level: 6)
        #expect(prepared.count >= 4)
        // The second chunk claims a changed write.
        var doctored = prepared
        var changed = doctored[1].writes
        changed[5] = PendingWrite(id: changed[5].id, path: changed[5].path, operation: .set(json("1")))
        doctored[1] = WriteChunkMemo.Run(entry: doctored[1].entry, writes: changed, stored: doctored[1].stored)
        var encoder = CheckpointEncoder(compressionLevel: 6)
        encoder.preparedWrites = doctored
        var body: [UInt8] = []
        let summary = encoder.encode(state) { body += $0 }
        #expect(summary.preparedWriteChunks == prepared.count - 1)
        var fresh: [UInt8] = []
        _ = CheckpointEncoder(compressionLevel: 6).encode(state) { fresh += $0 }
        #expect(body == fresh)
    }

    /// Writers on many threads with background maintenance: the checkpoint `close()` writes
    /// takes the chunks prepared meanwhile, and the reopened store holds every write.
    @Test func concurrentWritersThenCloseKeepEveryWrite() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options(inline: false))
        let group = DispatchGroup()
        let failures = Mutex(0)
        for t in 0..<4 {
            DispatchQueue.global().async(group: group) {
                do { _ = try writes(store, (t * 1000)..<(t * 1000 + 150)) } catch { failures.withLock { $0 += 1 } }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        let expected = try store.state().pendingWrites
        #expect(expected.count == 600)
        try store.close()
        #expect(counters(store).preparedWriteChunks >= 5, "\(counters(store))")
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try checkpointWrites(reopened) == expected)
        #expect(try reopened.state().pendingWrites == expected)
        try reopened.close()
    }

    /// Checkpoints (`compact()`) interleaved with the preparations that writers on many threads
    /// schedule: each checkpoint takes the chunks prepared before it and starts the next
    /// preparation after its writes, and no write is lost or written twice.
    @Test func checkpointsDuringPreparationsKeepEveryWriteOnce() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options(inline: false))
        let group = DispatchGroup()
        let failures = Mutex(0)
        let writing = Atomic(4)
        for t in 0..<4 {
            DispatchQueue.global().async(group: group) {
                defer { writing.subtract(1, ordering: .relaxed) }
                do { _ = try writes(store, (t * 1000)..<(t * 1000 + 200)) } catch { failures.withLock { $0 += 1 } }
            }
        }
        var compactions = 0
        while writing.load(ordering: .relaxed) > 0 {
            _ = try store.compact()
            compactions += 1
        }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        #expect(compactions >= 2)
        let expected = try store.state().pendingWrites
        #expect(expected.count == 800)
        #expect(Set(expected.map(\.id)).count == 800)
        // One more checkpoint, so that it holds every write (close writes one only for a long tail).
        _ = try store.compact()
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try checkpointWrites(reopened) == expected)
        #expect(try reopened.state().pendingWrites == expected)
        try reopened.close()
    }
}
