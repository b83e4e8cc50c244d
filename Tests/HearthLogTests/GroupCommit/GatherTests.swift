// A synced group's leader gathers the committers the last group released (LogCore+Gather.swift):
// N threads committing one durable write at a time share one sync per round instead of
// splitting into two cohorts that sync in turn; a lone committer never waits; and the
// expectation follows the committers down when some stop.
import Testing
@_spi(HearthInternals) @testable import HearthLog
import Synchronization
import HearthTesting

// The limit guards against a hang, not a slow machine: the whole suite on a loaded 2-core
// machine keeps the cooperative threads these tests run on busy for minutes.
@Suite(.timeLimit(.minutes(10))) struct GatherTests {
    /// A gather's time limit long enough that, on a loaded machine too, it ends because the
    /// committers arrived (ending at the limit costs a test only a group more).
    static let generousLimit: UInt64 = 200_000_000

    @Test func concurrentCommittersShareOneSyncPerRound() throws {
        let fs = SimulatedFileSystem(seed: 71)
        fs.syncDelay = .milliseconds(1)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        log.core.monitor.withLock { log.core.gatherLimitOverride = Self.generousLimit }
        let syncsBefore = fs.syncCount
        let threads = 8, perThread = 40
        let failures = Atomic<Int>(0)
        onThreads(threads) { t in
            for k in 0..<perThread {
                do {
                    let lsn = try log.append(jsonPayload(t * 1000 + k), type: 1, durability: .full)
                    if log.durableLSN < lsn { failures.add(1, ordering: .relaxed) }
                } catch { failures.add(1, ordering: .relaxed) }
            }
        }
        let syncs = fs.syncCount - syncsBefore
        let (gathers, timeouts) = log.core.gatherCounts
        print("gather: \(threads * perThread) records, \(syncs) syncs, \(gathers) gathers, \(timeouts) at the limit")
        #expect(failures.load(ordering: .relaxed) == 0)
        // One sync per round of `threads` writes, plus the rounds before every thread has been
        // seen waiting and those after the first threads finish (41 seen). Without gathering,
        // cohorts syncing in turn took 69 here; the bound sits between with room on both sides,
        // since a committer descheduled past the limit on a loaded machine costs a group more.
        #expect(syncs <= perThread * 7 / 5, "\(syncs) syncs for \(perThread) rounds of \(threads) writes")
        #expect(log.lastLSN == LSN(threads * perThread))
        try log.close()
    }

    @Test func aLoneCommitterNeverWaits() throws {
        let fs = SimulatedFileSystem(seed: 72)
        fs.syncDelay = .milliseconds(1)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        log.core.monitor.withLock { log.core.gatherLimitOverride = Self.generousLimit }
        for i in 0..<30 { _ = try log.append(jsonPayload(i), type: 1, durability: .full) }
        try log.flush()
        #expect(log.core.gatherCounts.gathers == 0)
        try log.close()
    }

    @Test func theExpectationFollowsCommittersThatStop() throws {
        let fs = SimulatedFileSystem(seed: 73)
        fs.syncDelay = .milliseconds(1)
        let log = try Log.open(directory: storeDir, fileSystem: fs, options: .test(segmentSize: 1 << 20))
        // Short, so that the one wait that must end at the limit is short too.
        log.core.monitor.withLock { log.core.gatherLimitOverride = 5_000_000 }
        onThreads(4) { t in
            for k in 0..<10 { _ = try? log.append(jsonPayload(t * 100 + k), type: 1, durability: .full) }
        }
        let (gathers, timeouts) = log.core.gatherCounts
        // Alone now: at most the first append waits for the committers that left; its group's
        // completion counts one committer, and no later append waits.
        for i in 0..<20 { _ = try log.append(jsonPayload(1000 + i), type: 1, durability: .full) }
        let after = log.core.gatherCounts
        #expect(after.gathers - gathers <= 1)
        #expect(after.timeouts - timeouts <= 1)
        #expect(log.lastLSN == 60 && log.durableLSN == 60)
        try log.close()
    }
}
