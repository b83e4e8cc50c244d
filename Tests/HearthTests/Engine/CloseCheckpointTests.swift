import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// Close checkpoints a log tail of 64 KiB or more: the first open after a session
/// that made many pending writes then reads the checkpoint instead of replaying up to a
/// checkpoint threshold's worth of records (a MiB or more, tens of thousands of writes).
@Suite struct CloseCheckpointTests {
    typealias Rolls = CheckpointRollTests

    static func seeded(_ fs: SimulatedFileSystem, count: Int) throws -> (Store, Store.Options) {
        var o = options(fs)
        o.checkpointMinimumBytes = 64 << 20  // no checkpoint while writing
        let store = try Store.open(directory: "/db", options: o)
        for i in 0..<count { try store.saveWrite(.set(Rolls.message(i)), at: Rolls.at(i)) }
        return (store, o)
    }

    @Test func closeCheckpointsALongTail() throws {
        let fs = SimulatedFileSystem(seed: 41)
        let (store, o) = try Self.seeded(fs, count: 2_000)
        #expect(try store.stats().logBytesSinceCheckpoint >= Store.openReplayCheckpointBytes)
        #expect(store.log.checkpoint == nil)
        let syncs = fs.syncCount
        try store.close()
        // Looked at before reopening: an open that replays 64 KiB checkpoints too.
        #expect(fs.fileNames(in: "/db").contains { $0.hasPrefix("ckpt-") }, "close wrote no checkpoint")
        #expect(fs.syncCount - syncs >= 3, "the checkpoint, the new segment and the MANIFEST are synced")
        let again = try Store.open(directory: "/db", options: o)
        let checkpoint = try #require(again.log.checkpoint)
        #expect(checkpoint.lsn == again.log.lastLSN, "open replayed no record")
        #expect(again.log.firstLSN == checkpoint.lsn + 1, "no covered record is live")
        try CheckpointRollTests.expectWrites(again, Array(0..<2_000), "after reopen")
        try again.close()
    }

    @Test func closeLeavesAShortTailToTheLog() throws {
        let fs = SimulatedFileSystem(seed: 42)
        let (store, o) = try Self.seeded(fs, count: 100)
        #expect(try store.stats().logBytesSinceCheckpoint < Store.openReplayCheckpointBytes)
        let syncs = fs.syncCount
        try store.close()
        // Every write was synced when it returned; cutting the preallocated zeros off needs none.
        #expect(fs.syncCount == syncs, "close synced a log with every record durable")
        #expect(
            !fs.fileNames(in: "/db").contains { $0.hasPrefix("ckpt-") },
            "a short tail is cheaper to replay than to checkpoint at every close")
        let again = try Store.open(directory: "/db", options: o)
        #expect(again.log.checkpoint == nil)
        try CheckpointRollTests.expectWrites(again, Array(0..<100), "after reopen")
        try again.close()
    }

    /// On a full disk the checkpoint (and its roll) fail; close still succeeds, and every write
    /// is there at the next open.
    @Test(arguments: [FileOperation.create, .write])
    func closeOnAFullDiskStillCloses(op: FileOperation) throws {
        let fs = SimulatedFileSystem(seed: 43)
        let (store, o) = try Self.seeded(fs, count: 2_000)
        fs.injectFault(op, .noSpace, sticky: true)
        try store.close()
        #expect(!fs.failedCalls.isEmpty, "the close tried to checkpoint")
        fs.clearFaults()
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Store.open(directory: "/db", options: o)
        try CheckpointRollTests.expectWrites(again, Array(0..<2_000), "after reopen")
        try again.close()
    }
}
