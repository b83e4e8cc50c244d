// The `.batched` flusher: one thread per writable log that syncs once the earliest `.batched`
// deadline passes (a `.batched` append is acknowledged before it is durable). It sleeps on a
// condition of its own (`flusherWake`), woken only when a deadline is set or the log closes — not
// by every group commit. Fields and lock discipline: see LogCore.swift.

extension LogCore {
    func startFlusher() {
        flusher = OSThread { [self] in
            monitor.lock()
            while !stopFlusher {
                flusherWakeups += 1
                if let d = batchedDeadline {
                    if monotonicNanos() >= d {
                        batchedDeadline = nil
                        monitor.unlock()
                        // Errors poison the log inside commit; the next append reports them.
                        try? flush()
                        monitor.lock()
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

    /// How many times the flusher has looked at its deadline since the log opened (tests: a
    /// commit must not wake it).
    var flusherWakeupCount: Int { monitor.withLock { flusherWakeups } }
}
