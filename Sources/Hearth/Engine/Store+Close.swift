// Closing a store: background work drained, the log tail checkpointed (best effort), the log
// closed and its lock released.

import Dispatch
import HearthLog
import HearthModel

extension Store {
    /// Waits for background maintenance, checkpoints when the log since the last checkpoint
    /// is long enough that the next open would replay it for a noticeable time (64 KiB), then
    /// flushes and closes the log and releases the lock. Further calls throw
    /// ``StoreError/closed``.
    ///
    /// That checkpoint is one the next open would write anyway (in the background, after
    /// replaying the same log); written here, the next open reads it instead of the log. It is
    /// best effort: when it fails (a full disk), close goes on, and the next open replays the
    /// log as before.
    public func close() throws(StoreError) {
        maintenanceQueue.sync { checkpointBeforeClose() }
        viewQueue.sync {}
        eventQueue.sync {}
        let wasClosed = core.withLock { core -> Bool in
            defer { core.closed = true }
            return core.closed
        }
        if wasClosed { return }
        do { try log.close() } catch { throw .log(error) }
    }
}
