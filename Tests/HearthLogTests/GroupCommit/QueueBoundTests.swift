// The commit queue is bounded: a caller beyond `LogCore.maxQueuedRequests` waits (or leads the
// front group itself) instead of growing the queue, and every queued record still commits.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
import HearthTesting

@Suite struct QueueBoundTests {
    /// One thread queues three times the bound without ever waiting: with no other thread to lead,
    /// the submitter itself must lead the front group when the queue is full, or it would block
    /// forever.
    @Test func oneSubmitterBeyondTheBoundLeadsAndNeverOverfillsTheQueue() throws {
        let fs = SimulatedFileSystem(seed: 61)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let limit = LogCore.maxQueuedRequests
        let n = 3 * limit
        var pending: [Log.PendingAppend] = []
        pending.reserveCapacity(n)
        for i in 0..<n { pending.append(try log.submit(jsonPayload(i), type: 1)) }
        let high = log.core.queueHighWaterMark
        #expect(high <= limit, "queue grew to \(high), beyond its bound \(limit)")
        #expect(high == limit, "the queue filled up (\(high)): the bound was exercised")
        for (i, p) in pending.enumerated() {
            #expect(try log.wait(p) == LSN(i + 1))
        }
        #expect(log.lastLSN == LSN(n) && log.durableLSN == LSN(n))
        try log.close()
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let all = try readAll(again)
        #expect(all.count == n)
        for (i, r) in all.enumerated() { #expect(r.lsn == LSN(i + 1) && r.payload == jsonPayload(i)) }
        try again.close()
    }

    /// Many threads queue more than the bound between them, then wait: the queue never holds more
    /// than the bound, and every record commits at the LSN it was given when queued.
    @Test func manyThreadsBeyondTheBoundAllCommit() throws {
        let fs = SimulatedFileSystem(seed: 62)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let limit = LogCore.maxQueuedRequests
        let threads = 16, perThread = limit / 6
        let acked = Mutex<[LSN: [UInt8]]>([:])
        let failures = Atomic<Int>(0)
        onThreads(threads) { t in
            var mine: [(Log.PendingAppend, [UInt8])] = []
            for k in 0..<perThread {
                let p = jsonPayload(t * 100_000 + k)
                do { mine.append((try log.submit(p, type: UInt8(t), durability: .buffered), p)) } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
            for (pending, p) in mine {
                do {
                    let lsn = try log.wait(pending)
                    if lsn != pending.lsn { failures.add(1, ordering: .relaxed) }
                    acked.withLock { $0[lsn] = p }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        let records = threads * perThread
        #expect(records > limit, "the threads queue more than the bound between them")
        #expect(failures.load(ordering: .relaxed) == 0)
        let high = log.core.queueHighWaterMark
        #expect(high <= limit, "queue grew to \(high), beyond its bound \(limit)")
        try log.close()
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        let all = try readAll(again)
        let map = acked.withLock { $0 }
        #expect(all.count == records && map.count == records)
        for r in all { #expect(map[r.lsn] == r.payload) }
        try again.close()
    }
}
