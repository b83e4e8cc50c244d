// The `.batched` flusher: one thread per writable log that syncs once the earliest `.batched`
// deadline passes (a `.batched` append is acknowledged before it is durable). It sleeps on a
// condition of its own (`flusherWake`), woken only when a deadline is set or the log closes — not
// by every group commit. Fields and lock discipline: see LogCore.swift.
//
// Its sync is detached from the commit queue: it does not queue a flush request (whose group a
// committer would then lead, syncing on the committer's thread, and behind which every later
// commit would wait), but syncs the active segment beside the queue while groups that need
// neither a sync nor a roll go on being written. A cache fill (one thread committing `.batched`
// records) spent a quarter of its time waiting for, or running, the flusher's syncs that way.
//
// Why that is safe:
// - It starts only while no group is being written (`leading` is false) and the log is open and
//   not poisoned, so `active` is read between leaders, and `target` (the last LSN written then)
//   is exactly what the sync covers: a completed `fdatasync` makes durable every byte written
//   before it started, and may make later ones durable too, which claims nothing.
// - While it runs (`detachedSync` set), a leader whose group needs a sync or may roll waits for
//   it (`awaitDetachedSync`): a roll truncates, seals and closes the file being synced, and two
//   syncs at once would only repeat work. Close joins the flusher before closing the file.
// - A failed sync poisons the log, exactly as a failed sync of a group does.

extension LogCore {
    func startFlusher() {
        flusher = OSThread { [self] in
            monitor.lock()
            while !stopFlusher {
                flusherWakeups += 1
                if let d = batchedDeadline {
                    if monotonicNanos() >= d {
                        batchedDeadline = nil
                        syncDetached()
                    } else {
                        monitor.wait(flusherWake, untilMonotonic: d)
                    }
                } else {
                    monitor.wait(flusherWake)
                }
            }
            monitor.unlock()
        }
    }

    /// [monitor, flusher] Makes every record written so far durable, beside the commit queue
    /// (see the file comment). Called and returns with `monitor` locked; unlocks it during the
    /// sync. Bounded: each wait for the current leader ends when its group completes, and a
    /// leader cannot start again without the flusher's wait seeing a new completion.
    private func syncDetached() {
        while leading && !closing && !closed && poison == nil { waitForProgress() }
        guard !closing, !closed, poison == nil, writtenLSN > durableLSN, let file = active?.file else { return }
        let target = writtenLSN
        detachedSync = target
        monitor.unlock()
        let failure: LogError?
        do throws(LogError) {
            try logIO { try file.sync() }
            failure = nil
        } catch {
            failure = error
        }
        monitor.lock()
        detachedSync = nil
        detachedSyncs += 1
        if let failure {
            // The state of the file is unknown (a retried fsync can falsely succeed): fail-stop.
            poison = poison ?? failure
        } else {
            durableLSN = max(durableLSN, target)
            if durableLSN >= writtenLSN { batchedDeadline = nil }
        }
        // Leaders waiting in `awaitDetachedSync`, and `waitUntilDurable`'s waiters.
        monitor.broadcast()
    }

    /// [monitor, leader] Waits for the flusher's detached sync, if one runs, before a group that
    /// syncs or may roll (see the file comment).
    func awaitDetachedSync() {
        while detachedSync != nil { waitForProgress() }
    }

    /// How many times the flusher has looked at its deadline since the log opened (tests: a
    /// commit must not wake it).
    var flusherWakeupCount: Int { monitor.withLock { flusherWakeups } }

    /// How many syncs the flusher has made beside the commit queue since the log opened.
    var detachedSyncCount: Int { monitor.withLock { detachedSyncs } }
}
