// Poisoning and close. A failure that leaves the directory's state unknown poisons the log: every
// later write fails with it (fail-stop). Close flushes, stops the flusher, waits for the queue to
// drain, then closes the active segment and releases the lock. Fields and lock discipline: see
// LogCore.swift.

extension LogCore {
    func close() throws(LogError) {
        // Exactly one caller performs the close (two threads may call close, or close and deinit).
        let already = monitor.withLock { () -> Bool in
            if closeStarted || closing || closed { return true }
            closeStarted = true
            return false
        }
        if already { return }
        var failure: LogError?
        if settings.readOnly {
            // Nothing was written: nothing to sync.
        } else if let poisoned = monitor.withLock({ poison }) {
            // Nothing written since the failure can be synced: the close must not report success.
            failure = .poisoned(underlying: poisoned)
        } else {
            do throws(LogError) { try flush() } catch { failure = error }
        }
        monitor.withLock {
            closing = true
            stopFlusher = true
            monitor.broadcast()
            flusherWake.broadcast()
            while !queue.isEmpty { waitForProgress() }
            assert(!leading, "no group runs once the queue is drained")
        }
        flusher?.join()
        flusher = nil
        monitor.withLock { closed = true }
        if let a = active {
            if failure == nil && !settings.readOnly { trimPreallocation() }
            try? a.file.close()
        }
        active = nil
        lock?.release()
        lock = nil
        if let failure { throw failure }
    }
}
