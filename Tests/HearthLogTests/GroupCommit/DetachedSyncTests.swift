// The `.batched` flusher's sync runs beside the commit queue (LogCore+Flusher.swift): commits
// that need neither a sync nor a roll are written meanwhile, what it synced survives a power
// cut, a failed one poisons, and rolls wait for it.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
import HearthTesting

@Suite struct DetachedSyncTests {
    /// Polls `condition` every millisecond for up to `seconds`.
    private func eventually(seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(seconds * 1000) {
            if condition() { return true }
            sleepNanos(1_000_000)
        }
        return condition()
    }

    /// Cuts the power (unsynced bytes lost), reopens, and returns the records recovered.
    private func historyAfterPowerCut(_ fs: SimulatedFileSystem) throws -> [[UInt8]] {
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        defer { try? again.close() }
        return try recoveredHistory(again)
    }

    private func detachedSyncRunning(_ log: Log) -> Bool {
        log.core.monitor.withLock { log.core.detachedSync != nil }
    }

    /// While the flusher's sync takes a second, 200 `.batched` appends complete. Queued behind
    /// a flush request instead (as the flusher did before), they waited for that second.
    @Test func batchedAppendsAreWrittenWhileTheFlusherSyncs() throws {
        let fs = SimulatedFileSystem(seed: 71)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs,
            options: .test(segmentSize: 1 << 20, durability: .batched(interval: .milliseconds(1))))
        var history = [jsonPayload(0)]
        // Slowed before the first append: set after it, the flusher (1 ms later) could sync
        // that record at full speed first — a loaded machine can deschedule this thread for
        // longer than that — and then have nothing left to sync while the test waits.
        fs.syncDelay = .seconds(2)
        _ = try log.append(history[0], type: 1)
        #expect(eventually { detachedSyncRunning(log) }, "the flusher's sync did not start")
        let covered = log.core.monitor.withLock { log.core.detachedSync ?? 0 }
        var last: LSN = 0
        for i in 1...200 {
            history.append(jsonPayload(i))
            last = try log.append(history[i], type: 1)
        }
        // The first detached sync has not finished: the appends did not wait for it.
        #expect(log.core.detachedSyncCount == 0, "the appends waited for the flusher's sync")
        #expect(log.durableLSN < last)
        fs.syncDelay = .zero
        #expect(eventually { log.durableLSN == last }, "the appends were not synced after it")
        #expect(log.core.detachedSyncCount >= 2)
        #expect(covered >= 1)
        try log.close()
        #expect(try historyAfterPowerCut(fs) == history)
    }

    /// What the flusher's sync reported durable survives a power cut with the log left open.
    @Test func whatTheFlusherSyncedSurvivesAPowerCut() throws {
        let fs = SimulatedFileSystem(seed: 72)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(durability: .batched(interval: .milliseconds(2))))
        var history: [[UInt8]] = []
        var last: LSN = 0
        for i in 0..<60 {
            history.append(jsonPayload(i))
            last = try log.append(history[i], type: 1)
        }
        #expect(eventually { log.durableLSN == last }, "the flusher did not sync")
        #expect(log.core.detachedSyncCount >= 1)
        #expect(try historyAfterPowerCut(fs) == history)
    }

    /// A failed sync of the flusher's poisons the log, as a failed sync of a group does: the
    /// state of the file is unknown.
    @Test func aFailedFlusherSyncPoisons() throws {
        let fs = SimulatedFileSystem(seed: 73)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(durability: .batched(interval: .milliseconds(1))))
        _ = try log.append(jsonPayload(0), type: 1, durability: .full)
        fs.injectFault(.sync, .ioError, pathContains: "seg-")
        _ = try log.append(jsonPayload(1), type: 1)
        #expect(eventually { log.core.monitor.withLock { log.core.poison != nil } }, "the failed sync did not poison")
        #expect(throws: LogError.self) { try log.append(jsonPayload(2), type: 1) }
        #expect(log.durableLSN == 1)
        fs.clearFaults()
        try? log.close()
        #expect(try historyAfterPowerCut(fs).first == jsonPayload(0))
    }

    /// Appends that roll 4 KiB segments from two threads while the flusher syncs every
    /// millisecond: a roll waits for the flusher's sync of the segment it seals (the roll and
    /// group-sync paths assert it in debug builds), and every record comes back after a power
    /// cut, in order.
    @Test func rollsAndFullSyncsWaitForTheFlushersSync() throws {
        let fs = SimulatedFileSystem(seed: 74)
        fs.syncDelay = .microseconds(300)
        let log = try Log.open(
            directory: storeDir, fileSystem: fs, options: .test(durability: .batched(interval: .microseconds(500))))
        let acked = Mutex<[LSN: [UInt8]]>([:])
        let failures = Atomic<Int>(0)
        onThreads(2) { t in
            for k in 0..<300 {
                let p = jsonPayload(t * 1000 + k)
                do {
                    let lsn = try log.append(p, type: 1, durability: k % 50 == 49 ? .full : nil)
                    acked.withLock { $0[lsn] = p }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 0)
        #expect(log.core.detachedSyncCount > 0)
        try log.close()
        fs.powerCut(mode: .dropAllUnsynced)
        let again = try Log.open(directory: storeDir, fileSystem: fs, options: .test())
        let all = try readAll(again)
        let map = acked.withLock { $0 }
        #expect(all.count == 600 && map.count == 600)
        for r in all { #expect(map[r.lsn] == r.payload) }
        try again.close()
    }
}
