import Foundation
@_spi(HearthInternals) import HearthLog
import HearthTesting
import Testing
@_spi(HearthInternals) @testable import Hearth

/// A checkpoint copies the previous checkpoint's pending-write chunks whose writes are all
/// still pending and unchanged (WriteChunkMemo), encodes only the rest, reads back exactly as
/// a fresh encode, and never copies a damaged chunk.
@Suite struct WriteChunkReuseTests: WriteChunkSuite {
    @Test func onlyTheChangedRunsAreEncoded() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        let ids = try writes(store, 0..<1000)
        try store.compact()
        let first = store.resident.counters.withLock { $0 }
        #expect(first.copiedWriteChunks == 0)
        let entries = try CheckpointReader(try #require(store.log.checkpoint)).directory.writeChunks
        #expect(entries.count > 10)
        // Full runs are copied; a short last run is encoded again with the new writes.
        let chunks = entries.count { $0.rawLength >= CheckpointFormat.writeChunkTarget / 2 }
        #expect(chunks >= entries.count - 1)
        // One write acknowledged in the middle, 20 new ones: one old run re-encoded.
        try store.ackWrite(ids[500])
        _ = try writes(store, 1000..<1020)
        try store.compact()
        let second = store.resident.counters.withLock { $0 }
        #expect(second.copiedWriteChunks == chunks - 1, "\(second), \(chunks) chunks")
        #expect(second.rejectedCopies == 0)
        let expected = try store.state().pendingWrites
        #expect(expected.count == 1019)
        #expect(try checkpointWrites(store) == expected)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state().pendingWrites == expected)
        try reopened.close()
    }

    @Test func aDamagedOldWriteChunkIsEncodedNotCopied() throws {
        let dir = TempDir()
        let store = try Store.open(directory: dir.path, options: options())
        _ = try writes(store, 0..<400)
        try store.compact()
        let checkpoint = try #require(store.log.checkpoint)
        let entry = try #require(CheckpointReader(checkpoint).directory.writeChunks.dropFirst(2).first)
        let handle = try #require(FileHandle(forUpdatingAtPath: dir.path + "/" + checkpoint.fileName))
        let at = UInt64(64) + entry.offset + UInt64(entry.storedLength / 2)
        try handle.seek(toOffset: at)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: at)
        try handle.write(contentsOf: [byte ^ 0x5A])
        try handle.close()
        _ = try writes(store, 400..<410)
        let expected = try store.state().pendingWrites  // in memory since they were saved
        try store.compact()
        let counters = store.resident.counters.withLock { $0 }
        #expect(counters.rejectedCopies == 1, "\(counters)")
        #expect(counters.copiedWriteChunks > 3)
        #expect(try checkpointWrites(store) == expected)
        try store.close()
        let reopened = try Store.open(directory: dir.path, options: options())
        #expect(try reopened.state().pendingWrites == expected)
        try reopened.close()
    }
}
