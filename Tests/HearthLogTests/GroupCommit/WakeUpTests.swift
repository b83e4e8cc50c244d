// Who a group commit wakes: each completed request's own committer and the next leader — not
// every committer still queued (which cost most of the context switches per durable write with
// 16 writers on 2 cores) — and no waiter is ever left asleep.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
import HearthTesting

// The limit guards against a hang, not a slow machine: the whole suite on a loaded 2-core
// machine keeps the cooperative threads these tests run on busy for minutes.
@Suite(.timeLimit(.minutes(10))) struct WakeUpTests {
    @Test func aGroupWakesOnlyItsCommittersAndTheNextLeader() throws {
        let fs = SimulatedFileSystem(seed: 41)
        fs.syncDelay = .milliseconds(1)  // followers queue up behind each sync
        // Groups of two records (incompressible 1,800-byte payloads, 4 KiB per group), so most
        // queued committers are in none of the groups ahead of theirs.
        var options = Log.Options.test(segmentSize: 1 << 20)
        options.maxBatchBytes = 4096
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: options)
        let threads = 16, perThread = 25
        let failures = Atomic<Int>(0)
        onThreads(threads) { t in
            var seed = UInt64(t + 1) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<perThread {
                let payload = (0..<1800).map { _ -> UInt8 in
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    return UInt8(truncatingIfNeeded: seed >> 56)
                }
                do {
                    let lsn = try log.append(payload, type: 1, durability: .full)
                    if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        let records = threads * perThread
        let wakeups = log.core.waiterWakeupCount
        print("wake-ups: \(wakeups) for \(records) records from \(threads) threads")
        #expect(failures.load(ordering: .relaxed) == 0)
        // Each committer wakes about once (its group done, or its turn to lead). Waking every
        // queued committer at each group's end costs about (threads - 1) wake-ups per group.
        #expect(wakeups <= records * 2, "\(wakeups) wake-ups for \(records) records")
        try log.close()
    }

    @Test func mixedTiersSubmittersAndDurabilityWaitersAllFinish() throws {
        let fs = SimulatedFileSystem(seed: 42)
        fs.syncDelay = .milliseconds(1)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs,
            options: .test(segmentSize: 1 << 20, durability: .batched(interval: .milliseconds(5))))
        let threads = 12, perThread = 30
        let failures = Atomic<Int>(0)
        onThreads(threads) { t in
            for k in 0..<perThread {
                let payload = jsonPayload(t * 1000 + k)
                do {
                    switch (t + k) % 4 {
                    case 0:
                        let lsn = try log.append(payload, type: 1, durability: .full)
                        if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                    case 1:
                        // Queued, then waited for later: the request may have reached the front
                        // (or been completed by another leader) before its thread waits.
                        let pending = try log.submit(payload, type: 1, durability: .full)
                        sleepNanos(UInt64(k % 3) * 300_000)
                        let lsn = try log.wait(pending)
                        if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                    case 2:
                        // Acknowledged at once; waiting for durability waits for the flusher.
                        let lsn = try log.append(payload, type: 1)
                        try log.waitUntilDurable(lsn)
                        if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                    default:
                        _ = try log.append(payload, type: 1, durability: .buffered)
                    }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        // A last batched append is synced by the flusher alone.
        let last = try log.append([7], type: 1)
        var waited = 0
        while log.durableLSN < last && waited < 400 {
            sleepNanos(5_000_000)
            waited += 1
        }
        #expect(log.durableLSN == last, "the flusher did not sync within 2 s")
        #expect(log.lastLSN == LSN(threads * perThread) + 1)
        try log.close()
    }
}
