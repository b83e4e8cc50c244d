import Hearth
import HearthModel

extension Database {
    /// Drops every write the server has not answered — Firebase's `purgeOutstandingWrites()`:
    /// each is removed from the store (durably, at the database's durability, so it is not
    /// sent again after a restart), observers see the data without it at once, and its
    /// completion block, the write-result observers and the `async` form hear
    /// ``DatabaseError/writeCanceled`` (domain `com.firebase`, code 3). Transactions waiting
    /// for the server abort with it too.
    ///
    /// A write already sent may still be applied by the server: its data then arrives like any
    /// other server change. onDisconnect operations are kept. Writes made after the call are
    /// not affected; every write made before it, on any thread, is.
    public func purgeOutstandingWrites() {
        Database.debugLog(options)("purging outstanding writes")
        // Under the write lock no write is saved meanwhile, and `work` runs the hand-offs queued
        // before this block first: every write made before the call has reached the core (or
        // failed), so the core holds them all.
        writeLock.withLock { _ in
            work.sync { step { (core, now) in core.purgeWrites(now: now) } }
        }
    }
}
