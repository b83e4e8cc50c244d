import Testing
@_spi(HearthInternals) @testable import Hearth
import HearthLog
import HearthTesting

/// A checkpoint rolls the log's segment at its snapshot (else the first open after a session
/// with many pending writes scans every record the checkpoints already covered, because they
/// sit in the live segment). The roll may fail without poisoning the store when
/// nothing durable changed; these tests fail every call of a checkpoint in turn, and cut the
/// power at every call in every mode.
@Suite struct CheckpointRollTests {
    static func message(_ i: Int) -> Node {
        Node(children: [("n", .number(Double(i))), ("t", .string("hello"))])
    }

    static func at(_ i: Int) -> Path { Path(keys: ["chat", ChildKey("m\(1_000_000 + i)")]) }

    /// An open store holding `count` durable pending writes and no checkpoint yet.
    static func seeded(seed: UInt64, count: Int = 120) throws -> (SimulatedFileSystem, Store, Store.Options) {
        let fs = SimulatedFileSystem(seed: seed)
        var o = options(fs)
        o.checkpointMinimumBytes = 64 << 20  // only the checkpoints the tests ask for
        let store = try Store.open(directory: "/db", options: o)
        for i in 0..<count { try store.saveWrite(.set(message(i)), at: at(i)) }
        return (fs, store, o)
    }

    /// Every write in `written` reads back, and they are all the pending writes.
    static func expectWrites(_ store: Store, _ written: [Int], _ ctx: String) throws {
        for i in written { #expect(try store.value(at: at(i)) == message(i), "m\(i): \(ctx)") }
        #expect(store.pendingWrites().count == written.count, "\(ctx)")
    }

    /// Records committed while a checkpoint is being written (after its snapshot) are the only
    /// ones left in the live log: the segment with the records it covers is dropped at install.
    /// Before the roll, all 140 stayed in the one live segment and every open scanned them.
    @Test func aCheckpointLeavesOnlyLaterRecordsLive() throws {
        let (fs, store, o) = try Self.seeded(seed: 31, count: 120)
        try store.writeCheckpoint(afterSnapshot: {
            for i in 120..<140 { _ = try? store.saveWrite(.set(Self.message(i)), at: Self.at(i)) }
        })
        let checkpoint = try #require(store.log.checkpoint)
        #expect(checkpoint.lsn == 120)
        #expect(store.log.firstLSN == checkpoint.lsn + 1, "the live log starts at the checkpoint's LSN + 1")
        #expect(store.log.abandonedRolls.count == 0)
        try store.close()
        let again = try Store.open(directory: "/db", options: o)
        #expect(again.log.firstLSN == 121)
        try Self.expectWrites(again, Array(0..<140), "after reopen")
        try again.close()
        let scan = try Log.verify(directory: "/db", fileSystem: fs)
        #expect(scan.damage == nil)
    }

    /// The checkpoint's calls, counted on a run where nothing fails.
    static func checkpointCalls(seed: UInt64) throws -> Int {
        let (fs, store, _) = try seeded(seed: seed)
        let before = fs.callCount
        try store.writeCheckpoint()
        let calls = fs.callCount - before
        try store.close()
        return calls
    }

    /// ENOSPC or EIO at each call of a checkpoint, one at a time. A failure in the roll before
    /// the new MANIFEST's rename, or while the checkpoint file is written, leaves the store
    /// writable (on a full disk it keeps taking writes); a failed sync of the live segment, or a
    /// MANIFEST rename or directory sync, poisons it. Either way, after a power cut, every
    /// acknowledged write is there.
    @Test(arguments: [FileSystemError.Code.noSpace, .ioError])
    func aFailureAtEveryCallOfACheckpoint(code: FileSystemError.Code) throws {
        let seed: UInt64 = 32
        let calls = try Self.checkpointCalls(seed: seed)
        #expect(calls > 15, "a checkpoint made \(calls) calls")
        var stayedWritable = 0, poisoned = 0
        for k in 0..<calls {
            let ctx = "\(code) at call \(k + 1) of \(calls)"
            let (fs, store, o) = try Self.seeded(seed: seed)
            var written = Array(0..<120)
            fs.failCall(afterCalls: k, code)
            let checkpointed = (try? store.writeCheckpoint()) != nil
            let failed = try #require(fs.failedCalls.first, "no call failed: \(ctx)")
            let writable = (try? store.saveWrite(.set(Self.message(500)), at: Self.at(500))) != nil
            if writable {
                written.append(500)
                stayedWritable += 1
            } else {
                poisoned += 1
            }
            // The roll's calls come first (a clean store rolls with 9 calls).
            if k < 9 {
                let mustPoison =
                    (failed.operation == .sync && failed.path.hasSuffix("seg-0000000000000001.log"))
                    || failed.operation == .rename || failed.operation == .syncDirectory
                #expect(writable == !mustPoison, "\(failed.operation) \(failed.path): writable \(writable): \(ctx)")
                #expect(checkpointed == !mustPoison, "a roll given up still lets the checkpoint through: \(ctx)")
                if !mustPoison { #expect(store.log.abandonedRolls.count == 1, "\(ctx)") }
            } else if failed.path.contains("ckpt-"), [.create, .write, .sync, .rename].contains(failed.operation) {
                #expect(writable, "a failed checkpoint file poisoned the store: \(ctx)")
                #expect(!checkpointed, "\(ctx)")
            }
            try? store.close()
            fs.powerCut(mode: .dropAllUnsynced)
            let again = try Store.open(directory: "/db", options: o)
            try Self.expectWrites(again, written, "\(ctx)")
            try again.saveWrite(.set(Self.message(501)), at: Self.at(501))
            try again.close()
        }
        #expect(stayedWritable > 0 && poisoned > 0, "writable \(stayedWritable), poisoned \(poisoned)")
        print(
            "\(code) at each of a checkpoint's \(calls) calls: the store stayed writable \(stayedWritable) times, was poisoned \(poisoned) times; nothing acknowledged was lost"
        )
    }

    /// A power cut at every call of a checkpoint (its roll and its install), in every mode:
    /// reopening finds every acknowledged write, exactly once, and the store writes and
    /// checkpoints again.
    @Test func aPowerCutAtEveryCallOfACheckpoint() throws {
        let seed: UInt64 = 33
        let calls = try Self.checkpointCalls(seed: seed)
        for k in 0...calls {
            for mode in SimulatedFileSystem.PowerCutMode.all {
                let ctx = "power cut after call \(k) of \(calls), \(mode)"
                let (fs, store, o) = try Self.seeded(seed: seed)
                fs.crash(afterCalls: k)
                _ = try? store.writeCheckpoint()
                try? store.close()
                fs.powerCut(mode: mode)
                let scan = try Log.verify(directory: "/db", fileSystem: fs)
                #expect(scan.damage == nil || scan.damage!.isTornTail, "\(String(describing: scan.damage)): \(ctx)")
                let again = try Store.open(directory: "/db", options: o)
                try Self.expectWrites(again, Array(0..<120), "\(ctx)")
                try again.saveWrite(.set(Self.message(500)), at: Self.at(500))
                try again.writeCheckpoint()
                try again.close()
                let third = try Store.open(directory: "/db", options: o)
                try Self.expectWrites(third, Array(0..<120) + [500], "\(ctx)")
                #expect(third.log.firstLSN > third.log.checkpoint?.lsn ?? 0, "\(ctx)")
                try third.close()
            }
        }
    }
}
