// Group commit: the leader/follower queue. Callers queue requests; the one at the front leads a
// group (consecutive requests up to `maxBatchBytes`), writes it with one call and one sync, and
// completes every request in it. Fields and lock discipline: see LogCore.swift.

extension LogCore {
    /// Queues `req` and returns when its group has been written (and synced if required).
    /// Returns the LSN of the request's last record (for a flush: the highest LSN written).
    func commit(_ req: CommitRequest) throws(LogError) -> LSN {
        _ = try submit(req)
        return try wait(req)
    }

    /// Queues `req` without waiting and returns the LSN its last record will have (for a
    /// flush: the last LSN queued before it). Records are written in queue order, so this LSN
    /// is final; ``wait(_:)`` returns once the request's group is written (and synced if
    /// required), or throws if it could not be.
    func submit(_ req: CommitRequest) throws(LogError) -> LSN {
        if settings.readOnly { throw .readOnly(path: directory) }
        monitor.lock()
        defer { monitor.unlock() }
        if closing || closed { throw .closed }
        if let p = poison { throw .poisoned(underlying: p) }
        // Back-pressure: a full queue is drained before it grows (see maxQueuedRequests).
        while queue.count >= Self.maxQueuedRequests {
            if leading { waitForProgress() } else { lead() }
            if closing || closed { throw .closed }
            if let p = poison { throw .poisoned(underlying: p) }
        }
        queue.append(req)
        queueHighWater = max(queueHighWater, queue.count)
        if let target = gatherTarget, queue.count >= target { gatherWake.broadcast() }
        assert(queue.count <= Self.maxQueuedRequests, "the commit queue holds at most maxQueuedRequests")
        reservedLSN += LSN(req.records.count)
        req.reservedLSN = reservedLSN
        return reservedLSN
    }

    /// Waits for a request queued by ``submit(_:)``: leads its group when it reaches the
    /// front of the queue, or follows the leader that takes it along.
    func wait(_ req: CommitRequest) throws(LogError) -> LSN {
        monitor.lock()
        committersWaiting += 1
        defer {
            committersWaiting -= 1
            monitor.unlock()
        }
        // Woken by `finish`: when the request's group completes, or when the request becomes the
        // front of the queue (then it leads).
        while !req.done && (queue.first !== req || leading) {
            monitor.wait(req.wake)
            waiterWakeups += 1
        }
        if !req.done { lead() }
        return try req.result.get()
    }

    /// The longest the commit queue has been since the log was opened.
    var queueHighWaterMark: Int { monitor.withLock { queueHighWater } }

    /// How many times a committer waiting for its request has woken (tests: a group's
    /// completion wakes its own requests and the next leader, not every queued committer).
    var waiterWakeupCount: Int { monitor.withLock { waiterWakeups } }

    /// What a leader decided under the monitor about the group it leads.
    struct GroupPlan {
        var group: [CommitRequest]
        var bytes: Int
        var firstLSN: LSN
        var count: Int
        var needSync: Bool
        var rollRequested: Bool
        var batched: UInt64?
        var syncedThrough: LSN
    }

    /// What the leader's I/O did, outside the monitor.
    struct GroupOutcome {
        var failure: LogError?
        var sealedThrough: LSN?
        var abandonedRoll: LogError?
    }

    /// Runs the front group as leader. Called and returns with `monitor` locked; unlocks it during
    /// I/O. The caller is the front request's thread, or a submitter helping past a full queue.
    func lead() {
        precondition(!leading, "exactly one leader at a time")
        precondition(!queue.isEmpty, "a leader has a group to lead")
        leading = true
        defer { leading = false }
        gather()
        // Invariant: the group stays at the front of the queue until this returns.
        let group = formGroup()
        // A group that syncs or may roll does not run beside the flusher's sync (which may fail
        // and poison meanwhile: hence before the poison check).
        if group.contains(where: { $0.sync || $0.roll })
            || groupOverflowsSegment(bytes: group.reduce(0) { $0 + $1.bytes })
        {
            awaitDetachedSync()
        }
        if let p = poison {
            finish(group, .failure(.poisoned(underlying: p)))
            return
        }
        let plan = plan(group)
        monitor.unlock()
        // I/O, outside the monitor. Followers keep queueing behind us.
        let outcome = performIO(plan)
        monitor.lock()
        complete(plan, outcome)
    }

    /// [monitor] The group: consecutive requests from the front, up to maxBatchBytes (at least one).
    private func formGroup() -> [CommitRequest] {
        var group: [CommitRequest] = []
        var bytes = 0
        for r in queue {
            if !group.isEmpty && bytes + r.bytes > settings.maxBatchBytes { break }
            // A requested roll starts its group, so that it falls exactly between the records
            // queued before it (left in the old segment) and those queued after it.
            if !group.isEmpty && r.roll { break }
            group.append(r)
            bytes += r.bytes
        }
        assert(group.first === queue.first && !group.isEmpty, "the leader leads its own group")
        return group
    }

    /// [monitor] Assigns the group its LSNs and decides what its I/O must do.
    private func plan(_ group: [CommitRequest]) -> GroupPlan {
        assert(writtenLSN == nextLSN - 1, "no LSN is assigned but unwritten between groups")
        assert(durableLSN <= writtenLSN, "durableLSN ≤ writtenLSN")
        let first = nextLSN
        let count = group.reduce(0) { $0 + $1.records.count }
        nextLSN += LSN(count)
        assert(nextLSN - 1 <= reservedLSN, "a group writes only LSNs reserved when its requests were queued")
        return GroupPlan(
            group: group, bytes: group.reduce(0) { $0 + $1.bytes }, firstLSN: first, count: count,
            needSync: group.contains { $0.sync } && (count > 0 || writtenLSN > durableLSN),
            rollRequested: group.contains { $0.roll },
            batched: group.compactMap(\.batchedInterval).min(), syncedThrough: durableLSN)
    }

    /// [leader, monitor unlocked] A requested roll, then the group's write and sync.
    private func performIO(_ p: GroupPlan) -> GroupOutcome {
        var outcome = GroupOutcome()
        do throws(LogError) {
            if p.rollRequested, let a = active, a.offset > UInt64(Layout.segmentHeaderSize) {
                do throws(RollFailure) {
                    try roll(nextLSN: p.firstLSN)
                    // Sealing syncs the old segment, so everything written so far is durable.
                    outcome.sealedThrough = p.firstLSN - 1
                } catch  where !error.poisons {
                    // A requested roll is an optimization (a checkpoint can then drop the
                    // segment it covers). It failed before anything durable changed, so the
                    // group goes on in the old segment and the log stays writable.
                    outcome.abandonedRoll = error.error
                } catch {
                    throw error.error
                }
            }
            if p.count > 0 {
                outcome.sealedThrough =
                    try rollIfNeeded(groupBytes: p.bytes, nextLSN: p.firstLSN) ?? outcome.sealedThrough
                try writeGroup(
                    p.group, firstLSN: p.firstLSN,
                    syncedThrough: max(p.syncedThrough, outcome.sealedThrough ?? 0), syncs: p.needSync)
            }
            if p.needSync {
                guard let f = active?.file else { preconditionFailure("a group is synced in the active segment") }
                assert(monitor.withLock { detachedSync == nil }, "a group syncs only after the flusher's sync")
                let start = monotonicNanos()
                try logIO { try f.sync() }
                recordSync(nanoseconds: monotonicNanos() &- start)
            }
        } catch {
            outcome.failure = error
        }
        return outcome
    }

    /// [monitor] Publishes the group's result: poison on failure, else the new LSN counters.
    private func complete(_ p: GroupPlan, _ o: GroupOutcome) {
        if let e = o.failure {
            // Poison: the state of the file is unknown (a retried fsync can falsely succeed).
            poison = e
            finish(p.group, .failure(e))
            return
        }
        if let e = o.abandonedRoll {
            abandonedRolls += 1
            lastAbandonedRoll = e
        }
        if let s = o.sealedThrough { durableLSN = max(durableLSN, s) }
        let written = p.firstLSN + LSN(p.count) - 1
        assert(written >= writtenLSN, "writtenLSN is monotonic")
        writtenLSN = written
        if p.needSync {
            durableLSN = writtenLSN
        } else if let interval = p.batched, writtenLSN > durableLSN {
            let d = monotonicNanos() &+ interval
            if batchedDeadline == nil || d < batchedDeadline! {
                batchedDeadline = d
                flusherWake.broadcast()
            }
        }
        if durableLSN >= writtenLSN { batchedDeadline = nil }
        assert(durableLSN <= writtenLSN && writtenLSN <= reservedLSN, "durableLSN ≤ writtenLSN ≤ reservedLSN")
        var lsn = p.firstLSN
        for r in p.group {
            lsn += LSN(r.records.count)
            assert(
                r.records.isEmpty || r.reservedLSN == lsn - 1, "records are written at the LSNs reserved when queued")
            r.result = .success(r.records.isEmpty ? writtenLSN : lsn - 1)
        }
        finish(p.group, nil)
    }

    /// Completes the group (monitor locked): pops it from the queue and wakes the threads the
    /// change concerns — each request's own waiter, the new front's (it leads next), and the
    /// threads waiting for progress (``waitForProgress()``) if there are any. Waking only these,
    /// as LevelDB's writer queue does (one condition variable per writer), keeps a commit from
    /// waking every other committer only for it to find its request still queued and sleep
    /// again: with 16 committers on 2 cores those wake-ups were most of the context switches
    /// per write.
    private func finish(_ group: [CommitRequest], _ result: Result<LSN, LogError>?) {
        for r in group {
            if let result { r.result = result }
            r.done = true
            r.wake.broadcast()
        }
        assert(
            queue.count >= group.count && zip(queue, group).allSatisfy { $0 === $1 },
            "the finished group is the front of the queue")
        queue.removeFirst(group.count)
        // Every committer waiting now: the group's own (not yet returned) and those queued behind.
        expectedCommitters = committersWaiting
        queue.first?.wake.broadcast()
        if progressWaiters > 0 { monitor.broadcast() }
    }

    /// [monitor] Waits until a group completes or the log starts closing (spurious wake-ups
    /// happen: callers re-check their condition in a loop).
    func waitForProgress() {
        progressWaiters += 1
        monitor.wait()
        progressWaiters -= 1
    }

    // MARK: Flush, durability queries

    func flush() throws(LogError) {
        _ = try commit(CommitRequest(records: [], sync: true, batchedInterval: nil))
    }

    /// Returns once `lsn` is durable. If a `.batched` sync is already scheduled, waits for it (so that
    /// waiting does not add syncs); otherwise syncs now.
    func waitUntilDurable(_ lsn: LSN) throws(LogError) {
        monitor.lock()
        let written = writtenLSN
        guard lsn <= written else {
            monitor.unlock()
            throw .invalidArgument("LSN \(lsn) has not been written (last is \(written))")
        }
        // Bounded: each wake-up follows a group completion or the end of the flusher's sync; the
        // flusher's deadline is at most one interval away, and poison or close end the wait.
        while durableLSN < lsn && (batchedDeadline != nil || (detachedSync ?? 0) >= lsn) && poison == nil
            && !closing && !closed
        {
            waitForProgress()
        }
        let done = durableLSN >= lsn
        monitor.unlock()
        if !done { try flush() }
    }
}
