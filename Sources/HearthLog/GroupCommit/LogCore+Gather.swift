// Gathering a synced group. N threads committing one durable write at a time fall into two
// cohorts under plain leader/follower: when a group completes, the request queued behind it leads
// at once, alone or nearly, while the committers just released are still on their way back, and
// they then queue behind that small group and sync on their own — two syncs per round of N
// writes where one would do (`HearthBench writes16 hearth-full`: groups of 1 and 15 in turn). So
// the leader of a synced group first waits until as many requests are queued as committers were
// waiting when the last group completed, for at most the time a sync takes (a moving average of
// the group syncs): a wait that ends at that limit costs the group at most one sync's time, the
// cost of the sync it meant to save. A lone committer expects only itself and never waits, and
// the expectation follows the committers down as well as up at each completion.
// Fields and lock discipline: see LogCore.swift.

extension LogCore {
    /// [monitor, leader] Before the front group is formed: waits until ``expectedCommitters``
    /// requests are queued, or the sync estimate (``gatherLimitOverride`` in tests) has passed,
    /// or the queue holds a whole batch, or the log starts closing. Only a group whose front
    /// request syncs waits: an unsynced group's write is cheap, and no sync is saved by growing it.
    func gather() {
        guard let front = queue.first, front.sync, !closeStarted, !closing, poison == nil else { return }
        let expected = min(expectedCommitters, Self.maxQueuedRequests)
        guard queue.count < expected else { return }
        let limit = gatherLimitOverride ?? syncNanosEstimate
        guard limit > 0 else { return }
        let deadline = monotonicNanos() &+ limit
        gathers += 1
        gatherTarget = expected
        defer { gatherTarget = nil }
        while queue.count < expected && !closeStarted && !closing && poison == nil
            && queue.reduce(0, { $0 + $1.bytes }) < settings.maxBatchBytes
        {
            if monotonicNanos() >= deadline {
                gatherTimeouts += 1
                return
            }
            monitor.wait(gatherWake, untilMonotonic: deadline)
        }
    }

    /// [leader] Folds one group sync's duration into ``syncNanosEstimate`` (weight 1/8).
    func recordSync(nanoseconds: UInt64) {
        syncNanosEstimate = syncNanosEstimate == 0 ? nanoseconds : (syncNanosEstimate * 7 + nanoseconds) / 8
    }

    /// Gathers begun since the log was opened, and how many of them ended at their time limit.
    var gatherCounts: (gathers: Int, timeouts: Int) { monitor.withLock { (gathers, gatherTimeouts) } }
}
