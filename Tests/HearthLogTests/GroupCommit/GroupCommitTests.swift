// Group commit and the durability tiers under concurrency.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
import HearthTesting

@Suite struct GroupCommitTests {
    @Test func concurrentFullAppendsAreAllDurableWithFewSyncs() throws {
        let fs = SimulatedFileSystem(seed: 31)
        fs.syncDelay = .milliseconds(2)  // a device-like sync latency, so followers queue up
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let syncsBefore = fs.syncCount
        let threads = 16, perThread = 25
        let acked = Mutex<[LSN: [UInt8]]>([:])
        let failures = Atomic<Int>(0)
        onThreads(threads) { t in
            for k in 0..<perThread {
                let p = jsonPayload(t * 1000 + k)
                do {
                    let lsn = try log.append(p, type: UInt8(t), durability: .full)
                    // Acknowledged under .full: durable now.
                    if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                    acked.withLock { $0[lsn] = p }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        let syncs = fs.syncCount - syncsBefore
        let records = threads * perThread
        print("group commit: \(records) records from \(threads) threads with \(syncs) syncs")
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(syncs * 3 < records, "group commit: \(syncs) syncs for \(records) records")
        try? log.close()
        // A power cut right after: every acknowledged record is there, at its LSN, nothing else.
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let all = try readAll(again)
        let map = acked.withLock { $0 }
        #expect(all.count == records && map.count == records)
        for r in all { #expect(map[r.lsn] == r.payload) }
        try again.close()
    }

    @Test func batchedTierIsSyncedWithinItsInterval() throws {
        let fs = SimulatedFileSystem(seed: 32)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs,
            options: .test(durability: .batched(interval: .milliseconds(20))))
        let before = fs.syncCount
        var last: LSN = 0
        for i in 0..<50 { last = try log.append(jsonPayload(i), type: 1) }
        // Acknowledged at once; the flusher syncs within the interval.
        var waited = 0
        while log.durableLSN < last && waited < 400 {
            sleepNanos(5_000_000)
            waited += 1
        }
        #expect(log.durableLSN == last, "flusher did not sync within 2 s")
        #expect(fs.syncCount - before < 10, "batched: few syncs (\(fs.syncCount - before))")
        // waitUntilDurable on a batched record waits for the scheduled sync instead of adding one.
        let syncsBefore = fs.syncCount
        var lastBatched: LSN = 0
        for i in 0..<20 { lastBatched = try log.append(jsonPayload(100 + i), type: 1) }
        for l in last + 1...lastBatched { try log.waitUntilDurable(l) }
        #expect(log.durableLSN >= lastBatched)
        #expect(fs.syncCount - syncsBefore <= 2, "waiting added syncs: \(fs.syncCount - syncsBefore)")
        let more = try log.append([1, 2], type: 1, durability: .buffered)
        #expect(log.durableLSN < more)
        try log.waitUntilDurable(more)
        #expect(log.durableLSN >= more)
        #expect(throws: LogError.self) { try log.waitUntilDurable(more + 10) }
        try log.close()
    }

    /// A commit does not wake the `.batched` flusher: it waits on its own condition, woken when a
    /// sync deadline is set and at close — not at every group's broadcast to its followers.
    @Test func batchedCommitsDoNotWakeTheFlusher() throws {
        let fs = SimulatedFileSystem(seed: 34)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(durability: .batched(interval: .seconds(30))))
        let before = log.core.flusherWakeupCount
        var last: LSN = 0
        for i in 0..<1000 { last = try log.append(jsonPayload(i), type: 1) }
        // One wake-up for the deadline the first append set; the others leave it (and the
        // flusher) alone. A broadcast-woken flusher turns about once per append.
        let wakeups = log.core.flusherWakeupCount - before
        #expect(wakeups <= 3, "the flusher woke \(wakeups) times for 1,000 commits")
        #expect(log.durableLSN < last, "nothing synced before the 30 s deadline")
        // Close syncs and stops the flusher (which must be woken for that, not left waiting
        // out its deadline).
        try log.close()
        #expect(log.durableLSN == last)
    }

    @Test func checkpointWhileAppendingConcurrently() throws {
        let fs = SimulatedFileSystem(seed: 33)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        for i in 0..<50 { _ = try log.append(jsonPayload(i), type: 1) }
        let stop = Atomic<Bool>(false)
        let appended = Atomic<Int>(0)
        let writer = OSThread {
            var k = 0
            while !stop.load(ordering: .relaxed) && k < 2000 {
                _ = try? log.append(jsonPayload(10_000 + k), type: 2, durability: .buffered)
                appended.add(1, ordering: .relaxed)
                k += 1
            }
        }
        // A slow body writer: appends continue meanwhile (the lock is taken only for the switch).
        let c = try log.installCheckpoint(lsn: 50) { w in
            for _ in 0..<20 {
                try w.write([UInt8](repeating: 7, count: 1000))
                sleepNanos(1_000_000)
            }
        }
        let during = appended.load(ordering: .relaxed)
        stop.store(true, ordering: .relaxed)
        writer.join()
        #expect(during > 0, "appends progressed while the checkpoint body was written")
        #expect(c.lsn == 50 && c.bodySize == 20_000)
        #expect(try c.read(offset: 19_990, count: 10) == [UInt8](repeating: 7, count: 10))
        #expect(throws: LogError.self) { try c.read(offset: 19_995, count: 10) }
        #expect(try c.readBody().count == 20_000)
        #expect(log.firstLSN <= 51)
        let total = log.lastLSN
        try log.close()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        #expect(again.checkpoint?.lsn == 50)
        #expect(try readAll(again, after: 50).count == Int(total) - 50)
        try again.close()
    }
}

@Suite struct CloseTests {
    @Test func concurrentCloseAndAppendsAreSafe() throws {
        for round in 0..<20 {
            let fs = SimulatedFileSystem(seed: UInt64(40 + round))
            let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            let acked = Mutex<[LSN]>([])
            onThreads(6) { t in
                if t < 2 {
                    sleepNanos(UInt64(200_000 * (round % 5)))
                    try? log.close()
                } else {
                    for k in 0..<30 {
                        if let lsn = try? log.append(jsonPayload(t * 100 + k), type: 1) {
                            acked.withLock { $0.append(lsn) }
                        }
                    }
                }
            }
            try log.close()
            #expect(throws: LogError.closed) { try log.append([1], type: 1) }
            fs.powerCut(mode: .dropAllUnsynced)
            let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
            let lsns = try readAll(again).map(\.lsn)
            let a = acked.withLock { $0 }
            #expect(Set(a).isSubset(of: Set(lsns)), "round \(round): every acknowledged append survives")
            try again.close()
        }
    }
}
